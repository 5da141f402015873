"""rados load-gen: a mixed load of random reads and writes of random extents of a set of objects, at a target
throughput, on a pool made for the group; hooks in drivers/rados_load_gen.py.

What no other kind offers: a load at a set rate (the others run as fast as they can at a set concurrency), and
reads and writes mixed in one tool run against RADOS objects. Each run makes its own objects (sparse: one byte at
each object's end, so most reads read extents nothing wrote yet) and removes them at its end.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Mapping

from pydantic import BeforeValidator, Field, model_validator

from ..core.units import format_size
from .kind import Kind, Needs
from .schema import ClientWorkload, PositiveInt, Size, Sweep, steady_rounds_fit, whole_seconds

# one load, both directions: its workload names no phases, every test is this one
PHASE = "mixed"

KIND = Kind("rados_load_gen", "RADOS", "rados load-gen", "fio", None, {PHASE: "mixed"}, group_setup_s=3.0,
            steady_phases=frozenset({PHASE}), only_phase=PHASE,
            object_size_params=("min_object_size", "max_object_size"),
            labels={"target_throughput": lambda v: f"{format_size(v)}ps", "read_percent": lambda v: f"read{v}"},
            load_params={"concurrency": "t"}, load_tag="t", id_params=("concurrency",), shown_params=("concurrency",),
            swept_charts=("concurrency",))
DRIVER = "rados_load_gen"


def _rate(v: Any) -> Any:
    """A throughput in bytes per second: a size, with or without "/s" ("8MiB/s", "8MiB", 8388608)."""
    return v[:-2].strip() if isinstance(v, str) and v.strip().endswith("/s") else v


def _load_gen_seconds(v: Any) -> float:
    d = whole_seconds(v, "rados load-gen")
    if d < 2:
        raise ValueError(f"{v!r}: rados load-gen sends nothing in its first second; give at least 2s")
    return d


Rate = Annotated[Size, BeforeValidator(_rate)]
Seconds = Annotated[float, BeforeValidator(_load_gen_seconds)]


class RadosLoadGen(ClientWorkload):
    """`rados -p POOL load-gen`: `objects` objects of sizes between min_object_size and max_object_size, then for
    `duration` reads (read_percent of them) and writes of min_op_size..max_op_size at random offsets of random
    objects, sent at target_throughput bytes per second while at most `concurrency` operations and max_backlog
    bytes are outstanding."""

    descriptor: ClassVar[Kind] = KIND
    type: Literal["rados_load_gen"]
    pool: Sweep(str) = ["default"]
    target_throughput: Sweep(Rate) = [5 * 1024**2]       # load-gen's own default
    read_percent: Sweep(Annotated[int, Field(ge=0, le=100, strict=True)]) = [80]
    concurrency: Sweep(PositiveInt) = [16]                # --max-ops: operations in flight at most
    max_backlog: Size | None = None                       # bytes sent and not completed; None: 2 x the target
    objects: PositiveInt = 200
    min_object_size: Size = 1024
    max_object_size: Size = 4 * 1024**2                   # load-gen's 5 GiB default is above osd_max_object_size
    min_op_size: Size = 1024
    max_op_size: Size = 2 * 1024**2
    duration: Sweep(Seconds) = [30.0]

    @model_validator(mode="after")
    def _ranges(self) -> "RadosLoadGen":
        for low, high in (("min_object_size", "max_object_size"), ("min_op_size", "max_op_size")):
            if getattr(self, low) > getattr(self, high):
                raise ValueError(f"{low} ({getattr(self, low)} bytes) is above {high} ({getattr(self, high)} "
                                 f"bytes); give {low} at most {high}")
        return self

    @model_validator(mode="after")
    def _steady_rounds_fit(self) -> "RadosLoadGen":
        steady_rounds_fit(self.steady_state, self.duration)
        return self


def needs(params: Mapping[str, Any]) -> Needs:
    return Needs(tools=("rados",), loadgen=True)


MODEL = RadosLoadGen
