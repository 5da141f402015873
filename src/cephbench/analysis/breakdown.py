"""Where a client's mean latency went, from the OSDs' own counters over the test (`perf dump` deltas).

Pure. Every OSD figure is weighted by the ops that OSD served, so a busy primary counts
more than an idle one. The parts (docs/model.md names each counter):

  network/messenger   client latency − OSD op latency (op_w_latency / op_r_latency)
  OSD queue           op latency − process latency (op_*_process_latency)
  replica writes      replicas' subop_w_latency beyond the primary's own BlueStore commit
  BlueStore commit    commit_lat, and inside it kv_sync_lat (the WAL/DB sync) and state_aio_wait_lat (data device)
  other               what is left of the process latency (PG locks, encoding, the messenger's send)

A part the counters do not give stays None; a negative difference (clocks of averages over
slightly different op sets) is clamped to 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..core.results import LatencyBreakdown, OsdCounters


def _weighted(osds: Iterable[OsdCounters], value: Callable[[OsdCounters], float | None],
              weight: Callable[[OsdCounters], float | None]) -> float | None:
    num = den = 0.0
    for o in osds:
        v, w = value(o), weight(o)
        if v is None or not w:
            continue
        num += v * w
        den += w
    return num / den if den else None


def _minus(a: float | None, b: float | None) -> float | None:
    return max(0.0, a - b) if a is not None and b is not None else None


def breakdown(client_latency_s: float | None, osds: list[OsdCounters], op: str) -> LatencyBreakdown | None:
    """The breakdown of a `write` or `read` test's mean client latency; None without a client latency or
    without any OSD that served ops of that kind."""
    if not client_latency_s or op not in ("write", "read"):
        return None
    w = op == "write"
    ops = (lambda o: o.op_w) if w else (lambda o: o.op_r)
    op_lat = _weighted(osds, (lambda o: o.op_w_latency_s) if w else (lambda o: o.op_r_latency_s), ops)
    if op_lat is None:
        return None
    proc = _weighted(osds, (lambda o: o.op_w_process_latency_s) if w else (lambda o: o.op_r_process_latency_s), ops)
    network = _minus(client_latency_s, op_lat)
    queue = _minus(op_lat, proc)
    replica = commit = kv_sync = device = None
    if w:
        # BlueStore commits both the primary's own writes and the replica writes it applies for others
        store_ops = lambda o: (o.op_w or 0.0) + (o.subop_w or 0.0)  # noqa: E731
        commit = _weighted(osds, lambda o: o.commit_latency_s, store_ops)
        kv_sync = _weighted(osds, lambda o: o.kv_sync_latency_s, store_ops)
        device = _weighted(osds, lambda o: o.aio_wait_latency_s, store_ops)
        subop = _weighted(osds, lambda o: o.subop_w_latency_s, lambda o: o.subop_w)
        # the primary waits for its replicas in parallel with its own commit: only the excess adds latency
        replica = _minus(subop, commit) if subop is not None else None
    known = sum(x for x in (replica, commit) if x is not None)
    other = _minus(proc, known) if proc is not None else None
    return LatencyBreakdown(client_s=client_latency_s, network_s=network, queue_s=queue, replica_s=replica,
                            commit_s=commit, kv_sync_s=kv_sync, device_wait_s=device, other_s=other)


PARTS = (("network_s", "network/messenger"), ("queue_s", "OSD queue"), ("replica_s", "replica writes"),
         ("commit_s", "BlueStore commit"), ("other_s", "other OSD processing"))


def largest_part(b: LatencyBreakdown) -> tuple[str, float] | None:
    """The part that took most of the latency (kv_sync and device wait are inside the commit)."""
    parts = [(name, getattr(b, key)) for key, name in PARTS if getattr(b, key) is not None]
    return max(parts, key=lambda p: p[1]) if parts else None


def describe(b: LatencyBreakdown) -> str:
    """One line: the client latency and its parts in ms, largest first."""
    ms = lambda s: f"{s * 1000:.2f} ms"  # noqa: E731
    parts = sorted(((name, getattr(b, key)) for key, name in PARTS if getattr(b, key) is not None),
                   key=lambda p: -p[1])
    text = f"latency {ms(b.client_s)} = " + " + ".join(f"{name} {ms(v)}" for name, v in parts)
    inner = [f"{n} {ms(v)}" for n, v in (("kv_sync", b.kv_sync_s), ("data device wait", b.device_wait_s))
             if v is not None]
    if inner and b.commit_s is not None:
        text += f" (commit: {', '.join(inner)})"
    return text


def attribution(b: LatencyBreakdown, bottleneck: str | None) -> str | None:
    """Where the evidence puts the largest part's time, when the counters cannot name it themselves (issue 35: the
    breakdown put 1,604 of 2,246 ms in "other OSD processing" with the cluster link as the limit): a primary's
    process latency holds its wait for its replicas' acks, whose own time (subop_w_latency, from receipt) leaves out
    the send to them; a daemon held by its CPU limit waits for CPU inside every part it runs; else what the counters
    leave out, said as such. None when the largest part names itself (the commit, the replicas, the queue)."""
    part = largest_part(b)
    if part is None or part[0] not in ("other OSD processing", "network/messenger"):
        return None
    name, v = part
    what = f"{name} {v * 1000:.2f} ms"
    if bottleneck and bottleneck.startswith(("cluster network", "public network")):
        if name == "other OSD processing":
            return (f"{what}: the primaries' wait for their replicas beyond the replicas' own time, which holds the "
                    f"sends to them over the {bottleneck.split(' (')[0]} at its limit")
        return f"{what}: the client's ops and replies crossing the {bottleneck.split(' (')[0]} at its limit"
    if bottleneck and bottleneck.startswith("client network"):
        return f"{what}: the ops crossing the client's link at its limit" if name == "network/messenger" else None
    if bottleneck and bottleneck.startswith("CPU limit of "):
        return (f"{what}: {bottleneck.removeprefix('CPU limit of ')} waits for CPU time its limit does not give, "
                f"in this part and in its commit")
    if bottleneck and bottleneck.startswith("CPU ("):
        return f"{what}: with the CPUs busy, threads waiting to run are counted here"
    if name == "other OSD processing":
        return (f"{what}: the counters do not say where (PG locks, encoding, sends to replicas, waits for CPU), and "
                f"the evidence names no cause it would hold")
    return None
