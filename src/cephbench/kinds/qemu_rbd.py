"""A VM's path to RBD: fio through QEMU's rbd driver, each image exported by a qemu-nbd of its own (as a VM's disk is
its QEMU's one librbd client), with QEMU's cache mode as a parameter; hooks in drivers/qemu_rbd.py.

QEMU's cache mode is what a VM's disk is given in libvirt (`<driver cache=...>`): `none` and `directsync` open the
image with rbd_cache off, `writeback`, `writethrough` and `unsafe` with it on (QEMU sets rbd_cache from it), and
`writethrough`/`directsync` flush after every write. fio reaches the export with its nbd engine (libnbd) over a unix
socket, so no kernel nbd module is needed.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from pydantic import Field, model_validator

from .kind import RW_DIRECTIONS, Kind, Needs
from .schema import Duration, PositiveInt, Ramp, RbdWorkload, Searchable, Size, Sweep, steady_rounds_fit

CacheMode = Literal["none", "writeback", "writethrough", "directsync", "unsafe"]

KIND = Kind("qemu_rbd", "RBD", "fio (qemu-nbd, QEMU's rbd driver)", "fio", "rw", {**RW_DIRECTIONS, "randrw": "mixed"},
            modelled=True, group_setup_s=6.0, test_overhead_s=2.0,
            steady_phases=frozenset({"read", "write", "randread", "randwrite", "randrw"}),
            search_param="iodepth", searches_clients=True, labels={"cache": lambda v: f"cache-{v}"},
            load_params={"iodepth": "qd", "numjobs": "jobs"}, load_tag="qd", op_size_param="block_size",
            object_size_param="object_size", size_params=("object_size", "block_size"),
            id_params=("object_size", "block_size", "iodepth"), shown_params=("object_size", "block_size", "iodepth"),
            swept_charts=("object_size", "block_size", "iodepth"), resources=("rbd-image",))
DRIVER = "qemu_rbd"


class QemuRbd(RbdWorkload):
    descriptor: ClassVar[Kind] = KIND
    type: Literal["qemu_rbd"]
    rw: Sweep(Literal["read", "write", "randread", "randwrite", "randrw"]) = ["randwrite", "randread"]
    block_size: Sweep(Size) = [4096]
    iodepth: Searchable(PositiveInt) = [32]
    numjobs: Sweep(PositiveInt) = [1]      # fio jobs per image, each its own connection to the image's qemu-nbd
    rwmixread: int = Field(50, ge=0, le=100)
    duration: Sweep(Duration) = [30.0]
    ramp: Ramp = 0.0
    cache: Sweep(CacheMode) = ["none"]      # QEMU's cache mode of the image (qemu-nbd --cache)

    @model_validator(mode="after")
    def _steady_rounds_fit(self) -> "QemuRbd":
        steady_rounds_fit(self.steady_state, self.duration)
        return self


def needs(params: Mapping[str, Any]) -> Needs:
    # qemu-nbd: Debian's qemu-utils; its rbd driver is qemu-block-extra (a missing driver fails the export, named)
    return Needs(tools=("fio", "qemu-nbd"), engines=("nbd",), loadgen=True,
                 packages=(*Needs().packages, ("qemu-nbd", "qemu-utils qemu-block-extra")))


MODEL = QemuRbd
