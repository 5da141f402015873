"""Steady state, as SNIA's Performance Test Specification defines it: a phase runs in rounds, and it is steady once
over the last `window` rounds (the measurement window) the throughput's range is within `max_range` of its mean and
the best-fit line through them changes by less than `max_slope` of the mean across the window. Pure: a driver
runs the rounds, this says when to stop and what the rounds add up to."""

from __future__ import annotations

from dataclasses import dataclass

from .merge import weighted_mean
from .results import Latency, Measurement, Sample, SteadyRound, SteadyState


@dataclass(frozen=True)
class Verdict:
    steady: bool
    range: float | None         # (max - min) / mean of the window
    slope: float | None         # |fitted change from the window's first round to its last| / mean


def verdict(values: list[float], window: int, max_range: float, max_slope: float) -> Verdict:
    """Whether the last `window` values are steady; not steady while there are fewer."""
    if len(values) < window:
        return Verdict(False, None, None)
    last = values[-window:]
    mean = sum(last) / window
    if mean <= 0:
        return Verdict(False, None, None)
    xm = (window - 1) / 2
    fitted = sum((i - xm) * (y - mean) for i, y in enumerate(last)) / sum((i - xm) ** 2 for i in range(window))
    rng = (max(last) - min(last)) / mean
    slope = abs(fitted) * (window - 1) / mean
    return Verdict(rng <= max_range and slope <= max_slope, rng, slope)


def combine(rounds: list[Measurement], starts_s: list[float], settings: dict, reached: bool,
            reached_after_s: float | None) -> Measurement:
    """The phase's measurement: the window's rounds together (SNIA reports the measurement window), every
    round's seconds in the time series, and how steady state went in extra["steady_state"]."""
    window = rounds[-settings["window"]:]
    last = window[-1]
    duration = sum(m.duration_s for m in window)
    ops = [m.ops_total for m in window]
    ops_total = sum(o for o in ops if o is not None) if all(o is not None for o in ops) else None
    nbytes = [m.bytes_total for m in window]
    series = [Sample(t_s=start + s.t_s, bytes_per_s=s.bytes_per_s, ops_per_s=s.ops_per_s, lat_mean_ns=s.lat_mean_ns)
              for m, start in zip(rounds, starts_s) for s in m.timeseries]
    v = verdict([m.bytes_per_s or 0.0 for m in rounds], settings["window"], settings["max_range"],
                settings["max_slope"])
    record = SteadyState(
        reached=reached, reached_after_s=reached_after_s, window=settings["window"], max_s=settings["max"],
        max_range=settings["max_range"], max_slope=settings["max_slope"], range=v.range, slope=v.slope,
        rounds=[SteadyRound(start_s=start, duration_s=m.duration_s, bytes_per_s=m.bytes_per_s,
                            ops_per_s=m.ops_per_s) for m, start in zip(rounds, starts_s)])
    return last.model_copy(update={
        "duration_s": duration,
        "ops_total": ops_total,
        "bytes_total": sum(b for b in nbytes if b is not None) if all(b is not None for b in nbytes) else None,
        "bytes_per_s": _mean([m.bytes_per_s for m in window]),
        "ops_per_s": _mean([m.ops_per_s for m in window]),
        "bytes_per_s_max": _pick(max, [m.bytes_per_s_max for m in window]),
        "bytes_per_s_min": _pick(min, [m.bytes_per_s_min for m in window]),
        "ops_per_s_max": _pick(max, [m.ops_per_s_max for m in window]),
        "ops_per_s_min": _pick(min, [m.ops_per_s_min for m in window]),
        "bytes_per_s_stddev": None, "ops_per_s_stddev": None,    # of one round only: not the window's
        "latency": Latency(
            mean_ns=weighted_mean((m.latency.mean_ns, m.ops_total or 0.0) for m in window),
            max_ns=_pick(max, [m.latency.max_ns for m in window]),
            min_ns=_pick(min, [m.latency.min_ns for m in window])),
        "timeseries": series,
        "instances": [],
        "extra": {**last.extra, "steady_state": record.model_dump()},
    })


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _pick(fn, values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return fn(known) if known else None
