"""fio's rados engine on a pool made for the group; hooks in drivers/fio_rados.py."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from pydantic import model_validator

from .kind import RW_DIRECTIONS, Kind, Needs
from .schema import ClientWorkload, Duration, PositiveInt, Searchable, Size, Sweep, steady_rounds_fit


KIND = Kind("fio_rados", "RADOS", "fio (rados engine)", "fio", "rw", dict(RW_DIRECTIONS), modelled=True,
            group_setup_s=3.0, steady_phases=frozenset(RW_DIRECTIONS), search_param="iodepth",
            searches_clients=True, object_size_params=("block_size",),
            load_params={"iodepth": "qd"}, load_tag="qd", op_size_param="block_size", object_size_param="block_size",
            size_params=("block_size",), id_params=("block_size", "iodepth"), shown_params=("block_size", "iodepth"),
            swept_charts=("block_size", "iodepth"))     # rados engine: one object per block
DRIVER = "fio_rados"


class FioRados(ClientWorkload):
    descriptor: ClassVar[Kind] = KIND
    type: Literal["fio_rados"]
    pool: Sweep(str) = ["default"]
    rw: Sweep(Literal["write", "read", "randwrite", "randread"]) = ["write", "read"]
    block_size: Sweep(Size) = [4 * 1024**2]
    iodepth: Searchable(PositiveInt) = [16]
    duration: Sweep(Duration) = [30.0]

    @model_validator(mode="after")
    def _steady_rounds_fit(self) -> "FioRados":
        steady_rounds_fit(self.steady_state, self.duration)
        return self


def needs(params: Mapping[str, Any]) -> Needs:
    return Needs(tools=("fio",), engines=("rados",), loadgen=True)


MODEL = FioRados
