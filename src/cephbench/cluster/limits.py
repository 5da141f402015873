"""The cluster's own limits, checked before anything is created: a suite that asks for more is refused in one
line that names the limit and where it comes from, instead of failing at the mon or the OSD half-way through.

- osd_max_object_size (128 MiB by default): an OSD refuses a larger object (rados bench -b, fio's rados block).
- mon_max_pg_per_osd × OSDs in: the mon refuses a pool whose PG copies would pass it (counting the pools there).

Values come from the configuration database (`ceph config get`); one set only in a daemon's ceph.conf is not
seen there, so the check uses the database's (or the default) value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ceph import Cluster
from ..suite.config import Suite
from ..core.errors import OperationFailed, UserError
from ..kinds import KINDS
from ..core.results import Test
from ..core.units import format_size


@dataclass(frozen=True)
class Limits:
    osd_max_object_size: int | None
    max_pg_per_osd: int | None
    osds_in: int
    pg_copies: int                      # PGs × size of the pools already there


def _config_get(cluster: Cluster, who: str, key: str) -> int | None:
    try:
        value = cluster.ceph_json("config", "get", who, key)
        return int(value)
    except (OperationFailed, UserError, TypeError, ValueError):
        return None


def read(cluster: Cluster, status: dict[str, Any]) -> Limits:
    osdmap = status.get("osdmap") or {}
    osdmap = osdmap.get("osdmap", osdmap)
    try:
        pools = cluster.ceph_json("osd", "pool", "ls", "detail") or []
        copies = sum(int(p.get("pg_num", 0)) * int(p.get("size", 1)) for p in pools)
    except (OperationFailed, TypeError, ValueError):
        copies = 0
    return Limits(_config_get(cluster, "osd", "osd_max_object_size"), _config_get(cluster, "mon", "mon_max_pg_per_osd"),
                  int(osdmap.get("num_in_osds", 0)), copies)


def _where(suite: Suite, test: Test, key: str) -> str:
    for i, w in enumerate(suite.workloads):
        values = getattr(w, key, None)
        if (w.name or w.type) == test.workload and test.params.get(key) in (values if isinstance(values, list)
                                                                              else [values]):
            return f"workloads[{i}].{key}"
    return key


def check(suite: Suite, tests: list[Test], limits: Limits) -> None:
    """Refuse the first test or pool the cluster would refuse."""
    if limits.osd_max_object_size:
        for t in tests:
            # the sizes of the objects its tool writes, as its kind names them (RBD's image objects are the image's
            # own: none)
            for key in KINDS[t.kind].object_size_params if t.kind in KINDS else ():
                size = t.params.get(key)
                if size and size > limits.osd_max_object_size:
                    raise UserError(f"{format_size(size)} objects are larger than the OSDs accept "
                                    f"(osd_max_object_size {format_size(limits.osd_max_object_size)})",
                                    f"use at most {format_size(limits.osd_max_object_size)}",
                                    where=_where(suite, t, key))
    if limits.max_pg_per_osd and limits.osds_in:
        allowed = limits.max_pg_per_osd * limits.osds_in
        for name, profile in suite.pools.items():
            if profile.type == "existing" or not any(t.params.get("pool") == name or
                                                     t.params.get("metadata_pool") == name for t in tests):
                continue        # an existing pool adds no PGs
            width = profile.size if profile.type == "replicated" else profile.k + profile.m
            if limits.pg_copies + profile.pg_num * width > allowed:
                raise UserError(f"pg_num {profile.pg_num:,} × {width} copies with the {limits.pg_copies:,} PG copies "
                                f"already there is more than the monitors allow (mon_max_pg_per_osd "
                                f"{limits.max_pg_per_osd} × {limits.osds_in} OSDs in = {allowed:,})",
                                "use a smaller pg_num", where=f"pools.{name}.pg_num")
