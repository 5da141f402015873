"""One OSD whose store held the writes: its BlueStore commit latency far above its peers' (issue 28, item 5).

Pure. A drive slower than its peers makes its OSD's BlueStore wait for it, and a replicated write waits for its
slowest replica. When that drive is held by a cgroup throttle, the wait happens before the block layer counts the
drive busy: from node-exporter (no throttles there) it looks like its peers, writing the same bytes 0-3 % busy. Its
OSD's own counters do not: on the multi-host lab with osd.1's drive at 8 MiB/s, 1 MiB writes × 16, osd.1's commit
took 1,560 ms per write against 9 ms on its peers, 80 % of the writes' 1.94 s.

The rule reads each OSD's counters over the test (`OsdCounters`), whichever reader gave them (an admin socket over
ssh, `ceph tell`): the same figures, the same rule. A write test whose slowest OSD's commit stands out of its peers'
spread (stands_out: SPREAD_K × their range, at least MIN_SPREAD of their median, above the slowest of them), and the
writes' wait on it ≥ SHARE of the client's mean latency (its commit's excess, or its replica writes' when longer: ops
queue in the OSD in front of a held store), names why where the evidence has it (_cause: its CPU limit, a device or
link of its own near its capacity, its host's CPUs, its store's own waits), else says it does not. Its store's
device: its WAL/DB device when it has one of its own and its KV sync (the WAL/DB's writes) is what grew most, else
its data device (`state_aio_wait_lat`, and the KV sync too when the DB shares it). The fixtures' healthy runs' writes stay within
2.5× and 30 % of the latency; the throttled drives of the verdict benchmark stood 26× to 213× above their peers,
but a WAL/DB drive at 1 MiB/s only 7.7× while the machine's CPUs were 100 % busy (they slow every OSD's commit).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.results import DeviceLoad, HostLoad, LinkLoad, OsdCounters
from .cpusplit import HELD_THROTTLED
from .model import CPU_BUSY

SPREAD_K = 3.0        # the slow OSD's latency beyond its slowest peer's, in its peers' spreads
MIN_SPREAD = 0.5      # a spread is at least this share of the peers' median: the fixtures' healthy runs put their
                      # slowest OSD up to 2.5× its peers (a bar of 2.5× for peers alike: 1 + SPREAD_K × MIN_SPREAD)
STORE_SHARE = 0.2     # its data device's writes and KV sync grew by this share of its commit's excess: its store
SHARE = 0.5           # the writes' wait on it (commit or replica-write excess), of the client's mean latency
MIN_STORE_OPS = 5     # writes an OSD must have committed for its mean to count
NEAR = 0.75           # a device, link or throttle this near its capacity is a cause the evidence has
STORE = "its store"   # _cause: the store's own waits, its device named by which grew
# an OSD already slower than its peers, throttled by its CPU limit in this share of its periods: the limit is why
# (half of HELD_THROTTLED, which names a daemon on its throttling alone: osd.1 at 0.1 cores was throttled in 51 %)
LIMIT_CAUSE = HELD_THROTTLED / 2

KIND_OF_ROLE = {"data": "disk", "db": "WAL/DB device", "wal": "WAL/DB device", "journal": "journal device"}


def device_kind(role: str) -> str:
    """How a device of `role` is named in a bottleneck: disk, WAL/DB device, ..."""
    return KIND_OF_ROLE.get(role, f"{role} device")


@dataclass(frozen=True)
class SlowStore:
    osd: OsdCounters
    device: DeviceLoad | None     # the device named, when the evidence holds it
    bottleneck: str               # e.g. "disk h2:loop1", or "disk of osd.1 (h2)" without device figures
    text: str                     # the evidence line, without where its counters came from
    sentence: str


def _store_ops(o: OsdCounters) -> float:
    return (o.op_w or 0.0) + (o.subop_w or 0.0)


def _ms(s: float) -> str:
    return f"{s * 1000:,.1f} ms"


def _peer_median(peers: list[OsdCounters], field: str) -> float | None:
    vals = [v for o in peers if (v := getattr(o, field)) is not None]
    return statistics.median(vals) if vals else None


def _excess(slow: OsdCounters, peers: list[OsdCounters], field: str) -> tuple[float, float] | None:
    mine, theirs = getattr(slow, field), _peer_median(peers, field)
    return (mine, theirs) if mine is not None and theirs is not None else None


def stands_out(mine: float | None, peers: list[float]) -> bool:
    """Whether `mine` is beyond its peers' spread: above the slowest of them by SPREAD_K × their spread (their range,
    at least MIN_SPREAD × their median). Two peers of 18 and 24 ms put the bar at 42 ms; 10 and 30 ms at 90."""
    if mine is None or not peers:
        return False
    spread = max(max(peers) - min(peers), MIN_SPREAD * statistics.median(peers))
    return mine > max(peers) + SPREAD_K * spread


def _share(series: list[float | None], capacity: float | None) -> float:
    vals = sorted(v for v in series if v is not None)
    return statistics.median(vals[len(vals) // 4:]) / capacity if vals and capacity else 0.0


def _cause(slow: OsdCounters, own: list[DeviceLoad], hosts: list[HostLoad], links: list[LinkLoad],
           store_most: bool) -> tuple[str | None, str]:
    """Why the OSD is slower, where the evidence has it: (the bottleneck, what the line says); (None, ...) when it
    does not say. Its process held by its cgroup's CPU limit; a device of its own at its throttle or busy; its host's
    link near its speed; its host's CPUs busy while its peers' are not; else its store's own waits (its data
    device's writes and its KV sync grew most of its commit's excess: a drive held where no throttle is seen)."""
    name, host = f"osd.{slow.osd}", slow.host
    for h in hosts:
        for p in h.processes:
            if p.who == name and p.limit_cores and p.periods and (p.throttled_periods or 0) / p.periods >= LIMIT_CAUSE:
                return f"CPU limit of {name} ({p.host or h.host})", f"its CPU limit ({p.limit_cores:g} cores, " \
                       f"throttled in {(p.throttled_periods or 0) / p.periods:.0%} of periods)"
    for d in own:
        caps = [(d.limit_write_bytes_per_s, d.write_bytes_per_s), (d.limit_read_bytes_per_s, d.read_bytes_per_s),
                (d.limit_write_iops, d.submitted("write")), (d.limit_read_iops, d.submitted("read"))]
        share = max([_share(v, c) for c, v in caps if c] + [_share(d.busy, 1.0)])
        if share >= NEAR:
            return f"{device_kind(d.role)} {d.host}:{d.device}", f"its {d.role} device at {share:.0%} of its capacity"
    for link in (x for x in links if x.host == host and x.speed_bits_per_s):
        share = max(_share(link.tx_bytes_per_s, link.speed_bits_per_s / 8),
                    _share(link.rx_bytes_per_s, link.speed_bits_per_s / 8))
        if share >= NEAR:
            return f"{link.network} network ({link.host} {link.iface})", f"its host's link at {share:.0%} of its speed"
    mine = next((h for h in hosts if h.host == host), None)
    others = [h for h in hosts if h.host != host and h.source == (mine.source if mine else None)]
    if mine is not None and others and mine.cpu_busy_median >= CPU_BUSY and all(h.cpu_busy_median < CPU_BUSY
                                                                                 for h in others):
        return f"CPU ({host})", f"its host's CPUs {mine.cpu_busy_median:.0%} busy, its peers' hosts' under " \
                                f"{CPU_BUSY:.0%}"
    if store_most:
        listed = any(h.host == host and h.processes for h in hosts)
        # a starved OSD's KV sync waits too (osd.2 at 0.08 cores: 34 ms above its peers'): without its cgroup read,
        # a CPU limit is not ruled out
        return STORE, "its data device's writes and KV sync" + (
            "" if listed else f"; whether a CPU limit held it is not known: {host or 'its host'}'s daemons and their "
                              "cgroups were not read (settings.ssh lists them)")
    return None, "the evidence does not say why"


def slow_store(osds: list[OsdCounters], devices: list[DeviceLoad], client_latency_s: float | None,
               hosts: list[HostLoad] | None = None, links: list[LinkLoad] | None = None) -> SlowStore | None:
    """The OSD whose store the writes waited on, and why; None when no OSD's commit or replica writes stand out of
    its peers' spread, or the writes did not wait on it for SHARE of their latency."""
    if not client_latency_s:
        return None
    counted = [o for o in osds if o.commit_latency_s is not None and _store_ops(o) >= MIN_STORE_OPS]
    if len(counted) < 2:
        return None
    slow = max(counted, key=lambda o: o.commit_latency_s or 0.0)
    peers = [o for o in counted if o is not slow]
    theirs = statistics.median(o.commit_latency_s or 0.0 for o in peers)
    mine = slow.commit_latency_s or 0.0
    # its commit decides (its replica writes alone stood out in a healthy run of evenly limited OSDs, 2.1× on its
    # commit); its replica writes say how long the writes waited on it, below
    if not stands_out(mine, [o.commit_latency_s or 0.0 for o in peers]):
        return None
    # where the writes waited on it: its commits' excess over its peers', or its replica writes' (their queue in front
    # of the slow store, and the commit), whichever is longer: ops pile up in the OSD's queue behind a held store,
    # which the commit does not count (a toolbox run: commit 928 ms, replica writes 1,742 ms against 97 ms, of writes
    # of 1,878 ms)
    sub = _excess(slow, peers, "subop_w_latency_s")
    waited = max(mine - theirs, sub[0] - sub[1] if sub is not None else 0.0)
    if waited < SHARE * client_latency_s:
        return None
    aio, kv = _excess(slow, peers, "aio_wait_latency_s"), _excess(slow, peers, "kv_sync_latency_s")
    own = [d for d in devices if slow.osd in d.osds]
    db = next((d for d in own if d.role in ("db", "wal")), None)
    kv_most = kv is not None and (aio is None or kv[0] - kv[1] > aio[0] - aio[1])
    device = db if db is not None and kv_most else next((d for d in own if d.role == "data"), None)
    where = f" ({slow.host})" if slow.host else ""
    # its store's own waits: the data device's writes and the KV sync, of its commit's excess
    store = sum(max(0.0, a - b) for x in (aio, kv) if x is not None for a, b in [x])
    store_most = mine > theirs and store >= STORE_SHARE * (mine - theirs)
    cause, why = _cause(slow, own, hosts or [], links or [], store_most)
    if cause == STORE:
        # without the OSD's devices, whether its KV sync has a drive of its own is not known: its store's drive
        cause = f"{device_kind(device.role)} {device.host}:{device.device}" if device else \
            f"{'drive' if kv_most else 'disk'} of osd.{slow.osd}{where}"
    else:
        device = next((d for d in own if cause is not None and cause.endswith(f" {d.host}:{d.device}")), None)
    bottleneck = cause if cause is not None else f"osd.{slow.osd}{where}, slower than its peers"
    names = ", ".join(f"osd.{o.osd}" for o in peers)
    parts = [f"{label} {_ms(a)} (peers {_ms(b)})" for label, x in (("its data device's writes", aio),
                                                                    ("its KV sync", kv))
             if x is not None for a, b in [x]]
    if sub is not None and sub[0] - sub[1] > mine - theirs:
        parts.append(f"its replica writes {_ms(sub[0])} (peers {_ms(sub[1])}), "
                     f"{(sub[0] - sub[1]) / client_latency_s:.0%} of the writes' latency")
    inner = f"; of it {', '.join(parts)}" if parts else ""
    text = (f"osd.{slow.osd}{where}: BlueStore commit {_ms(mine)} per write against {_ms(theirs)} on its peers "
            f"(median of {names}), {mine / theirs if theirs else float('inf'):,.0f}× theirs and "
            f"{(mine - theirs) / client_latency_s:.0%} of the writes' {_ms(client_latency_s)}{inner}"
            f" → {bottleneck}" + ("" if cause is not None else "; the evidence does not say why"))
    sentence = (f"measured: osd.{slow.osd}'s BlueStore commit took {_ms(mine)} per write against {_ms(theirs)} on "
                f"its peers, and the writes waited {waited / client_latency_s:.0%} of their latency on it: "
                + (f"on {bottleneck} ({why})" if cause is not None else
                   f"osd.{slow.osd} is slower than its peers; the evidence does not say why"))
    return SlowStore(slow, device, bottleneck, text, sentence)
