"""What a report shows, independent of its format: environment, baselines, one table per level.

Markdown and HTML render the same Sections; only charts are HTML-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import groupby
from typing import Any, Callable

from ..analysis.variants import VariantsView, view as variants_view
from ..kinds import KINDS, LEVEL_ORDER as KIND_LEVELS, level_of, load_of, net_baseline, object_size_of, op_size_of
from ..core.results import CorruptLine, Result, RunDir
from ..core.units import format_size
from .clients import clients_of, spread_line
from .cpu import cpu_table
from .format import Table, host_cpu, iops, mib_s, ms, pct, result_figures, result_mib_s, seconds, span
from .gap import Facts, Gap, gap_of
from .osd_bench import osd_tables
from .verdict import VerdictLine, slow_osds, verdict

LEVEL_ORDER = [*KIND_LEVELS, "Other"]      # "Other": results of a kind this cephbench does not know (a newer run)


KEY_HEADERS = ["test", "measured", "efficiency", "bottleneck", "status"]


@dataclass
class Section:
    level: str
    tables: list[Table]
    results: list[Result]


@dataclass
class ReportData:
    title: str
    run_path: str
    generated: str
    verdict: list[VerdictLine]
    slow_osds: list[str]
    environment: list[tuple[str, str]]
    config: list[tuple[str, str, str]]
    pools: list[tuple[str, str]]
    sections: list[Section]
    corrupt: list[CorruptLine]
    counts: dict[str, int]
    gaps: dict[str, Gap] = field(default_factory=dict)    # test id -> its gap chart (verdict lines, OSD bench)
    osd_verdicts: list[tuple[Result, Gap]] = field(default_factory=list)   # OSD bench: the median OSD's gap
    variants: VariantsView | None = None       # a run with variants: each test against the first variant


def _p(r: Result, key: str, fmt: Callable[[Any], str] = str) -> str:
    v = r.test.params.get(key)
    return "-" if v is None else fmt(v)


def _load(r: Result) -> str:
    """The test's load as its kind names it (concurrency, iodepth, io_threads)."""
    v = load_of(r.test.kind, r.test.params)
    return "-" if v is None else str(v)


def _object_size(r: Result) -> str:
    v = object_size_of(r.test.kind, r.test.params)
    return "-" if v is None else _size(v)


def _size(v: Any) -> str:
    return format_size(v) if isinstance(v, (int, float)) else str(v)


def _pctl(r: Result, key: str) -> str:
    m = r.measurement
    return ms(m.latency.percentiles_ns.get(key)) if m else "-"


def _analysis(r: Result) -> list[str]:
    a = r.analysis
    return [pct(a.efficiency) if a else "-", (a.bottleneck or "-") if a else "-", host_cpu(r)]


def _status(r: Result) -> str:
    return r.status + (" !" if r.warnings else "")


def _key_rows(rs: list[Result]) -> list[list[str]]:
    """test, measured, efficiency, bottleneck, status: what a reader looks for first."""
    return [[r.test.id, result_figures(r) or "-", *_analysis(r)[:2], _status(r)] for r in rs]


def _rados_table(title: str, rs: list[Result]) -> Table:
    """The seeds' rados bench summary, one row per test, units spelled out."""
    headers = ["test", "op", "object size", "threads", "instances", "Total time run (s)", "Total ops made",
               "Bandwidth (MiB/s)", "Stddev bandwidth (MiB/s)", "Max bandwidth (MiB/s)", "Min bandwidth (MiB/s)",
               "Average objects/s", "Average latency (ms)", "Stddev latency (ms)", "Max latency (ms)",
               "Min latency (ms)", "efficiency", "bottleneck", "host CPU busy", "status"]
    rows = []
    for r in rs:
        m = r.measurement
        if m is None:
            rows.append([r.test.id, _p(r, "phase"), _object_size(r), _load(r),
                         _p(r, "instances"), *["-"] * 13, r.status])
            continue
        rows.append([r.test.id, _p(r, "phase"), _object_size(r), _load(r),
                     _p(r, "instances"), f"{m.duration_s:.2f}", iops(m.ops_total), mib_s(m.bytes_per_s),
                     mib_s(m.bytes_per_s_stddev), mib_s(m.bytes_per_s_max), mib_s(m.bytes_per_s_min),
                     iops(m.ops_per_s), ms(m.latency.mean_ns), ms(m.latency.stddev_ns), ms(m.latency.max_ns),
                     ms(m.latency.min_ns), *_analysis(r), _status(r)])
    return Table(title, headers, rows)


def _fio_like_table(title: str, rs: list[Result]) -> Table:
    headers = ["test", "op", "block size", "queue depth", "IOPS", "MiB/s", "mean lat (ms)", "p50 (ms)", "p99 (ms)",
               "p99.9 (ms)", "p99.99 (ms)", "max lat (ms)", "efficiency", "bottleneck", "host CPU busy",
               "status"]
    rows = []
    for r in rs:
        m = r.measurement
        bs = op_size_of(r.test.kind, r.test.params) or object_size_of(r.test.kind, r.test.params)
        depth = load_of(r.test.kind, r.test.params)
        if m is None:
            rows.append([r.test.id, _p(r, "phase"), _size(bs) if bs else "-", str(depth or "-"), *["-"] * 11,
                         r.status])
            continue
        rows.append([r.test.id, str(r.test.params.get("phase", m.op)), _size(bs) if bs else "-", str(depth or "-"),
                     iops(m.ops_per_s), mib_s(m.bytes_per_s), ms(m.latency.mean_ns), _pctl(r, "50"), _pctl(r, "99"),
                     _pctl(r, "99.9"), _pctl(r, "99.99"), ms(m.latency.max_ns), *_analysis(r), _status(r)])
    return Table(title, headers, rows)


def _rgw_table(title: str, rs: list[Result]) -> Table:
    # the kind's own columns after the test's (kind.table_params: RGW's protocol)
    own = [p for k in dict.fromkeys(r.test.kind for r in rs) if k in KINDS for p in KINDS[k].table_params]
    headers = ["test", *(p.replace("_", " ") for p in own), "op", "object size", "in flight", "req/s", "MiB/s",
               "p50 (ms)", "p90 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)", "errors", "host CPU busy", "status"]
    rows = []
    for r in rs:
        m = r.measurement
        errors = sum((m.extra.get("errors_by_kind") or {}).values()) if m else None
        rows.append([r.test.id, *(_p(r, p) for p in own), _p(r, "phase"), _object_size(r), _load(r),
                     iops(m.ops_per_s) if m else "-", result_mib_s(r), _pctl(r, "50"),
                     _pctl(r, "90"), _pctl(r, "99"), _pctl(r, "99.9"), ms(m.latency.max_ns) if m else "-",
                     "-" if errors is None else str(errors), host_cpu(r), _status(r)])
    return Table(title, headers, rows)


def _baseline_hosts(r: Result) -> str:
    """Where a baseline figure came from: the disk baseline's hosts, or the network's sender -> receivers."""
    route = net_baseline.route(r.test.params)
    if route is not None:
        return route
    return ", ".join((r.measurement.extra.get("hosts") if r.measurement else None) or []) or "-"


def _baseline_table(rs: list[Result]) -> Table:
    headers = ["test", "tool", "op", "hosts", "figure", "IOPS", "notes"]
    rows = []
    for r in rs:
        m = r.measurement
        if m is None:
            rows.append([r.test.id, "-", "-", _baseline_hosts(r), "-", "-", r.error or r.status])
            continue
        if "bits_per_s" in m.extra:
            fig = f"{m.extra['bits_per_s'] / 1e9:,.2f} Gbit/s"
        else:
            fig = f"{mib_s(m.bytes_per_s)} MiB/s"
        rows.append([r.test.id, m.tool, m.op, _baseline_hosts(r), fig, iops(m.ops_per_s), "; ".join(r.notes)])
    return Table("Disk and network baselines", headers, rows)


def level_tables(rs: list[Result]) -> list[Table]:
    """One table per kind, in the layout its descriptor names (baselines share one table)."""
    tables: list[Table] = []
    baselines: list[Result] = []
    for kind, group in groupby(sorted(rs, key=lambda r: r.test.kind), key=lambda r: r.test.kind):
        g = sorted(group, key=lambda r: r.test.index)
        desc = KINDS.get(kind)
        layout = desc.layout if desc else "fio"
        title = desc.title if desc else kind
        if layout == "baseline":
            baselines += g
        elif layout == "osd":
            tables += osd_tables(g)
        elif layout == "rgw":
            tables.append(_rgw_table(title, g))
        elif layout == "rados":
            tables.append(_rados_table(title, g))
        else:
            tables.append(_fio_like_table(title, g))
        if layout in ("rgw", "rados", "fio"):
            tables[-1].key = _key_rows(g)
    if baselines:
        tables.insert(0, _baseline_table(sorted(baselines, key=lambda r: r.test.index)))
    return tables


BELOW = "BELOW"      # the flag of a client more than 20% below the others (html marks the cell)


def client_tables(rs: list[Result]) -> list[Table]:
    """One table per result whose instances ran on several client hosts: each client over the common window."""
    out = []
    for r in sorted(rs, key=lambda r: r.test.index):
        c = clients_of(r)
        if c is None:
            continue
        slow = set(c.get("imbalanced") or [])
        rows = [[str(p.get("host")), str(p.get("instances", 1)), span(p.get("start_offset_s")),
                 seconds(p.get("duration_s")), mib_s(p.get("bytes_per_s")), iops(p.get("ops_per_s")),
                 ms(p.get("lat_mean_ns")), ms(p.get("lat_p99_ns")), pct(p.get("share")),
                 BELOW if p.get("host") in slow else ""]
                for p in c["per_client"]]
        headers = ["client", "instances", "start offset", "duration", "MiB/s", "IOPS", "mean lat (ms)", "p99 (ms)",
                   "share", "imbalance"]
        out.append(Table(f"{r.test.id}: per client", headers, rows, notes=[spread_line(c), *c.get("notes", [])]))
    return out


def cpu_tables(rs: list[Result]) -> list[Table]:
    """CPU per operation beside throughput (report/cpu.py), when the results' evidence has it."""
    t = cpu_table(sorted(rs, key=lambda r: r.test.index))
    return [t] if t is not None else []


def _release(meta: dict[str, Any]) -> str:
    """run.json's release: its name, the version most daemons run, and the daemons on others (an upgrade)."""
    found = meta.get("ceph_release") if isinstance(meta.get("ceph_release"), dict) else {}
    name = str(meta.get("release") or found.get("name") or "-")
    if not found.get("version"):
        return name
    others = found.get("others") if isinstance(found.get("others"), dict) else {}
    return f"{name} {found['version']}" + (
        f" ({found.get('daemons', '?')} daemons; " + ", ".join(f"{n} on {v}" for v, n in others.items()) + ")"
        if others else "")


def _scheduler(found: Any) -> str:
    """run.json's osd_scheduler: the queue and mClock profile of each kind of OSD, with their measured capacities."""
    if not isinstance(found, dict) or not found:
        return "-"
    groups: dict[str, list[str]] = {}
    for osd, values in found.items():
        if not isinstance(values, dict):
            continue
        head = str(values.get("osd_op_queue", "?"))
        if values.get("osd_mclock_profile"):
            head += f", profile {values['osd_mclock_profile']}"
        groups.setdefault(head, []).append(str(osd))
    parts = [f"{head} ({len(osds)} OSD{'s' if len(osds) > 1 else ''})" for head, osds in groups.items()]
    caps: dict[str, list[float]] = {}
    for values in found.values():
        for k, v in (values.items() if isinstance(values, dict) else ()):
            if k.startswith("osd_mclock_max_capacity_iops") and _number(v):
                caps.setdefault(k, []).append(float(v))
    for k, vs in sorted(caps.items()):      # _hdd and _ssd apart: an OSD uses the one its device's kind names
        lo, hi = min(vs), max(vs)
        parts.append(f"{k} {lo:,.0f}" + (f"–{hi:,.0f}" if hi != lo else ""))
    return "; ".join(parts)


def _number(v: Any) -> bool:
    try:
        return float(v) > 0
    except (TypeError, ValueError):
        return False


def _environment(meta: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]],
                                                list[tuple[str, str]]]:
    cluster = meta.get("cluster") or {}
    status = cluster.get("status") or {}
    versions = cluster.get("versions") or {}
    overall = versions.get("overall") if isinstance(versions, dict) else None
    osdmap = status.get("osdmap", {}) if isinstance(status, dict) else {}
    osdmap = osdmap.get("osdmap", osdmap)
    host = (meta.get("hosts") or {}).get("client") or {}
    target = meta.get("target") or {}
    env = [
        ("suite", str(meta.get("suite_name", "-"))),
        ("Ceph release", _release(meta)),
        ("OSD scheduler", _scheduler(meta.get("osd_scheduler"))),
        ("Ceph versions", ", ".join(f"{k} ×{v}" for k, v in (overall or {}).items()) or "-"),
        ("cluster fsid", str(status.get("fsid", "-"))),
        ("health at start", str((status.get("health") or {}).get("status", "-"))),
        ("OSDs up / in", f"{osdmap.get('num_up_osds', '-')} / {osdmap.get('num_in_osds', '-')}"),
        ("target", f"{target.get('conf', '-')}" + (" (lab)" if target.get("lab") else "")),
        ("client host", f"{host.get('hostname', '-')}: {host.get('cpu_model', '?')} ×{host.get('cpu_count', '?')}, "
                        f"{format_size(host.get('memory_bytes', 0))} RAM, kernel {host.get('kernel', '?')}"),
        ("cephbench", str(meta.get("cephbench_version", "-"))),
    ]
    started = meta.get("started_unix")
    if started:
        env.append(("started", datetime.fromtimestamp(started, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")))
    config = []
    dump = cluster.get("config_dump")
    if isinstance(dump, list):
        for item in dump:
            if isinstance(item, dict):
                config.append((str(item.get("section", "")), str(item.get("name", "")), str(item.get("value", ""))))
    pools = []
    for name, prof in ((meta.get("suite") or {}).get("pools") or {}).items():
        if prof.get("type") == "replicated":
            pools.append((name, f"replicated, size {prof.get('size')}, {prof.get('pg_num')} PGs"))
        else:
            pools.append((name, f"erasure {prof.get('k')}+{prof.get('m')} ({prof.get('plugin')}), "
                                f"{prof.get('pg_num')} PGs"))
    return env, config, pools


def build(rundir: RunDir) -> ReportData:
    meta = rundir.meta()
    results, corrupt = rundir.results()
    env, config, pools = _environment(meta)
    by_level: dict[str, list[Result]] = {}
    for r in results:
        by_level.setdefault(level_of(r.test.kind) or "Other", []).append(r)
    sections = [Section(level, level_tables(by_level[level]) + client_tables(by_level[level])
                        + cpu_tables(by_level[level]), by_level[level])
                for level in LEVEL_ORDER if level in by_level]
    counts = {s: sum(1 for r in results if r.status == s) for s in ("ok", "failed", "skipped")}
    lines = verdict(results)
    gaps, osd_verdicts = _gaps(meta, results, lines)
    return ReportData(
        title=f"cephbench report: {meta.get('suite_name', rundir.path.name)}",
        run_path=str(rundir.path), generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        verdict=lines, slow_osds=slow_osds(results), environment=env, config=config, pools=pools,
        sections=sections, corrupt=corrupt, counts=counts, gaps=gaps, osd_verdicts=osd_verdicts,
        variants=variants_view(results))


def _gaps(meta: dict[str, Any], results: list[Result], lines: list[VerdictLine]
          ) -> tuple[dict[str, Gap], list[tuple[Result, Gap]]]:
    """The gap chart of each verdict line's result, and of each OSD bench (its median OSD)."""
    facts = Facts(meta, results)
    by_id = {r.test.id: r for r in results}
    gaps = {}
    for v in lines:
        r = by_id.get(v.test_id)
        g = gap_of(r, v.title(), facts) if r is not None else None
        if g is not None:
            gaps[v.test_id] = g
    osd = []
    for r in results:
        if level_of(r.test.kind) == "OSD" and (g := gap_of(r, "OSD write (median OSD)", facts)) is not None:
            gaps[r.test.id] = g
            osd.append((r, g))
    return gaps, osd
