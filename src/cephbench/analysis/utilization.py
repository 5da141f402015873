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

import statistics
from dataclasses import dataclass

from ..core.results import DeviceLoad, Evidence, HostLoad, LinkLoad, OsdCounters, Result
from ..kinds import in_flight_per_process
from ..evidence.hoststream import NOT_WATCHED, WHAT_WATCHES
from .slowstore import device_kind
from .model import MIB

LINK_NEAR = 0.80
DEVICE_BUSY = 0.90
NEAR_SHARE = 0.75                 # a device or link this close to its capacity may be what limits a busy CPU's test
LATENCY_BOUND_BELOW = 0.9         # efficiency under which an unsaturated test is called latency-bound
IDLE_SHARE = 0.1                  # seconds under this share of the peak are start-up or wind-down
TRIM_FROM = 5                     # busy seconds from which the partial first and last are left out
BUSY_APART = 0.10                 # a link's busy seconds this far from its test seconds are shown apart


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


def over_test_seconds(series: list[float | None], tool_s: float = 0) -> tuple[float, float] | None:
    """The mean of a series over the test's seconds, and how many: from its first busy second (≥ IDLE_SHARE of the
    peak) to its last, less those two when there are TRIM_FROM busy seconds or more (the test began and ended inside
    them), the seconds between them counted whatever they carried, stalls among them; and over at least the
    seconds the tool itself ran (`tool_s`, less the same two), so that seconds in which the tool did nothing
    at the test's end count too. A shorter test's first and last seconds are kept but are partial: what its
    seconds carried is over the tool's own time then (a 3.2 s seq's link read 20, 35, 34 and 18 MiB: 33.7 MiB/s
    over its 3.2 s, where the mean of the four seconds says 27). None for an empty series."""
    vals = [v or 0.0 for v in series]
    if not vals:
        return None
    peak = max(vals)
    if peak <= 0:
        return 0.0, len(vals)
    busy = [i for i, v in enumerate(vals) if v >= IDLE_SHARE * peak]
    span = vals[busy[0]:busy[-1] + 1]
    if len(busy) < TRIM_FROM and 0 < tool_s < len(span):
        secs = max(tool_s, len(span) - 2.0)      # the seconds inside the span's partial ends were the test's
        return sum(span) / secs, round(secs, 1)
    trimmed = span[1:-1] if len(busy) >= TRIM_FROM else span
    n = max(len(trimmed), int(tool_s) - (len(span) - len(trimmed)))
    return sum(trimmed) / n, n


def tool_seconds(result: Result) -> float:
    """The seconds the tool itself ran, when it has a per-second series (0: it has none): the longest instance's
    (each client's tool ran its own time), else the measurement's."""
    m = result.measurement
    if m is None or not any(not s.partial for s in m.timeseries):
        return 0.0
    return max([i.duration_s for i in m.instances] or [m.duration_s])


@dataclass(frozen=True)
class Finding:
    bottleneck: str
    share: float          # of the resource's capacity
    line: str
    capped: bool = False  # the share is of a cgroup throttle, which caps the resource whatever else is busy


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


def link_finding(link: LinkLoad, clients: set[str], seconds: float = 0) -> Finding | None:
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
                   f"link {link.host} {link.iface} ({link.network}): {direction} {mean / MIB:,.1f} MiB/s over {n:g} s "
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


def cpu_finding(h: HostLoad) -> Finding:
    return Finding(f"CPU ({h.host})", h.cpu_busy_median,
                   f"CPU {h.host} ({h.role}, {h.cpus} CPUs): {h.cpu_busy_median:.0%} busy in a typical second, "
                   f"{h.cpu_busy_max:.0%} at most")


def in_flight(result: Result) -> int | None:
    """Ops the test kept in flight: per process (its kind's load parameters, kinds.in_flight_per_process) ×
    processes."""
    p = result.test.params
    per = in_flight_per_process(result.test.kind, p)
    if not per:
        return None
    m = result.measurement
    procs = len(m.instances) if m and m.instances else int(p.get("instances") or 1)
    return int(per) * max(procs, 1)


def little_line(n: int | None, latency_s: float | None, ops_per_s: float | None, unit: str = "ops/s") -> str | None:
    """Little's law on the test's own figures; `unit`: what the test's kind calls its operations per second
    (kinds.ops_unit: objects/s, IOPS, req/s), so the line's rate reads as the tables' does."""
    if not latency_s or not ops_per_s:
        return None
    if n:
        return (f"Little's law: {n} op{'s' if n != 1 else ''} in flight ÷ {latency_s * 1000:.2f} ms mean latency = "
                f"{n / latency_s:,.0f} {unit}; measured {ops_per_s:,.0f} {unit}")
    return (f"Little's law: {ops_per_s:,.0f} {unit} × {latency_s * 1000:.2f} ms mean latency = "
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
