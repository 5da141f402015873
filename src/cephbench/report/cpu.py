"""CPU per operation beside throughput: one short table of a level's results whose evidence has each process's CPU
(evidence/proccpu.py; docs/model.md, "CPU per operation")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..kinds import ops_unit
from ..core.results import ProcessCpu, Result, osds_cpu
from .format import Table, iops, mib_s

if TYPE_CHECKING:
    from rich.console import Console

HEADERS = ["test", "MiB/s", "ops/s", "client CPU-ms/op", "OSDs CPU-ms/op", "OSDs CPU-s/GiB", "per OSD CPU-ms/op",
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


def cpu_table(results: Sequence[Result]) -> Table | None:
    """The results with CPU per op, one row each; None when none has any (an OSD bench serves no client ops)."""
    rs = [r for r in results if r.evidence is not None and r.measurement is not None
          and any(c.cpu_ms_per_op is not None for c in r.evidence.cpu)]
    if not rs:
        return None
    rows = []
    for r in rs:
        cpu, m = r.evidence.cpu, r.measurement
        osds = osds_cpu(cpu)
        client = next((c for c in cpu if c.who == "client"), None)
        rows.append([r.test.id, mib_s(m.bytes_per_s), iops(m.ops_per_s) if ops_unit(r.test.kind) else "-",
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


def print_cpu(console: "Console", results: Sequence[Result]) -> None:
    """The table in the style of every terminal table (textout.py), its notes under it."""
    from .textout import plain_table, print_whole
    t = cpu_table(results)
    if t is None:
        return
    rt = plain_table(t.title)
    for i, h in enumerate(t.headers):
        rt.add_column(h, justify="left" if i in (0, 6, 7) else "right", no_wrap=True)
    for row in t.rows:
        rt.add_row(*row)
    print_whole(console, rt)
    for n in t.notes:
        console.print(f"  {n}", markup=False, soft_wrap=True, highlight=False)
