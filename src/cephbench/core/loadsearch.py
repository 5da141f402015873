"""A search instead of a guess: `concurrency: auto` (`iodepth: auto`, `clients: auto`) doubles the load from 1 and
stops where the knee rule says the load no longer pays (docs/model.md, "The search").

The knee rule's thresholds live here, in the core, because two layers apply them: the drivers, which stop a search
after each step (stop()), and the analysis, which finds the knee of a finished curve (analysis/curves.py). One rule,
one set of numbers: a search stops at the step where the curve of its results bends.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Literal, Sequence

from .results import Search, SearchStop

# the parameters that set how much load a test puts on the cluster: their product is the operations in flight (a
# curve's load), and a search doubles one of them
LOAD_PARAMS: tuple[str, ...] = ("concurrency", "iodepth", "io_threads", "numjobs", "instances", "clients")

GROWTH_MIN = 0.10            # throughput gain per doubling of load that still counts as room
LATENCY_GROWTH_MAX = 2.0     # latency factor per doubling of load past which load only queues
MIN_POINTS = 3               # loads a curve needs before it can bend
DEFAULT_MAX = 256            # a search's largest load unless the suite gives max: 9 steps, 1 to 256
NOISE_FLOOR = 0.02           # the least relative noise a throughput figure is taken to have
# a whole second of a step below this share of the step's own median second is a stall: the step runs again before
# it counts (issue 36: rados bench's t=2 step read 1.30, 1.34, 0.63, 0.30 MB/s; fio's qd=8 step 5,032 IOPS, then 354)
STALL_BELOW = 0.5
STALL_RERUNS = 2             # a step that stalls runs again at most this often; then it counts as it ran
STEADY_SECONDS_MIN = 3       # whole seconds past the tool's warm-up a step needs: a median, a spread, a stall seen
UNCLEAR_MAX = 2              # steps in a row whose change is within their noise: the search stops, its knee unclear
STEP_RUNS_KEY = "search_step_runs"   # measurement.extra: each run's throughput of a step run `repeats` times


def loads(largest: int) -> list[int]:
    """The loads a search runs, at most: 1, 2, 4, ... up to `largest`, and `largest` itself when the doubling does
    not reach it (a search of client hosts ends at every host: 1, 2, 3 of three)."""
    powers = [2 ** i for i in range(largest.bit_length()) if 2 ** i < largest]
    return [*powers, largest]


def is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def per_doubling(ratio: float, doublings: float) -> float:
    """A ratio over several doublings of load as its factor per doubling (×4 in load is two doublings)."""
    return ratio ** (1 / doublings)


def pays(gain: float, latency_factor: float | None) -> bool:
    """One step of load pays when throughput grew by GROWTH_MIN per doubling and the latency grew by at most
    LATENCY_GROWTH_MAX per doubling (None: latency not known at both ends, not held against the step)."""
    return gain >= GROWTH_MIN and (latency_factor is None or latency_factor <= LATENCY_GROWTH_MAX)


def min_step_s(warmup_s: float) -> float:
    """The shortest step a search runs: the tool's warm-up (seconds its per-second series carries before its load is
    steady), STEADY_SECONDS_MIN whole seconds past it, so that a step's median, spread and stalls can be read, and
    one more for the last, which the tool's end may cut (rados bench's 4 s steps printed 3 or 4 seconds)."""
    return float(math.ceil(warmup_s + STEADY_SECONDS_MIN) + 1)


def noise(seconds: Sequence[float], stddev: float | None = None, mean: float | None = None,
          count: int | None = None) -> float:
    """A step's relative noise: the per-second standard deviation over the square root of its seconds (the standard
    error of its mean, the seconds taken as independent), at least NOISE_FLOOR. `stddev` and `mean`: the tool's own,
    where it prints them, else taken from `seconds`; `count`: its seconds, where the series is not all of them."""
    n = max(count or 0, len(seconds), 1)
    if stddev is None and len(seconds) >= 2:
        stddev = statistics.stdev(seconds)
    if mean is None and seconds:
        mean = statistics.fmean(seconds)
    if not mean or stddev is None:
        return NOISE_FLOOR
    return max(NOISE_FLOOR, stddev / mean / math.sqrt(n))


def repeats_noise(figures: Sequence[float]) -> float | None:
    """A step run several times: half the range of its runs over their median (as a curve point's repeats), at
    least NOISE_FLOOR; None for fewer than two runs."""
    if len(figures) < 2:
        return None
    mid = statistics.median(figures) or max(figures)
    return max(NOISE_FLOOR, (max(figures) - min(figures)) / 2 / mid) if mid else NOISE_FLOOR


def past_warmup(seconds: Sequence[float], warmup_s: float = 1.0) -> list[float]:
    """A step's whole seconds past its tool's warm-up, when STEADY_SECONDS_MIN of them are left; else none (too
    short a series to leave any out: its tool's own figures stand)."""
    skip = int(math.ceil(warmup_s))
    return list(seconds[skip:]) if len(seconds) - skip >= STEADY_SECONDS_MIN else []


def stalls(seconds: Sequence[float], warmup_s: float = 1.0) -> list[int]:
    """The whole seconds (indexes into `seconds`) past the tool's warm-up that fell below STALL_BELOW of the step's
    own median second: the load stalled there (a monitor's pause, another tenant's burst), and the step's mean is not
    what the load gives. None with fewer than STEADY_SECONDS_MIN seconds past the warm-up: too few to have a median."""
    past = past_warmup(seconds, warmup_s)
    if not past:
        return []
    skip = len(seconds) - len(past)
    mid = statistics.median(past)
    return [skip + i for i, v in enumerate(past) if mid > 0 and v < STALL_BELOW * mid]


Verdict = Literal["pays", "fails", "unclear"]


def judge(gain: float, latency_factor: float | None, noise_per_doubling: float) -> Verdict:
    """One step of load, by the knee rule and the noise of its two ends: it pays (pays()); it fails when its latency
    grew by more than LATENCY_GROWTH_MAX per doubling (load that only queues: it is not held to the noise, the
    knees of the real sweeps in tests/fixtures/curves rest on it), or its gain falls short of GROWTH_MIN by more
    than its noise; else it is unclear: a shortfall within the noise may be noise itself, and a search goes on past
    it."""
    if pays(gain, latency_factor):
        return "pays"
    if latency_factor is not None and latency_factor > LATENCY_GROWTH_MAX:
        return "fails"
    return "fails" if gain + noise_per_doubling < GROWTH_MIN else "unclear"


@dataclass(frozen=True)
class StepFigures:
    """What one step of a search measured."""
    load: int
    throughput: float | None    # bytes/s, else ops/s: at one operation size their ratios are the same
    latency_ns: float | None    # p99 where the tool gives percentiles, else the mean
    percentile: bool            # latency_ns is a p99
    noise: float = NOISE_FLOOR  # the throughput's relative noise (noise()): its per-second spread


@dataclass(frozen=True)
class Change:
    """From one step of a search to the next, per doubling of load."""
    frm: StepFigures
    to: StepFigures
    gain: float
    latency_factor: float | None
    noise: float                # the gain's noise per doubling: both ends'
    verdict: Verdict


def change(a: StepFigures, b: StepFigures) -> Change | None:
    if not a.throughput or b.throughput is None:
        return None
    d = math.log2(b.load / a.load)
    gain = per_doubling(b.throughput / a.throughput, d) - 1
    factor = per_doubling(b.latency_ns / a.latency_ns, d) if a.latency_ns and b.latency_ns else None
    spread = per_doubling(1 + a.noise + b.noise, d) - 1
    return Change(a, b, gain, factor, spread, judge(gain, factor, spread))


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3g} ms"


def stop(steps: Sequence[StepFigures], search: Search) -> SearchStop | None:
    """After each step (steps so far, by load): why the search stops here, or None to go on.

    In this order: the step's latency passed the suite's bound (latency_max); the step from the load before did not
    pay by the knee rule (pays()), once MIN_POINTS loads have run, so that the curve has the points a knee needs;
    the load reached the search's max."""
    last = steps[-1]
    at = f"{search.param} {last.load}"
    what = "p99" if last.percentile else "mean latency"
    bound = search.latency_max_s
    if bound is not None and last.latency_ns is not None and last.latency_ns > bound * 1e9:
        return SearchStop(reason="latency", text=f"{what} {_ms(last.latency_ns)} at {at} passed latency_max "
                                                 f"{_ms(bound * 1e9)}")
    if len(steps) >= MIN_POINTS:
        c = change(steps[-2], last)
        if c is not None and c.verdict == "fails":
            lat = f", {what} ×{c.latency_factor:.2f}" if c.latency_factor is not None else ""
            queued = c.latency_factor is not None and c.latency_factor > LATENCY_GROWTH_MAX
            why = "the latency past its bound" if queued else f"short of it by more than its noise (±{c.noise:.0%})"
            return SearchStop(reason="throughput", text=(
                f"from {search.param} {c.frm.load} to {last.load} throughput changed {c.gain:+.0%} per doubling"
                f"{lat}: {why} (the knee rule: at least {GROWTH_MIN:+.0%}, latency at most ×{LATENCY_GROWTH_MAX:g})"))
        unclear = unclear_run(steps)
        if len(unclear) >= UNCLEAR_MAX:
            lo, hi = unclear[0].frm, unclear[-1].to
            each = ", ".join(f"{u.gain:+.0%} ±{u.noise:.0%}" for u in unclear)
            return SearchStop(reason="unclear", text=(
                f"knee not clear: from {search.param} {lo.load} to {hi.load} each doubling changed throughput within "
                f"its noise ({each} per doubling; the knee rule asks {GROWTH_MIN:+.0%}); the knee lies in that "
                "band, and repeats or longer steps would tell"))
    if last.load >= search.max:
        return at_max(search)
    return None


def unclear_run(steps: Sequence[StepFigures]) -> list[Change]:
    """The changes at the end of the steps whose verdict is unclear, in a row (none: the last one paid)."""
    out: list[Change] = []
    for a, b in reversed(list(zip(steps, steps[1:]))):
        c = change(a, b)
        if c is None or c.verdict != "unclear":
            break
        out.insert(0, c)
    return out


def at_max(search: Search) -> SearchStop:
    """A search that ran its largest load (a search of client hosts: every one it may use)."""
    hosts = " client hosts" if search.param == "clients" else ""
    return SearchStop(reason="max", text=f"reached max {search.max}{hosts} before the knee rule stopped it")
