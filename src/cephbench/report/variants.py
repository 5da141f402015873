"""The Variants section of a run with variants (issue 17): the Argonaut-vs-Bobtail view. Each test's % change under
every variant against the first, per level as a chart (charts.pct_change, which `compare` draws too) and a table;
a summary per level and operation; the same in report.md and on the terminal.

The figures are analysis/variants.py's; what a change and its significance look like is compare's (compare_render).
"""

from __future__ import annotations

from typing import Sequence

from rich.console import Console

from ..analysis.compare import Side, metric_label
from ..core.stats import ALPHA, repeats_needed
from ..analysis.variants import Summary, VariantsView, VariantTest
from . import charts
from .compare_render import delta_text, spread_text, value
from .sections import Table

REFERENCE = "reference"


def _pct(v: float) -> str:
    return "+0.0%" if abs(v) < 0.05 else f"{v:+.1f}%"      # never "-0.0%"


def notes(view: VariantsView, chart: bool = True) -> list[str]:
    """What the figures are, and the repeats' caveat where it applies (compare's n rule)."""
    lines = [f"Each variant's figure is the median of its repeats; Δ% is its median against {view.first}'s, of "
             f"bandwidth (MiB/s), or of ops/s where a test moves no data. Significance: two-sided Mann-Whitney U "
             f"on the repeats, α = {ALPHA:g}; ~ = not significant, with the test's p beside it"
             + ("; faded bars in the chart are not significant." if chart else ".")]
    if view.releases:
        lines.append("Ceph release of each variant's lab: " + ", ".join(f"{v}: {rel}" for v, rel in view.releases)
                     + " (the % changes are release against release where the shapes are otherwise the same)")
    few, total = view.too_few(), view.changes()
    if few:
        lines.append(f"{few} of {total} changes have too few repeats for the test to reach α = {ALPHA:g} at all "
                     f"({repeats_needed()} per variant are enough): their ~ means 'cannot tell', not 'no change'. "
                     f"Give the suite's workloads repeat: {repeats_needed()} or more.")
    if view.no_reference:
        lines.append(f"no result under {view.first}, so no change to give: {', '.join(view.no_reference)}")
    return lines


def _significant(s: Summary) -> str:
    if not s.significant:
        return "0"
    parts = ([f"{s.better} better"] if s.better else []) + ([f"{s.worse} worse"] if s.worse else [])
    return f"{s.significant} ({', '.join(parts)})"


SUMMARY_HEADERS = ["level", "operation", "variant", "median Δ%", "tests", "significant", "too few repeats"]


def summary_rows(view: VariantsView) -> list[list[str]]:
    return [[s.level, s.op, s.variant, _pct(s.median_pct), str(s.n), _significant(s), str(s.too_few)]
            for s in view.summary()]


def summary_table(view: VariantsView) -> Table:
    return Table(f"Summary: each variant's median % change against {view.first}, per level and operation",
                 SUMMARY_HEADERS, summary_rows(view),
                 notes=["median Δ% over the level's tests of that operation (every op size); significant: how many "
                        "of those changes the repeats tell apart, better or worse"])


TEST_HEADERS = ["test", "variant", "metric", "median", "min–max", "n", "Δ%", "sig"]


def _side(t: VariantTest, variant: str) -> Side | None:
    s = t.samples.get(variant)
    vals = s.values(t.metric) if s else []
    return Side.of(vals) if vals else None


def test_rows(tests: Sequence[VariantTest], first: str, variants: Sequence[str]) -> list[list[str]]:
    """One row per test and variant: the first variant's row is the reference, every other its change."""
    rows = []
    for t in tests:
        for v in variants:
            side, c = _side(t, v), t.change(v)
            if side is None:
                rows.append([t.label, v, metric_label(t.metric, t.test.kind), "-", "no result", "0", "-", ""])
                continue
            rows.append([t.label, v, metric_label(t.metric, t.test.kind), value(t.metric, side.median),
                         spread_text(t.metric, side), str(side.n),
                         REFERENCE if v == first else (delta_text(c.delta) if c else "-"),
                         "" if v == first or c is None else c.delta.sig.shown()])
    return rows


def level_title(view: VariantsView, level: str) -> str:
    return f"{level}: each test under each variant against {view.first}"


def tables(view: VariantsView | None) -> list[Table]:
    """The summary, then one table per level with every test under every variant."""
    if view is None:
        return []
    out = [summary_table(view)]
    for level in view.levels():
        tests = [t for g in view.groups if g.level == level for t in g.tests]
        out.append(Table(level_title(view, level), TEST_HEADERS, test_rows(tests, view.first, view.variants)))
    return out


# the variants' colours: none green or red, which the tables use for better and worse; past seven they repeat
VARIANT_COLORS = ("#ff7f0e", "#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")


def series(view: VariantsView) -> list[tuple[str, str]]:
    """Every variant after the first (the zero line), its colour."""
    return [(v, VARIANT_COLORS[i % len(VARIANT_COLORS)]) for i, v in enumerate(view.others)]


def level_chart(view: VariantsView, level: str) -> str | None:
    blocks = [charts.ChangeBlock(charts.block_title((g.level, g.op, g.size), level=False), tuple(
                  (t.label if t.metric.name == "bytes_per_s" else f"{t.label} (ops/s)",
                   tuple(c.delta if (c := t.change(v)) else None for v in view.others))
                  for t in g.tests))
              for g in view.groups if g.level == level]
    return charts.pct_change(blocks, series(view), f"{level}: % change against {view.first}",
                             f"{level}: each variant's % change against {view.first}")


def chart_list(view: VariantsView | None) -> list[tuple[str, str, str, str]]:
    """(id, caption, svg, title of the level's table) of each level's chart."""
    if view is None:
        return []
    out = []
    for level in view.levels():
        s = level_chart(view, level)
        if s:
            out.append((f"variants-{level}", f"{level}: % change of each test's median under each variant against "
                        f"{view.first}, grouped by operation and op size; faded bars are not significant", s,
                        level_title(view, level)))
    return out


# ---- terminal ------------------------------------------------------------------------------------------

def print_variants(console: Console, view: VariantsView | None) -> None:
    """Per test one row, one column per variant after the first (its Δ% and significance, with the test's p); then
    the summary. Both through the terminal's one table code (textout.print_table): on a narrow terminal the last
    variants' columns go first, then the summary's counts (docs/report.md, "Narrow terminals")."""
    if view is None:
        return
    from .textout import Column, print_table
    rows: list[list[str]] = []
    for g in view.groups:
        for vt in g.tests:
            ref = _side(vt, view.first)
            cells = []
            for v in view.others:
                c = vt.change(v)
                cells.append(f"{delta_text(c.delta)} {c.delta.sig.shown()}" if c else "-")
            rows.append([vt.label, metric_label(vt.metric, vt.test.kind),
                         value(vt.metric, ref.median if ref else None), *cells])

    def cell(i: int):
        return lambda row: row[i]
    columns = [Column("test", cell(0), right=False), Column("metric", cell(1), right=False),
               Column(view.first, cell(2)),
               *(Column(v, cell(3 + i), rank=len(view.others) + 3 - i) for i, v in enumerate(view.others))]
    print_table(console, f"Variants: % change against {view.first} (median of the repeats; ~ not significant)",
                columns, rows)
    ranks = {"tests": 3, "too few repeats": 2, "significant": 1}
    print_table(console, f"Variants summary: median % change against {view.first}",
                [Column(h, cell(i), right=h in ("median Δ%", "tests", "too few repeats"), rank=ranks.get(h, 0))
                 for i, h in enumerate(SUMMARY_HEADERS)], summary_rows(view))
    for line in notes(view, chart=False):
        console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
