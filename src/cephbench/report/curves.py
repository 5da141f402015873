"""Latency against throughput as the load grows (analysis/curves.py): one line of the verdict per curve (its knee),
the points as a table, and the curves of one or more runs overlaid as a chart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from ..analysis.curves import Curve, Knee, Point, doubling_text, in_flight, knees
from ..core.loadsearch import GROWTH_MIN
from ..kinds import ops_unit
from ..core.results import Result
from .format import Table, iops, mib_s, ms

if TYPE_CHECKING:
    from rich.console import Console

MIB = 1024 * 1024
STAT_DASH = {"p50": "", "p99": "6 3", "mean": ""}
STAT_NAME = {"p50": "p50", "p99": "p99 (dashed)", "mean": "mean"}


def unit(c: Curve) -> str:
    return (ops_unit(c.kind) or "ops/s") if c.in_ops else "MiB/s"


def throughput_text(c: Curve, p: Point) -> str:
    return f"{iops(p.ops_per_s)} {unit(c)}" if c.in_ops else f"{mib_s(p.bytes_per_s)} MiB/s"


def latency_text(c: Curve, p: Point) -> str:
    if c.percentiles:
        return f"p50 {ms(p.p50_ns)} ms, p99 {ms(p.p99_ns)} ms"
    return f"mean latency {ms(p.mean_ns)} ms"


def title(c: Curve) -> str:
    return f"{c.level} {c.title}"


def knee_text(c: Curve, k: Knee) -> str:
    """The verdict's line for one curve."""
    head = f"{title(c)}: "
    if k.state == "knee" and k.point is not None and k.after is not None:
        low = " (the lowest load tested: the knee may lie below it)" if k.point is c.points[0] else ""
        return (f"{head}knee at {throughput_text(c, k.point)}, {latency_text(c, k.point)}, at "
                f"{in_flight(k.point)}{low}; past it, per doubling of load: {doubling_text(k.after, c)}; "
                f"bottleneck at the knee: {k.point.bottleneck or 'unknown'}")
    if k.state == "no knee" and k.point is not None and k.after is not None:
        return (f"{head}no knee up to {k.point.load} in flight ({k.point.label}): {throughput_text(c, k.point)}, "
                f"{latency_text(c, k.point)}; the last doubling still gave {doubling_text(k.after, c)}")
    if k.state == "noisy" and k.after is not None and k.resumed is not None:
        a, r = k.after, k.resumed
        return (f"{head}too noisy to tell a knee: throughput {a.rise:+.0%} from {a.frm.label} to {a.to.label}, then "
                f"{r.rise:+.0%} from {r.frm.label} to {r.to.label}, more than the noise of those points "
                f"(±{r.noise:.0%}); repeats (repeat: 3 or more) or longer tests would tell")
    if k.state == "unclear" and k.band:
        lo, hi = k.band[0].frm, k.band[-1].to
        each = ", ".join(f"{s.frm.label} to {s.to.label} {s.gain:+.0%} ±{s.noise:.0%}" for s in k.band)
        return (f"{head}knee not clear: between {in_flight(lo)} ({throughput_text(c, lo)}) and {in_flight(hi)} "
                f"({throughput_text(c, hi)}) each doubling changed throughput within its noise ({each}; the knee "
                f"rule asks {GROWTH_MIN:+.0%}): the knee lies in that band; repeats (repeat: 3 or more) or longer "
                "steps would tell")
    return f"{head}{len(c.points)} loads: too few to find a knee (3 or more needed)"


def knee_lines(results: Sequence[Result]) -> list[str]:
    return [knee_text(c, k) for c, k in knees(results)]


def _spread(c: Curve, p: Point) -> str:
    if p.repeats < 2 or p.low is None or p.high is None:
        return "-"
    fmt = iops if c.in_ops else mib_s
    return f"{fmt(p.low)}–{fmt(p.high)}"


HEADERS = ["load", "in flight", "throughput", "repeats (min–max)", "MiB/s", "p50 ms", "p99 ms", "mean ms",
           "bottleneck", "test", "knee"]


def _mark(k: Knee | None, p: Point) -> str:
    if k is None or k.point is not p:
        return ""
    return {"knee": "KNEE", "no knee": "highest, no knee", "noisy": "noisy", "unclear": "band from"}.get(k.state, "")


def table(c: Curve, k: Knee | None, run: str = "") -> Table:
    """The points of a curve: load, throughput, latency, the bottleneck there; the knee marked."""
    rows = [[p.label, str(p.load), throughput_text(c, p), f"{p.repeats} ({_spread(c, p)})" if p.repeats > 1
             else "1", mib_s(p.bytes_per_s), ms(p.p50_ns), ms(p.p99_ns), ms(p.mean_ns), p.bottleneck or "-",
             p.test_id, _mark(k, p)] for p in c.points]
    notes = [knee_text(c, k)] if k is not None else []
    return Table(f"{run + ': ' if run else ''}{title(c)}: latency against throughput by load", list(HEADERS), rows,
                 notes)


@dataclass(frozen=True)
class Overlaid:
    """One curve of one run, for a chart that overlays several."""
    run: str                 # "A", "B", or "" for a report of one run
    curve: Curve
    knee: Knee | None


def _stats(c: Curve) -> list[tuple[str, str]]:
    """The latencies drawn: (name, Point field)."""
    return [("p50", "p50_ns"), ("p99", "p99_ns")] if c.percentiles else [("mean", "mean_ns")]


def chart(lines: Sequence[Overlaid]) -> str | None:
    """Latency (ms, log scale) against throughput, one line per run and latency statistic, each point labelled with
    its load, the knee ringed."""
    if not lines:
        return None
    from . import svg       # the charts' (the HTML report's), not the terminal's
    first = lines[0].curve
    drawn: list[svg.Line] = []
    for i, o in enumerate(lines):
        color, _ = svg.series_style(i)
        for name, attr in _stats(o.curve):
            pts, labels, ring = [], [], None
            for p in o.curve.points:
                x, y = o.curve.throughput(p), getattr(p, attr)
                if x is None or y is None:
                    continue
                if o.knee is not None and o.knee.state == "knee" and o.knee.point is p:
                    ring = len(pts)
                pts.append((x / MIB if not o.curve.in_ops else x, y / 1e6))
                labels.append(p.label if name != "p50" or not o.curve.percentiles else "")
            label = f"{o.run + ' ' if o.run else ''}{STAT_NAME[name]}"
            drawn.append(svg.Line(label, pts, color, STAT_DASH[name], marker=True, labels=tuple(labels),
                                  ring=ring if name != "p50" else None))
    if not any(ln.points for ln in drawn):
        return None
    legend = [svg.LegendItem(ln.label, ln.color, ln.dash, "marker") for ln in drawn]
    return svg.line_chart([svg.Panel("latency (ms)", drawn, ylog=True)], svg.XAxis(unit(first)), legend,
                          f"{title(first)}: latency against throughput", panel_height=260)


def report_curves(results: Sequence[Result]) -> list[tuple[Table, str | None, str]]:
    """A report's curves: each curve's table, chart and verdict line."""
    out = []
    for c, k in knees(results):
        out.append((table(c, k), chart([Overlaid("", c, k)]), knee_text(c, k)))
    return out


# the terminal's rank of each column of HEADERS (with "run" first in compare's overlay): on a narrow terminal the
# highest goes first (docs/report.md, "Narrow terminals"); the load, throughput, test and knee stay
RANKS = {"run": 0, "load": 0, "in flight": 5, "throughput": 0, "repeats (min–max)": 4, "MiB/s": 6, "p50 ms": 2,
         "p99 ms": 1, "mean ms": 3, "bottleneck": 7, "test": 0, "knee": 0}
LEFT = {"run", "load", "repeats (min–max)", "bottleneck", "test", "knee"}


def print_table(console: "Console", t: Table) -> None:
    """A curve's table (or compare's overlay of one curve) through textout.print_table, the knee's row bold."""
    from .textout import Column, print_table as fitted

    def cell(i: int):
        return lambda row: row[i]
    columns = [Column(h, cell(i), right=h not in LEFT, rank=RANKS[h]) for i, h in enumerate(t.headers)]
    fitted(console, t.title, columns, t.rows, row_style=lambda row: "bold" if row[-1] else "")


def print_curves(console: "Console", results: Sequence[Result]) -> None:
    """Each curve's points as a table, in the style of every terminal table (textout.py)."""
    for c, k in knees(results):
        print_table(console, table(c, k))


def overlaid(runs: Sequence[tuple[str, Sequence[Result]]]) -> list[list[Overlaid]]:
    """The curves of several runs, those of one operation, size and parameters together (a curve only one run has
    stays alone), in the order the first run that has it ran them."""
    by_key: dict[str, list[Overlaid]] = {}
    for name, results in runs:
        for c, k in knees(results):
            by_key.setdefault(c.key, []).append(Overlaid(name, c, k))
    return list(by_key.values())


def overlay_table(group: Sequence[Overlaid]) -> Table:
    """The points of one curve in every run, run by run, each run's knee line as a note."""
    rows, notes = [], []
    for o in group:
        t = table(o.curve, o.knee)
        rows += [[o.run, *row] for row in t.rows]
        notes += [f"{o.run}: {n}" for n in t.notes]
    return Table(f"{title(group[0].curve)}: latency against throughput by load", ["run", *HEADERS], rows, notes)
