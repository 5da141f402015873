"""fio on RBD images made and prefilled for the group, through librbd or krbd; hooks in drivers/fio_rbd.py."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from .kind import RW_DIRECTIONS, Kind, Needs
from .rbd_images import RBD_IMAGE, RBD_MAPPING
from .schema import FioRbdWorkload, Sweep


KIND = Kind("fio_rbd", "RBD", "fio (rbd)", "fio", "rw", {**RW_DIRECTIONS, "randrw": "mixed"}, modelled=True,
            group_setup_s=6.0, steady_phases=frozenset({"read", "write", "randread", "randwrite", "randrw"}),
            search_param="iodepth", searches_clients=True,
            load_params={"iodepth": "qd", "numjobs": "jobs"}, load_tag="qd", op_size_param="block_size",
            object_size_param="object_size", size_params=("object_size", "block_size"),
            id_params=("object_size", "block_size", "iodepth"), shown_params=("object_size", "block_size", "iodepth"),
            swept_charts=("object_size", "block_size", "iodepth"), resources=(RBD_IMAGE, RBD_MAPPING))
DRIVER = "fio_rbd"


class FioRbd(FioRbdWorkload):
    descriptor: ClassVar[Kind] = KIND
    type: Literal["fio_rbd"]
    client: Sweep(Literal["librbd", "krbd"]) = ["librbd"]   # krbd: rbd map + fio libaio on /dev/rbdN


def needs(params: Mapping[str, Any]) -> Needs:
    krbd = params.get("client") == "krbd"
    return Needs(tools=("fio", "rbd") if krbd else ("fio",), engines=("libaio",) if krbd else ("rbd",), loadgen=True)


MODEL = FioRbd
