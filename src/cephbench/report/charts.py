"""The report's charts as inline SVG strings (drawn by svg.py): what each chart shows, chosen from the results."""

from __future__ import annotations

import math
import statistics
from typing import Sequence

from ..results import Result
from ..units import format_size
from . import svg
from .clients import clients_of

MIB = 1024 * 1024
MAX_LINES = 24          # more lines than this make a chart unreadable: the rest are not drawn
SLOW = "#c0392b"
NORMAL = "#2e86c1"


def _lines(named: Sequence[tuple[str, list[tuple[float, float]]]], marker: bool = False) -> list[svg.Line]:
    return [svg.Line(name, pts, *svg.series_style(i), marker=marker) for i, (name, pts) in enumerate(named)]


def _legend(lines: Sequence[svg.Line]) -> list[svg.LegendItem]:
    return [svg.LegendItem(ln.label, ln.color, ln.dash, "marker" if ln.marker else "line") for ln in lines]


def _cpu_series(r: Result) -> list[float]:
    """The busiest watched host's CPU busy share, one value per second."""
    busiest = max(r.hosts, key=lambda h: h.cpu_busy_median, default=None)
    return busiest.cpu_busy_series if busiest else []


def _panels(rs: Sequence[Result]) -> list[str]:
    """What the time-series chart of these results shows: bandwidth, IOPS when a tool counts ops, host CPU."""
    panels = ["bandwidth"]
    if any(s.ops_per_s for r in rs for s in r.measurement.timeseries):
        panels.append("IOPS")
    if any(len(_cpu_series(r)) >= 2 for r in rs):
        panels.append("host CPU")
    return panels


def _with_series(results: Sequence[Result]) -> list[Result]:
    return [r for r in results if r.measurement and len(r.measurement.timeseries) >= 2][:MAX_LINES]


def timeseries_caption(results: Sequence[Result]) -> str:
    rs = _with_series(results)
    panels = _panels(rs) if rs else ["bandwidth"]
    return ", ".join(panels[:-1]) + " and " + panels[-1] if len(panels) > 1 else panels[0]


def timeseries(results: Sequence[Result]) -> str | None:
    """Bandwidth (MiB/s), IOPS and, when hosts were watched, CPU busy (%) per second, one line per test."""
    rs = _with_series(results)
    if not rs:
        return None
    shown = _panels(rs)
    panels = {"bandwidth": svg.Panel("MiB/s"), "IOPS": svg.Panel("IOPS (ops/s)"),
              "host CPU": svg.Panel("CPU busy (%)\nbusiest host", ymax=100.0)}
    series: dict[str, list[tuple[str, list[tuple[float, float]]]]] = {p: [] for p in panels}
    for r in rs:
        ts = r.measurement.timeseries
        series["bandwidth"].append((r.test.id, [(s.t_s, (s.bytes_per_s or 0) / MIB) for s in ts]))
        series["IOPS"].append((r.test.id, [(s.t_s, float(s.ops_per_s or 0)) for s in ts]))
        series["host CPU"].append((r.test.id, [(i, 100 * c) for i, c in enumerate(_cpu_series(r), 1)]))
    for name, p in panels.items():
        p.lines = _lines(series[name])
    return svg.line_chart([panels[p] for p in shown], svg.XAxis("time (s)"), _legend(panels["bandwidth"].lines),
                          f"{timeseries_caption(rs)} over time")


def sweep(results: Sequence[Result], param: str) -> str | None:
    """Throughput (MiB/s) against a swept parameter (object size, concurrency), one line per phase."""
    measured = [r for r in results
                if r.measurement and r.measurement.bytes_per_s is not None and param in r.test.params]
    if not measured:
        return None
    varying = _varying(results)
    points: dict[str, list[tuple[float, float]]] = {}
    for r in measured:
        p = r.test.params
        rest = [f"{k}={_short(k, v)}" for k, v in sorted(p.items())
                if k not in (param, "pool_profile", "duration_s", "phase") and not isinstance(v, (dict, list))
                and k in varying]
        key = " ".join([str(p.get("phase", r.measurement.op)), *rest])
        points.setdefault(key, []).append((float(p[param]), r.measurement.bytes_per_s / MIB))
    xs = sorted({x for pts in points.values() for x, _ in pts})
    if len(xs) < 2:
        return None
    log = param in ("object_size", "block_size", "io_size") or max(xs) / max(min(xs), 1) >= 16
    if log and xs[0] <= 0:
        log = False
    lines = _lines([(k, sorted(pts)) for k, pts in list(points.items())[:MAX_LINES]], marker=True)
    return svg.line_chart([svg.Panel("MiB/s", lines)],
                          svg.XAxis(param.replace("_", " "), log=log, ticks=[(x, _short(param, x)) for x in xs]),
                          _legend(lines), f"throughput against {param.replace('_', ' ')}", panel_height=240)


def percentiles(results: Sequence[Result]) -> str | None:
    """Completion latency percentiles (ms, log scale), one line per test."""
    rs = [r for r in results if r.measurement and r.measurement.latency.percentiles_ns][:MAX_LINES]
    if not rs:
        return None
    keys = sorted({k for r in rs for k in r.measurement.latency.percentiles_ns}, key=float)
    at = {k: i for i, k in enumerate(keys)}
    lines = _lines([(r.test.id, [(at[k], v / 1e6) for k, v in sorted(r.measurement.latency.percentiles_ns.items(),
                                                                        key=lambda kv: float(kv[0]))])
                    for r in rs], marker=True)
    return svg.line_chart([svg.Panel("latency (ms)", lines, ylog=True)],
                          svg.XAxis("percentile", ticks=[(i, f"p{k}") for i, k in enumerate(keys)]),
                          _legend(lines), "latency percentiles", panel_height=240)


def osd_bars(result: Result) -> str | None:
    """OSD bench per OSD (MiB/s), slow OSDs in red, the median and the slow threshold as lines."""
    m = result.measurement
    per = (m.extra.get("per_osd") or {}) if m else {}
    if not per:
        return None
    names = sorted(per, key=lambda n: (0, int(n.split(".")[-1]), "") if n.split(".")[-1].isdigit() else (1, 0, n))
    slow = set(m.extra.get("slow_osds", []))
    values = [per[n]["bytes_per_s"] / MIB for n in names]
    median = (m.extra.get("median_bytes_per_s") or 0) / MIB
    thr = m.extra.get("slow_threshold", 0.2)
    refs = [svg.RefLine(median, f"median {median:.0f} MiB/s", "#555555"),
            svg.RefLine(median * (1 - thr), f"slow below {median * (1 - thr):.0f} MiB/s", SLOW, "5 3")]
    legend = [svg.LegendItem("slow OSD", SLOW, shape="box")] if slow else []
    return svg.bar_chart(names, values, [SLOW if n in slow else NORMAL for n in names], "MiB/s", refs,
                         "OSD bench per OSD", legend)


def client_bars(result: Result) -> str | None:
    """Each client's bandwidth (MiB/s; ops/s for operations that move no data) over the common window, a client
    flagged for imbalance in red, the clients' median as a line."""
    c = clients_of(result)
    if c is None:
        return None
    per = c["per_client"]
    by_bytes = any(p.get("bytes_per_s") for p in per)
    values = [(p.get("bytes_per_s") or 0.0) / MIB if by_bytes else float(p.get("ops_per_s") or 0.0) for p in per]
    unit = "MiB/s" if by_bytes else "ops/s"
    names = [str(p.get("host")) for p in per]
    slow = set(c.get("imbalanced") or [])
    mid = statistics.median(values)
    legend = [svg.LegendItem("more than 20% below the others", SLOW, shape="box")] if slow else []
    return svg.bar_chart(names, values, [SLOW if n in slow else NORMAL for n in names], unit,
                         [svg.RefLine(mid, f"median {mid:,.1f} {unit}", "#555555")], "per client", legend)


def _varying(results: Sequence[Result]) -> set[str]:
    """The parameters that differ between these results (a missing one counts as None): the ones that tell a
    sweep's lines apart. One pass over the results, not one per key and result."""
    keys = {k for r in results for k in r.test.params}
    seen: dict[str, set[str]] = {k: set() for k in keys}
    for r in results:
        for k in keys:
            seen[k].add(repr(r.test.params.get(k)))
    return {k for k, vals in seen.items() if len(vals) > 1}


def _short(key: str, v) -> str:
    if key in ("object_size", "block_size", "io_size", "total", "image_size") and isinstance(v, (int, float)):
        return format_size(v)
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return str(int(v))
    return str(v)
