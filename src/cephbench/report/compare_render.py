"""`cephbench compare` output: the terminal's tables (textout.print_table, as `show`'s), Markdown, and HTML with an
inline percent-change chart per pair of runs (horizontal bars of % change per matched test, as in the
Argonaut-vs-Bobtail summary). Every string that comes from a run is escaped (Jinja2 autoescape, and
the Markdown table cells have their pipes escaped).
"""

from __future__ import annotations

import io
from typing import Sequence

from rich.console import Console

from ..analysis.compare import (COMPARED, CPU_METRICS, METRICS, Metric, MetricDelta, PairComparison, Side,
                                TestDelta, metric_label)
from ..core.stats import ALPHA, repeats_needed
from ..analysis.variants import group_of, grouped
from . import charts
from .curves import Overlaid, chart as curve_chart, overlaid, overlay_table, print_table as print_curve_table
from .cpu import figure
from .format import iops, mib_s, ms
from .sections import Table as ReportTable
from .textout import Column, print_table

SPREAD_MIN_N = 3          # below this many repeats a min–max is marked as the one or two values it is


def letter(i: int) -> str:
    """The name of the i-th compared run after A: B, C, … Z, then R27, R28, …"""
    return chr(ord("B") + i) if i < 25 else f"R{i + 2}"


def value(metric: Metric, v: float | None) -> str:
    if metric.name == "bytes_per_s":
        return mib_s(v)
    if metric.name == "ops_per_s":
        return iops(v)
    if metric in CPU_METRICS:
        return figure(v)
    return ms(v)


def delta_text(d: MetricDelta) -> str:
    if d.delta_pct is None:
        return "-"
    return "+0.0%" if abs(d.delta_pct) < 0.05 else f"{d.delta_pct:+.1f}%"   # never "-0.0%"


def spread_text(metric: Metric, side: Side) -> str:
    """min–max of one side's repeats; fewer than SPREAD_MIN_N repeats are said to be so few."""
    if side.n == 1:
        return "one run"
    text = f"{value(metric, side.low)}–{value(metric, side.high)}"
    return f"{text} (n={side.n})" if side.n < SPREAD_MIN_N else text


def _n(d: MetricDelta) -> str:
    return f"{d.sig.n_a}/{d.sig.n_b}"


def _few(pairs: Sequence[PairComparison]) -> bool:
    return any(d.sig.n_a < SPREAD_MIN_N or d.sig.n_b < SPREAD_MIN_N for p in pairs for t in p.tests for d in t.metrics)


def curve_groups(pairs: Sequence[PairComparison]) -> list[list[Overlaid]]:
    """Each latency-throughput curve with the same curve of every run that has it (report/curves.py)."""
    return overlaid([("A", pairs[0].a.results), *((letter(i), p.b.results) for i, p in enumerate(pairs))])


def curve_svgs(pairs: Sequence[PairComparison]) -> list[str | None]:
    """Each curve's chart, the runs overlaid, in curve_tables' order."""
    return [curve_chart(g) for g in curve_groups(pairs)]


def curve_tables(pairs: Sequence[PairComparison]) -> list[ReportTable]:
    return [overlay_table(g) for g in curve_groups(pairs)]


def run_names(pairs: Sequence[PairComparison]) -> list[tuple[str, str]]:
    return [("A", str(pairs[0].a.path)), *((letter(i), str(p.b.path)) for i, p in enumerate(pairs))]


def explain(pairs: Sequence[PairComparison]) -> list[str]:
    """What the columns mean; the repeats' caveats only where they apply."""
    too_few = any(p.too_few() for p in pairs)
    lines = [f"Each side is the median of its repeats and their min–max (n = repeats of A/B); Δ% is B's median "
             f"against A's. Significance: two-sided Mann-Whitney U on the repeats, α = {ALPHA:g}; ~ = not "
             f"significant" + (", or too few repeats to tell (see below)" if too_few else "") + "; beside it the "
             f"test's p. min p: the smallest p the test can give with those repeats (every repeat of one side beyond "
             f"every repeat of the other: 3 and 3 give 0.1, 4 and 4 0.029); repeats: 'all 3 B < all 3 A' when no "
             f"repeat of one side reaches the other's, 'overlap' when they mix."]
    if _few(pairs):
        lines.append(f"A min–max of fewer than {SPREAD_MIN_N} repeats is marked (n=2), or 'one run': one or two "
                     f"values say little about the spread.")
    return lines


def pair_notes(pair: PairComparison, b: str) -> list[tuple[str, str]]:
    """What one pair leaves out or cannot tell, and the command that matches more of its tests: (text, command)
    pairs, the command empty when there is none (HTML shows it as code)."""
    lines = []
    few = pair.too_few()
    if few:
        lines.append((f"{few} of {len(pair.tests)} matched tests have too few repeats for the test to reach "
                      f"α = {ALPHA:g} at all ({repeats_needed()} per side are enough): their ~ means 'cannot "
                      f"tell', not 'no change'. Give the suite's workloads repeat: {repeats_needed()} or more.", ""))
    separated = separated_unproven(pair, b)
    if separated:
        floors = sorted({f"{d.sig.n_a} and {d.sig.n_b} repeats: {d.sig.floor:.2g}"
                         for t in pair.tests for d in t.metrics if d.sig.order and not d.sig.significant})
        lines.append((f"no repeat of one side reaches the other's, yet the test cannot call it significant at α = "
                      f"{ALPHA:g} (its smallest p with {'; '.join(floors)}): {'; '.join(separated)}", ""))
    if pair.only_a:
        lines.append((f"only in A: {', '.join(pair.only_a)}", ""))
    if pair.only_b:
        lines.append((f"only in {b}: {', '.join(pair.only_b)}", ""))
    if pair.suggestion:
        lines.append((f"tests left unmatched differ in {pair.suggestion.apart()}; to compare them anyway:",
                      pair.suggestion.command()))
    elif pair.differs:
        lines.append((f"tests left unmatched differ in {', '.join(pair.differs)}; leaving that out of the match "
                      f"would make different tests of one run one test", ""))
    return lines


def separated_unproven(pair: PairComparison, b: str) -> list[str]:
    """Each matched test whose repeats are completely separated on a metric the test does not call significant
    (too few repeats for α): "rados-write-64KiB-t4: MiB/s, IOPS all 3 B > all 3 A, mean lat ms all 3 B < all 3 A"."""
    out = []
    for t in pair.tests:
        by_order: dict[str, list[str]] = {}
        for d in t.metrics:
            if d.sig.order and not d.sig.significant:
                by_order.setdefault(d.sig.separation(b), []).append(metric_label(d.metric, t.test.kind))
        if by_order:
            out.append(f"{t.label}: " + ", ".join(f"{', '.join(labels)} {seen}" for seen, labels in by_order.items()))
    return out


def legend(pairs: Sequence[PairComparison]) -> list[str]:
    """The lines under the text and Markdown outputs: which run is which, what the columns mean, what is missing."""
    lines = [f"{name} = {path}" for name, path in run_names(pairs)] + explain(pairs)
    for i, p in enumerate(pairs):
        lines += [f"A vs {letter(i)}: {text} {command}".rstrip() for text, command in pair_notes(p, letter(i))]
    return lines


def _shared_label(m: Metric, tests: Sequence[TestDelta]) -> str:
    """A metric as the tests' kinds name it when they agree (objects/s, IOPS, req/s), else its own label (ops/s)."""
    names = {metric_label(m, t.test.kind) for t in tests if any(d.metric is m for d in t.metrics)}
    return names.pop() if len(names) == 1 else m.label


def _geomean_text(pair: PairComparison, baselines: bool = False) -> str:
    g = pair.geomean(baselines)
    tests = pair.baseline_tests if baselines else pair.cluster_tests
    names = {m.name: _shared_label(m, tests) for m in COMPARED}
    return "; ".join(f"{names[k]} ×{v:.3f} ({(v - 1) * 100:+.1f}%)" for k, v in g.items())


def summary(pair: PairComparison, b: str) -> list[str]:
    """The pair's headline, of the cluster's tests only, then the baselines' apart (the hardware, not the cluster)."""
    n = len(pair.cluster_tests)
    lines = [f"geometric mean of {b}/A over {n} matched cluster test{'s' if n != 1 else ''}: {_geomean_text(pair)}"
             if n else f"no cluster test matched between A and {b}: nothing to summarise"
             + (" (see the command below)" if pair.suggestion else "")]
    m = len(pair.baseline_tests)
    if m:
        lines.append(f"baselines (the hardware, not in the summary): {m} matched, geometric mean of {b}/A: "
                     f"{_geomean_text(pair, baselines=True)}")
    return lines


def _rows(pair: PairComparison, b: str = "B") -> list[dict[str, str | bool]]:
    """One row per matched test and metric, as every format shows it."""
    rows: list[dict[str, str | bool]] = []
    for td in pair.tests:
        for i, d in enumerate(td.metrics):
            w = d.worse_pct or 0
            cls = ("worse" if w > 0 else "better" if w < 0 else "") if d.sig.significant else ""
            sa, sb = d.side_a, d.side_b
            rows.append({"test": td.label, "first": i == 0, "last": i == len(td.metrics) - 1,
                         "metric": metric_label(d.metric, td.test.kind), "a": value(d.metric, sa.median),
                         "a_spread": spread_text(d.metric, sa), "b": value(d.metric, sb.median),
                         "b_spread": spread_text(d.metric, sb), "delta": delta_text(d), "sig": d.sig.shown(),
                         "floor": f"{d.sig.floor:.2g}", "seen": d.sig.separation(b), "n": _n(d), "cls": cls})
    return rows


# ---- terminal ------------------------------------------------------------------------------

def columns(b: str) -> list[Column]:
    """compare's terminal columns over _rows' dicts; on a narrow terminal the highest rank goes first (docs/report.md,
    "Narrow terminals"): the min–max, then min p, n, and the repeats' order; test, metric, medians, Δ% and sig
    stay."""
    def cell(key: str):
        return lambda r: str(r[key])
    return [Column("test", lambda r: str(r["test"]) if r["first"] else "", right=False),
            Column("metric", cell("metric"), right=False), Column("A median", cell("a")),
            Column("A min–max", cell("a_spread"), right=False, rank=5), Column(f"{b} median", cell("b")),
            Column(f"{b} min–max", cell("b_spread"), right=False, rank=4), Column("Δ%", cell("delta")),
            Column("sig", cell("sig"), right=False), Column("min p", cell("floor"), rank=3),
            Column(f"n A/{b}", cell("n"), rank=2), Column("repeats", cell("seen"), right=False, rank=1)]


def _style(r: dict[str, str | bool]) -> str:
    return {"worse": "red", "better": "green"}.get(str(r["cls"]), "")


def print_text(console: Console, pairs: Sequence[PairComparison]) -> None:
    """Each pair's table through the terminal's one table code (textout.print_table: whole columns left out by
    rank on a narrow terminal, and one line naming them), its summary; the curves; the legend. The lines are never
    wrapped: a suggested command must paste as one line."""
    for i, pair in enumerate(pairs):
        b = letter(i)
        print_table(console, f"A vs {b}: {pair.a.name} → {pair.b.name}", columns(b), _rows(pair, b),
                    row_style=_style)
        for line in summary(pair, b):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    for t in curve_tables(pairs):
        print_curve_table(console, t)
        for n in t.notes:
            console.print(n, markup=False, highlight=False, soft_wrap=True)
    for line in legend(pairs):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def render_text(pairs: Sequence[PairComparison], width: int = 160) -> str:
    buf = io.StringIO()
    print_text(Console(file=buf, width=width, highlight=False, color_system=None), pairs)
    return buf.getvalue()


# ---- markdown -------------------------------------------------------------------------------

def _md(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def render_markdown(pairs: Sequence[PairComparison], charts: Sequence[str | None] = (),
                    curve_charts: Sequence[str | None] = ()) -> str:
    """Markdown; `charts[i]`, when given, is the file name of pair i's SVG chart, linked under its table;
    `curve_charts[i]` that of the i-th latency-throughput curve (curve_svgs)."""
    out = ["# cephbench compare", ""]
    for i, pair in enumerate(pairs):
        b = letter(i)
        out += [f"## A vs {b}: {_md(pair.a.name)} → {_md(pair.b.name)}", "",
                f"| test | metric | A median | A min–max | {b} median | {b} min–max | Δ% | sig | min p | n A/{b} "
                f"| repeats |", "|---|---|--:|---|--:|---|--:|---|--:|--:|---|"]
        for r in _rows(pair, b):
            out.append(f"| {_md(str(r['test']))} | {r['metric']} | {r['a']} | {r['a_spread']} | {r['b']} | "
                       f"{r['b_spread']} | {r['delta']} | {r['sig']} | {r['floor']} | {r['n']} | {r['seen']} |")
        out += ["", *(_md(line[0].upper() + line[1:]) for line in summary(pair, b)), ""]
        if i < len(charts) and charts[i]:
            out += [f"![percent change, A vs {b}]({charts[i]})", ""]
    for i, t in enumerate(curve_tables(pairs)):
        out += [f"## {_md(t.title)}", "", "| " + " | ".join(t.headers) + " |", "|" + "---|" * len(t.headers)]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in t.rows]
        out += ["", *(f"- {_md(n)}" for n in t.notes), ""]
        if i < len(curve_charts) and curve_charts[i]:
            out += [f"![latency against throughput, the runs overlaid]({curve_charts[i]})", ""]
    out += [f"- {_md(line)}" for line in legend(pairs)]
    return "\n".join(out) + "\n"


# ---- chart and HTML ----------------------------------------------------------------------------

METRIC_COLORS = dict(zip((m.name for m in METRICS), ("#1f77b4", "#2ca02c", "#ff7f0e", "#d62728")))


def pct_change_svg(pair: PairComparison, b_name: str = "B") -> str | None:
    """The % change chart a run's variants get (charts.pct_change): one bar per matched test and metric, B against
    A, tests grouped by level, operation and op size; faded bars are not significant (`~`)."""
    metrics = [m for m in METRICS if any(d.metric is m for t in pair.tests for d in t.metrics)]
    blocks = [charts.ChangeBlock(charts.block_title(key), tuple(
                  (t.label, tuple(next((d for d in t.metrics if d.metric is m), None) for m in metrics))
                  for t in tests))
              for key, tests in grouped(pair.tests, lambda t: group_of(t.test))]
    series = [(_shared_label(m, pair.tests) if m.higher_is_better else f"{m.label} (lower is better)",
               METRIC_COLORS[m.name]) for m in metrics]
    return charts.pct_change(blocks, series, f"% change, {b_name} against A",
                             f"{pair.b.name} against {pair.a.name}")


def render_html(pairs: Sequence[PairComparison]) -> str:
    """One self-contained page in the report's style (templates/style.css.j2, shared with report.html)."""
    from datetime import datetime, timezone

    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("cephbench.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    data = []
    for i, pair in enumerate(pairs):
        b = letter(i)
        # svg.py escapes every text it writes (test names and run names come from the run)
        data.append({"b_name": b, "a": pair.a.name, "b": pair.b.name, "rows": _rows(pair, b),
                     "summary": summary(pair, b),
                     "notes": pair_notes(pair, b), "svg": pct_change_svg(pair, b)})
    curves = [(overlay_table(g), curve_chart(g)) for g in curve_groups(pairs)]
    return env.get_template("compare.html.j2").render(
        pairs=data, curves=curves, runs=[p["a"] for p in data[:1]] + [p["b"] for p in data],
        legend={"runs": run_names(pairs), "lines": explain(pairs)},
        chart_count=sum(1 for p in data if p["svg"]) + sum(1 for _, svg in curves if svg),
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
