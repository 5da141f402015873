"""The Analysis of one cluster result: its ceiling by the model (RGW's by its S3 ops as RADOS ops), its efficiency,
and the bottleneck the ceiling or the evidence names."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core.results import Analysis, LatencyBreakdown, Result
from ..core.units import exact_size
from ..kinds import direction_of, kinds_where, level_of, object_size_of, op_size_of as params_op_size
from . import rgw
from .breakdown import breakdown
from .facts import NOT_USED, client_hosts, osd_rotational
from .model import Ceiling, ClusterFacts, Pool, ceiling, osd_bench_ceiling
from .rules import from_evidence, judge
from .storesettings import store_settings

MODELLED = kinds_where(modelled=True)
RGW_MODELLED = kinds_where(rgw_model=True)     # RGW's model gives their ceilings
# what an OSD bench's verdict needs and a run without a disk baseline lacks: osd bench is no ceiling of its own
OSD_BENCH_MISSING = ("no disk baseline measured one disk alone in this run, and osd bench cannot be its own "
                     "ceiling: add `baseline: {disks: ...}` to the suite to judge it")


def op_of(result: Result) -> str | None:
    """write or read, or None for mixed and metadata operations, which the model does not cover."""
    d = direction_of(result.test.kind, result.test.params.phase,
                     result.measurement.op if result.measurement else None)
    return d if d in ("read", "write") else None


def op_size_of(result: Result) -> int | None:
    m, p = result.measurement, result.test.params
    # the op's size before the objects': an RBD kind's objects are its image's (4 MiB), not what a 4 KiB read moves
    for v in (m.op_size_bytes if m else None, params_op_size(result.test.kind, p), object_size_of(result.test.kind, p)):
        if v:
            return int(v)
    return None


def analyse(result: Result, facts: ClusterFacts | None, rados: list[Result] | None = None,
            cluster: dict[str, Any] | None = None) -> Analysis | None:
    """The Analysis of one cluster result (None when the model has nothing to say about it). `rados`: the run's
    rados bench results so far, and `cluster` its cluster facts, for RGW's ceiling."""
    if result.status != "ok" or result.measurement is None:
        return None
    if facts is not None and facts.objectstore == "bluestore":
        st = store_settings(result, cluster or {}, facts.rotational)
        facts = replace(facts, deferred_max_bytes=st.deferred_max_bytes, deferred_text=st.deferred_text,
                        min_alloc_bytes=st.min_alloc_bytes)
    if result.test.kind in RGW_MODELLED:
        return _analyse_rgw(result, facts, rados or [], cluster or {})
    if level_of(result.test.kind) == "OSD":
        # one OSD's own write path against one disk alone; never against the cluster's ceilings, which without a
        # disk baseline are made of osd bench itself (3 disks × its figure ÷ 1 replica: a third by construction)
        size = op_size_of(result) or 4 * 1024**2
        label = f"osd bench {_short(size)} (median OSD)"
        if facts is None or not facts.disk.write_alone_bytes_per_s or facts.disk.includes_journal:
            return Analysis(bottleneck="unknown", reason=f"{label}: no ceiling ({OSD_BENCH_MISSING})")
        v = judge(osd_bench_ceiling(facts, size), result.measurement.bytes_per_s, label)
        return Analysis(ceiling_bytes_per_s=v.ceiling_bytes_per_s, ceiling_ops_per_s=v.ceiling_ops_per_s,
                        efficiency=v.efficiency, bottleneck=v.bottleneck, reason=v.reason)
    if result.test.kind not in MODELLED:
        return None
    op, size = op_of(result), op_size_of(result)
    label = f"{result.test.params.get('phase', result.measurement.op)} {_short(size)}"
    if op is None or size is None:
        return Analysis(bottleneck="unknown", reason=f"{label}: mixed or unknown operation; the model covers "
                                                      "plain reads and writes")
    ev = result.evidence
    b = breakdown(_latency_s(result), ev.osds, op) if ev is not None else None
    if facts is None and ev is None:
        return Analysis(bottleneck="unknown", reason=f"{label}: no ceiling (no disk or network baseline in this "
                                                      "run: add a baseline section to the suite)")
    pool = Pool.from_profile(result.test.params.pool_profile)
    c = ceiling(facts, op, size, pool) if facts is not None else Ceiling(op=op, op_size=size, terms=[],
                                                                          bottleneck="unknown")
    watched = max(result.hosts, key=lambda h: h.cpu_busy_median, default=None)
    measured, lines = _measured(result, c, b, cluster or {})
    v = judge(c, result.measurement.bytes_per_s, label, watched.cpus if watched else (facts.cpus if facts else None),
              watched.cpu_busy_median if watched else None, f"{watched.host} ({watched.role})" if watched else "",
              measured=measured)
    unused = [n for n in (facts.notes if facts is not None else ()) if n.endswith(NOT_USED)]
    if v.ceiling_bytes_per_s is None and unused:     # a ceiling's notes are in its reason; say them without one too
        v = replace(v, reason=f"{v.reason} ({'; '.join(unused)})")
    if facts is None and measured is None:
        v = replace(v, reason=v.reason.replace("(no disk or network baseline in this run)",
                                               "(no disk or network baseline in this run: add a baseline section "
                                               "to the suite)"))
    return Analysis(ceiling_bytes_per_s=v.ceiling_bytes_per_s, ceiling_ops_per_s=v.ceiling_ops_per_s,
                    efficiency=v.efficiency, bottleneck=v.bottleneck, reason=v.reason, breakdown=b, evidence=lines)


def _measured(result: Result, c: Ceiling, b: LatencyBreakdown | None,
              cluster: dict[str, Any]) -> tuple[tuple[str, str] | None, list[str]]:
    """(bottleneck, sentence) the evidence names, or None, and the evidence lines; nothing without evidence."""
    if result.evidence is None:
        return None, []
    bps = result.measurement.bytes_per_s if result.measurement else None
    eff = bps / c.bytes_per_s if c.bytes_per_s and bps else None
    found = from_evidence(result, eff, b, set(client_hosts(result)), osd_rotational(cluster))
    return ((found.bottleneck, found.sentence) if found.bottleneck is not None else None), found.lines


def _analyse_rgw(result: Result, facts: ClusterFacts | None, rados: list[Result],
                 cluster: dict[str, Any]) -> Analysis | None:
    """RGW's verdict: its S3 op as RADOS ops (rgw.py), the RGW host's link and CPU, and the evidence."""
    op, size = op_of(result), op_size_of(result)
    if op is None or size is None:
        return None                   # stat, list, delete, mixed: metadata, which the model does not cover
    piece = min(size, rgw.STRIPE)
    given = result.test.params.pool_profile
    data_pool = Pool.from_profile(given) if given else rgw.rgw_pool(cluster, rgw.DATA_POOL)
    index_pool = rgw.rgw_pool(cluster, rgw.INDEX_POOL) or data_pool
    pool = data_pool or Pool(size=3)

    def figures(like: Pool | None) -> list[rgw.RadosFigure]:
        # only what the verdict counts (ok, no warning), of the same variant, on a pool that stores as RGW's does
        # (either unknown: nothing to compare)
        out = []
        for r in rados:
            prof = r.test.params.pool_profile
            on = Pool.from_profile(prof) if prof else None
            if (counted(r) and r.test.variant == result.test.variant and (like is None or on is None or on == like)
                    and (o := op_of(r)) and (n := op_size_of(r))):
                where = f", {on.describe()}" if on is not None else ""
                what = f"rados bench {r.test.params.get('phase', o)} {_short(n)} of this run{where}"
                out.append(rgw.RadosFigure(o, n, r.measurement.bytes_per_s, r.measurement.ops_per_s, what))
        return out
    data_term = rgw.rados_rate(figures(pool), op, piece)
    if data_term is None and facts is not None:
        model = ceiling(facts, op, piece, pool)
        if model.bytes_per_s:
            data_term = (model.bytes_per_s, f"the model's ceiling for {pool.describe()} from the baselines")
    index = rgw.small_write_ops(figures(index_pool))
    if index is None and facts is not None and op == "write":
        small = ceiling(facts, "write", 4096, index_pool or pool)
        if small.ops_per_s:
            index = (small.ops_per_s, "the model's 4 KiB write ceiling")
    names = rgw.rgw_hosts(cluster)
    ev = result.evidence
    speeds = [(lk.speed_bits_per_s / 8, f"{lk.host} {lk.iface} ({lk.speed_bits_per_s / 1e9:g} Gbit/s)")
              for lk in (ev.links if ev else []) if lk.host in names and lk.speed_bits_per_s]
    c = rgw.rgw_ceiling(op, size, data_term, index, min(speeds, default=None))
    b = breakdown(_latency_s(result), ev.osds, op) if ev is not None else None
    measured, lines = _measured(result, c, b, cluster)
    host = rgw.rgw_host_load(result.hosts, names)
    label = f"{result.test.params.get('op', result.measurement.op)} {_short(size)}"
    v = judge(c, result.measurement.bytes_per_s, label, host.cpus if host else None,
              host.cpu_busy_median if host else None, f"{host.host} (RGW host)" if host else "the RGW host",
              measured=measured)
    reason = v.reason
    if c.bytes_per_s is None and measured is None:
        reason = f"{label}: no ceiling (no rados bench of this run in that direction and no baselines: add a rados " \
                 "bench at the object size, or a baseline section, to the suite)"
    return Analysis(ceiling_bytes_per_s=v.ceiling_bytes_per_s, ceiling_ops_per_s=v.ceiling_ops_per_s,
                    efficiency=v.efficiency, bottleneck=v.bottleneck, reason=reason, breakdown=b, evidence=lines)


def counted(result: Result) -> bool:
    """A result the verdict counts: measured, and no warning against its figure."""
    return result.status == "ok" and not result.warnings and result.measurement is not None \
        and bool(result.measurement.bytes_per_s)


def _latency_s(result: Result) -> float | None:
    m = result.measurement
    return m.latency.mean_ns / 1e9 if m and m.latency.mean_ns else None


def _short(size: int | None) -> str:
    return exact_size(size) if size else ""
