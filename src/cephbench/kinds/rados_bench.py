"""rados bench: objects written, then read back in order (seq) or at random (rand), from this machine or clients.

Its hooks are in drivers/rados_bench.py."""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Literal, Mapping, Union

from pydantic import BeforeValidator, Field, field_validator, model_validator

from .kind import Kind, Needs, ResourceType
from .schema import ClientWorkload, PositiveInt, Searchable, Size, Sweep, steady_rounds_fit, whole_seconds


def _namespace_by_hand(name: str) -> str:
    pool, ns = name.rsplit("/", 1)
    base = f"rados -p {pool} -N {ns}"
    return f"{base} cleanup --prefix benchmark_data; {base} ls | xargs -r {base} rm  (the pool stays)"


# the run's RADOS namespace in a pool it did not create (`existing:`), "<pool>/<namespace>": every object in it is
# the run's, removed whole, and the pool stays (drivers/rados_namespace.py)
RADOS_NAMESPACE = ResourceType("rados-namespace", "rados_namespace:remove_namespace_entry", _namespace_by_hand,
                               owned_name=lambda name: name.rsplit("/", 1)[-1], order=1)


# A seq reads each object its write made once, so it lasts (objects written) / (objects read per second): the
# write's time x (write rate / read rate). Seqs ran several times faster than their writes, in objects per
# second, on the 2-core lab: 4 MiB up to 4.5x (the operator saw more), 1 MiB up to 5.3x, 64 KiB up to
# 8.5x, 4 KiB up to 7.8x (16x under load). A seq counts as run out below 80 % of its time; these ratios of
# write time to seq time leave room above those rates. The old rule, a quarter, ran out in 10 of 36 seqs.
LARGE_OBJECT = 1024**2
SEQ_WRITE_RATIO_LARGE = 6
SEQ_WRITE_RATIO_SMALL = 10


def seq_write_ratio(object_size: int | None) -> int:
    """How many times a seq's duration its write needs, for the seq to find objects for all of its time."""
    return SEQ_WRITE_RATIO_LARGE if (object_size or 0) >= LARGE_OBJECT else SEQ_WRITE_RATIO_SMALL


# A seq's estimate of its own pace beside its write's, above the largest ratio seen, when a seq of this run saw one
SEQ_RATIO_MARGIN = 1.25
# A top-up's writes in flight: at most this many, and this many bytes (rados bench holds a buffer for each)
TOPUP_MAX_CONCURRENCY = 64
TOPUP_MAX_IN_FLIGHT = 64 * 1024**2


def seq_ratio(object_size: int, seen: float | None) -> tuple[float, str]:
    """How many times its write's objects per second a seq may read, and whence that figure: the largest a seq
    of this run measured at this size, else the lab's measured bound (its kind's seq_write_ratio), with a margin
    either way. Objects a top-up has just written are still in the OSDs' own caches, which dropping the page
    cache leaves: a seq of them read 4 MiB objects at 7.8x the write's rate where the bound is 6."""
    bound = float(seq_write_ratio(object_size)) * SEQ_RATIO_MARGIN
    if seen is not None and seen * SEQ_RATIO_MARGIN > bound:
        return seen * SEQ_RATIO_MARGIN, f"{seen:.1f}x measured by an earlier seq of this run, + 25%"
    return bound, "the most measured on the lab, + 25%"


# What a top-up did to a seq's figure against the seq of the write's objects alone, typed by hand after the same write
# (`make bench NAME=fidelity`, 2026-12-06, the 2-core lab under the quiet lock: 6 runs per size, median, lowest,
# highest). A seq's own first seconds do not show it (its note's estimate said +0 to +24 % at 4 KiB): the top-up's
# tens of thousands of writes leave the OSDs busy for the whole seq.
TOPUP_EFFECT_MEASURED = {4096: (0.79, 0.63, 1.46), 4 * 1024**2: (0.84, 0.65, 1.15)}


def topup_effect_measured(object_size: int) -> tuple[int, tuple[float, float, float]]:
    """The measured size nearest `object_size` (by ratio) and its (median, lowest, highest) effect."""
    size = min(TOPUP_EFFECT_MEASURED, key=lambda s: abs(math.log(s / max(1, object_size))))
    return size, TOPUP_EFFECT_MEASURED[size]


def topup_concurrency(concurrency: int, object_size: int, objects: int) -> int:
    """Writes in flight for a top-up of `objects` objects. It is not recorded, so it fills the pipeline rather than
    keep the test's own concurrency: the lab's OSDs took 4 KiB objects about 3x as fast at 64 in flight as at 4, and a
    top-up before a seq of small objects is most of a short sweep's time. Bounded by TOPUP_MAX_IN_FLIGHT bytes and
    by the objects it writes (its first writes start together, whatever --max-objects says); never fewer than the
    test's own."""
    return max(concurrency, min(TOPUP_MAX_CONCURRENCY, TOPUP_MAX_IN_FLIGHT // max(1, object_size), objects))


# the estimate of a top-up (plan.expand): rados bench's start and end beyond its writes; and how much faster a write
# goes at the top-up's writes in flight than at the test's, as the square root of their ratio, at most TOPUP_SPEEDUP_MAX
# (the lab's OSDs: 4 KiB objects at -t 64 1.75x and 2.2x the -t 16 rate, about 3x the -t 4 rate). Counted over all
# its instances, and no more than TOPUP_SATURATED_IN_FLIGHT in all: past a few dozen the OSDs take no more objects a
# second (48 puts the runs below and one instance at -t 16, 1.75-2.2x, within a quarter).
# Measured (seed-argonaut-bobtail-now, 8 instances, 2026-12-07): the top-ups of 4 KiB and 128 KiB objects at -t 64
# each (512 in flight in all) wrote 1.4-1.5x as many objects a second as their writes at -t 2 each (16 in all), and
# 0.9x as many as at -t 32 each (256 in all); a 2 s seq with its top-up took 16-22 s and 26-33 s.
TOPUP_START_S = 1.0
TOPUP_SPEEDUP_MAX = 3.0
TOPUP_SATURATED_IN_FLIGHT = 48


def topup_estimate_s(object_size: int, concurrency: int, write_s: float, seq_s: float, instances: int = 1) -> float:
    """Seconds a top-up before a seq is expected to take, planned before any rate is known: the objects a seq of
    `seq_s` may read (seq_ratio, a fresh run's) are seq_ratio x seq_s seconds of the write's; the top-up writes them
    all from the first, at topup_concurrency in each of its `instances`; none when the `write_s` write leaves enough.
    Measured: a 2 s seq of 4 MiB objects after a 12 s write (15 s of writes wanted) took 25.3 s with its top-up, 14.8
    s more than the same seq without one; a 4 KiB top-up for an 8 s seq took 37.6 and 57.2 s (100 s of -t 16 writes
    wanted)."""
    ratio = seq_ratio(object_size, None)[0]
    wanted_s = ratio * seq_s
    if wanted_s <= write_s:
        return 0.0
    objects = 10**6     # many: the bound is the top-up's bytes and TOPUP_MAX_CONCURRENCY
    in_flight = min(topup_concurrency(concurrency, object_size, objects) * instances, TOPUP_SATURATED_IN_FLIGHT)
    speedup = min(TOPUP_SPEEDUP_MAX, math.sqrt(max(1.0, in_flight / max(1, concurrency * instances))))
    return TOPUP_START_S + wanted_s / speedup


# rados bench's operation is a whole object written or read
KIND = Kind("rados_bench", "RADOS", "rados bench", "rados", "modes", {"write": "write", "seq": "read", "rand": "read"},
            modelled=True, group_setup_s=3.0, exhaustible_reads=frozenset({"seq"}), ops_name="objects/s",
            steady_phases=frozenset({"write", "rand"}), rados_rates=True,
            read_write_ratio=seq_write_ratio, read_topup_s=topup_estimate_s, search_param="concurrency", searches_clients=True,
            object_size_params=("object_size",), existing_pools=True, capacity_cut=True, pool_per_instance=True,
            resources=(RADOS_NAMESPACE,),     # its objects in an existing pool: a namespace of the run's own
            load_params={"concurrency": "t"}, load_tag="t", op_size_param="object_size",
            object_size_param="object_size",
            size_params=("object_size",), id_params=("object_size", "concurrency"),
            shown_params=("object_size", "concurrency"), swept_charts=("object_size", "concurrency"))
DRIVER = "rados_bench"


def _rados_seconds(v: Any) -> float:
    return whole_seconds(v, "rados bench")


def _rados_durations(v: Any) -> dict[str, float] | list[float]:
    """One duration, a sweep of them, or one per mode ({write: 20s, seq: 5s}): checked here so that each
    form gets its own message rather than pydantic's account of every union branch."""
    if isinstance(v, dict):
        out = {}
        for mode, d in v.items():
            if mode not in ("write", "seq", "rand"):
                raise ValueError(f"{mode!r} is not a mode; per-mode durations take write, seq and rand")
            out[mode] = _rados_seconds(d)
        return out
    values = v if isinstance(v, list) else [v]
    if not values:
        raise ValueError("give at least one duration")
    return [_rados_seconds(d) for d in values]


RadosDurations = Annotated[Union[dict[str, float], list[float]], BeforeValidator(_rados_durations)]


class RadosBench(ClientWorkload):
    descriptor: ClassVar[Kind] = KIND
    type: Literal["rados_bench"]
    pool: Sweep(str) = ["default"]
    modes: list[Literal["write", "seq", "rand"]] = Field(["write", "seq", "rand"], min_length=1)
    object_size: Sweep(Size) = [4 * 1024**2]
    # operations in flight per instance: a value, a sweep, or auto (a search: core/loadsearch.py)
    concurrency: Searchable(PositiveInt) = [16]
    # one duration for every mode (a list is a sweep), or one per mode: {write: 20s, seq: 5s, rand: 10s}
    duration: RadosDurations = [30.0]
    instances: Sweep(PositiveInt) = [1]

    @field_validator("modes")
    @classmethod
    def _reads_need_write(cls, modes: list[str]) -> list[str]:
        if "write" not in modes:
            raise ValueError("seq and rand read what write wrote: include write in modes")
        if modes[0] != "write":
            raise ValueError("write must come first in modes")
        return modes

    @model_validator(mode="after")
    def _duration_per_mode(self) -> "RadosBench":
        if isinstance(self.duration, dict):
            missing = [m for m in self.modes if m not in self.duration]
            if missing:
                raise ValueError(f"duration: no duration for {', '.join(missing)}; give one for each of "
                                 f"{', '.join(self.modes)}, or one duration for all")
            extra = [m for m in self.duration if m not in self.modes]
            if extra:
                raise ValueError(f"duration: {', '.join(extra)} is not in modes ({', '.join(self.modes)})")
        return self

    @model_validator(mode="after")
    def _steady_window_fits(self) -> "RadosBench":
        """With steady_state a phase's duration is one round: max must hold a whole window of them."""
        st = self.steady_state
        if st is None:
            return self
        phases = [m for m in self.modes if m in KIND.steady_phases]
        if not phases:
            raise ValueError(f"steady_state: only {' and '.join(sorted(KIND.steady_phases))} run in "
                             "rounds (seq reads each object once and stops); add one to modes, or remove "
                             "steady_state")
        steady_rounds_fit(st, [d for m in phases for d in ([self.duration[m]] if isinstance(self.duration, dict)
                                                           else self.duration)])
        return self


def needs(params: Mapping[str, Any]) -> Needs:
    return Needs(tools=("rados",), loadgen=True)


MODEL = RadosBench
