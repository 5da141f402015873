"""A search instead of a guess: `concurrency: auto` (`iodepth: auto`, `clients: auto`) doubles the load from 1 and
stops where the knee rule says the load no longer pays (docs/model.md, "The search").

The knee rule's thresholds live here, in the core, because two layers apply them: the drivers, which stop a search
after each step (stop()), and the analysis, which finds the knee of a finished curve (analysis/curves.py). One rule,
one set of numbers: a search stops at the step where the curve of its results bends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .results import Search, SearchStop

# the parameters that set how much load a test puts on the cluster: their product is the operations in flight (a
# curve's load), and a search doubles one of them
LOAD_PARAMS: tuple[str, ...] = ("concurrency", "iodepth", "io_threads", "numjobs", "instances", "clients")

GROWTH_MIN = 0.10            # throughput gain per doubling of load that still counts as room
LATENCY_GROWTH_MAX = 2.0     # latency factor per doubling of load past which load only queues
MIN_POINTS = 3               # loads a curve needs before it can bend
DEFAULT_MAX = 256            # a search's largest load unless the suite gives max: 9 steps, 1 to 256


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


@dataclass(frozen=True)
class StepFigures:
    """What one step of a search measured."""
    load: int
    throughput: float | None    # bytes/s, else ops/s: at one operation size their ratios are the same
    latency_ns: float | None    # p99 where the tool gives percentiles, else the mean
    percentile: bool            # latency_ns is a p99


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
        a = steps[-2]
        if a.throughput and last.throughput is not None:
            d = math.log2(last.load / a.load)
            gain = per_doubling(last.throughput / a.throughput, d) - 1
            factor = (per_doubling(last.latency_ns / a.latency_ns, d)
                      if a.latency_ns and last.latency_ns else None)
            if not pays(gain, factor):
                lat = f", {what} ×{factor:.2f}" if factor is not None else ""
                return SearchStop(reason="throughput", text=(
                    f"from {search.param} {a.load} to {last.load} throughput changed {gain:+.0%} per doubling"
                    f"{lat} (the knee rule: at least {GROWTH_MIN:+.0%}, latency at most ×{LATENCY_GROWTH_MAX:g})"))
    if last.load >= search.max:
        return at_max(search)
    return None


def at_max(search: Search) -> SearchStop:
    """A search that ran its largest load (a search of client hosts: every one it may use)."""
    hosts = " client hosts" if search.param == "clients" else ""
    return SearchStop(reason="max", text=f"reached max {search.max}{hosts} before the knee rule stopped it")
