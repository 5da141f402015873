"""Latency against throughput as the load grows, and the knee of each curve (docs/model.md, "The knee").

A curve is a group of results that differ only in load (the parameters of LOAD_PARAMS: operations in flight per
process, processes, clients): one operation, one size, one pool, one variant. Its points are the loads, each the
median repeat of its configuration (stats.median, as the verdict takes it), with the repeats' spread.

The knee is the last load at which adding load still paid: from the lowest load up, each step must raise the
throughput by at least GROWTH_MIN per doubling of load, with the latency (p99 where the tool gives percentiles, else
the mean) growing by at most LATENCY_GROWTH_MAX per doubling. The first step that fails ends the climb; the point
before it is the knee. A curve whose every step pays has no knee within its range; one whose growth comes back
after the first failing step, by more than its own noise, is too noisy to tell.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Literal, Sequence

from ..kinds import KINDS, LEAD_LOADS, LOAD_NAMES, LOAD_PARAMS, level_of, op_size_of
from ..core.loadsearch import (MIN_POINTS, NOISE_FLOOR, PAIR_KEY, STEP_RUNS_KEY, judge, noise, paired,
                               past_warmup, per_doubling, repeats_noise)
from ..core.results import Result, is_mon_silence, steady_state
from ..core.units import format_size
from ..core import stats

# parameters that never tell two curves apart: how long a test ran is not what it measured
NOT_A_DIMENSION = ("duration_s",)

# the knee rule's thresholds (GROWTH_MIN, LATENCY_GROWTH_MAX, MIN_POINTS) are in core/loadsearch.py: a search applies
# them while it runs
MIB = 1024 * 1024

State = Literal["knee", "no knee", "noisy", "unclear", "too few"]


@dataclass(frozen=True)
class Point:
    load: int                       # operations in flight: the product of the load parameters
    label: str                      # the load as the suite wrote it: "t=16", "qd=8 jobs=2"
    test_id: str                    # the median repeat, which stands for the configuration
    ops_per_s: float | None
    bytes_per_s: float | None
    p50_ns: float | None
    p99_ns: float | None
    mean_ns: float | None
    bottleneck: str | None
    repeats: int = 1
    low: float | None = None        # the repeats' lowest and highest throughput (the curve's unit)
    high: float | None = None
    noise: float = NOISE_FLOOR      # the throughput's relative uncertainty at this point
    # a search step measured again by turns with the load before it (loadsearch.PAIR_KEY): every run, in order,
    # (load, throughput, latency); the step to it is judged on them
    pair: tuple[tuple[int, float, float | None], ...] = ()


@dataclass(frozen=True)
class Curve:
    key: str                        # what every point shares (kind, variant, parameters but load): JSON
    title: str                      # "fio_rbd randwrite 4KiB"
    kind: str
    level: str
    points: tuple[Point, ...]       # by load
    in_ops: bool                    # throughput in operations per second (ops under 1 MiB), else bytes per second
    percentiles: bool               # the tool gave p50 and p99; else the mean stands for latency

    def throughput(self, p: Point) -> float | None:
        return p.ops_per_s if self.in_ops else p.bytes_per_s

    def latency(self, p: Point) -> float | None:
        """The latency the knee's bound is on: p99 where the tool gives percentiles, else the mean."""
        return p.p99_ns if self.percentiles else p.mean_ns


@dataclass(frozen=True)
class Step:
    """From one load to the next, per doubling of load."""
    frm: Point
    to: Point
    gain: float                     # throughput's relative gain per doubling
    latency_factor: float | None    # latency's factor per doubling; None: not known at both ends
    rise: float                     # throughput's relative change over the step, not normalised
    noise: float                    # the step's relative noise: both ends', or its runs by turns'
    latency_noise: float = 0.0      # the latency factor's relative noise: its runs by turns' (else not held to any)
    by_turns: int = 0               # runs of the two loads by turns the step is judged on (0: each load's one figure)

    @property
    def verdict(self) -> str:
        """pays, fails (outside its noise) or unclear: loadsearch.judge, as a search judges its steps."""
        d = math.log2(self.to.load / self.frm.load)
        return judge(self.gain, self.latency_factor, per_doubling(1 + self.noise, d) - 1,
                     per_doubling(1 + self.latency_noise, d) - 1)

    @property
    def pays(self) -> bool:
        return self.verdict == "pays"


@dataclass(frozen=True)
class Knee:
    state: State
    point: Point | None = None      # the knee; for "no knee" the highest load
    after: Step | None = None       # the first step past the knee (knee), the last step (no knee)
    resumed: Step | None = None     # noisy: the step whose growth came back
    steps: tuple[Step, ...] = field(default_factory=tuple)
    band: tuple[Step, ...] = ()     # unclear: the steps in a row whose change was within their noise (the knee's band)


def load_of(params: dict[str, Any]) -> tuple[int, str] | None:
    """Operations in flight and the label of the load; None when a load parameter is not a count (clients: all)."""
    n, parts = 1, []
    for k in LOAD_PARAMS:
        v = params.get(k)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            return None
        n *= v
        # a load of one per process or instance goes without saying; one client host does not: the load came from
        # there, not from this machine (and a search of client hosts starts there)
        if v != 1 or k in LEAD_LOADS:
            parts.append(f"{LOAD_NAMES[k]}={v}")
    return n, " ".join(parts) or "1"


def curve_key(r: Result) -> str:
    rest = {k: v for k, v in r.test.params.items() if k not in LOAD_PARAMS and k not in NOT_A_DIMENSION}
    return json.dumps({"kind": r.test.kind, "variant": r.test.variant, "params": rest}, sort_keys=True, default=str)


def _title(r: Result) -> str:
    """"write 4KiB (rados)": the operation, its size and the suite's workload name."""
    p = r.test.params
    size = op_size_of(r.test.kind, p)
    op = str(p.get("phase") or (r.measurement.op if r.measurement else ""))
    bits = [op, format_size(size) if isinstance(size, int) else None, f"({r.test.workload})"]
    if r.test.variant is not None:
        bits.append(f"[{r.test.variant}]")
    return " ".join(b for b in bits if b)


def _told_by(c: Curve) -> dict[str, Any]:
    key = json.loads(c.key)
    return {**key["params"], **key.get("load", {})}


def _told_apart(found: list[Curve]) -> list[Curve]:
    """Curves of one title told apart by the parameters in which they differ (pool=ec, object_size=4MiB)."""
    out = []
    for c in found:
        same = [o for o in found if o.title == c.title]
        if len(same) == 1:
            out.append(c)
            continue
        params = [_told_by(o) for o in same]
        mine = _told_by(c)
        differ = sorted(k for k in {k for p in params for k in p} if len({repr(p.get(k)) for p in params}) > 1)
        extra = " ".join(f"{k}={mine.get(k)}" for k in differ if not isinstance(mine.get(k), (dict, list)))
        out.append(replace(c, title=f"{c.title} {extra}".rstrip()))
    return out


def _noise(r: Result, in_ops: bool) -> float:
    """A single run's relative noise: the per-second spread over the square root of its seconds (the standard
    error of its mean, the seconds taken as independent), at least NOISE_FLOOR (loadsearch.noise: a search's steps
    take theirs by the same rule)."""
    m = r.measurement
    runs = repeats_noise(m.extra.get(STEP_RUNS_KEY) or [])     # a search step run several times
    if runs is not None:
        return runs
    kind = KINDS.get(r.test.kind)
    past = past_warmup([float((s.ops_per_s if in_ops else s.bytes_per_s) or 0.0) for s in steady_state(m.timeseries)],
                       kind.warmup_s if kind is not None else 1.0)
    if past:
        return noise(past)
    mean, sd = (m.ops_per_s, m.ops_per_s_stddev) if in_ops else (m.bytes_per_s, m.bytes_per_s_stddev)
    if not mean or sd is None:
        return NOISE_FLOOR
    return noise([], sd, mean, count=max(sum(1 for s in m.timeseries if not s.partial), round(m.duration_s), 1))


def _point(repeats: list[Result], in_ops: bool) -> Point | None:
    load = load_of(repeats[0].test.params)
    if load is None:
        return None
    figure = lambda r: float((r.measurement.ops_per_s if in_ops else r.measurement.bytes_per_s) or 0.0)  # noqa: E731
    ranked = sorted(repeats, key=figure)
    values = [figure(r) for r in ranked]
    mid = ranked[values.index(stats.median(values))]
    m = mid.measurement
    if len(values) >= 2 and values[-1] > 0:
        noise = max(NOISE_FLOOR, (values[-1] - values[0]) / 2 / (stats.median(values) or values[-1]))
    else:
        noise = _noise(mid, in_ops)
    pct = m.latency.percentiles_ns
    pair = tuple((int(x[0]), float(x[1]), None if x[2] is None else float(x[2])) for x in m.extra.get(PAIR_KEY) or [])
    return Point(load[0], load[1], mid.test.id, m.ops_per_s, m.bytes_per_s, pct.get("50"), pct.get("99"),
                 m.latency.mean_ns, mid.analysis.bottleneck if mid.analysis else None, len(values), values[0],
                 values[-1], noise, pair)


def curves(results: Iterable[Result]) -> list[Curve]:
    """Every group of ok results without warnings that differ only in load and has at least two loads, in the order
    their first test ran. A silence of the monitors is no such warning: the figure is still the cluster's, and the
    search that ran the step counted it (the watch's warnings reach the result after the search has seen it)."""
    groups: dict[str, list[Result]] = {}
    for r in sorted(results, key=lambda r: r.test.index):
        if r.status != "ok" or r.measurement is None or level_of(r.test.kind) in (None, "Baselines", "OSD") \
                or not all(is_mon_silence(w) for w in r.warnings):
            continue
        if not any(k in r.test.params for k in LOAD_PARAMS) or load_of(r.test.params) is None:
            continue
        groups.setdefault(curve_key(r), []).append(r)
    out = []
    for key, rs in _split_equal_loads(groups).items():
        size = rs[0].measurement.op_size_bytes or op_size_of(rs[0].test.kind, rs[0].test.params)
        # operations that move no data (RGW stat, list, delete) are counted in ops whatever their objects' size
        in_ops = any(r.measurement.ops_per_s for r in rs) and (not size or size < MIB
                                                               or not all(r.measurement.bytes_per_s for r in rs))
        by_config: dict[str, list[Result]] = {}
        for r in rs:
            by_config.setdefault(r.test.match_key(), []).append(r)
        points = [p for c in by_config.values() if (p := _point(c, in_ops)) is not None]
        points.sort(key=lambda p: p.load)
        if len({p.load for p in points}) < 2:
            continue
        percentiles = all(p.p99_ns is not None for p in points)
        out.append(Curve(key, _title(rs[0]), rs[0].test.kind, level_of(rs[0].test.kind) or "", tuple(points),
                         bool(in_ops), percentiles))
    return _told_apart(out)


def _split_equal_loads(groups: dict[str, list[Result]]) -> dict[str, list[Result]]:
    """A group in which two configurations put the same load in flight (concurrency 4 × 2 instances and 8 × 1) is
    one curve per value of the load parameters but the one with the most values: each of them a curve of one
    parameter (t=4, 8, 16 with 1 instance; the same with 2)."""
    out: dict[str, list[Result]] = {}
    for key, rs in groups.items():
        loads: dict[int, set[str]] = {}
        for r in rs:
            n = load_of(r.test.params)
            loads.setdefault(n[0] if n else 0, set()).add(r.test.match_key())
        if all(len(keys) == 1 for keys in loads.values()):
            out[key] = rs
            continue
        values = {k: {repr(r.test.params.get(k)) for r in rs} for k in LOAD_PARAMS}
        main = max(LOAD_PARAMS, key=lambda k: len(values[k]))
        for r in rs:
            rest = {k: r.test.params.get(k) for k in LOAD_PARAMS if k != main and k in r.test.params}
            out.setdefault(json.dumps({**json.loads(key), "load": rest}, sort_keys=True, default=str),
                           []).append(r)
    return out


def steps(curve: Curve) -> list[Step]:
    """From each load to the next; a step the search measured again by turns (Point.pair) is judged on those runs,
    as the search judged it (loadsearch.change)."""
    out = []
    for a, b in zip(curve.points, curve.points[1:]):
        if b.pair and (p := paired(b.pair, a.load, b.load)) is not None:
            gain, factor, _, _ = p.per_doubling()
            out.append(Step(a, b, gain, factor, math.expm1(p.log_ratio), math.expm1(p.log_noise),
                            math.expm1(p.latency_log_noise), p.runs))
            continue
        ta, tb = curve.throughput(a), curve.throughput(b)
        if not ta or tb is None:
            continue
        d = math.log2(b.load / a.load)
        la, lb = curve.latency(a), curve.latency(b)
        factor = per_doubling(lb / la, d) if la and lb else None
        out.append(Step(a, b, per_doubling(tb / ta, d) - 1, factor, tb / ta - 1, a.noise + b.noise))
    return out


def knee(curve: Curve) -> Knee:
    """The knee of a curve by the rule of the module's docstring (thresholds: GROWTH_MIN, LATENCY_GROWTH_MAX)."""
    ss = steps(curve)
    if len(ss) < MIN_POINTS - 1:
        return Knee("too few", steps=tuple(ss))
    first_fail = next((i for i, s in enumerate(ss) if s.verdict == "fails"), None)
    end = len(ss) if first_fail is None else first_fail
    # the steps in a row before the first that clearly failed (or the last) whose change was within their noise:
    # the knee lies somewhere in them, and the rule names no point
    band: list[Step] = []
    for s in reversed(ss[:end]):
        if s.verdict != "unclear":
            break
        band.insert(0, s)
    if band:
        return Knee("unclear", band[0].frm, ss[first_fail] if first_fail is not None else None, steps=tuple(ss),
                    band=tuple(band))
    if first_fail is None:
        return Knee("no knee", ss[-1].to, ss[-1], steps=tuple(ss))
    for s in ss[first_fail + 1:]:
        # growth that comes back past the failing step, by more than both ends' noise: the failing step may
        # have been noise itself
        if s.pays and s.rise > s.noise:
            return Knee("noisy", ss[first_fail].frm, ss[first_fail], s, tuple(ss))
    return Knee("knee", ss[first_fail].frm, ss[first_fail], steps=tuple(ss))


def doubling_text(s: Step, curve: Curve) -> str:
    """What one doubling of load did past a point: "+3% objects/s, mean latency ×1.9"."""
    lat = "p99" if curve.percentiles else "mean latency"
    text = f"{s.gain:+.0%} throughput"
    return text + (f", {lat} ×{s.latency_factor:.2f}" if s.latency_factor is not None else "")


def in_flight(p: Point) -> str:
    return f"{p.label} ({p.load} in flight)" if p.label != str(p.load) else f"{p.load} in flight"


def knees(results: Sequence[Result]) -> list[tuple[Curve, Knee]]:
    return [(c, knee(c)) for c in curves(results)]
