"""Workload type -> the driver that runs a group of its tests. Adding a tool = adding one line here."""

from __future__ import annotations

from . import osd_bench, rados_bench
from .base import GroupDriver

DRIVERS: dict[str, GroupDriver] = {
    "rados_bench": rados_bench.run_group,
    "osd_bench": osd_bench.run_group,
}
