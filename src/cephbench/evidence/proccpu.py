"""CPU per operation: each OSD process's CPU time over a test, and the client's tools', over the ops and bytes they
served (docs/model.md, "CPU per operation").

A process's CPU time is utime + stime of /proc/PID/stat (fields 14 and 15, in clock ticks of `getconf CLK_TCK`);
a tool's adds cutime + cstime (16 and 17): what the children it waited for spent, as `timeout` waits for the tool
it runs. An OSD's line is read on its host beside its counters, at the test's start and end, by the admin-socket
reader (asok.py, over ssh on an OSD host), its PID the socket's peer: the process that answered with the counters
the CPU is divided by. (`ceph osd metadata` names no PID, and matching `ceph-osd -i N` in /proc/*/cmdline finds
every cluster's osd.N on a host that runs two: the labs of one machine do.) The client's tools are read here, when
they start, once a second, and the moment each exits, before it is reaped (ToolCpu).

Parsing and arithmetic are pure; ToolCpu alone reads /proc.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..core.errors import ParseError
from ..hosts.remote import HostRef
from ..core.results import OsdCounters, ProcessCpu

HERE = "/proc/PID/stat here"
OVER_SSH = "/proc/PID/stat over ssh"
ON_CLIENTS = "the tools' rusage on their client hosts"
PROMETHEUS = "Prometheus (process-exporter)"


@dataclass(frozen=True)
class ProcTimes:
    pid: int
    start_ticks: int        # its start after boot: with the PID, which process it was
    ticks: int              # CPU time in clock ticks: utime + stime (+ cutime + cstime with children)
    clk_tck: int

    @property
    def cpu_s(self) -> float:
        return self.ticks / self.clk_tck


def parse_pid_stat(text: str, clk_tck: int, children: bool = False) -> ProcTimes:
    """/proc/PID/stat -> ProcTimes; `children` adds the waited-for children's time. The command name (field 2) is
    in parentheses and may hold spaces and parentheses itself: the fields are counted after its last ')'."""
    pid, _, rest = text.strip().partition(" ")
    fields = rest.rpartition(")")[2].split()
    # after the name: state is field 3, so field k is fields[k - 3]
    if not pid.isdigit() or len(fields) < 20 or not all(f.isdigit() for f in fields[11:15] + [fields[19]]):
        raise ParseError(f"not a /proc/PID/stat line: {text[:80]!r}")
    if clk_tck <= 0:
        raise ParseError(f"clock ticks per second {clk_tck}: not a CLK_TCK")
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return ProcTimes(int(pid), int(fields[19]), utime + stime + (cutime + cstime if children else 0), clk_tck)


def parse_reading(line: str) -> ProcTimes | str:
    """The reader's "CLK_TCK <stat line>" (asok.py) -> ProcTimes, or why there is none (its "!" text, or a line
    that does not read)."""
    if line.startswith("!"):
        return line[1:] or "not read"
    clk, _, stat = line.partition(" ")
    try:
        return parse_pid_stat(stat, int(clk) if clk.isdigit() else 0)
    except ParseError as exc:
        return str(exc)


def served(o: OsdCounters | None) -> tuple[float | None, float | None]:
    """The client ops and bytes an OSD served as their primary: op_r + op_w, op_in_bytes + op_out_bytes."""
    if o is None:
        return None, None
    ops = [v for v in (o.op_r, o.op_w) if v is not None]
    nbytes = [v for v in (o.op_in_bytes, o.op_out_bytes) if v is not None]
    return (sum(ops) if ops else None), (sum(nbytes) if nbytes else None)


def osd_cpu(before: Mapping[int, str], after: Mapping[int, str], counters: Iterable[OsdCounters],
            hosts: Mapping[int, str], sources: Mapping[int, str]) -> tuple[list[ProcessCpu], list[str]]:
    """Each OSD's CPU per op from its two readings ("CLK_TCK <stat>") and its counters' deltas; a note for each OSD
    whose CPU could not be told (not read, or another process at the end: it restarted)."""
    by_osd = {o.osd: o for o in counters}
    out, notes = [], []
    for n in sorted(set(before) | set(after)):
        a, b = parse_reading(before.get(n, "!not read at the start")), parse_reading(after.get(n, "!not read"))
        where = f"osd.{n} on {hosts.get(n, 'its host')}"
        if isinstance(a, str) or isinstance(b, str):
            notes.append(f"{where}: CPU not read ({a if isinstance(a, str) else b})")
        elif (a.pid, a.start_ticks) != (b.pid, b.start_ticks) or b.ticks < a.ticks:
            notes.append(f"{where}: CPU not told: its process changed during the test (PID {a.pid} -> {b.pid})")
        else:
            ops, nbytes = served(by_osd.get(n))
            out.append(ProcessCpu.of(f"osd.{n}", (b.ticks - a.ticks) / b.clk_tck, ops, nbytes,
                                     sources.get(n, HERE), hosts.get(n), b.pid))
    return out, notes


def client_cpu(first: Mapping[int, ProcTimes], last: Mapping[int, ProcTimes], osds: Iterable[ProcessCpu | OsdCounters],
               host: str | None) -> ProcessCpu | None:
    """The tools' CPU (each from its first reading to its last) over the ops and bytes the OSDs served in the same
    test: the client's CPU per op the cluster counted. None when no tool was read twice."""
    pids = [p for p in first if p in last and last[p].start_ticks == first[p].start_ticks]
    if not pids:
        return None
    cpu_s = sum(max(0, last[p].ticks - first[p].ticks) / last[p].clk_tck for p in pids)
    return ProcessCpu.of("client", cpu_s, *_served_by_all(osds), HERE, host)


def _served_by_all(osds: Iterable[ProcessCpu | OsdCounters]) -> tuple[float | None, float | None]:
    """The client ops and bytes all OSDs served in a test (a ProcessCpu: its own counts)."""
    counted = [served(o) if isinstance(o, OsdCounters) else (o.ops, o.bytes) for o in osds]
    ops = [v for v, _ in counted if v is not None]
    nbytes = [v for _, v in counted if v is not None]
    return (sum(ops) if ops else None), (sum(nbytes) if nbytes else None)


def combine(rounds: list[list[ProcessCpu]]) -> list[ProcessCpu]:
    """Rounds of one test as one: each process's CPU, ops and bytes summed (a process read in only some rounds is
    left out: its CPU would be over other ops than its rounds')."""
    by_who: dict[tuple[str, str | None], list[ProcessCpu]] = {}
    for cpu in rounds:
        for c in cpu:
            by_who.setdefault((c.who, c.host), []).append(c)
    out = []
    for (who, host), cs in by_who.items():
        if len(cs) != len(rounds):
            continue
        ops = None if any(c.ops is None for c in cs) else sum(c.ops or 0 for c in cs)
        nbytes = None if any(c.bytes is None for c in cs) else sum(c.bytes or 0 for c in cs)
        out.append(ProcessCpu.of(who, sum(c.cpu_s for c in cs), ops, nbytes, cs[-1].source, host, cs[-1].pid))
    return out


class ToolCpu:
    """The CPU of this machine's tool processes while they run: read when they start, at every tick, and once
    each has exited but is not yet reaped (its /proc/PID/stat is still there, with its children's time)."""

    def __init__(self, read: Callable[[int], str] = lambda pid: Path(f"/proc/{pid}/stat").read_text()) -> None:
        self._read = read
        self._clk = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.first: dict[int, ProcTimes] = {}
        self.last: dict[int, ProcTimes] = {}

    def _take(self, pid: int) -> ProcTimes | None:
        try:
            return parse_pid_stat(self._read(pid), self._clk, children=True)
        except (OSError, ParseError):
            return None         # gone already, or no /proc: its last reading stands

    def started(self, pids: list[int]) -> None:
        for pid in pids:
            t = self._take(pid)
            if t is not None:
                self.first[pid] = self.last[pid] = t

    def then(self, started: Callable[[list[int]], None]) -> Callable[[list[int]], None]:
        """A `started` callback that reads the tools first, then calls `started`."""
        def both(pids: list[int]) -> None:
            self.started(pids)
            started(pids)
        return both

    def sample(self, pids: Iterable[int] | None = None) -> None:
        for pid in list(self.first) if pids is None else pids:
            t = self._take(pid)
            if t is not None and pid in self.first:
                self.last[pid] = t

    def ended(self, pid: int) -> None:
        self.sample([pid])


@dataclass(frozen=True)
class RemoteCpu:
    """The CPU time of a test's tools on client hosts, each as its wrapper (`cephbench-loadgen at`) measured it when
    the tool ended: wait4's rusage, the tool's own and its waited-for children's."""
    cpu_s: float
    hosts: tuple[str, ...]


def clients_cpu(timed: Sequence[Any]) -> RemoteCpu | None:
    """fanout.TimedResults -> their tools' CPU together; None when one did not say (it never started, or its
    wrapper was killed before the tool ended)."""
    if not timed or any(t.cpu_s is None for t in timed):
        return None
    return RemoteCpu(sum(t.cpu_s for t in timed), tuple(dict.fromkeys(t.host for t in timed)))


def test_cpu(before: Mapping[int, str], after: Mapping[int, str], counters: list[OsdCounters],
             by_host: Mapping[HostRef, list[int]], tools: ToolCpu | None, here: str | None,
             remote: RemoteCpu | None = None) -> tuple[list[ProcessCpu], list[str]]:
    """A test's CPU per op: every OSD's (from the readings of its host, this machine's or over ssh) and the
    client's tools', when they ran here (`tools`) or on client hosts (`remote`); notes for what could not be
    told."""
    hosts = {n: ref.name for ref, ns in by_host.items() for n in ns}
    sources = {n: HERE if ref.address is None else OVER_SSH for ref, ns in by_host.items() for n in ns}
    cpu, notes = osd_cpu(before, after, counters, hosts, sources)
    if tools is None:       # tools on client hosts: what their wrappers measured
        if remote is None:
            return cpu, notes + ["the client's CPU per op: not read (a tool on a client host did not report its "
                                 "CPU time)"]
        ops, nbytes = _served_by_all(counters)
        return cpu + [ProcessCpu.of("client", remote.cpu_s, ops, nbytes, ON_CLIENTS, ", ".join(remote.hosts))], notes
    client = client_cpu(tools.first, tools.last, counters, here)
    return cpu + ([client] if client is not None else []), notes


def unread_osds(cpu: list[ProcessCpu], by_host: Mapping[HostRef, list[int]]) -> dict[int, str]:
    """The OSDs (id -> host) whose CPU the readings beside their counters did not give: read through `ceph tell`
    (no socket, so no PID), or their host out of ssh's reach."""
    have = {c.who for c in cpu}
    return {n: ref.name for ref, ns in by_host.items() for n in ns if f"osd.{n}" not in have}


def with_osd_cpu(cpu: list[ProcessCpu], notes: list[str], seconds: Mapping[int, float], counters: list[OsdCounters],
                 hosts: Mapping[int, str], source: str) -> tuple[list[ProcessCpu], list[str]]:
    """`cpu` and `notes` with each OSD of `seconds` (its CPU from another source) counted, and the notes that said
    its CPU was not read dropped."""
    by_osd = {o.osd: o for o in counters}
    added = [ProcessCpu.of(f"osd.{n}", s, *served(by_osd.get(n)), source, hosts.get(n)) for n, s in sorted(seconds.items())]
    told = tuple(f"osd.{n} on " for n in seconds)
    return cpu + added, [x for x in notes if not (x.startswith(told) and ": CPU not " in x)]
