"""Whether mClock's client limit held a test's client ops (pure; docs/model.md, "The rules, in order", rule 3).

Reef and later run the mClock scheduler by default. Its client class gets a reservation
(`osd_mclock_scheduler_client_res`) and a limit (`_lim`), each a fraction of the OSD's capacity (Reef's `config help`:
0 < x <= 1; a limit of 0 enforces none, as the built-in profiles' do). dmClock serves reservations whatever the
limit, so the class is held to max(res, lim) of the capacity: measured on a Reef 18.2.7 lab (one rotational OSD,
capacity 315 IOPS, 4 KiB writes, 16 in flight) res 0.1 lim 0.3 gave 94 ops/s, res 0.3 lim 0.1 also 94, res 0.5 lim
0.3 gave 151.

The capacity is bytes per second, `osd_mclock_max_sequential_bandwidth_{hdd,ssd}`, and each op costs max(its bytes,
bandwidth ÷ `osd_mclock_max_capacity_iops_{hdd,ssd}`) (Reef's `calc_scaled_cost`): small ops are held at that share
of the IOPS capacity, large writes at that share of the bandwidth (1 MiB writes under lim 0.3, 0.45 and 0.6: 45, 67
and 89 ops/s of 45, 67 and 90). A read's request carries no data, so it costs one I/O. The hdd or ssd options go by
the OSD's rotational flag (osd metadata); when it is unknown, the larger of the two caps (this names less, never
more). So does what is left out: limits above 1 (Pacific's and Quincy's absolute IOPS) are not read, replica
writes an OSD applied are not counted against its cap, and the cap is the OSD's whole: mClock divides it among the
op shards (1 on a rotational OSD in Reef, 8 on an SSD), so a load that reaches only some shards is held lower.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.results import OsdCounters, Result

NAME = "OSD scheduler (mClock client limit)"
NEAR_CAP = 0.85                   # served this share of the cap or more: the limit held the ops
# ... or this share, with the ops waiting in the OSD's queue for QUEUED of their latency or more: the limit holding
# them there while the client, short of CPU, sent fewer (a one-OSD Reef lab beside make test's other work: 78 of 94
# ops/s, 83 %, with 150 of 202 ms in the OSD's queue; the same lab alone served 99 %)
QUEUED_NEAR_CAP = 0.7
QUEUED = 0.5
LIM = "osd_mclock_scheduler_client_lim"
RES = "osd_mclock_scheduler_client_res"
MIB = 1024**2


@dataclass(frozen=True)
class SchedulerCap:
    osd: int
    share: float                  # client ops served over the ops the limit allows
    line: str


def _fraction(settings: dict[str, str], name: str) -> float | None:
    try:
        v = float(settings.get(name, ""))
    except ValueError:
        return None
    return v if 0 < v <= 1 else None


def _number(settings: dict[str, str], name: str) -> float | None:
    try:
        v = float(settings.get(name, ""))
    except ValueError:
        return None
    return v if v > 0 else None


def osd_cap(o: OsdCounters, settings: dict[str, str], seconds: float, rotational: bool | None) -> SchedulerCap | None:
    """The share of its mClock client cap one OSD's client ops reached over `seconds`; None when nothing caps
    them (not mClock, no limit) or nothing was served."""
    if not settings.get("osd_op_queue", "").startswith("mclock"):
        return None
    lim = _fraction(settings, LIM)
    if lim is None:
        return None
    res = _fraction(settings, RES) or 0.0
    held = max(lim, res)
    writes, reads = o.op_w or 0.0, o.op_r or 0.0
    if writes + reads <= 0 or seconds <= 0:
        return None
    write_size = (o.op_in_bytes or 0.0) / writes if writes else 0.0
    best: tuple[float, str, float, float | None] | None = None
    for medium in ("hdd",) if rotational else ("ssd",) if rotational is False else ("hdd", "ssd"):
        iops = _number(settings, f"osd_mclock_max_capacity_iops_{medium}")
        if iops is None:
            continue
        bandwidth = _number(settings, f"osd_mclock_max_sequential_bandwidth_{medium}")
        if bandwidth is None:       # a reading without it: every op one I/O, which names less for large writes
            cap = held * iops
        else:
            per_io = bandwidth / iops
            cost = (writes * max(write_size, per_io) + reads * per_io) / (writes + reads)
            cap = held * bandwidth / cost
        if best is None or cap > best[0]:
            best = (cap, medium, iops, bandwidth)
    if best is None:
        return None
    cap, medium, iops, bandwidth = best
    served = (writes + reads) / seconds
    share = served / cap
    limit = f"client limit {lim:g}" + (f" under its reservation {res:g}" if res > lim else "")
    bw = f" and max_sequential_bandwidth_{medium} {bandwidth / MIB:,.0f} MiB/s" if bandwidth else ""
    # a mean over every write the OSD served (rados bench's metadata object too), so rarely a whole size
    size = (f", writes of {write_size / MIB:,.1f} MiB on average" if write_size >= MIB else
            f", writes of {write_size / 1024:,.1f} KiB on average" if write_size >= 1 else "")
    unknown = " (medium unknown: the larger of the hdd and ssd caps)" if rotational is None else ""
    line = (f"osd.{o.osd} mClock, profile {settings.get('osd_mclock_profile', '?')}: {limit} of "
            f"osd_mclock_max_capacity_iops_{medium} {iops:,.0f}{bw} = {cap:,.0f} client ops/s{size}{unknown}; "
            f"served {served:,.0f} client ops/s = {share:.0%} of it")
    return SchedulerCap(o.osd, share, line)


def scheduler_cap(result: Result, rotational: dict[int, bool] | None = None) -> SchedulerCap | None:
    """The OSD closest to (or over) its mClock client cap during `result`; None when no OSD's ops were capped."""
    ev, m = result.evidence, result.measurement
    if ev is None or m is None or not m.duration_s:
        return None
    rotational = rotational or {}
    caps = [c for o in ev.osds
            if (c := osd_cap(o, ev.settings.get(f"osd.{o.osd}", {}), m.duration_s, rotational.get(o.osd)))]
    return max(caps, key=lambda c: c.share, default=None)
