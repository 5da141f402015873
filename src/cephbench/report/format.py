"""Display formatting: base units in, explicit units out. The only place figures get units."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from ..core.results import Result

MIB = 1024 * 1024


@dataclass
class Table:
    """A table as every format shows it (sections.py, the Markdown and HTML reports; the terminal's own style)."""
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    # the key columns (sections.KEY_HEADERS), one row per result: report.html shows them always and folds `rows`
    # away; empty for a narrow table, which is shown whole
    key: list[list[str]] = field(default_factory=list)


def mib_s(bytes_per_s: float | None) -> str:
    return "-" if bytes_per_s is None else f"{bytes_per_s / MIB:,.1f}"


def iops(ops: float | None) -> str:
    """Whole operations from 10 a second; below, two significant digits: 4 MiB objects at 3 MiB/s are 0.75
    objects/s, not "0"."""
    if ops is None:
        return "-"
    return f"{ops:,.0f}" if ops >= 9.95 or ops == 0 else f"{ops:.2g}"


def ms(ns: float | None) -> str:
    if ns is None:
        return "-"
    v = ns / 1e6
    return f"{v:,.2f}" if v < 100 else f"{v:,.0f}"


def seconds(s: float | None) -> str:
    if s is None:
        return "-"
    s = float(s)
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m}m{sec:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def span(s: float | None) -> str:
    """A time apart (a spread, an offset): milliseconds below a second, else as `seconds`."""
    if s is None:
        return "-"
    return f"{s * 1000:.0f} ms" if abs(s) < 1 else seconds(s)


def pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}%"


def result_mib_s(r: "Result") -> str:
    """A result's MiB/s; "-" for metadata operations (stat, list, delete), which move no data."""
    from ..kinds import direction_of
    m = r.measurement
    if m is None or direction_of(r.test.kind, r.test.params.phase, m.op) == "metadata":
        return "-"
    return mib_s(m.bytes_per_s)


def result_iops(r: "Result") -> str:
    """A result's operations per second; "-" for tools that count none (iperf3), never a made-up 0."""
    from ..kinds import ops_unit
    m = r.measurement
    if m is None or ops_unit(r.test.kind) is None:
        return "-"
    return iops(m.ops_per_s)


def result_p99(r: "Result") -> str:
    """A result's 99th percentile latency in ms; "-" where the tool gives no percentiles (rados bench)."""
    m = r.measurement
    return "-" if m is None else ms(m.latency.percentiles_ns.get("99"))


def result_figures(r: "Result") -> str:
    """One line's worth: "320.9 MiB/s, 80 objects/s", "2.1 MiB/s, 540 req/s, p99 45.20 ms", "798.7 MiB/s"
    (iperf3), "2,345 req/s" (RGW stat: no data moved)."""
    from ..kinds import ops_unit
    m = r.measurement
    if m is None:
        return ""
    parts = []
    if result_mib_s(r) != "-":
        parts.append(f"{result_mib_s(r)} MiB/s")
    if result_iops(r) != "-":
        parts.append(f"{result_iops(r)} {ops_unit(r.test.kind)}")
    if result_p99(r) != "-":
        parts.append(f"p99 {result_p99(r)} ms")
    return ", ".join(parts)


def host_cpu(r: "Result") -> str:
    """The busiest watched host's typical second, e.g. "93%"; "-" when no host was watched."""
    return pct(max((h.cpu_busy_median for h in r.hosts), default=None))


def messages(results: "Iterable[Result]") -> tuple[list[tuple[list[str], str]], list[tuple[str, str]],
                                                   list[tuple[list[str], str]]]:
    """(warnings, errors, notes) of every report: warnings and notes once per text, each error on its own. A step
    its search stopped before (a skipped step of `concurrency: auto`) is information, not an error: a note, once
    for the steps it left out; the step where it stopped says why."""
    results = list(results)
    past = [r for r in results if r.status == "skipped" and r.test.search is not None and r.error]
    warnings = by_text((r.test.id, w) for r in results for w in r.warnings)
    errors = [(r.test.id, r.error) for r in results if r.error and r not in past]
    stops = [(r.test.id, f"the search of {r.test.search.param} stopped here: {r.search_stop.text}")
             for r in results if r.search_stop is not None and r.test.search is not None and r not in past]
    notes = by_text([(r.test.id, n) for r in results for n in r.notes] + stops
                    + [(r.test.id, r.error or "") for r in past] + unjudged_osd_bench(results))
    return warnings, errors, notes


def unjudged_osd_bench(results: "Iterable[Result]") -> list[tuple[str, str]]:
    """An OSD bench with no ceiling says why (no disk baseline: it cannot be its own): the verdict has no OSD line,
    and its table no efficiency or bottleneck when none has one, so the reason would be in results.jsonl alone."""
    from ..kinds import level_of
    return [(r.test.id, r.analysis.reason) for r in results
            if level_of(r.test.kind) == "OSD" and r.analysis is not None and r.analysis.efficiency is None
            and r.analysis.reason and r.measurement is not None]


def by_text(pairs: Iterable[tuple[str, str]]) -> list[tuple[list[str], str]]:
    """(test id, text) pairs -> (the ids, text) per distinct text, in order of first appearance: a note every test
    of a group has (the prefill of its images, the RGW user it ran as) is shown once."""
    out: dict[str, list[str]] = {}
    for test_id, text in pairs:
        out.setdefault(text, []).append(test_id)
    return [(ids, text) for text, ids in out.items()]
