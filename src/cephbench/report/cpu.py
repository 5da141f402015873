"""CPU per operation beside throughput: one short table of a level's results whose evidence has each process's CPU
(evidence/proccpu.py; docs/model.md, "CPU per operation")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..kinds import ops_unit
from ..core.results import ProcessCpu, Result, osds_cpu
from .format import Table, iops, mib_s

if TYPE_CHECKING:
    from rich.console import Console

HEADERS = ["test", "MiB/s", "operations", "client CPU-ms/op", "OSDs CPU-ms/op", "OSDs CPU-s/GiB", "per OSD CPU-ms/op",
           "per OSD CPU-s/GiB"]


def figure(v: float | None) -> str:
    """Three significant digits or so, never an exponent: 0.983, 16.2, 1,234."""
    if v is None:
        return "-"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def _per_osd(cpu: Sequence[ProcessCpu], field: str) -> str:
    osds = sorted((c for c in cpu if c.who.startswith("osd.")), key=lambda c: int(c.who[4:]))
    return ", ".join(f"{c.who} {figure(getattr(c, field))}" for c in osds) or "-"


def _shared(r: Result) -> bool:
    """The client and the OSDs ran on one machine's cores: one host, or hosts that are cgroups of one machine."""
    cpu = r.evidence.cpu if r.evidence else []
    client = next((c.host for c in cpu if c.who == "client"), None)
    return (client is not None and any(c.host == client for c in cpu if c.who != "client")) \
        or any(h.source == "cpuacct" for h in r.hosts)


def _with_cpu(results: Sequence[Result]) -> list[Result]:
    return [r for r in results if r.evidence is not None and r.measurement is not None
            and any(c.cpu_ms_per_op is not None for c in r.evidence.cpu)]


def cpu_table(results: Sequence[Result]) -> Table | None:
    """The results with CPU per op, one row each; None when none has any (an OSD bench serves no client ops)."""
    rs = _with_cpu(results)
    if not rs:
        return None
    rows = []
    for r in rs:
        cpu, m = r.evidence.cpu, r.measurement
        osds = osds_cpu(cpu)
        client = next((c for c in cpu if c.who == "client"), None)
        unit = ops_unit(r.test.kind)        # each kind's own: IOPS, objects/s, req/s
        rows.append([r.test.id, mib_s(m.bytes_per_s), f"{iops(m.ops_per_s)} {unit}" if unit else "-",
                     figure(client.cpu_ms_per_op if client else None), figure(osds.cpu_ms_per_op if osds else None),
                     figure(osds.cpu_s_per_gib if osds else None), _per_osd(cpu, "cpu_ms_per_op"),
                     _per_osd(cpu, "cpu_s_per_gib")])
    sources = sorted({c.source for r in rs for c in r.evidence.cpu})
    notes = ["CPU time (user + system) of each process over the test, over the client ops each OSD served as "
             "primary (op_r + op_w) and their bytes; OSDs together: all their CPU, replicas' writes included, over "
             "all client ops; the client: its tool processes' CPU over the same ops. From: " + "; ".join(sources)]
    if any(_shared(r) for r in rs):
        notes.append("the client and the OSDs shared one machine's cores (as every host of the lab does): the "
                     "figures still hold per process, each being its own CPU time whatever ran beside it")
    return Table("CPU per operation", HEADERS, rows, notes)


def _low_high(r: Result) -> str:
    """The OSDs' lowest and highest CPU per op, named: an outlier OSD stays in sight when the list cannot."""
    osds = [c for c in r.evidence.cpu if c.who.startswith("osd.") and c.cpu_ms_per_op is not None] \
        if r.evidence else []
    if not osds:
        return "-"
    low = min(osds, key=lambda c: c.cpu_ms_per_op)
    high = max(osds, key=lambda c: c.cpu_ms_per_op)
    if low is high:
        return f"{low.who} {figure(low.cpu_ms_per_op)}"
    return f"{low.who} {figure(low.cpu_ms_per_op)} – {high.who} {figure(high.cpu_ms_per_op)}"


# the terminal's columns: (header, index in cpu_table's row or None for the low–high cell, left-aligned, rank: on a
# narrow terminal the highest goes first, docs/report.md "Narrow terminals")
TERMINAL_COLUMNS = (("test", 0, True, 0), ("MiB/s", 1, False, 5), ("operations", 2, False, 4),
                    ("client CPU-ms/op", 3, False, 2), ("OSDs CPU-ms/op", 4, False, 0),
                    ("OSDs CPU-s/GiB", 5, False, 3), ("per OSD CPU-ms/op low–high", None, True, 1),
                    ("per OSD CPU-ms/op", 6, True, 6), ("per OSD CPU-s/GiB", 7, True, 7))


def print_cpu(console: "Console", results: Sequence[Result]) -> None:
    """The table in the style of every terminal table (textout.py): fitted to the terminal by whole columns, the
    OSDs' lowest and highest beside their list (which a narrow terminal leaves out first); its notes under it."""
    from .textout import Column, print_table
    t = cpu_table(results)
    if t is None:
        return
    rs = _with_cpu(results)
    rows = [[*row, _low_high(r)] for row, r in zip(t.rows, rs)]

    def cell(i: int | None):
        return (lambda row: row[-1]) if i is None else (lambda row: row[i])
    print_table(console, t.title, [Column(h, cell(i), right=not left, rank=rank)
                                   for h, i, left, rank in TERMINAL_COLUMNS], rows)
    for n in t.notes:
        console.print(f"  {n}", markup=False, soft_wrap=True, highlight=False)
