"""Workload type -> the driver that runs a group of its tests. Adding a tool = adding one line here."""

from __future__ import annotations

from typing import Callable

from ..cluster import Cluster
from ..config import Settings
from ..results import Test
from . import fio_rados, fio_rbd, osd_bench, rados_bench, rbd_bench, rbd_images
from . import disk_baseline, iperf
from . import rgw
from .base import GroupDriver

DRIVERS: dict[str, GroupDriver] = {
    "rados_bench": rados_bench.run_group,
    "osd_bench": osd_bench.run_group,
    "disk_baseline": disk_baseline.run_group,
    "net_baseline": iperf.run_group,
    "rbd_bench": rbd_bench.run_group,
    "fio_rbd": fio_rbd.run_group,
    "fio_rados": fio_rados.run_group,
    "rgw": rgw.run_group,
}

# Workload type -> a check of its tests against the cluster, run by the runner's preflight before anything is
# created; it raises UserError (exit 2) for what the user must change.
PREFLIGHT: dict[str, Callable[[Cluster, list[Test], Settings], None]] = {
    "rbd_bench": rbd_images.preflight,
    "fio_rbd": rbd_images.preflight,
    "rgw": rgw.preflight,
    "disk_baseline": disk_baseline.preflight,
    "net_baseline": iperf.preflight,
}
