"""The verdict's rules that read evidence, one small function each, and the facts they read.

Each rule is a function of one test's `EvidenceFacts` (what utilization.py, slowstore.py, scheduler.py and cpusplit.py
read in its evidence, gathered once by `facts_of`) and returns an `EvidenceVerdict` or None: None passes to the next
rule, a verdict ends the search; a verdict whose bottleneck is None says the ceiling's verdict stands (the evidence
names nothing). Their order is not here: rules.py holds it, and docs/model.md's table shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.results import Evidence, LatencyBreakdown, OtherLoad, Result
from ..evidence import cadvisor, otherload
from ..kinds import direction_of, ops_unit
from .breakdown import describe, largest_part
from .cpusplit import Held, held_daemons, whose, whose_part
from .model import CPU_BUSY, MIB
from .scheduler import NAME as SCHEDULER, NEAR_CAP, QUEUED, QUEUED_NEAR_CAP, SchedulerCap, scheduler_cap
from .slowstore import SlowStore, slow_store
from .utilization import (DEVICE_BUSY, LATENCY_BOUND_BELOW, LINK_NEAR, NEAR_SHARE, Finding, counters_origin,
                          cpu_finding, device_finding, in_flight, link_finding, little_line, missing_evidence,
                          tool_seconds)


@dataclass
class EvidenceVerdict:
    bottleneck: str | None        # None: the evidence names nothing; the ceiling's bottleneck stands
    sentence: str = ""            # appended to the verdict's reason
    lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EvidenceFacts:
    """What the rules read of one test's evidence, each finding sorted busiest first."""

    result: Result
    efficiency: float | None                 # of the ceiling (None: no ceiling)
    breakdown: LatencyBreakdown | None
    links: tuple[Finding, ...]
    devices: tuple[Finding, ...]
    cpus: tuple[Finding, ...]                # one per host, busiest first
    held_cpu: tuple[Held, ...]               # daemons held by their cgroup's CPU limit
    slow: SlowStore | None                   # one OSD slower than its peers (write tests only)
    sched: SchedulerCap | None
    other: OtherLoad | None
    busy_other: bool                         # other clients' load enough to name
    in_flight: int | None
    lines: tuple[str, ...]                   # the evidence lines every verdict carries, before a rule adds its own

    @property
    def held(self) -> Finding | None:
        return at_throttle(self.devices)

    @property
    def cpu_busy(self) -> Finding | None:
        return self.cpus[0] if self.cpus and self.cpus[0].share >= CPU_BUSY else None

    def verdict(self, bottleneck: str | None, sentence: str, lines: list[str] | None = None) -> EvidenceVerdict:
        return EvidenceVerdict(bottleneck, sentence, list(self.lines) if lines is None else lines)


def at_throttle(devices: tuple[Finding, ...] | list[Finding]) -> Finding | None:
    """The busiest device (devices sorted busiest first) when it is held at ≥ 90 % of its cgroup throttle."""
    d = devices[0] if devices else None
    return d if d is not None and d.capped and d.share >= DEVICE_BUSY else None


def facts_of(result: Result, efficiency: float | None, b: LatencyBreakdown | None, clients: set[str] | None = None,
             rotational: dict[int, bool] | None = None) -> EvidenceFacts:
    """The findings of `result`'s evidence and the lines that show them. `rotational`: each OSD's flag from its
    metadata, which says whether mClock's hdd or ssd capacity applies."""
    ev = result.evidence or Evidence()
    clients = clients or set()
    m = result.measurement
    links = sorted((f for link in ev.links if (f := link_finding(link, clients, tool_seconds(result)))),
                   key=lambda f: -f.share)
    devices = sorted((f for d in ev.devices if (f := device_finding(d))), key=lambda f: -f.share)
    cpus = sorted((cpu_finding(h) for h in result.hosts), key=lambda f: -f.share)
    lines = [f.line for f in (links[:1] + [f for f in links[1:] if f.share >= LINK_NEAR])]
    lines += [f.line for f in (devices[:1] + [f for f in devices[1:] if f.share >= DEVICE_BUSY])]
    lines += [f.line for f in cpus[:1]]
    sched = scheduler_cap(result, rotational)
    if sched is not None:
        lines.append(sched.line)
    other = ev.other_load
    busy_other = other is not None and otherload.busy(other)
    if busy_other:
        lines.append(f"other clients' load: {otherload.describe(other)}")
    latency_s = m.latency.mean_ns / 1e9 if m and m.latency.mean_ns else None
    n = in_flight(result)
    little = little_line(n, latency_s, m.ops_per_s if m else None, ops_unit(result.test.kind) or "ops/s")
    if little:
        lines.append(little)
    if b is not None:
        lines.append(describe(b) + counters_origin(ev.osds))
    # which of cAdvisor's series were taken for which daemon is what was collected, said as is
    lines += [note if note.startswith(cadvisor.MATCHED) else f"not collected: {note}" for note in ev.notes]

    direction = direction_of(result.test.kind, result.test.params.phase, m.op if m else None)
    slow = slow_store(ev.osds, ev.devices, latency_s, result.hosts, ev.links) if direction == "write" else None
    held = at_throttle(devices)
    if slow is not None:
        # first when it names the bottleneck, with its device's own figures; beside a throttle's, after its line
        said = [f"{slow.text}{counters_origin([slow.osd])}"]
        dev = device_finding(slow.device) if slow.device is not None else None
        said += [dev.line] if held is None and dev is not None and dev.line not in lines else []
        at = 0 if held is None else len(lines)
        lines[at:at] = said
    return EvidenceFacts(result, efficiency, b, tuple(links), tuple(devices), tuple(cpus),
                         tuple(held_daemons(result.hosts)), slow, sched, other, busy_other, n, tuple(lines))


# ---- wording shared by several rules ------------------------------------------------------------------------------

def held_together(found: list[Finding]) -> str:
    """Devices each at its throttle, as one bottleneck in their hosts' order: "WAL/DB devices h1:loop1, h2:loop3"
    (of one kind), or each named with its kind ("disk h1:loop0, WAL/DB device h2:loop3")."""
    pairs = sorted((f.bottleneck.rsplit(" ", 1) for f in found),
                   key=lambda p: (p[0], [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p[1])]))
    kinds = {k for k, _ in pairs}
    if len(kinds) == 1:
        return f"{kinds.pop()}s {', '.join(d for _, d in pairs)}"
    return ", ".join(f"{k} {d}" for k, d in pairs)


def links_together(found: list[Finding]) -> str:
    """Links each at its limit, as one bottleneck in their hosts' order, each network once: "client network (c1
    pub0, c2 pub0)", "client network (c1 pub0), public network (h2 pub0)"."""
    by_net: dict[str, list[str]] = {}
    for f in found:
        net, _, where = f.bottleneck.partition(" (")
        by_net.setdefault(net, []).append(where.rstrip(")"))
    key = lambda w: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", w)]  # noqa: E731
    return ", ".join(f"{net} ({', '.join(sorted(ws, key=key))})" for net, ws in by_net.items())


def _and(found: list[Finding]) -> str:
    names = sorted(f.bottleneck.split("(")[-1].rstrip(")") for f in found)
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def whose_cpu(cpu: Finding, result: Result, lines: list[str]) -> str:
    """Whose the busy CPUs of `cpu` were, as a part of a sentence; the split's line goes after the CPU's."""
    host = next((h for h in result.hosts if h.host == cpu.bottleneck[5:-1]), None)
    if host is None:
        return ""
    part, line = whose_part(host, result.hosts, (result.evidence or Evidence()).cpu)
    if line is not None and line not in lines:
        lines.insert(lines.index(cpu.line) + 1 if cpu.line in lines else len(lines), line)
    return part


def cannot_tell(resource: Finding, cpu: Finding, lines: list[str], result: Result | None = None) -> tuple[str, str]:
    """(bottleneck, sentence) naming both a device or link and the CPUs, and whose the CPUs were, when the evidence
    cannot tell which of them limited the test; both findings' lines are kept in `lines` (the CPU's already is: the
    busiest host)."""
    if resource.line not in lines:
        lines.insert(0, resource.line)
    whose_ = whose_cpu(cpu, result, lines) if result is not None else ""
    return (f"{resource.bottleneck} or CPU: cannot tell",
            f"measured: {resource.bottleneck} carried {resource.share:.0%} of its capacity while the CPUs of "
            f"{cpu.bottleneck[5:-1]} were {cpu.share:.0%} busy{whose_}: either may have set the rate (the evidence "
            f"cannot tell which)")


def _both(f: EvidenceFacts, resource: Finding, cpu: Finding) -> EvidenceVerdict:
    lines = list(f.lines)
    return EvidenceVerdict(*cannot_tell(resource, cpu, lines, f.result), lines)


def _where(f: EvidenceFacts) -> str:
    part = largest_part(f.breakdown) if f.breakdown is not None else None
    return f"; most of it: {part[0]} ({part[1] * 1000:.2f} ms)" if part else ""


# ---- the rules, each a function of the facts ----------------------------------------------------------------------

def device_at_throttle(f: EvidenceFacts) -> EvidenceVerdict | None:
    """A device at ≥ 90 % of its cgroup throttle → that device (several: all of them, in their hosts' order)."""
    if f.held is None:
        return None
    # a cgroup throttle at its limit caps the test whatever else is busy; a link beside it can look full in its
    # busy seconds when the throttle releases the ops in bursts (CI: osd.1 at 100 % of 8 MiB/s, and h3's link at
    # 82 % of 200 Mbit/s in the few seconds it carried anything)
    every = [d for d in f.devices if d.capped and d.share >= DEVICE_BUSY]
    if len(every) > 1:
        # each one limits the writes (every replica waits for its drive): naming the one a tenth of a percent
        # ahead would name a different device each run
        shares = sorted(d.share for d in every)
        return f.verdict(held_together(every), f"measured: each carried {shares[0]:.0%} to {shares[-1]:.0%} "
                                               "of its cgroup throttle")
    return f.verdict(f.held.bottleneck, f"measured: {f.held.bottleneck} carried {f.held.share:.0%} of its cgroup "
                                        f"throttle")


def daemon_at_cpu_limit(f: EvidenceFacts) -> EvidenceVerdict | None:
    """A daemon whose cgroup was throttled in ≥ 50 % of its CFS periods → `CPU limit of osd.N (host)`."""
    if not f.held_cpu:
        return None
    # a daemon held by its cgroup's CPU limit (a container's) waits for CPU time whatever the host's CPUs do, as a
    # drive at its throttle does: every replicated write waits for its replicas, every op for its primary
    names = ", ".join(h.name for h in f.held_cpu)
    first = f.held_cpu[0]
    return f.verdict(f"CPU limit{'s' if len(f.held_cpu) > 1 else ''} of {names}",
                     f"measured: {first.daemon.who} was held by its CPU limit ({first.daemon.limit_cores:g} "
                     f"cores): its cgroup was throttled in {first.share:.0%} of its CFS periods",
                     [h.line for h in f.held_cpu] + list(f.lines))


def slow_osd(f: EvidenceFacts) -> EvidenceVerdict | None:
    """In a write test, one OSD's BlueStore commit far slower than its peers' → its cause, else that OSD."""
    # the store one OSD's writes waited on, by its own counters: where a throttle is not seen (node-exporter
    # has none) it is the same drive, and it is as decisive, for every replicated write waits for it
    return f.verdict(f.slow.bottleneck, f.slow.sentence) if f.slow is not None else None


def link_at_speed(f: EvidenceFacts) -> EvidenceVerdict | None:
    """A link at ≥ 80 % of its speed over the test's seconds → that network (several: all of them)."""
    if not f.links or f.links[0].share < LINK_NEAR:
        return None
    # every link at its limit, as every device held at its throttle: two clients' links each full both limit
    every = [x for x in f.links if x.share >= LINK_NEAR]
    if len(every) > 1:
        lo, hi = f"{min(x.share for x in every):.0%}", f"{max(x.share for x in every):.0%}"
        return f.verdict(links_together(every), f"measured: the links {_and(every)} each carried "
                                                f"{lo if lo == hi else f'{lo} to {hi}'} of their speed")
    x = f.links[0]
    return f.verdict(x.bottleneck, f"measured: the link {x.bottleneck.split('(')[-1].rstrip(')')} carried "
                                   f"{x.share:.0%} of its speed over the test's seconds")


def other_clients(f: EvidenceFacts) -> EvidenceVerdict | None:
    """Other clients' I/O on the cluster at the same time (≥ 1 MiB/s or ≥ 10 ops/s) → `other clients' load`."""
    if not f.busy_other or f.other is None:
        return None
    o = f.other
    return f.verdict("other clients' load",
                     f"measured: other clients loaded the cluster at the same time "
                     f"({(o.read_bytes_per_s + o.write_bytes_per_s) / MIB:,.1f} MiB/s, "
                     f"{o.ops_per_s:,.0f} ops/s), so this result is not the cluster's alone")


def scheduler_limit(f: EvidenceFacts) -> EvidenceVerdict | None:
    """An OSD served ≥ 85 % of the client ops its mClock client limit allows, or ≥ 70 % while the ops waited in the
    OSD's queue for half their latency or more (the limit holding them there) → the OSD scheduler."""
    s = f.sched
    if s is None:
        return None
    b = f.breakdown
    queued = b.queue_s / b.client_s if b is not None and b.queue_s is not None and b.client_s else None
    if s.share < NEAR_CAP and not (s.share >= QUEUED_NEAR_CAP and queued is not None and queued >= QUEUED):
        return None
    held = "" if s.share >= NEAR_CAP else f", its ops {queued:.0%} of their latency in its queue"
    return f.verdict(SCHEDULER, f"measured: osd.{s.osd} served {s.share:.0%} of the client ops its "
                                f"mClock client limit allows{held}")


def device_busy(f: EvidenceFacts) -> EvidenceVerdict | None:
    """A device ≥ 90 % busy by its busy time → that device; beside CPUs ≥ 80 % busy → both, `… or CPU: cannot
    tell`."""
    if not f.devices or f.devices[0].share < DEVICE_BUSY:
        return None
    # busy by its busy time alone (one held at its throttle was named first)
    d = f.devices[0]
    if f.cpu_busy is not None:
        return _both(f, d, f.cpu_busy)
    return f.verdict(d.bottleneck, f"measured: {d.bottleneck} was {d.share:.0%} busy")


def one_op_in_flight(f: EvidenceFacts) -> EvidenceVerdict | None:
    """One op in flight → `latency (1 op in flight)`: each op's latency sets the rate (busy CPUs are said beside)."""
    if f.in_flight is None or f.in_flight > 1:
        return None
    # whatever else is busy, one op at a time waits out each op's whole latency: that is what sets the rate
    lines = list(f.lines)
    cpus = f.cpus
    cpu = (f"; the CPUs of {cpus[0].bottleneck[5:-1]} were {cpus[0].share:.0%} busy"
           f"{whose_cpu(cpus[0], f.result, lines)}, which lengthens it"
           if cpus and cpus[0].share >= CPU_BUSY else "")
    return f.verdict("latency (1 op in flight)",
                     f"measured: one op in flight, so each op's latency sets the rate{_where(f)}{cpu}", lines)


def busy_cpu(f: EvidenceFacts) -> EvidenceVerdict | None:
    """A host's CPUs ≥ 80 % busy → `CPU (<whose> on <host>)`; beside a device or link ≥ 75 % of its capacity →
    both."""
    cpu = f.cpu_busy
    if cpu is None:
        return None
    near = max((x for x in f.devices[:1] + f.links[:1] if x.share >= NEAR_SHARE), key=lambda x: x.share, default=None)
    if near is not None:
        return _both(f, near, cpu)
    r = f.result
    host = next(h for h in r.hosts if h.host == cpu.bottleneck[5:-1])
    bottleneck, sentence, split_line = whose(host, r.hosts, (r.evidence or Evidence()).cpu)
    lines = list(f.lines)
    if split_line:
        lines.insert(lines.index(cpu.line) + 1 if cpu.line in lines else 0, split_line)
    return f.verdict(bottleneck, sentence, lines)


def at_ceiling(f: EvidenceFacts) -> EvidenceVerdict | None:
    """Efficiency ≥ 90 % → nothing: the ceiling rules decide (the ceiling's bottleneck)."""
    if f.efficiency is None or f.efficiency < LATENCY_BOUND_BELOW:
        return None
    return f.verdict(None, "")


def evidence_missing(f: EvidenceFacts) -> EvidenceVerdict | None:
    """Device load, link speeds, OSD counters or host CPU missing → nothing: the ceiling rules decide, and a
    `not measured:` line names what is missing."""
    missing = missing_evidence(f.result.evidence or Evidence(), f.result.hosts)
    if not missing:
        return None
    # the ceiling's verdict is "unknown" itself without a baseline
    return f.verdict(None, "", list(f.lines) + ["not measured: " + ", ".join(missing)])


def queued_for_capacity(f: EvidenceFacts) -> EvidenceVerdict | None:
    """The busiest link, or a device with a cgroup throttle, at ≥ 75 % of its capacity, no CPU busy → that link or
    device: the ops queued for it."""
    queued = max((x for x in f.links[:1] + tuple(d for d in f.devices[:1] if d.capped) if x.share >= NEAR_SHARE),
                 key=lambda x: x.share, default=None)
    if queued is None:
        return None
    # a hard capacity (a link's speed, a throttle) near full while the CPUs idle: more in flight would only queue
    # for it, so it is not latency that sets the rate (a shaped link through TCP and Ceph's per-op pipelining
    # seldom carries more than 85-95 % of its rate, less on a slower machine: CI's gave 75-79 %)
    what = "of its cgroup throttle" if queued.capped else "of its speed"
    return f.verdict(queued.bottleneck, f"measured: {queued.bottleneck} carried {queued.share:.0%} {what} and no "
                                        f"CPU was busy: the ops queued for it")


def latency(f: EvidenceFacts) -> EvidenceVerdict:
    """Else → `latency (N ops in flight)`: nothing saturated, the ops in flight ÷ the latency set the rate."""
    flight = f"{f.in_flight} ops in flight" if f.in_flight else "the ops in flight"
    return f.verdict(f"latency ({flight})", f"measured: no link, device or CPU was saturated, so {flight} ÷ the "
                                            f"latency set the rate: more in flight would go faster{_where(f)}")
