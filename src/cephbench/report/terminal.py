"""Terminal tables: the seeds' rados bench summary for one test, a compact table for a sweep."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..results import Result
from ..units import format_size
from .clients import clients_of, spread_line
from .format import host_cpu, iops, mib_s, ms, pct, result_iops, result_mib_s, seconds
from .verdict import slow_osds, verdict


def _params(r: Result) -> str:
    p = r.test.params
    bits = []
    for key in ("pool", "object_size", "block_size", "total", "concurrency", "iodepth", "instances"):
        if key in p:
            v = p[key]
            if key in ("object_size", "block_size", "total"):
                v = format_size(v)
            elif key == "concurrency":
                v = f"t={v}"
            elif key == "iodepth":
                v = f"qd={v}"
            elif key == "instances":
                if v == 1:
                    continue
                v = f"x{v}"
            bits.append(str(v))
    return " ".join(bits)


def results_table(results: list[Result], title: str = "Results") -> Table:
    has_analysis = any(r.analysis and r.analysis.efficiency is not None for r in results)
    t = Table(title=title, title_justify="left", header_style="bold")
    t.add_column("test", overflow="fold")
    t.add_column("op")
    t.add_column("params")
    t.add_column("MiB/s", justify="right")
    t.add_column("IOPS", justify="right")
    t.add_column("avg lat ms", justify="right")
    t.add_column("max lat ms", justify="right")
    if has_analysis:
        t.add_column("efficiency", justify="right")
        t.add_column("bottleneck")
    if any(r.hosts for r in results):
        t.add_column("CPU busy", justify="right")
    t.add_column("status")
    for r in results:
        m = r.measurement
        row = [r.test.id, str(r.test.params.get("phase", m.op if m else "")), _params(r)]
        if m:
            row += [result_mib_s(r), result_iops(r), ms(m.latency.mean_ns), ms(m.latency.max_ns)]
        else:
            row += ["-", "-", "-", "-"]
        if has_analysis:
            a = r.analysis
            row += [pct(a.efficiency) if a else "-", (a.bottleneck or "-") if a else "-"]
        if any(x.hosts for x in results):
            row.append(host_cpu(r))
        status = r.status if r.status != "failed" else "[red]failed[/red]"
        if r.warnings:
            status += " [yellow]![/yellow]"
        if r.notes:
            status += " *"
        row.append(status)
        t.add_row(*row)
    return t


def seed_summary(r: Result) -> Table:
    """One test the way `rados bench` prints its summary, with units spelled out."""
    m = r.measurement
    t = Table(title=f"{r.test.id}", title_justify="left", show_header=False, box=None)
    t.add_column("k", style="bold")
    t.add_column("v", justify="right")
    if m is None:
        t.add_row("Status", f"failed: {r.error}")
        return t
    writes = m.op in ("write", "randwrite", "put")
    verb = "writes" if writes else "reads"
    rows = [
        ("Total time run", seconds(m.duration_s)),
        (f"Total {verb} made", iops(m.ops_total)),
        (f"{'Write' if writes else 'Read'} size", format_size(m.op_size_bytes) if m.op_size_bytes else "-"),
        ("Bandwidth (MiB/s)", mib_s(m.bytes_per_s)),
        ("Stddev bandwidth (MiB/s)", mib_s(m.bytes_per_s_stddev)),
        ("Max bandwidth (MiB/s)", mib_s(m.bytes_per_s_max)),
        ("Min bandwidth (MiB/s)", mib_s(m.bytes_per_s_min)),
        ("Average IOPS", iops(m.ops_per_s)),
        ("Stddev IOPS", iops(m.ops_per_s_stddev)),
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
    if not lines and not slow:
        return
    console.print("Verdict", style="bold")
    for v in lines:
        console.print(f"  {v.text()}", markup=False)
        if v.reason:
            console.print(f"      {v.reason}", markup=False)
    if slow:
        console.print(f"  slow OSDs (OSD bench: median below the other OSDs by more than the threshold, and told apart from them by the repeats): {', '.join(slow)}", markup=False)


def print_results(console: Console, results: list[Result], reasons: bool = False) -> None:
    """Tables, notes and errors; with `reasons`, the model's reason for every result (the verdict has the best)."""
    from .baseline import BASELINE_KINDS, print_baselines
    baselines = [r for r in results if r.test.kind in BASELINE_KINDS]
    if baselines:
        print_baselines(console, baselines)
        results = [r for r in results if r.test.kind not in BASELINE_KINDS]
        if not results:
            return
    if len(results) == 1:
        console.print(seed_summary(results[0]))
    else:
        console.print(results_table(results))
    for r in results:
        clients = clients_of(r)
        if clients is not None:
            console.print(f"  ~ {r.test.id}: {spread_line(clients)}", markup=False)
        for w in r.warnings:
            console.print(f"  ! {r.test.id}: {w} (not counted in the verdict)", markup=False)
        for n in r.notes:
            console.print(f"  * {r.test.id}: {n}", markup=False)
        if r.error:
            console.print(f"  ! {r.test.id}: {r.error}", markup=False)
    for r in results if reasons else []:   # the model's reasons, where it had a ceiling (docs/model.md)
        if r.analysis and r.analysis.reason and r.analysis.efficiency is not None:
            console.print(f"  = {r.test.id}: {r.analysis.reason}", markup=False)
