"""What the watches saw during one tool run (`Seen`), and the window of a test run in rounds seen as one.

A steady-state phase runs its tool in rounds and its figure is the last `window` rounds together (core/steady.py); its
evidence must cover the same rounds. Pure: the driver keeps each round's Seen, this adds them up."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Callable, Iterable, TypeVar

from .proccpu import combine as combine_cpu
from ..core.results import ClusterDuringTest, DeviceLoad, Evidence, HostLoad, LinkLoad, OsdCounters, OtherLoad

T = TypeVar("T")


@dataclass(frozen=True)
class ClusterSeen:
    """The cluster watch's findings (clusterwatch.ClusterWatch) once its tool run ended."""

    summary: ClusterDuringTest | None = None
    warnings: list[str] = field(default_factory=list)
    stop_reason: str | None = None
    stopped_for_capacity: bool = False


@dataclass(frozen=True)
class Seen:
    """What was watched while one tool run ran: the hosts' CPU, Ceph's counters, the devices and links, the
    cluster. It travels back with the tools' results."""

    hosts: list[HostLoad] = field(default_factory=list)
    evidence: Evidence | None = field(default_factory=Evidence)     # None: nothing of Ceph's read (a baseline)
    cluster: ClusterSeen = field(default_factory=ClusterSeen)


def combine(rounds: list[Seen], starts_s: list[float]) -> Seen:
    """The rounds (in order, each started `starts_s` seconds after the test's first round) seen as one run:
    counter deltas summed, latencies weighted by their ops, per-second series concatenated (the seconds between
    rounds are in none of them), the cluster's worst over all of them with its events on the test's clock."""
    if len(rounds) == 1:
        return rounds[0]
    return Seen(hosts=_hosts([r.hosts for r in rounds]),
                evidence=_evidence([r.evidence for r in rounds]),
                cluster=_cluster([r.cluster for r in rounds], starts_s))


def _by_key(groups: Iterable[list[T]], key: Callable[[T], object]) -> list[list[T]]:
    """Items of every round with one key together, in the order they first appear."""
    out: dict[object, list[T]] = {}
    for group in groups:
        for item in group:
            out.setdefault(key(item), []).append(item)
    return list(out.values())


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _hosts(rounds: list[list[HostLoad]]) -> list[HostLoad]:
    out = []
    for loads in _by_key(rounds, lambda h: (h.host, h.role)):
        series = [v for h in loads for v in h.cpu_busy_series]
        # each round's mean weighed by its seconds (a round without a series by one)
        weights = [max(1, len(h.cpu_busy_series)) for h in loads]
        mean = round(sum(h.cpu_busy_mean * w for h, w in zip(loads, weights)) / sum(weights), 4)
        iowait = ([(h.iowait_mean, w) for h, w in zip(loads, weights) if h.iowait_mean is not None]
                  if all(h.iowait_mean is not None for h in loads) else [])
        out.append(loads[-1].model_copy(update={
            "cpu_busy_mean": mean,
            "cpu_busy_median": statistics.median(series) if len(series) >= 3 else mean,
            "cpu_busy_max": max(h.cpu_busy_max for h in loads),
            "iowait_mean": round(sum(v * w for v, w in iowait) / sum(w for _, w in iowait), 4) if iowait else None,
            "cpu_busy_series": series, **_whose(loads)}))
    return out


def _whose(loads: list[HostLoad]) -> dict:
    """A host's CPU-seconds and its daemons' over every round (each daemon read in every round, the same process:
    its CPU, periods and throttling summed), so that its split is the window's (analysis/cpusplit.py)."""
    if any(h.cpu_s is None or h.wall_s is None for h in loads):
        return {"cpu_s": None, "wall_s": None, "processes": []}
    procs = []
    for ps in _by_key([h.processes for h in loads], lambda p: (p.who, p.pid)):
        if len(ps) != len(loads):
            continue
        total = lambda k: None if any(getattr(p, k) is None for p in ps) else sum(getattr(p, k) for p in ps)  # noqa: E731
        procs.append(ps[-1].model_copy(update={k: total(k) for k in ("cpu_s", "wall_s", "periods",
                                                                     "throttled_periods", "throttled_s")}))
    return {"cpu_s": sum(h.cpu_s or 0.0 for h in loads), "wall_s": sum(h.wall_s or 0.0 for h in loads),
            "processes": procs}


_COUNTS = ("op_r", "op_w", "op_in_bytes", "op_out_bytes", "subop_w")
# latency -> the count of the ops it is the mean of; BlueStore's transactions are the OSD's writes, its own and
# its replicas' (its counters' own avgcount is not kept: close enough to weigh rounds of one workload)
_LATENCY_OPS = {
    "op_r_latency_s": ("op_r",), "op_r_process_latency_s": ("op_r",),
    "op_w_latency_s": ("op_w",), "op_w_process_latency_s": ("op_w",), "subop_w_latency_s": ("subop_w",),
    "commit_latency_s": ("op_w", "subop_w"), "submit_latency_s": ("op_w", "subop_w"),
    "throttle_latency_s": ("op_w", "subop_w"), "kv_sync_latency_s": ("op_w", "subop_w"),
    "kv_flush_latency_s": ("op_w", "subop_w"), "aio_wait_latency_s": ("op_w", "subop_w"),
}


def _osd(rounds: list[OsdCounters]) -> OsdCounters:
    fields: dict[str, float | None] = {}
    for name in _COUNTS:
        values = [getattr(o, name) for o in rounds]
        fields[name] = sum(values) if all(v is not None for v in values) else None
    for name, ops in _LATENCY_OPS.items():
        pairs = [(getattr(o, name), sum(getattr(o, op) or 0 for op in ops)) for o in rounds]
        known = [(lat, n) for lat, n in pairs if lat is not None and n > 0]
        fields[name] = sum(lat * n for lat, n in known) / sum(n for _, n in known) if known else None
    last = rounds[-1]       # gauges: at the end
    return last.model_copy(update={**fields, "missing": _unique(m for o in rounds for m in o.missing)})


def _series(items: list[T], names: tuple[str, ...]) -> T:
    first = items[0]
    return first.model_copy(update={n: [v for it in items for v in getattr(it, n)] for n in names})  # type: ignore


_DEVICE_SERIES = ("busy", "read_bytes_per_s", "write_bytes_per_s", "await_ms", "read_ops_per_s", "write_ops_per_s",
                  "read_requests_per_s", "write_requests_per_s")
_LINK_SERIES = ("rx_bytes_per_s", "tx_bytes_per_s")


def _other(rounds: list[OtherLoad | None]) -> OtherLoad | None:
    """Rounds of one duration: each round's means count alike."""
    known = [o for o in rounds if o is not None]
    if not known:
        return None

    def mean(name: str) -> float:
        return sum(getattr(o, name) for o in known) / len(known)
    return OtherLoad(
        read_bytes_per_s=mean("read_bytes_per_s"), write_bytes_per_s=mean("write_bytes_per_s"),
        ops_per_s=mean("ops_per_s"), pools=_unique(p for o in known for p in o.pools),
        background_bytes_per_s=mean("background_bytes_per_s"), background_ops_per_s=mean("background_ops_per_s"),
        background_pools=_unique(p for o in known for p in o.background_pools),
        by_pool={p: {k: sum(o.by_pool.get(p, {}).get(k, 0.0) for o in known) / len(known)
                     for k in ("read_bytes_per_s", "write_bytes_per_s", "ops_per_s")}
                 for p in _unique(p for o in known for p in o.by_pool)},
        window_s=sum(o.window_s or 0.0 for o in known) or None)


def _evidence(rounds: list[Evidence]) -> Evidence:
    osds, notes = [], []
    for counters in _by_key([e.osds for e in rounds], lambda o: o.osd):
        if len(counters) == len(rounds):
            osds.append(_osd(counters))
        else:   # a sum without some round's ops would be no window's
            notes.append(f"osd.{counters[0].osd}: counters not read in every round of the window: left out")
    return Evidence(
        osds=sorted(osds, key=lambda o: o.osd),
        devices=[_series(d, _DEVICE_SERIES) for d in _by_key([e.devices for e in rounds],
                                                              lambda d: (d.host, d.device, d.role))],
        links=[_series(link, _LINK_SERIES) for link in _by_key([e.links for e in rounds],
                                                               lambda k: (k.host, k.iface, k.network))],
        settings=next((e.settings for e in rounds if e.settings), {}),
        other_load=_other([e.other_load for e in rounds]),
        cpu=combine_cpu([e.cpu for e in rounds]),
        notes=_unique([n for e in rounds for n in e.notes] + notes))


_EVENT = re.compile(r"(\d+(?:\.\d+)?) s: (.*)", re.S)


def _shifted(event: str, by_s: float) -> str:
    m = _EVENT.fullmatch(event)
    return f"{round(float(m.group(1)) + by_s, 1):g} s: {m.group(2)}" if m else event


def _cluster(rounds: list[ClusterSeen], starts_s: list[float]) -> ClusterSeen:
    stop = next((c.stop_reason for c in reversed(rounds) if c.stop_reason), None)
    summaries = [(c.summary, start) for c, start in zip(rounds, starts_s) if c.summary is not None]
    summary = None
    if summaries:
        def worst(name: str) -> int:
            return max(getattr(s, name) for s, _ in summaries)
        used = [s.raw_used_max for s, _ in summaries if s.raw_used_max is not None]
        summary = ClusterDuringTest(
            osds_down_max=worst("osds_down_max"), osds_out_max=worst("osds_out_max"),
            pgs_degraded_max=worst("pgs_degraded_max"), pgs_inactive_max=worst("pgs_inactive_max"),
            objects_degraded_max=worst("objects_degraded_max"), raw_used_max=max(used) if used else None,
            events=[_shifted(e, start) for s, start in summaries for e in s.events], stopped=stop,
            mon_silent_s=round(sum(s.mon_silent_s for s, _ in summaries), 1))
    return ClusterSeen(summary, _unique(w for c in rounds for w in c.warnings), stop,
                       any(c.stopped_for_capacity for c in rounds))
