"""Throwaway: fio's rados engine with a small random job shape, run by drivers/fio_rados.py."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from .kind import RW_DIRECTIONS, Kind, Needs
from .schema import ClientWorkload, Duration, PositiveInt, Size, Sweep

KIND = Kind("fio_rados_rand", "RADOS", "fio (rados engine, random 4 KiB)", "fio", "rw", dict(RW_DIRECTIONS),
            modelled=True, group_setup_s=3.0)
DRIVER = "fio_rados"


class FioRadosRand(ClientWorkload):
    descriptor: ClassVar[Kind] = KIND
    type: Literal["fio_rados_rand"]
    pool: Sweep(str) = ["default"]
    rw: Sweep(Literal["randwrite", "randread"]) = ["randwrite", "randread"]
    block_size: Sweep(Size) = [4096]
    iodepth: Sweep(PositiveInt) = [32]
    duration: Sweep(Duration) = [30.0]


def needs(params: Mapping[str, Any]) -> Needs:
    return Needs(tools=("fio",), engines=("rados",), loadgen=True)


MODEL = FioRadosRand
