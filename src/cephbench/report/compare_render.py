"""`cephbench compare` output: a rich table for the terminal, Markdown, and HTML with an inline
percent-change chart per pair of runs (horizontal bars of % change per matched test, as in the
Argonaut-vs-Bobtail summary). Every string that comes from a run is escaped (Jinja2 autoescape, and
the Markdown table cells have their pipes escaped).
"""

from __future__ import annotations

import io
from typing import Sequence

from rich.console import Console
from rich.table import Table

from ..analysis.compare import METRICS, Metric, MetricDelta, PairComparison
from ..analysis.stats import ALPHA, repeats_needed
from . import svg
from .format import iops, mib_s, ms

MAX_CHART_TESTS = 40      # beyond this a bar chart is unreadable: the largest changes are shown


def letter(i: int) -> str:
    """The name of the i-th compared run after A: B, C, … Z, then R27, R28, …"""
    return chr(ord("B") + i) if i < 25 else f"R{i + 2}"


def value(metric: Metric, v: float | None) -> str:
    if metric.name == "bytes_per_s":
        return mib_s(v)
    if metric.name == "ops_per_s":
        return iops(v)
    return ms(v)


def delta_text(d: MetricDelta) -> str:
    if d.delta_pct is None:
        return "-"
    return "+0.0%" if abs(d.delta_pct) < 0.05 else f"{d.delta_pct:+.1f}%"   # never "-0.0%"


def _n(d: MetricDelta) -> str:
    return f"{d.sig.n_a}/{d.sig.n_b}"


def legend(pairs: Sequence[PairComparison]) -> list[str]:
    """The lines under every output: which run is which, what `~` means, what is missing."""
    lines = [f"A = {pairs[0].a.path}"]
    for i, p in enumerate(pairs):
        lines.append(f"{letter(i)} = {p.b.path}")
    lines.append(f"Δ% is the mean of B's repeats against the mean of A's; significance: two-sided Mann-Whitney U on "
                 f"the repeats, α = {ALPHA:g}. `~` = not significant, or too few repeats to tell "
                 f"(needs ≥{repeats_needed()} repeats per side; n = repeats of A/B).")
    for i, p in enumerate(pairs):
        b = letter(i)
        few = p.too_few()
        if few:
            lines.append(f"A vs {b}: {few} of {len(p.tests)} matched tests have too few repeats to be significant "
                         f"(needs ≥{repeats_needed()} per side): their `~` means 'cannot tell', not 'no change'.")
        if p.only_a:
            lines.append(f"A vs {b}: only in A: {', '.join(p.only_a)}")
        if p.only_b:
            lines.append(f"A vs {b}: only in {b}: {', '.join(p.only_b)}")
        if p.differs:
            lines.append(f"A vs {b}: tests left unmatched differ in {', '.join(p.differs)}; to compare them anyway: "
                         + " ".join(f"--ignore {k}" for k in p.differs))
    return lines


def _geomean_text(pair: PairComparison) -> str:
    g = pair.geomean()
    names = {m.name: m.label for m in METRICS}
    return "; ".join(f"{names[k]} ×{v:.3f} ({(v - 1) * 100:+.1f}%)" for k, v in g.items())


# ---- terminal ------------------------------------------------------------------------------

def pair_table(pair: PairComparison, b_name: str = "B") -> Table:
    t = Table(title=f"A vs {b_name}: {pair.a.name} → {pair.b.name}", title_justify="left", header_style="bold")
    for col, justify in (("test", "left"), ("metric", "left"), ("A", "right"), (b_name, "right"),
                         ("Δ%", "right"), ("sig", "left"), ("n", "right")):
        t.add_column(col, justify=justify, overflow="fold")
    for td in pair.tests:
        for i, d in enumerate(td.metrics):
            worse = d.sig.significant and (d.worse_pct or 0) > 0
            better = d.sig.significant and (d.worse_pct or 0) < 0
            style = "red" if worse else "green" if better else ""
            t.add_row(td.label if i == 0 else "", d.metric.label, value(d.metric, d.mean_a),
                      value(d.metric, d.mean_b), delta_text(d), d.sig.text(), _n(d), style=style,
                      end_section=i == len(td.metrics) - 1)
    return t


def print_text(console: Console, pairs: Sequence[PairComparison]) -> None:
    for i, pair in enumerate(pairs):
        b = letter(i)
        console.print(pair_table(pair, b))
        console.print(f"geometric mean of {b}/A over {len(pair.tests)} matched tests: {_geomean_text(pair)}",
                      markup=False, highlight=False)
    for line in legend(pairs):
        console.print(line, markup=False, highlight=False)


def render_text(pairs: Sequence[PairComparison], width: int = 160) -> str:
    buf = io.StringIO()
    print_text(Console(file=buf, width=width, highlight=False, color_system=None), pairs)
    return buf.getvalue()


# ---- markdown -------------------------------------------------------------------------------

def _md(s: str) -> str:
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def render_markdown(pairs: Sequence[PairComparison], charts: Sequence[str | None] = ()) -> str:
    """Markdown; `charts[i]`, when given, is the file name of pair i's SVG chart, linked under its table."""
    out = ["# cephbench compare", ""]
    for i, pair in enumerate(pairs):
        b = letter(i)
        out += [f"## A vs {b}: {_md(pair.a.name)} → {_md(pair.b.name)}", "",
                f"| test | metric | A | {b} | Δ% | sig | n |", "|---|---|--:|--:|--:|---|--:|"]
        for td in pair.tests:
            for d in td.metrics:
                out.append(f"| {_md(td.label)} | {d.metric.label} | {value(d.metric, d.mean_a)} | "
                           f"{value(d.metric, d.mean_b)} | {delta_text(d)} | {d.sig.text()} | {_n(d)} |")
        out += ["", f"Geometric mean of {b}/A over {len(pair.tests)} matched tests: {_md(_geomean_text(pair))}", ""]
        if i < len(charts) and charts[i]:
            out += [f"![percent change, A vs {b}]({charts[i]})", ""]
    out += [f"- {_md(line)}" for line in legend(pairs)]
    return "\n".join(out) + "\n"


# ---- chart and HTML ----------------------------------------------------------------------------

def pct_change_svg(pair: PairComparison, b_name: str = "B") -> str | None:
    """Horizontal bars of % change per matched test and metric; faded bars are not significant (`~`)."""
    tests = [t for t in pair.tests if any(d.delta_pct is not None for d in t.metrics)]
    if not tests:
        return None
    if len(tests) > MAX_CHART_TESTS:
        tests = sorted(tests, key=lambda t: -max(abs(d.delta_pct or 0) for d in t.metrics))[:MAX_CHART_TESTS]
    metrics = [m for m in METRICS if any(d.metric is m for t in tests for d in t.metrics)]
    colors = dict(zip((m.name for m in METRICS), ("#1f77b4", "#2ca02c", "#ff7f0e", "#d62728")))
    groups = []
    for m in metrics:
        found = [next((d for d in t.metrics if d.metric is m), None) for t in tests]
        groups.append(svg.BarGroup(m.label if m.higher_is_better else f"{m.label} (lower is better)", colors[m.name],
                                   [d.delta_pct if d else None for d in found],
                                   [1.0 if d and d.sig.significant else 0.35 for d in found]))
    return svg.hbar_chart([t.label for t in tests], groups, f"% change, {b_name} against A (faded: not significant)",
                          f"{pair.b.name} against {pair.a.name}", unit="%")


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cephbench compare</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; font-size: 0.9em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.worse td { background: #fde8e8; } tr.better td { background: #e8f6e8; }
.legend { color: #555; font-size: 0.9em; }
</style></head><body>
<h1>cephbench compare</h1>
{% for p in pairs %}
<h2>A vs {{ p.b_name }}: {{ p.a }} → {{ p.b }}</h2>
<table><thead><tr><th>test</th><th>metric</th><th>A</th><th>{{ p.b_name }}</th><th>Δ%</th><th>sig</th><th>n</th></tr></thead>
<tbody>{% for r in p.rows %}
<tr class="{{ r.cls }}"><td>{{ r.test }}</td><td>{{ r.metric }}</td><td class="num">{{ r.a }}</td>
<td class="num">{{ r.b }}</td><td class="num">{{ r.delta }}</td><td>{{ r.sig }}</td><td class="num">{{ r.n }}</td></tr>
{% endfor %}</tbody></table>
<p>Geometric mean of {{ p.b_name }}/A over {{ p.count }} matched tests: {{ p.geomean }}</p>
{% if p.svg %}<figure>{{ p.svg | safe }}</figure>{% endif %}
{% endfor %}
<ul class="legend">{% for line in legend %}<li>{{ line }}</li>{% endfor %}</ul>
</body></html>
"""


def render_html(pairs: Sequence[PairComparison]) -> str:
    from jinja2 import Environment

    env = Environment(autoescape=True)
    data = []
    for i, pair in enumerate(pairs):
        b = letter(i)
        rows = []
        for td in pair.tests:
            for d in td.metrics:
                w = d.worse_pct or 0
                cls = ("worse" if w > 0 else "better" if w < 0 else "") if d.sig.significant else ""
                rows.append({"test": td.label, "metric": d.metric.label, "a": value(d.metric, d.mean_a),
                             "b": value(d.metric, d.mean_b), "delta": delta_text(d), "sig": d.sig.text(),
                             "n": _n(d), "cls": cls})
        # svg.py escapes every text it writes (test names and run names come from the run)
        data.append({"b_name": b, "a": pair.a.name, "b": pair.b.name, "rows": rows, "count": len(pair.tests),
                     "geomean": _geomean_text(pair), "svg": pct_change_svg(pair, b)})
    return env.from_string(_HTML).render(pairs=data, legend=legend(pairs))
