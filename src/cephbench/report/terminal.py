"""Terminal output of a run: the baselines, one table per kind of test (or the seeds' rados bench summary for a
single test), warnings, errors and notes, and the verdict.

Operations per second are named as each kind counts them (kinds.ops_unit: IOPS, objects/s, req/s), and p99 is shown
where the tool gives percentiles. On a terminal, a table wider than the screen leaves out its least needed columns
and says which; anywhere else (a file, a pipe) tables are printed whole at their natural width, so that nothing is
wrapped or cut and a test ID stays one word for grep (textout.py).
"""

from __future__ import annotations

from typing import Callable

from rich.console import Console
from rich.table import Table

from ..kinds import KINDS, ops_unit, shown_of
from ..core.results import Result
from ..core.units import format_size
from .baseline import BASELINE_KINDS, print_baselines
from .cpu import print_cpu
from .curves import knee_lines, print_curves
from .format import host_cpu, iops, mib_s, ms, pct, result_iops, result_mib_s, result_p99, seconds
from .textout import Column, fitted_table, print_left_out, print_messages, print_whole
from .verdict import slow_osds, verdict


def _params(r: Result) -> str:
    """The pool, the parameters its kind shows (kind.shown_params), and its processes when more than one."""
    p = r.test.params
    bits = [str(p["pool"])] if "pool" in p else []
    bits += shown_of(r.test.kind, p)
    if "instances" in p and p["instances"] != 1:
        bits.append(f"x{p['instances']}")
    return " ".join(bits)


def _status(r: Result) -> str:
    """"ok", "failed" (red), and "!" for a result with warnings: the only mark in the column."""
    status = r.status if r.status != "failed" else "[red]failed[/red]"
    return status + (" [yellow]![/yellow]" if r.warnings else "")


def _figure(get: Callable[[Result], str]) -> Callable[[Result], str]:
    return lambda r: get(r) if r.measurement is not None else "-"


def _columns(kind: str, results: list[Result]) -> list[Column]:
    """The columns of one kind's table; a column with nothing to show for any of its results is left out."""
    analysis = any(r.analysis and r.analysis.efficiency is not None for r in results)
    unit = ops_unit(kind)
    cols = [
        Column("test", lambda r: r.test.id, right=False),
        Column("op", lambda r: str(r.test.params.get("phase", r.measurement.op if r.measurement else "")),
               right=False, rank=10),
        Column("params", _params, right=False, rank=9),
        Column("MiB/s", _figure(result_mib_s)),
        *([Column(unit, _figure(result_iops))] if unit else []),
        Column("avg ms", _figure(lambda r: ms(r.measurement.latency.mean_ns)), rank=6),
        Column("p99 ms", _figure(result_p99), rank=4),
        Column("max ms", _figure(lambda r: ms(r.measurement.latency.max_ns)), rank=8),
        # the bottleneck is what the table is read for: it goes last, after its efficiency
        *([Column("efficiency", lambda r: pct(r.analysis.efficiency) if r.analysis else "-", rank=2),
           Column("bottleneck", lambda r: (r.analysis.bottleneck or "-") if r.analysis else "-", right=False,
                  rank=1)] if analysis else []),
        *([Column("CPU busy", host_cpu, rank=5)] if any(r.hosts for r in results) else []),
        # "ok" on every row says nothing a narrow terminal needs: the column goes before the latencies do
        Column("status", _status, right=False, rank=0 if any(_status(r) != "ok" for r in results) else 7),
    ]
    return [c for c in cols if c.rank == 0 or any(c.cell(r) not in ("-", "") for r in results)]


def kind_table(console: Console, kind: str, results: list[Result]) -> tuple[Table, list[str]]:
    """One kind's results as a table, and the headers left out so that it fits the terminal (none off a terminal)."""
    k = KINDS.get(kind)
    return fitted_table(console, k.title if k else kind, _columns(kind, results), results)


def by_kind(results: list[Result]) -> list[tuple[str, list[Result]]]:
    """Results grouped by kind, in the order of kinds.KINDS (by level, then as registered), each group in run order."""
    order = {k: i for i, k in enumerate(KINDS)}
    kinds = sorted({r.test.kind for r in results}, key=lambda k: (order.get(k, len(order)), k))
    return [(k, [r for r in results if r.test.kind == k]) for k in kinds]


def seed_summary(r: Result) -> Table:
    """One test the way `rados bench` prints its summary, with units spelled out."""
    m = r.measurement
    t = Table(title=f"{r.test.id}", title_justify="left", show_header=False, box=None)
    t.add_column("k", style="bold", no_wrap=True)
    t.add_column("v", justify="right", no_wrap=True)
    if m is None:
        t.add_row("Status", f"failed: {r.error}")
        return t
    writes = m.op in ("write", "randwrite", "put")
    verb = "writes" if writes else "reads"
    unit = ops_unit(r.test.kind)
    rows = [
        ("Total time run", seconds(m.duration_s)),
        (f"Total {verb} made", iops(m.ops_total)),
        (f"{'Write' if writes else 'Read'} size", format_size(m.op_size_bytes) if m.op_size_bytes else "-"),
        ("Bandwidth (MiB/s)", mib_s(m.bytes_per_s)),
        ("Stddev bandwidth (MiB/s)", mib_s(m.bytes_per_s_stddev)),
        ("Max bandwidth (MiB/s)", mib_s(m.bytes_per_s_max)),
        ("Min bandwidth (MiB/s)", mib_s(m.bytes_per_s_min)),
        *([(f"Average {unit}", iops(m.ops_per_s)), (f"Stddev {unit}", iops(m.ops_per_s_stddev))] if unit else []),
        ("Average latency (ms)", ms(m.latency.mean_ns)),
        ("Stddev latency (ms)", ms(m.latency.stddev_ns)),
        ("Max latency (ms)", ms(m.latency.max_ns)),
        ("Min latency (ms)", ms(m.latency.min_ns)),
    ]
    for p, v in sorted(m.latency.percentiles_ns.items(), key=lambda kv: float(kv[0])):
        rows.append((f"p{p} latency (ms)", ms(v)))
    for k, v in rows:
        t.add_row(k, v)
    return t


def print_verdict(console: Console, results: list[Result]) -> None:
    """The verdict, after the variants' % changes when the run has variants."""
    if any(r.test.variant is not None for r in results):
        # imported only for a run with variants: every command imports this module, and the comparison's modules
        # (the statistics, the report's tables) would add to each one's start-up
        from ..analysis.variants import view
        from .variants import print_variants
        print_variants(console, view(results))
    lines = verdict(results)
    slow = slow_osds(results)
    bends = knee_lines(results)
    if not lines and not slow and not bends:
        return
    console.print("Verdict", style="bold")
    for v in lines:
        console.print(f"  {v.text()}", markup=False, soft_wrap=True)
        if v.reason:
            console.print(f"      {v.reason}", markup=False, soft_wrap=True)
    if slow:
        console.print(f"  slow OSDs (OSD bench: median below the other OSDs by more than the threshold, and told apart from them by the repeats): {', '.join(slow)}", markup=False, soft_wrap=True)
    for line in bends:   # the knee of each latency-throughput curve (analysis/curves.py)
        console.print(f"  {line}", markup=False, soft_wrap=True)


def print_results(console: Console, results: list[Result], reasons: bool = False) -> None:
    """Tables, warnings, errors and notes; with `reasons`, the model's reason for every result (the verdict has the
    best)."""
    baselines = [r for r in results if r.test.kind in BASELINE_KINDS]
    if baselines:
        print_baselines(console, baselines)
        results = [r for r in results if r.test.kind not in BASELINE_KINDS]
        if not results:
            return
    if len(results) == 1:
        print_whole(console, seed_summary(results[0]))
        print_cpu(console, results)
    else:
        for kind, rs in by_kind(results):
            table, dropped = kind_table(console, kind, rs)
            print_whole(console, table)
            print_left_out(console, dropped)        # under the table it is of
        print_cpu(console, results)
        print_curves(console, results)
    print_messages(console, results)
    for r in results if reasons else []:   # the model's reasons, where it had a ceiling (docs/model.md)
        if r.analysis and r.analysis.reason and r.analysis.efficiency is not None:
            console.print(f"  = {r.test.id}: {r.analysis.reason}", markup=False, soft_wrap=True)
