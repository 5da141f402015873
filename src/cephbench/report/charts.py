"""The report's charts as inline SVG strings (drawn by svg.py): what each chart shows, chosen from the results."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from ..analysis.compare import MetricDelta
from ..analysis.variants import GroupKey
from ..core.results import LatencyBreakdown, Result, Sample
from ..core.units import format_size
from ..kinds import SIZE_PARAMS, ops_unit
from . import svg
from .clients import clients_of
from .format import iops, mib_s, pct
from .gap import Gap

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


def ops_name(rs: Sequence[Result]) -> str:
    """The results' operations per second as their kinds name them (objects/s, IOPS, req/s: kinds.ops_unit), or
    "ops/s" for results of kinds that name them differently."""
    names = {ops_unit(r.test.kind) for r in rs} - {None}
    return names.pop() if len(names) == 1 else "ops/s"


def _panels(rs: Sequence[Result]) -> list[str]:
    """What the time-series chart of these results shows: bandwidth, operations when a tool counts them (named as
    its kind does), host CPU."""
    panels = ["bandwidth"]
    if any(s.ops_per_s for r in rs for s in r.measurement.timeseries):
        panels.append(ops_name(rs))
    if any(len(_cpu_series(r)) >= 2 for r in rs):
        panels.append("host CPU")
    return panels


def partial(s: Sample) -> bool:
    """Whether a tool measured this second only in part (a run's first or last second): such a second is not drawn,
    since a half-measured second reads as a stall. `Sample.partial` comes with issue 18 (core/results.py); a run
    without the field has no partial seconds."""
    return bool(getattr(s, "partial", False))


def _whole(ts: Sequence[Sample]) -> list[Sample]:
    return [s for s in ts if not partial(s)]


PARTIAL_LABEL = "a second measured only in part: not drawn"


def _partial_bands(rs: Sequence[Result]) -> list[svg.Band]:
    """One shaded band per second that some result measured only in part, centred on the sample's time."""
    ts = sorted({s.t_s for r in rs if r.measurement for s in r.measurement.timeseries if partial(s)})
    return [svg.Band(t - 0.5, t + 0.5, PARTIAL_LABEL) for t in ts]


def _partial_legend(bands: Sequence[svg.Band]) -> list[svg.LegendItem]:
    return [svg.LegendItem("partial second (not drawn)", svg.BAND_FILL, shape="box", opacity=0.5)] if bands else []


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
    ops = ops_name(rs)
    panels = {"bandwidth": svg.Panel("MiB/s"), ops: svg.Panel(ops),
              "host CPU": svg.Panel("CPU busy (%)\nbusiest host", ymax=100.0)}
    series: dict[str, list[tuple[str, list[tuple[float, float]]]]] = {p: [] for p in panels}
    for r in rs:
        ts = _whole(r.measurement.timeseries)
        series["bandwidth"].append((r.test.id, [(s.t_s, (s.bytes_per_s or 0) / MIB) for s in ts]))
        series[ops].append((r.test.id, [(s.t_s, float(s.ops_per_s or 0)) for s in ts]))
        series["host CPU"].append((r.test.id, [(i, 100 * c) for i, c in enumerate(_cpu_series(r), 1)]))
    for name, p in panels.items():
        p.lines = _lines(series[name])
    bands = _partial_bands(rs)
    return svg.line_chart([panels[p] for p in shown], svg.XAxis("time (s)"),
                          _legend(panels["bandwidth"].lines) + _partial_legend(bands),
                          f"{timeseries_caption(rs)} over time", bands=bands)


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
    log = param in SIZE_PARAMS or max(xs) / max(min(xs), 1) >= 16
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


def client_bars(result: Result) -> str | None:
    """Each client's bandwidth (MiB/s; its kind's operations per second for operations that move no data) over the
    common window, a client flagged for imbalance in red, the clients' median as a line."""
    c = clients_of(result)
    if c is None:
        return None
    per = c["per_client"]
    by_bytes = any(p.get("bytes_per_s") for p in per)
    values = [(p.get("bytes_per_s") or 0.0) / MIB if by_bytes else float(p.get("ops_per_s") or 0.0) for p in per]
    unit = "MiB/s" if by_bytes else (ops_unit(result.test.kind) or "ops/s")
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
    if (key in SIZE_PARAMS or key == "image_size") and isinstance(v, (int, float)):
        return format_size(v)
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return str(int(v))
    return str(v)


# ---- the verdict as a picture -------------------------------------------------------------------

HARDWARE = "#2e86c1"
LIMIT = "#d35400"
GOOD, FAIR, POOR = "#1e8449", "#b7950b", "#c0392b"


def efficiency_color(eff: float) -> str:
    return GOOD if eff >= 0.8 else FAIR if eff >= 0.5 else POOR


def _rate(bytes_per_s: float, size: int | None, unit: str = "ops/s") -> str:
    """MiB/s, with the operations per second it means for ops under 1 MiB (where ops, not bytes, are what a user
    counts), named as the test's kind counts them (objects/s, IOPS, req/s)."""
    text = f"{mib_s(bytes_per_s)} MiB/s"
    return text + f" ({iops(bytes_per_s / size)} {unit})" if size and size < MIB else text


GAP_WIDTH = 1080          # the page's width: the verdict's charts are the first thing a reader sees


def gap(g: Gap) -> str:
    """From the hardware baseline (pale) through each term of the ceiling after replication, EC or the journal
    (solid; the one that sets the ceiling in orange) to what was measured, over one MiB/s axis."""
    mib = lambda v: None if v is None else v / MIB  # noqa: E731
    rows = []
    for row in g.rows:
        if row.ceiling is None:
            text = f"{mib_s(row.hardware)} MiB/s"
        else:
            text = (f"{mib_s(row.hardware)} → " if row.hardware else "") + f"{mib_s(row.ceiling)} MiB/s"
        if row.limit:
            text += "  ← sets the ceiling" + (f" ({row.name})" if row.name not in (row.resource, "disks") else "")
        rows.append(svg.BulletRow(row.resource, mib(row.ceiling), LIMIT if row.limit else HARDWARE,
                                  back=mib(row.hardware), text=text, strong=row.limit, tooltip=row.formula))
    rows.append(svg.BulletRow("measured", mib(g.measured_bytes_per_s), efficiency_color(g.efficiency),
                              text=f"{_rate(g.measured_bytes_per_s, g.op_size, g.ops_unit)} = {pct(g.efficiency)}",
                              strong=True, tooltip=g.test_id))
    vals = [v for row in g.rows for v in (row.hardware, row.ceiling) if v] + [g.measured_bytes_per_s]
    log = max(vals) / max(min(vals), 1e-9) > 30
    legend = [svg.LegendItem("hardware (baseline), before replication, EC, journal", HARDWARE, shape="box",
                             opacity=svg.FADED)] if any(row.hardware for row in g.rows) else []
    if any(row.ceiling is not None and not row.limit for row in g.rows):
        legend.append(svg.LegendItem("a term of the ceiling", HARDWARE, shape="box"))
    legend += [svg.LegendItem("sets the ceiling", LIMIT, shape="box"),
               svg.LegendItem("measured", efficiency_color(g.efficiency), shape="box")]
    headline = f"{g.title}: {pct(g.efficiency)} of its ceiling · bottleneck: {g.bottleneck}"
    return svg.bullet_chart(rows, "MiB/s", headline,
                            [svg.RefLine(g.ceiling_bytes_per_s / MIB, f"ceiling {mib_s(g.ceiling_bytes_per_s)} MiB/s",
                                         "#333333", "5 3")], legend, log=log, width=GAP_WIDTH)


BREAKDOWN_PARTS = (("network/messenger", "#2e86c1"), ("OSD queue", "#8e44ad"), ("replica writes", "#16a085"),
                   ("commit: kv_sync (WAL/DB)", "#d35400"), ("commit: data device wait", "#a04000"),
                   ("commit: rest", "#e59866"), ("other OSD processing", "#7f8c8d"),
                   ("not split (counter missing)", "#c8ced3"))


def breakdown_parts(b: LatencyBreakdown) -> list[float | None]:
    """The breakdown in ms, in BREAKDOWN_PARTS' order: BlueStore's commit split into kv_sync, the data device's
    wait and the rest (kv_sync and the wait scaled down to the commit when the averages add up past it), and
    what no counter explains as "not split"."""
    ms = lambda s: None if s is None else s * 1000  # noqa: E731
    kv, dev, commit = b.kv_sync_s or 0.0, b.device_wait_s or 0.0, b.commit_s
    if commit is not None and kv + dev > commit > 0:
        kv, dev = kv * commit / (kv + dev), dev * commit / (kv + dev)
    rest = max(0.0, commit - kv - dev) if commit is not None else None
    known = [b.network_s, b.queue_s, b.replica_s, kv if commit is not None else None,
             dev if commit is not None else None, rest, b.other_s]
    unsplit = max(0.0, b.client_s - sum(v for v in known if v is not None))
    return [ms(v) for v in known] + [unsplit * 1000 if unsplit > b.client_s * 0.005 else None]


def _ms(v: float) -> str:
    return f"{v:,.2f} ms" if v < 10 else f"{v:,.0f} ms"


def latency_breakdown(results: Sequence[Result]) -> str | None:
    """One stacked bar per test: the share of its mean client latency each part took, from the OSDs' counters
    (in % so that a 4 KiB and a 4 MiB test read alike; each part's ms inside it, the client's mean at the right)."""
    rs = [r for r in results if r.analysis and r.analysis.breakdown][:MAX_LINES]
    if not rs:
        return None
    values = [breakdown_parts(r.analysis.breakdown) for r in rs]
    used = [i for i in range(len(BREAKDOWN_PARTS)) if any(v[i] for v in values)]
    parts = [svg.LegendItem(BREAKDOWN_PARTS[i][0], BREAKDOWN_PARTS[i][1], shape="box") for i in used]
    shares = []
    for v in values:
        total = sum(v[i] or 0.0 for i in used) or 1.0
        shares.append([None if v[i] is None else 100 * v[i] / total for i in used])
    return svg.stacked_bars([r.test.id for r in rs], parts, shares, "share of the mean latency (%)",
                            "where the mean latency went",
                            [f"mean {_ms(r.analysis.breakdown.client_s * 1000)}" for r in rs],
                            [["" if v[i] is None else _ms(v[i]) for i in used] for v in values])


SMALL_WIDTH = 560          # two utilization charts side by side on a 1280 px screen


def _link_share(link) -> list[float]:
    """A link's busier direction each second, in % of its speed."""
    bytes_speed = link.speed_bits_per_s / 8
    return [100 * max(rx, tx) / bytes_speed for rx, tx in zip(link.rx_bytes_per_s, link.tx_bytes_per_s)]


def _device_share(d) -> list[float]:
    """A device's busy share each second, in %; for a device under a cgroup throttle the larger of that and its
    share of the throttle (a throttled I/O waits before the block layer counts the device busy)."""
    limits = [(d.limit_read_bytes_per_s, d.read_bytes_per_s), (d.limit_write_bytes_per_s, d.write_bytes_per_s),
              (d.limit_read_iops, d.submitted("read")), (d.limit_write_iops, d.submitted("write"))]
    out = []
    for i, b in enumerate(d.busy):
        shares = [b] + [series[i] / limit for limit, series in limits if limit and i < len(series)]
        out.append(100 * max(shares))
    return out


def _link_mib(link) -> list[float]:
    """A link's busier direction each second, in MiB/s (its speed unknown)."""
    return [max(rx, tx) / MIB for rx, tx in zip(link.rx_bytes_per_s, link.tx_bytes_per_s)]


def utilization(result: Result) -> str | None:
    """Throughput next to each OSD device's busy share and each link's share of its speed, per second (a link
    whose speed the kernel does not report in MiB/s, on a panel of its own). The hosts' series start when their
    watch starts, a second or two before the tool's first second."""
    ev, m = result.evidence, result.measurement
    if ev is None or m is None:
        return None
    devices = [d for d in ev.devices if len(d.busy) >= 2][:MAX_LINES]
    links = [lk for lk in ev.links if len(lk.rx_bytes_per_s) >= 2][:MAX_LINES]
    if not devices and not links:
        return None
    panels: list[svg.Panel] = []
    legend: list[svg.LegendItem] = []
    ts = _whole(m.timeseries)
    if len(ts) >= 2:
        through = svg.Line("throughput", [(s.t_s, (s.bytes_per_s or 0) / MIB) for s in ts], "#222222")
        panels.append(svg.Panel("test\nMiB/s", [through]))
        legend.append(svg.LegendItem("throughput", "#222222"))
    n = 0
    throttled = any(d.limit_read_bytes_per_s or d.limit_write_bytes_per_s or d.limit_read_iops or d.limit_write_iops
                    for d in devices)
    name = lambda lk: f"{lk.host}:{lk.iface} ({lk.network})"  # noqa: E731
    for title, ymax, named in (
            ("devices\nbusy %" + (" or\nof throttle" if throttled else ""), 100.0,
             [(f"{d.host}:{d.device} ({d.role})", list(enumerate(_device_share(d), 1))) for d in devices]),
            ("links\n% of speed", 100.0,
             [(name(lk), list(enumerate(_link_share(lk), 1))) for lk in links if lk.speed_bits_per_s]),
            ("links MiB/s\nspeed unknown", None,
             [(name(lk), list(enumerate(_link_mib(lk), 1))) for lk in links if not lk.speed_bits_per_s])):
        if not named:
            continue
        lines = [svg.Line(label, pts, *svg.series_style(n + i)) for i, (label, pts) in enumerate(named)]
        n += len(lines)
        panels.append(svg.Panel(title, lines, ymax=ymax))
        legend += _legend(lines)
    bands = _partial_bands([result])
    return svg.line_chart(panels, svg.XAxis("time (s)"), legend + _partial_legend(bands),
                          f"{result.test.id}: utilization over time", panel_height=90, width=SMALL_WIDTH,
                          bands=bands)


# ---- % change (the Argonaut-vs-Bobtail view: a run's variants, and compare's runs) ---------------------------

MAX_CHANGE_ROWS = 40      # beyond this a bar chart is unreadable: the largest changes are shown
NOT_SIGNIFICANT = 0.35    # the opacity of a change that is not significant (or has too few repeats to tell)


def block_title(key: GroupKey, level: bool = True) -> str:
    """`RADOS write · 4KiB`: a level (unless the chart is the level's), an operation and an op size
    (analysis.variants.group_of)."""
    name, op, size = key
    return (f"{name} {op}" if level else op) + (f" · {format_size(size)}" if size else "")


@dataclass(frozen=True)
class ChangeBlock:
    """Tests of one heading (a level, operation and op size): a label and, per series, its change or None."""
    title: str
    rows: tuple[tuple[str, tuple[MetricDelta | None, ...]], ...]


def pct_change(blocks: Sequence[ChangeBlock], series: Sequence[tuple[str, str]], title: str,
               label: str = "") -> str | None:
    """Horizontal bars of % change (B's median against A's), one block per heading, one bar per series (label,
    colour) and test, its figure at its end; faded where the change is not significant. Past MAX_CHANGE_ROWS
    tests, only the largest changes are drawn, and the title says so."""
    rows = [(b.title, name, deltas) for b in blocks for name, deltas in b.rows
            if any(d is not None and d.delta_pct is not None for d in deltas)]
    if not rows:
        return None
    if len(rows) > MAX_CHANGE_ROWS:
        def size(row: tuple[str, str, tuple[MetricDelta | None, ...]]) -> float:
            return max(abs(d.delta_pct or 0.0) for d in row[2] if d is not None)
        keep = set(map(id, sorted(rows, key=lambda row: -size(row))[:MAX_CHANGE_ROWS]))
        title = f"{title}; the {MAX_CHANGE_ROWS} largest changes of {len(rows)}"
        rows = [row for row in rows if id(row) in keep]
    headings: list[tuple[int, str]] = []
    for i, (block, _, _) in enumerate(rows):
        if not headings or headings[-1][1] != block:
            headings.append((i, block))
    groups = [svg.BarGroup(name, color, [d.delta_pct if (d := row[2][j]) is not None else None for row in rows],
                           [1.0 if (d := row[2][j]) is not None and d.sig.significant else NOT_SIGNIFICANT
                            for row in rows])
              for j, (name, color) in enumerate(series)]
    faded = svg.LegendItem("faded: not significant", "#7f7f7f", shape="box", opacity=NOT_SIGNIFICANT)
    return svg.hbar_chart([row[1] for row in rows], groups, "% change of the median", title, unit="%",
                          label=label, headings=headings, legend=[faded], figures=True)
