"""fio on RBD images made and prefilled for the group, through librbd or krbd; hooks in drivers/fio_rbd.py."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from pydantic import Field, model_validator

from .kind import RW_DIRECTIONS, Kind, Needs
from .schema import Duration, PositiveInt, Ramp, RbdWorkload, Searchable, Size, Sweep, steady_rounds_fit


KIND = Kind("fio_rbd", "RBD", "fio (rbd)", "fio", "rw", {**RW_DIRECTIONS, "randrw": "mixed"}, modelled=True,
            group_setup_s=6.0, steady_phases=frozenset({"read", "write", "randread", "randwrite", "randrw"}),
            search_param="iodepth", searches_clients=True,
            load_params={"iodepth": "qd", "numjobs": "jobs"}, load_tag="qd", op_size_param="block_size",
            object_size_param="object_size", size_params=("object_size", "block_size"),
            id_params=("object_size", "block_size", "iodepth"), shown_params=("object_size", "block_size", "iodepth"),
            swept_charts=("object_size", "block_size", "iodepth"), resources=("rbd-image", "rbd-mapping"))
DRIVER = "fio_rbd"


class FioRbd(RbdWorkload):
    descriptor: ClassVar[Kind] = KIND
    type: Literal["fio_rbd"]
    rw: Sweep(Literal["read", "write", "randread", "randwrite", "randrw"]) = ["randwrite", "randread"]
    block_size: Sweep(Size) = [4096]
    iodepth: Searchable(PositiveInt) = [32]
    numjobs: Sweep(PositiveInt) = [1]      # fio jobs per image
    rwmixread: int = Field(50, ge=0, le=100)
    duration: Sweep(Duration) = [30.0]
    ramp: Ramp = 0.0
    client: Sweep(Literal["librbd", "krbd"]) = ["librbd"]   # krbd: rbd map + fio libaio on /dev/rbdN

    @model_validator(mode="after")
    def _steady_rounds_fit(self) -> "FioRbd":
        steady_rounds_fit(self.steady_state, self.duration)
        return self


def needs(params: Mapping[str, Any]) -> Needs:
    krbd = params.get("client") == "krbd"
    return Needs(tools=("fio", "rbd") if krbd else ("fio",), engines=("libaio",) if krbd else ("rbd",), loadgen=True)


MODEL = FioRbd
