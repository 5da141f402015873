"""rbd bench on RBD images made and prefilled for the group; hooks in drivers/rbd_bench.py."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from pydantic import Field, model_validator

from .kind import Kind, Needs
from .rbd_images import RBD_IMAGE
from .schema import Duration, PositiveInt, RbdWorkload, Size, Sweep, steady_rounds_fit


# an imported random rbd bench is named as fio names it (randwrite, ...): rundirs/importer.py
KIND = Kind("rbd_bench", "RBD", "rbd bench", "fio", "io_type", {"write": "write", "read": "read", "readwrite": "mixed",
                                                                "randwrite": "write", "randread": "read",
                                                                "randrw": "mixed"},
            modelled=True, group_setup_s=6.0, steady_phases=frozenset({"write", "read", "readwrite"}),
            searches_clients=True, load_params={"io_threads": "threads"}, load_tag="t", op_size_param="io_size",
            object_size_param="object_size", size_params=("object_size", "io_size"),
            id_params=("object_size", "io_size", "io_threads"), shown_params=("object_size",),
            swept_charts=("object_size",), resources=(RBD_IMAGE,))
DRIVER = "rbd_bench"


class RbdBench(RbdWorkload):
    descriptor: ClassVar[Kind] = KIND
    type: Literal["rbd_bench"]
    io_type: Sweep(Literal["write", "read", "readwrite"]) = ["write", "read"]
    io_size: Sweep(Size) = [4096]
    io_threads: Sweep(PositiveInt) = [16]
    io_pattern: Sweep(Literal["seq", "rand"]) = ["seq"]
    rw_mix_read: int = Field(50, ge=0, le=100)
    io_total: Size | None = None           # bytes per image and test; or a duration (default 30 s)
    duration: Sweep(Duration) | None = None

    @model_validator(mode="after")
    def _total_or_duration(self) -> "RbdBench":
        if self.io_total is not None and self.duration is not None:
            raise ValueError("give io_total or duration, not both")
        if self.io_total is None and self.duration is None:
            self.duration = [30.0]
        if self.io_total is not None and self.io_total <= 0:
            raise ValueError("io_total must be greater than zero")
        return self

    @model_validator(mode="after")
    def _steady_rounds_fit(self) -> "RbdBench":
        steady_rounds_fit(self.steady_state, self.duration)
        return self


def needs(params: Mapping[str, Any]) -> Needs:
    return Needs(tools=("rbd",), loadgen=True)


MODEL = RbdBench
