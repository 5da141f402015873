"""A VM's path to RBD: fio through QEMU's rbd driver, each image exported by a qemu-nbd of its own (as a VM's disk is
its QEMU's one librbd client), with QEMU's cache mode as a parameter; hooks in drivers/qemu_rbd.py.

QEMU's cache mode is what a VM's disk is given in libvirt (`<driver cache=...>`): `none` and `directsync` open the
image with rbd_cache off, `writeback`, `writethrough` and `unsafe` with it on (QEMU sets rbd_cache from it), and
`writethrough`/`directsync` flush after every write. fio reaches the export with its nbd engine (libnbd) over a unix
socket, so no kernel nbd module is needed.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping

from .kind import RW_DIRECTIONS, Kind, Needs
from .rbd_images import RBD_IMAGE
from .schema import FioRbdWorkload, Sweep

CacheMode = Literal["none", "writeback", "writethrough", "directsync", "unsafe"]

KIND = Kind("qemu_rbd", "RBD", "fio (qemu-nbd, QEMU's rbd driver)", "fio", "rw", {**RW_DIRECTIONS, "randrw": "mixed"},
            modelled=True, group_setup_s=6.0, test_overhead_s=2.0,
            steady_phases=frozenset({"read", "write", "randread", "randwrite", "randrw"}),
            search_param="iodepth", searches_clients=True, labels={"cache": lambda v: f"cache-{v}"},
            load_params={"iodepth": "qd", "numjobs": "jobs"}, load_tag="qd", op_size_param="block_size",
            object_size_param="object_size", size_params=("object_size", "block_size"),
            id_params=("object_size", "block_size", "iodepth"), shown_params=("object_size", "block_size", "iodepth"),
            swept_charts=("object_size", "block_size", "iodepth"), resources=(RBD_IMAGE,))
DRIVER = "qemu_rbd"


class QemuRbd(FioRbdWorkload):
    """fio's fields on RBD (each of numjobs' clones a connection of its own to its image's qemu-nbd), and the
    export's cache mode."""
    descriptor: ClassVar[Kind] = KIND
    type: Literal["qemu_rbd"]
    cache: Sweep(CacheMode) = ["none"]      # QEMU's cache mode of the image (qemu-nbd --cache)


def needs(params: Mapping[str, Any]) -> Needs:
    # qemu-nbd: Debian's qemu-utils; its rbd driver is qemu-block-extra (a missing driver fails the export, named)
    return Needs(tools=("fio", "qemu-nbd"), engines=("nbd",), loadgen=True,
                 packages=(*Needs().packages, ("qemu-nbd", "qemu-utils qemu-block-extra")))


MODEL = QemuRbd
