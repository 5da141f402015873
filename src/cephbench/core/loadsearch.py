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

from .planned import Search, SearchStop

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
# a step that seems not to pay is measured again beside the step before it, alternately (A B A B): the machine's spare
# CPU moves 2-3x from one minute to the next (bench knee_noise's cpu case), which a step's own seconds do not show, and
# two steps measured a minute apart take that drift for a knee; adjacent runs of the two loads see the same drift
PAIR_RERUNS = 2              # runs of each of the two steps added: A1 B1 (the search's) then A2 B2 A3 B3
PAIR_CHECKS_MAX = 3          # steps of one search measured again so; past that a step's own noise judges it
PAIR_KEY = "search_pair"     # measurement.extra of such a step: every run of the two, [load, figure, latency]


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


def judge(gain: float, latency_factor: float | None, noise_per_doubling: float,
          latency_noise: float = 0.0) -> Verdict:
    """One step of load, by the knee rule and the noise of its two ends: it pays (pays()); it fails when its latency
    grew by more than LATENCY_GROWTH_MAX per doubling (load that only queues; a single pair of steps does not hold
    this to any noise, the knees of the real sweeps in tests/fixtures/curves rest on it, a step measured again in
    pairs holds it to the pairs' `latency_noise`), or its gain falls short of GROWTH_MIN by more than its noise;
    else it is unclear: a shortfall within the noise may be noise itself, and a search goes on past it."""
    if pays(gain, latency_factor):
        return "pays"
    if latency_factor is not None and latency_factor > LATENCY_GROWTH_MAX * (1 + latency_noise):
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
    # measured again beside the step before it (PAIR_KEY): every run of the two, in order: (load, throughput, latency)
    pair: tuple[tuple[int, float, float | None], ...] = ()


@dataclass(frozen=True)
class Paired:
    """Two loads measured alternately (A B A B ...): the change from `lo` to `hi` over adjacent runs, as logs."""
    lo: int
    hi: int
    runs: int                   # runs of the two in all
    log_ratio: float            # mean over adjacent runs of log(hi's throughput / lo's)
    log_noise: float            # its standard error
    latency_log_ratio: float | None
    latency_log_noise: float

    def per_doubling(self) -> tuple[float, float | None, float, float]:
        """gain, latency factor, the gain's noise and the latency factor's relative noise, per doubling of load."""
        d = math.log2(self.hi / self.lo)
        gain = math.exp(self.log_ratio / d) - 1
        factor = math.exp(self.latency_log_ratio / d) if self.latency_log_ratio is not None else None
        return gain, factor, math.exp(self.log_noise / d) - 1, math.exp(self.latency_log_noise / d) - 1


def _adjacent(seq: Sequence[tuple[int, float | None]], lo: int, hi: int) -> tuple[float, float] | None:
    """The mean of log(hi / lo) over each two adjacent runs of the two loads, and its standard error. Alternate
    runs cancel a drift slower than a run: a linear one adds +c to each A->B difference and -c to each B->A. The
    error: the differences' spread over sqrt 2 is one run's (two runs in each), and the mean weighs each run as
    the runs around it make it (an inner run in two differences, an end run in one)."""
    ds: list[float] = []
    weights = [0.0] * len(seq)
    for i, ((la, va), (lb, vb)) in enumerate(zip(seq, seq[1:])):
        if {la, lb} != {lo, hi} or not va or not vb or va <= 0 or vb <= 0:
            continue
        sign = 1.0 if lb == hi else -1.0
        ds.append(sign * math.log(vb / va))
        weights[i + 1] += sign
        weights[i] -= sign
    if len(ds) < 2:
        return None
    n = len(ds)
    spread = statistics.stdev(ds) / math.sqrt(2)
    return statistics.fmean(ds), spread * math.sqrt(sum((w / n) ** 2 for w in weights))


def paired(seq: Sequence[tuple[int, float, float | None]], lo: int, hi: int) -> Paired | None:
    """The change from load `lo` to `hi` over runs of the two alternately (PAIR_KEY's), its noise at least both
    ends' NOISE_FLOOR; None when fewer than two adjacent differences can be read."""
    thr = _adjacent([(load, t) for load, t, _ in seq], lo, hi)
    if thr is None:
        return None
    lat = _adjacent([(load, l_) for load, _, l_ in seq], lo, hi)
    floor = math.log1p(2 * NOISE_FLOOR)
    return Paired(lo, hi, sum(1 for load, _, _ in seq if load in (lo, hi)), thr[0], max(floor, thr[1]),
                  lat[0] if lat else None, max(floor, lat[1]) if lat else 0.0)


def pairs_extra_s(step_s: Sequence[float]) -> tuple[float, float]:
    """What measuring contested steps again by turns adds to a search whose steps (in load order) are estimated at
    `step_s` seconds each (its tool's run and overhead): (expected, worst). Expected: one step judged so, the one it
    stops at, which a search that stops by the knee rule nearly always has measured again (PAIR_RERUNS runs of it and
    of the step before; which step is not known before the run: the mean of its adjacent two). Worst: the
    PAIR_CHECKS_MAX dearest such steps. A run that stalls runs again as any step's (STALL_RERUNS), not counted here.
    For suite/plan.py's estimate of a search (and validate's worst case beyond it)."""
    pairs = sorted((a + b for a, b in zip(step_s, step_s[1:])), reverse=True)
    if not pairs:
        return 0.0, 0.0
    return PAIR_RERUNS * sum(pairs) / len(pairs), PAIR_RERUNS * sum(pairs[:PAIR_CHECKS_MAX])


def pair_runs_max(steps: int) -> int:
    """The runs a search of `steps` loads may add by measuring contested steps again in pairs (each at its step's
    cost: its tool's run and overhead, a run of the load before and one of its own by turns), at most. A search that
    stops by the knee rule adds 2 x PAIR_RERUNS for its last step nearly always (suite/plan.py's estimate may count
    that, and this as the worst case); each of those runs may stall and run again as any step's (STALL_RERUNS)."""
    return min(PAIR_CHECKS_MAX, max(steps - 1, 0)) * 2 * PAIR_RERUNS


@dataclass(frozen=True)
class Change:
    """From one step of a search to the next, per doubling of load."""
    frm: StepFigures
    to: StepFigures
    gain: float
    latency_factor: float | None
    noise: float                # the gain's noise per doubling: both ends', or the pairs'
    verdict: Verdict
    paired: Paired | None = None    # measured again in pairs (StepFigures.pair)


def change(a: StepFigures, b: StepFigures) -> Change | None:
    """From step a to step b: from their runs in pairs where b was measured again beside a, else from each once."""
    if b.pair and (p := paired(b.pair, a.load, b.load)) is not None:
        gain, factor, spread, lat_spread = p.per_doubling()
        return Change(a, b, gain, factor, spread, judge(gain, factor, spread, lat_spread), p)
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
                f"{lat}{pairs_text(c)}: {why} (the knee rule: at least {GROWTH_MIN:+.0%}, latency at most "
                f"×{LATENCY_GROWTH_MAX:g})"))
        unclear = unclear_run(steps)
        if len(unclear) >= UNCLEAR_MAX:
            lo, hi = unclear[0].frm, unclear[-1].to
            each = ", ".join(f"{u.gain:+.0%} ±{u.noise:.0%}{' paired' if u.paired else ''}" for u in unclear)
            return SearchStop(reason="unclear", text=(
                f"knee not clear: from {search.param} {lo.load} to {hi.load} each doubling changed throughput within "
                f"its noise ({each} per doubling; the knee rule asks {GROWTH_MIN:+.0%}); the knee lies in that "
                "band, and repeats or longer steps would tell"))
    if last.load >= search.max:
        return at_max(search)
    return None


def pairs_text(c: Change) -> str:
    """" over 6 runs of 4 and 8 by turns" for a change measured again in pairs; else nothing."""
    return f" over {c.paired.runs} runs of {c.frm.load} and {c.to.load} by turns" if c.paired else ""


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
