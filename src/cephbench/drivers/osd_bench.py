"""`ceph tell osd.N bench`: every OSD writes alone, `repeat` rounds; an OSD is slow only when its repeats say so.

Each OSD writes `total` bytes in `block_size` writes straight to its store,
without replication or the network: a per-drive ceiling as Ceph sees it.

One bench per OSD is not enough to accuse a drive: on a shared disk, or after a
cold start, one run can be 30 % off (the lab's osd.0 was, in `make demo`). So the
OSDs are benched in rounds, round-robin (osd.0, osd.1, osd.2, osd.0, ...), which
spreads a cold start or a busy neighbour over every OSD instead of landing it on
one, and an OSD is flagged slow only when both:
- its median is more than `slow_threshold` below the median of the other OSDs'
  medians (the effect is large enough to matter), and
- a Mann-Whitney U test of its repeats against every repeat of the other OSDs,
  pooled, gives p < ALPHA (the difference is not repeat-to-repeat noise).
Why Mann-Whitney rather than "its max below the others' min": with 3 repeats on
3 OSDs (3 against 6 samples) both ask for about the same thing (U = 0 gives
p = 0.024, one overlapping pair p = 0.048), but on a large cluster the others'
min is the single worst of hundreds of benches, so one hiccup on any other OSD
would hide a really slow drive; the U test tolerates that and says how likely the
ordering is by chance. Its floor also tells honestly when repeats are too few to
separate anything (3 OSDs with repeat 1: p can never go below 0.67).
"""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from ..core.stats import ALPHA, mann_whitney, min_p
from ..core.results import Measurement, Test
from ..core.errors import ParseError
from ..core.figures import checked, count, mapping, number
from . import lifecycle
from .base import DriverContext, Outcome
from .osd_devices import data_devices
from .lifecycle import Hooks, Step

# at most 20 digits: a 64-bit count (and int() refuses strings of more than 4300 digits)
_LIMIT_RE = re.compile(r"'count' values greater than (\d{1,20})(?!\d)")
SLOW_TEST = "Mann-Whitney U (two-sided) of its repeats against the other OSDs' repeats pooled"


def argv(client_args: list[str], osd_id: int, total: int, block_size: int) -> list[str]:
    return ["ceph", *client_args, "tell", f"osd.{osd_id}", "bench", str(total), str(block_size), "-f", "json"]


def parse(text: str) -> Measurement:
    """The JSON `ceph tell osd.N bench -f json` prints (pretty or compact)."""
    try:
        data = mapping(json.loads(text), "the document")
        written, elapsed = number(data["bytes_written"], "bytes_written"), number(data["elapsed_sec"], "elapsed_sec")
        bs = count(data["blocksize"], "blocksize")
        bw, iops = number(data["bytes_per_sec"], "bytes_per_sec"), number(data["iops"], "iops")
    except (ValueError, KeyError, RecursionError) as exc:      # ValueError: bad JSON, and every ParseError
        raise ParseError(f"not the output of ceph tell osd.N bench: {exc}") from exc
    return checked(Measurement(tool="ceph tell osd bench", op="write", duration_s=elapsed, bytes_total=written,
                               ops_total=written / bs if bs else None, bytes_per_s=bw, ops_per_s=iops,
                               op_size_bytes=bs))


def limit_from_error(text: str) -> int | None:
    """The OSD refuses small-block runs above osd_bench_small_size_max_iops x duration; it says the limit."""
    m = _LIMIT_RE.search(text)
    return int(m.group(1)) if m else None


def round_robin(osds: list[int], repeat: int) -> list[tuple[int, int]]:
    """(round, osd) in the order they run: every OSD once per round, rounds one after another, and each round
    starting one OSD further on, so that no OSD always runs first (after the previous round's writes, on a
    device the OSDs share) or last: the position in a round is no cause of a drive looking slow."""
    n = len(osds)
    return [(rnd, osds[(rnd - 1 + i) % n]) for rnd in range(1, repeat + 1) for i in range(n)]


@dataclass(frozen=True)
class SharedDevice:
    """The OSDs whose data lands on one OSD's data device (the same whole disk of the same host)."""
    device: str                  # "vda on vm"
    mates: tuple[str, ...]       # the other OSDs there ("osd.1", ...)


def shared_devices(metadata: list[dict[str, Any]]) -> dict[str, SharedDevice]:
    """From `ceph osd metadata`: each OSD that shares its data device with other OSDs, and with which (several
    OSDs on one NVMe drive; the one-host lab's OSD files on the machine's one disk)."""
    osds = []
    for m in metadata:
        try:
            osd, host = int(m["id"]), str(m["hostname"]).split(".")[0]
        except (KeyError, TypeError, ValueError):
            continue
        if devices := set(data_devices(m)):
            osds.append((f"osd.{osd}", host, devices))
    out: dict[str, SharedDevice] = {}
    for name, host, devices in osds:
        mates = tuple(sorted((n for n, h, d in osds if n != name and h == host and d & devices),
                             key=lambda n: int(n.split(".")[1])))
        if mates:
            out[name] = SharedDevice(f"{'+'.join(sorted(devices))} on {host}", mates)
    return out


@dataclass(frozen=True)
class SlowCheck:
    """One OSD's repeats against the other OSDs'."""
    name: str
    median: float
    low: float
    high: float
    others_median: float
    below: float                 # fraction its median is below the others' median (negative: above)
    p: float | None              # None: too few samples for the test to ever reach ALPHA
    floor: float                 # the smallest p these sample counts can give
    n: int
    n_others: int
    slow: bool
    # set when it would be slow but the OSDs on its own data device are not: the gap is not the drive's
    not_the_drive: SharedDevice | None = None
    mates_median: float = 0.0


def flag_slow(repeats: dict[str, list[float]], threshold: float, alpha: float = ALPHA,
              shared: Mapping[str, SharedDevice] | None = None) -> dict[str, SlowCheck]:
    """Each OSD (with at least one figure) judged against the others: slow = far enough below AND separated.
    With `shared`, a drive is judged against other drives: an OSD against the OSDs on other data devices (its
    device-mates, slow with it when the drive is, would hide it); and one below the OSDs on its own device, or with
    no other device to judge by, is not flagged: the same drive serves them faster, so the gap is not the drive's."""
    checks: dict[str, SlowCheck] = {}
    for name, values in repeats.items():
        dev = (shared or {}).get(name)
        mates = {k: vs for k, vs in repeats.items() if dev and k in dev.mates and vs}
        off = {k: vs for k, vs in repeats.items() if k != name and k not in mates and vs}
        judged = off or mates
        others = [v for vs in judged.values() for v in vs]
        if not values or not others:
            continue
        median = statistics.median(values)
        others_median = statistics.median([statistics.median(vs) for vs in judged.values()])
        below = 1 - median / others_median if others_median else 0.0
        sig = mann_whitney(values, others, alpha)
        slow = below > threshold and sig.significant and _below_in_every_round(name, {name: values, **judged},
                                                                               threshold)
        not_drive, mates_median = None, 0.0
        if slow and dev and mates:
            mates_median = statistics.median([statistics.median(vs) for vs in mates.values()])
            if not off or median < mates_median * (1 - threshold):
                slow, not_drive = False, dev
        checks[name] = SlowCheck(name, median, min(values), max(values), others_median, below, sig.p,
                                 min_p(len(values), len(others)), len(values), len(others), slow, not_drive,
                                 mates_median)
    return checks


def _below_in_every_round(name: str, repeats: dict[str, list[float]], threshold: float) -> bool:
    """More than `threshold` below the other OSDs' median of the same round, in every round. The rounds run
    one after another, so this compares figures taken moments apart: a neighbour's burst or the disk filling
    up during one round cannot make an OSD look slow (a CI run flagged a healthy OSD 23% below the others on
    the lab's shared disk whose first round was level with them)."""
    rounds = min(len(vs) for vs in repeats.values())
    for i in range(rounds):
        others = [vs[i] for k, vs in repeats.items() if k != name]
        if not others or repeats[name][i] >= statistics.median(others) * (1 - threshold):
            return False
    return rounds > 0


def slow_note(c: SlowCheck, threshold: float, alpha: float = ALPHA) -> str | None:
    """Why an OSD is flagged, or why one far below the others cannot be judged; None otherwise.

    An OSD far below whose repeats overlap the others' gets no note (the OSD table shows its gap and p): on
    the lab's shared disk that happens in about half the runs, and it is noise, not news."""
    figures = (f"median {c.median / 2**20:.1f} MiB/s over {c.n} repeats ({c.low / 2**20:.1f}–{c.high / 2**20:.1f}), "
               f"{c.below:.0%} below the other OSDs' median {c.others_median / 2**20:.1f} MiB/s")
    if c.not_the_drive is not None:
        d = c.not_the_drive
        return (f"{c.name} not flagged as a slow drive: {figures}, and below them in every round, but its data "
                f"device {d.device} also holds {', '.join(d.mates)}, whose median is {c.mates_median / 2**20:.1f} "
                "MiB/s on that same drive: the gap is the OSD's, not the drive's (its BlueStore's state, its settings, or the "
                "host's load)")
    if c.below <= threshold or (not c.slow and c.p is not None):
        return None
    if c.slow:
        return (f"{c.name} is slow: {figures}, and below them in every round; {SLOW_TEST} separates them: "
                f"p = {c.p:.3g} < {alpha:g}")
    return (f"{c.name} not flagged: {figures}, but {c.n} against {c.n_others} repeats cannot separate them "
            f"(the smallest p is {c.floor:.2g}, not below {alpha:g}); raise repeat")


def _spread(values: list[float]) -> dict[str, Any]:
    return {"bytes_per_s": statistics.median(values), "bytes_per_s_min": min(values),
            "bytes_per_s_max": max(values), "bytes_per_s_repeats": values, "repeats": len(values)}


def summarise(per_osd: dict[str, list[Measurement]], repeat: int, threshold: float, bs: int,
              alpha: float = ALPHA, shared: Mapping[str, SharedDevice] | None = None
              ) -> tuple[Measurement, list[str]]:
    """Every OSD's repeats -> the test's Measurement (the median OSD on top, every repeat in extra) and notes;
    `shared`: the OSDs that share a data device (shared_devices)."""
    bws = {k: [m.bytes_per_s or 0.0 for m in ms] for k, ms in per_osd.items()}
    shared = shared or {}
    checks = flag_slow(bws, threshold, alpha, shared)
    notes = [n for c in checks.values() if (n := slow_note(c, threshold, alpha))]
    medians = [statistics.median(v) for v in bws.values()]
    every = [m for ms in per_osd.values() for m in ms]
    extra_osd = {k: {**_spread(bws[k]),
                     "ops_per_s": statistics.median([m.ops_per_s or 0.0 for m in ms]),
                     "duration_s": statistics.median([m.duration_s for m in ms]),
                     "bytes_total": sum(m.bytes_total or 0 for m in ms),
                     **({"below_others": checks[k].below, "p_value": checks[k].p} if k in checks else {}),
                     **({"shares_device": {"device": shared[k].device, "with": list(shared[k].mates)}}
                        if k in shared else {}),
                     **({"not_the_drive": True} if k in checks and checks[k].not_the_drive else {})}
                 for k, ms in per_osd.items()}
    m = Measurement(
        tool="ceph tell osd bench", op="write",
        duration_s=sum(x.duration_s for x in every),
        bytes_total=sum(x.bytes_total or 0 for x in every),
        bytes_per_s=statistics.median(medians), bytes_per_s_min=min(medians), bytes_per_s_max=max(medians),
        ops_per_s=statistics.median([v["ops_per_s"] for v in extra_osd.values()]),
        op_size_bytes=bs,
        extra={"per_osd": extra_osd, "repeat": repeat, "order": "round-robin, rotated",
               "median_bytes_per_s": statistics.median(medians),
               "slow_osds": sorted(k for k, c in checks.items() if c.slow),
               "slow_threshold": threshold, "slow_test": SLOW_TEST, "slow_alpha": alpha,
               "aggregate": "median over OSDs of each OSD's median over its repeats"},
    )
    return m, notes


class OsdBench(Hooks[None]):
    """No resources: each test is every OSD's bench in rounds, run once (drivers/lifecycle.py)."""

    def one_round(self, step: Step[None], n: int) -> Outcome | None:
        ctx, test = step.ctx, step.test
        started, t0 = step.started
        total, bs, repeat = test.params["total"], test.params["block_size"], test.params.get("repeat", 1)
        if ctx.dry_run:
            ctx.planned.append(" ".join(argv(ctx.target.client_args(), 0, total, bs)).replace("osd.0", "osd.N")
                               + f"   # {repeat} round(s), every OSD once per round")
            return None
        osds = ctx.cluster.osd_ids()
        per_osd: dict[str, list[Measurement]] = {}
        totals = {osd: total for osd in osds}     # lowered per OSD once it states its small-block limit
        commands, raw, notes, errors = [], [], [], []
        for rnd, osd in round_robin(osds, repeat):
            for _attempt in range(2):
                res = ctx.host.run(argv(ctx.target.client_args(), osd, totals[osd], bs), timeout_s=600)
                raw.append(ctx.rundir.write_raw(test.id, f"osd.{osd}.r{rnd}.json", res.stdout + res.stderr))
                commands.append(res.cmdline)
                limit = None if res.ok else limit_from_error(res.stderr)
                if limit and limit < totals[osd]:
                    notes.append(f"osd.{osd}: the OSD limits {bs}-byte bench runs to {limit} bytes "
                                 "(osd_bench_small_size_max_iops); ran that")
                    totals[osd] = limit
                    continue
                break
            if not res.ok:
                errors.append(f"osd.{osd} round {rnd}: {res.error_text()}")
                continue
            try:
                m = parse(res.stdout)
            except ParseError as exc:
                errors.append(f"osd.{osd} round {rnd}: {exc}")
                continue
            per_osd.setdefault(f"osd.{osd}", []).append(m)
            ctx.events.live(test, m.bytes_per_s, m.ops_per_s)
        if not per_osd:
            return Outcome(test, started, time.monotonic() - t0, error="; ".join(errors) or "no OSDs",
                           commands=commands, raw=raw, notes=notes)
        m, slow_notes = summarise(per_osd, repeat, test.params["slow_threshold"], bs,
                                  shared=shared_devices(ctx.osd_metadata()))
        return Outcome(test, started, time.monotonic() - t0, measurement=m, commands=commands, raw=raw,
                       notes=notes + slow_notes + errors, error=None)


HOOKS = OsdBench()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    return lifecycle.run_group(HOOKS, ctx, group, todo)
