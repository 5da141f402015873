"""report.md: the same sections as the HTML report, as tables for tickets and chat."""

from __future__ import annotations

import re

from ..core.results import Result
from .format import messages
from . import variants
from .curves import report_curves
from .sections import ReportData, Table

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")


def esc(text: object) -> str:
    """Strings from a cluster or a suite must not turn into markup, links or broken tables."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def _table(t: Table) -> list[str]:
    out = [f"**{esc(t.title)}**", "", "| " + " | ".join(esc(h) for h in t.headers) + " |",
           "|" + "|".join("---" for _ in t.headers) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in t.rows]
    out += [""] + [f"_{esc(n)}_" for n in t.notes if n] + [""]
    return out


def _messages(results: list[Result]) -> list[str]:
    """Warnings (marked !, as in the tables' status), errors, then notes: information, plain, once per text."""
    out: list[str] = []
    warnings, errors, notes = messages(results)
    if warnings:
        out += ["Warnings (results marked ! are not counted in the verdict):", ""]
        out += [f"- ! {esc(', '.join(ids))}: {esc(w)}" for ids, w in warnings] + [""]
    if errors:
        out += ["Errors:", ""] + [f"- {esc(i)}: {esc(e)}" for i, e in errors] + [""]
    if notes:
        out += ["Notes:", ""] + [f"- {esc(', '.join(ids))}: {esc(n)}" for ids, n in notes] + [""]
    return out


def render(data: ReportData) -> str:
    lines = [f"# {esc(data.title)}", "",
             f"Run `{data.run_path}` — {data.counts['ok']} ok, {data.counts['failed']} failed, "
             f"{data.counts['skipped']} skipped — generated {data.generated}", "", "## Verdict", ""]
    if data.verdict:
        for v in data.verdict:
            lines.append(f"- **{esc(v.title())}**: {esc(v.text()[len(v.title()) + 2:])}")
            if v.reason:
                lines.append(f"  - {esc(v.reason)}")
    else:
        lines.append("- no cluster results")
    if data.slow_osds:
        lines.append(f"- **slow OSDs** (OSD bench: median below the other OSDs by more than the threshold, and told apart from them by the repeats): {esc(', '.join(data.slow_osds))}")
    results = [r for section in data.sections for r in section.results]
    curves = report_curves(results)
    lines += [f"- {esc(text)}" for _, _, text in curves]
    if curves:
        lines += ["", "## Latency against throughput", ""]
        for t, _, _ in curves:
            lines += _table(t)
    if data.variants:
        lines += ["", "## Variants", ""]
        for t in variants.tables(data.variants):
            lines += _table(t)
        lines += [f"- {esc(n)}" for n in variants.notes(data.variants, chart=False)]
    lines += ["", "## Environment", "", "| | |", "|---|---|"]
    lines += [f"| {esc(k)} | {esc(v)} |" for k, v in data.environment]
    if data.pools:
        lines += ["", "Pool profiles:", ""] + [f"- {esc(n)}: {esc(d)}" for n, d in data.pools]
    if data.config:
        lines += ["", "Settings in the cluster's configuration database (`ceph config dump`):", "",
                  "| section | option | value |", "|---|---|---|"]
        lines += [f"| {esc(s)} | {esc(n)} | {esc(v)} |" for s, n, v in data.config]
    for section in data.sections:
        lines += ["", f"## {section.level}", ""]
        for t in section.tables:
            lines += _table(t)
        lines += _messages(section.results)
    if data.corrupt:
        lines += ["", "## Unreadable result lines", ""]
        lines += [f"- results.jsonl line {c.line_no}: {esc(c.reason)}" for c in data.corrupt]
    lines += ["", "Units: MiB/s = 2^20 bytes per second (rados bench's \"MB\"); ms = milliseconds; "
              "Gbit/s = 10^9 bits per second.", ""]
    return "\n".join(lines)
