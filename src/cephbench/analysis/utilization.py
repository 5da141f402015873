"""Which resource was actually saturated during a test, from the evidence collected while it ran.

Pure. The ceiling model says what *could* limit a test; this reads what *did*:

  a link        carried ≥ 80 % of its speed (either direction) over the test's seconds (over_test_seconds: a
                link full while the tool worked and idle while it stalled is not at its limit); every such link is
                named (TCP through a shaped link holds about 85-95 % of the rate; a busy machine makes it sawtooth
                below that)
  a device      was ≥ 90 % busy (a second with I/O in flight all the time is 100 %), or carried ≥ 90 % of a
                cgroup throttle: bytes against a bytes limit, requests as submitted (before the block layer
                merged them) against an IOPS limit, since that is what blkio counts
  a CPU         a host's CPUs were ≥ 80 % busy in the typical second (model.CPU_BUSY)
  other load    another client's I/O ran on the cluster at the same time (OtherLoad): named, not blamed on us
  scheduler     an OSD served ≥ 85 % of the client ops its mClock client limit allows (analysis/scheduler.py): a
                cap set by configuration, which holds whatever the devices and CPUs could do
  near          the busiest link, or a throttled device, carried ≥ 75 % of its capacity (NEAR_SHARE) while no CPU
                was busy: the ops queued for it
  latency       nothing saturated: Little's law, ops in flight ÷ mean latency = the ops/s reached; more in flight
                would go faster (concurrency 1 is latency-bound whatever the hardware)

Two causes the evidence cannot tell apart are named together, "X or Y: cannot tell", with both lines: the CPUs
busy (≥ CPU_BUSY) while a device or link is near its limit (≥ NEAR_SHARE of it, below its own threshold), or a
device saturated by its busy time alone while the CPUs are busy (a starved CPU keeps I/O in flight longer). A
device held at a throttle is decisive: the throttle caps it whatever the CPUs do.

"Busy seconds" are the seconds that carried at least a tenth of the series' peak, less the first and last of
them (partial seconds) when there are five or more: the test's start-up and wind-down are left out, as a person
reading the series would. Every rule adds one line with its figures to
`Analysis.evidence`, so a person can check it by hand (docs/model.md gives the commands).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from ..core.results import DeviceLoad, Evidence, HostLoad, LatencyBreakdown, LinkLoad, OsdCounters, Result
from ..evidence import cadvisor, otherload
from ..kinds import direction_of
from ..evidence.hoststream import NOT_WATCHED, WHAT_WATCHES
from .breakdown import attribution, describe, largest_part
from .cpusplit import alone_part, held_daemons, not_alone, whose, whose_part
from .scheduler import NAME as SCHEDULER, NEAR_CAP, scheduler_cap
from .slowstore import device_kind, slow_store
from .model import CPU_BUSY, MIB

LINK_NEAR = 0.80
DEVICE_BUSY = 0.90
NEAR_SHARE = 0.75                 # a device or link this close to its capacity may be what limits a busy CPU's test
LATENCY_BOUND_BELOW = 0.9         # efficiency under which an unsaturated test is called latency-bound
IDLE_SHARE = 0.1                  # seconds under this share of the peak are start-up or wind-down
TRIM_FROM = 5                     # busy seconds from which the partial first and last are left out
BUSY_APART = 0.10                 # a link's busy seconds this far from its test seconds are shown apart
ALONE = "the cluster was not measured alone"


def busy_seconds(series: list[float | None]) -> float | None:
    """The median of the seconds that carried load (≥ IDLE_SHARE of the peak); None for an empty series. With
    TRIM_FROM busy seconds or more, the first and last are left out too: the test began and ended inside them, so
    they carry part of a second's load whatever the resource could hold."""
    vals = [v for v in series if v is not None]
    if not vals:
        return None
    peak = max(vals)
    if peak <= 0:
        return 0.0
    busy = [v for v in vals if v >= IDLE_SHARE * peak]
    return statistics.median(busy[1:-1] if len(busy) >= TRIM_FROM else busy)


def over_test_seconds(series: list[float | None], tool_s: int = 0) -> tuple[float, int] | None:
    """The mean of a series over the test's seconds, and how many: from its first busy second (≥ IDLE_SHARE of the
    peak) to its last, less those two when there are TRIM_FROM busy seconds or more (the test began and ended inside
    them), the seconds between them counted whatever they carried, stalls among them; and over at least the
    seconds the tool itself ran (`tool_s`, less the same two), so that seconds in which the tool did nothing
    at the test's end count too. None for an empty series."""
    vals = [v or 0.0 for v in series]
    if not vals:
        return None
    peak = max(vals)
    if peak <= 0:
        return 0.0, len(vals)
    busy = [i for i, v in enumerate(vals) if v >= IDLE_SHARE * peak]
    span = vals[busy[0]:busy[-1] + 1]
    trimmed = span[1:-1] if len(busy) >= TRIM_FROM else span
    n = max(len(trimmed), tool_s - (len(span) - len(trimmed)))
    return sum(trimmed) / n, n


def tool_seconds(result: Result) -> int:
    """The whole seconds of the tool's own per-second series (0: it has none)."""
    m = result.measurement
    return sum(1 for s in m.timeseries if not s.partial) if m is not None else 0


@dataclass(frozen=True)
class Finding:
    bottleneck: str
    share: float          # of the resource's capacity
    line: str
    capped: bool = False  # the share is of a cgroup throttle, which caps the resource whatever else is busy


@dataclass
class EvidenceVerdict:
    bottleneck: str | None        # None: the evidence names nothing; the ceiling's bottleneck stands
    sentence: str = ""            # appended to the verdict's reason
    lines: list[str] = field(default_factory=list)


def _gbit(bits: float) -> str:
    return f"{bits / 1e9:g} Gbit/s" if bits >= 1e9 else f"{bits / 1e6:g} Mbit/s"


# where a figure came from, as its evidence line says it
_SOURCES = {"ssh": "/proc over ssh", "here": "/proc here", "prometheus": "Prometheus (node-exporter)"}


def origin(fig: DeviceLoad | LinkLoad) -> str:
    """"; from Prometheus (node-exporter), 1 s resolution" for a figure whose source is recorded; "" for one
    from a result written before it was."""
    if fig.source is None:
        return ""
    res = f", {fig.resolution_s:g} s resolution" if fig.resolution_s else ""
    return f"; from {_SOURCES.get(fig.source, fig.source)}{res}"


def counters_origin(osds: list[OsdCounters]) -> str:
    """"; OSD counters through the admin sockets (cephadm layout)": how the counters under a breakdown were read
    (each OSD's `source`); "" for results written before it was recorded."""
    ways: dict[str, list[str]] = {}
    for source in dict.fromkeys(o.source for o in osds if o.source):
        how, _, where = source.partition(", ")
        ways.setdefault(how, []).extend([where] if where else [])
    said = []
    for how, wheres in ways.items():
        where = ", ".join(wheres)
        said.append(how if how != "admin socket" else f"the admin sockets ({where})" if where else "the admin sockets")
    return f"; OSD counters through {' and '.join(said)}" if said else ""


def link_finding(link: LinkLoad, clients: set[str], seconds: int = 0) -> Finding | None:
    """A link's share of its speed over the test's seconds (over_test_seconds; `seconds`: the tool's own), in the
    direction that carried more; its busy seconds' median is shown apart when it differs (a link full while the
    tool worked and idle while it stalled is not a link at its limit over the test)."""
    if not link.speed_bits_per_s:
        return None
    speed = link.speed_bits_per_s / 8
    best = None
    for direction, series in (("send", link.tx_bytes_per_s), ("receive", link.rx_bytes_per_s)):
        over = over_test_seconds(series, seconds)
        if over is not None and (best is None or over[0] > best[1]):
            best = (direction, over[0], over[1], busy_seconds(series))
    if best is None:
        return None
    direction, mean, n, busy = best
    net = "client network" if link.host in clients else f"{link.network} network"
    share = mean / speed
    apart = (f" ({busy / MIB:,.1f} MiB/s = {busy / speed:.0%} in its busy seconds)"
             if busy is not None and abs(busy - mean) > BUSY_APART * max(mean, busy) else "")
    return Finding(f"{net} ({link.host} {link.iface})", share,
                   f"link {link.host} {link.iface} ({link.network}): {direction} {mean / MIB:,.1f} MiB/s over {n} s "
                   f"of the test = {share:.0%} of {_gbit(link.speed_bits_per_s)} ({link.speed_source or 'speed'})"
                   f"{apart}{origin(link)}")


def _throttle_share(dev: DeviceLoad) -> tuple[float, str] | None:
    """The busiest share of a cgroup throttle the device reached in its busy seconds, and its line part; None
    when it is not throttled. A throttled I/O waits before the block layer counts the device busy, so its
    throttle, not its busy time, says when it is saturated. An IOPS limit counts requests as they are submitted,
    before merging: 4 KiB WAL writes merge two to three into one, so completed requests show a third of it."""
    best: tuple[float, str] | None = None
    for limit, series, unit in ((dev.limit_read_bytes_per_s, dev.read_bytes_per_s, "read"),
                                (dev.limit_write_bytes_per_s, dev.write_bytes_per_s, "write"),
                                (dev.limit_read_iops, dev.submitted("read"), "read"),
                                (dev.limit_write_iops, dev.submitted("write"), "write")):
        v = busy_seconds(series) if limit else None
        if v is None or not limit:
            continue
        if series is dev.read_bytes_per_s or series is dev.write_bytes_per_s:
            shown = f"{unit} {v / MIB:,.1f} of {limit / MIB:,.1f} MiB/s"
        else:
            done = busy_seconds(dev.read_ops_per_s if unit == "read" else dev.write_ops_per_s)
            merged = (f" (as submitted; {done:,.0f} completed after merging)"
                      if (dev.read_requests_per_s if unit == "read" else dev.write_requests_per_s) and done is not None
                      else "")
            shown = f"{unit} requests {v:,.0f}/s of {limit:,.0f}{merged}"
        if best is None or v / limit > best[0]:
            best = (v / limit, f"{shown} allowed by its cgroup throttle")
    return best


def device_finding(dev: DeviceLoad) -> Finding | None:
    v = busy_seconds(dev.busy)
    throttle = _throttle_share(dev)
    if v is None and throttle is None:
        return None
    kind = device_kind(dev.role)
    osds = ", ".join(f"osd.{o}" for o in dev.osds) or "no OSD named"
    waits = [w for w in dev.await_ms if w is not None]
    wait = f", await {statistics.median(waits):.1f} ms" if waits else ""
    rw = busy_seconds([r + w for r, w in zip(dev.read_bytes_per_s, dev.write_bytes_per_s)])
    rate = f", {rw / MIB:,.1f} MiB/s" if rw is not None else ""
    share = v or 0.0
    line = f"device {dev.host}:{dev.device} ({dev.role} of {osds}): {share:.0%} busy in its busy seconds{rate}{wait}"
    capped = False
    if throttle is not None:
        line += f"; {throttle[1]} = {throttle[0]:.0%}"
        capped = throttle[0] >= share
        share = max(share, throttle[0])
    line += origin(dev)
    return Finding(f"{kind} {dev.host}:{dev.device}", share, line, capped)


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


def cpu_finding(h: HostLoad) -> Finding:
    return Finding(f"CPU ({h.host})", h.cpu_busy_median,
                   f"CPU {h.host} ({h.role}, {h.cpus} CPUs): {h.cpu_busy_median:.0%} busy in a typical second, "
                   f"{h.cpu_busy_max:.0%} at most")


def in_flight(result: Result) -> int | None:
    """Ops the test kept in flight: per process (concurrency, io_threads, iodepth × numjobs) × processes."""
    p = result.test.params
    per = p.get("concurrency") or p.get("io_threads") or (
        int(p["iodepth"]) * int(p.get("numjobs") or 1) if p.get("iodepth") else None)
    if not per:
        return None
    m = result.measurement
    procs = len(m.instances) if m and m.instances else int(p.get("instances") or 1)
    return int(per) * max(procs, 1)


def little_line(n: int | None, latency_s: float | None, ops_per_s: float | None) -> str | None:
    if not latency_s or not ops_per_s:
        return None
    if n:
        return (f"Little's law: {n} op{'s' if n != 1 else ''} in flight ÷ {latency_s * 1000:.2f} ms mean latency = "
                f"{n / latency_s:,.0f} ops/s; measured {ops_per_s:,.0f} ops/s")
    return (f"Little's law: {ops_per_s:,.0f} ops/s × {latency_s * 1000:.2f} ms mean latency = "
            f"{ops_per_s * latency_s:.1f} ops in flight")


def missing_evidence(ev: Evidence, hosts: list[HostLoad]) -> list[str]:
    """The evidence a verdict would need and this test does not have, named for the person reading it."""
    out = []
    unwatched = [n.split(":", 1)[0] for n in ev.notes if f": {NOT_WATCHED} (" in n]
    if not ev.osds:
        out.append("OSD counters")
    if not ev.devices:
        out.append(f"device load ({', '.join(unwatched)} not watched: {WHAT_WATCHES})" if unwatched
                   else "device load (no /proc/diskstats entry for the OSDs' devices)")
    if not ev.links:
        out.append(f"link load ({', '.join(unwatched)} not watched)" if unwatched else "link load")
    elif not any(link.speed_bits_per_s for link in ev.links):
        out.append("link speeds (the kernel does not report them)")
    if not hosts:
        out.append("host CPU")
    return out


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


def from_evidence(result: Result, efficiency: float | None, b: LatencyBreakdown | None,
                  clients: set[str] | None = None, rotational: dict[int, bool] | None = None) -> EvidenceVerdict:
    """What the evidence says limited `result` (which must carry evidence), its breakdown's largest part attributed
    where the evidence puts it (breakdown.attribution). `rotational`: each OSD's flag from its metadata, which says
    whether mClock's hdd or ssd capacity applies."""
    v = _from_evidence(result, efficiency, b, clients, rotational)
    if ALONE not in v.sentence:
        # whatever limited the test, a host whose CPUs others used is said: the result is not the cluster's alone
        for s in not_alone(result.hosts, (result.evidence or Evidence()).cpu)[:1]:
            if s.line() not in v.lines:
                v.lines.append(s.line())
            v.sentence = f"{v.sentence}; {alone_part(s)}" if v.sentence else f"measured: {alone_part(s)}"
    said = attribution(b, v.bottleneck) if b is not None else None
    if said is not None:
        at = next((i for i, ln in enumerate(v.lines) if ln.startswith(f"latency {b.client_s * 1000:.2f} ms = ")),
                  None)
        if at is not None:
            v.lines.insert(at + 1, f"breakdown: {said}")
    return v


def _from_evidence(result: Result, efficiency: float | None, b: LatencyBreakdown | None,
                   clients: set[str] | None = None, rotational: dict[int, bool] | None = None) -> EvidenceVerdict:
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
    little = little_line(n, latency_s, m.ops_per_s if m else None)
    if little:
        lines.append(little)
    if b is not None:
        lines.append(describe(b) + counters_origin(ev.osds))
    # which of cAdvisor's series were taken for which daemon is what was collected, said as is
    lines += [note if note.startswith(cadvisor.MATCHED) else f"not collected: {note}" for note in ev.notes]

    direction = direction_of(result.test.kind, result.test.params.get("phase"), m.op if m else None)
    slow = slow_store(ev.osds, ev.devices, latency_s, result.hosts, ev.links) if direction == "write" else None
    held = devices[0] if devices and devices[0].capped and devices[0].share >= DEVICE_BUSY else None
    if slow is not None:
        # first when it names the bottleneck, with its device's own figures; beside a throttle's, after its line
        said = [f"{slow.text}{counters_origin([slow.osd])}"]
        dev = device_finding(slow.device) if slow.device is not None else None
        said += [dev.line] if held is None and dev is not None and dev.line not in lines else []
        at = 0 if held is None else len(lines)
        lines[at:at] = said

    def ev_verdict(bottleneck: str | None, sentence: str) -> EvidenceVerdict:
        return EvidenceVerdict(bottleneck, sentence, lines)

    if held is not None:
        # a cgroup throttle at its limit caps the test whatever else is busy; a link beside it can look full in its
        # busy seconds when the throttle releases the ops in bursts (CI: osd.1 at 100 % of 8 MiB/s, and h3's link at
        # 82 % of 200 Mbit/s in the few seconds it carried anything)
        every = [f for f in devices if f.capped and f.share >= DEVICE_BUSY]
        if len(every) > 1:
            # each one limits the writes (every replica waits for its drive): naming the one a tenth of a percent
            # ahead would name a different device each run
            shares = sorted(f.share for f in every)
            return ev_verdict(held_together(every), f"measured: each carried {shares[0]:.0%} to {shares[-1]:.0%} "
                                                    "of its cgroup throttle")
        return ev_verdict(held.bottleneck, f"measured: {held.bottleneck} carried {held.share:.0%} of its cgroup "
                                           f"throttle")
    cpu_held = held_daemons(result.hosts)
    if cpu_held:
        # a daemon held by its cgroup's CPU limit (a container's) waits for CPU time whatever the host's CPUs do, as a
        # drive at its throttle does: every replicated write waits for its replicas, every op for its primary
        lines[0:0] = [h.line for h in cpu_held]
        names = ", ".join(h.name for h in cpu_held)
        first = cpu_held[0]
        return ev_verdict(f"CPU limit{'s' if len(cpu_held) > 1 else ''} of {names}",
                          f"measured: {first.daemon.who} was held by its CPU limit ({first.daemon.limit_cores:g} "
                          f"cores): its cgroup was throttled in {first.share:.0%} of its CFS periods")
    if slow is not None:
        # the store one OSD's writes waited on, by its own counters: where a throttle is not seen (node-exporter
        # has none) it is the same drive, and it is as decisive, for every replicated write waits for it
        return ev_verdict(slow.bottleneck, slow.sentence)
    if links and links[0].share >= LINK_NEAR:
        # every link at its limit, as every device held at its throttle: two clients' links each full both limit
        every = [f for f in links if f.share >= LINK_NEAR]
        if len(every) > 1:
            lo, hi = f"{min(f.share for f in every):.0%}", f"{max(f.share for f in every):.0%}"
            return ev_verdict(links_together(every), f"measured: the links {_and(every)} each carried "
                                                     f"{lo if lo == hi else f'{lo} to {hi}'} of their speed")
        f = links[0]
        return ev_verdict(f.bottleneck, f"measured: the link {f.bottleneck.split('(')[-1].rstrip(')')} carried "
                                        f"{f.share:.0%} of its speed over the test's seconds")
    if busy_other:
        return ev_verdict("other clients' load",
                          f"measured: other clients loaded the cluster at the same time "
                          f"({(other.read_bytes_per_s + other.write_bytes_per_s) / MIB:,.1f} MiB/s, "
                          f"{other.ops_per_s:,.0f} ops/s), so this result is not the cluster's alone")
    if sched is not None and sched.share >= NEAR_CAP:
        return ev_verdict(SCHEDULER, f"measured: osd.{sched.osd} served {sched.share:.0%} of the client ops its "
                                     f"mClock client limit allows")
    cpu_busy = cpus[0] if cpus and cpus[0].share >= CPU_BUSY else None
    if devices and devices[0].share >= DEVICE_BUSY:
        # busy by its busy time alone (one held at its throttle was named first)
        f = devices[0]
        if cpu_busy is not None:
            return ev_verdict(*cannot_tell(f, cpu_busy, lines, result))
        return ev_verdict(f.bottleneck, f"measured: {f.bottleneck} was {f.share:.0%} busy")
    part = largest_part(b) if b is not None else None
    where = f"; most of it: {part[0]} ({part[1] * 1000:.2f} ms)" if part else ""
    if n is not None and n <= 1:
        # whatever else is busy, one op at a time waits out each op's whole latency: that is what sets the rate
        cpu = (f"; the CPUs of {cpus[0].bottleneck[5:-1]} were {cpus[0].share:.0%} busy"
               f"{whose_cpu(cpus[0], result, lines)}, which lengthens it"
               if cpus and cpus[0].share >= CPU_BUSY else "")
        return ev_verdict("latency (1 op in flight)",
                          f"measured: one op in flight, so each op's latency sets the rate{where}{cpu}")
    if cpu_busy is not None:
        near = max((f for f in devices[:1] + links[:1] if f.share >= NEAR_SHARE), key=lambda f: f.share, default=None)
        if near is not None:
            return ev_verdict(*cannot_tell(near, cpu_busy, lines, result))
        host = next(h for h in result.hosts if h.host == cpu_busy.bottleneck[5:-1])
        bottleneck, sentence, split_line = whose(host, result.hosts, ev.cpu)
        if split_line:
            lines.insert(lines.index(cpu_busy.line) + 1 if cpu_busy.line in lines else 0, split_line)
        return ev_verdict(bottleneck, sentence)
    if efficiency is not None and efficiency >= LATENCY_BOUND_BELOW:
        return ev_verdict(None, "")
    missing = missing_evidence(ev, result.hosts)
    if missing:
        # what was measured saturated nothing, and the rest was not measured: the ceiling's verdict stands (it is
        # "unknown" itself without a baseline), and the evidence says what is missing
        lines.append("not measured: " + ", ".join(missing))
        return ev_verdict(None, "")
    queued = max((f for f in links[:1] + [d for d in devices[:1] if d.capped] if f.share >= NEAR_SHARE),
                 key=lambda f: f.share, default=None)
    if queued is not None:
        # a hard capacity (a link's speed, a throttle) near full while the CPUs idle: more in flight would only queue
        # for it, so it is not latency that sets the rate (a shaped link through TCP and Ceph's per-op pipelining
        # seldom carries more than 85-95 % of its rate, less on a slower machine: CI's gave 75-79 %)
        what = "of its cgroup throttle" if queued.capped else "of its speed"
        return ev_verdict(queued.bottleneck,
                          f"measured: {queued.bottleneck} carried {queued.share:.0%} {what} and no CPU was busy: "
                          f"the ops queued for it")
    flight = f"{n} ops in flight" if n else "the ops in flight"
    return ev_verdict(f"latency ({flight})",
                      f"measured: no link, device or CPU was saturated, so {flight} ÷ the latency set the "
                      f"rate: more in flight would go faster{where}")
