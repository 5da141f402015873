"""ceph tell osd.N bench: each OSD's object store written directly, round-robin; hooks in drivers/osd_bench.py."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .kind import Kind
from .schema import PositiveInt, Size, Sweep, WorkloadModel


# osd bench writes block_size blocks straight into the OSD's object store and reports them as "iops"
KIND = Kind("osd_bench", "OSD", "ceph tell osd.N bench", "osd", None, {"write": "write"}, modelled=True,
            ceiling_source=True, repeat_within_test=True, default_test_s=0.5,
            op_size_param="block_size", object_size_param="block_size", size_params=("total", "block_size"),
            id_params=("block_size",), shown_params=("block_size", "total"), swept_charts=("block_size",))
DRIVER = "osd_bench"


class OsdBench(WorkloadModel):
    """`repeat` is the number of rounds inside one test (every OSD benched once per round, round-robin), not
    separate tests: a slow OSD is only flagged when its repeats separate it from the others'."""
    descriptor: ClassVar[Kind] = KIND
    type: Literal["osd_bench"]
    repeat: PositiveInt = 3
    total: Sweep(Size) = [1024**3]
    block_size: Sweep(Size) = [4 * 1024**2]
    slow_threshold: float = Field(0.2, gt=0, lt=1)


MODEL = OsdBench
