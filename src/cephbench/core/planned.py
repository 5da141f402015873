"""What the plan makes of a suite: each test (Test), the search a test is a step of (Search), and why a search
stopped (SearchStop, on its last step's result).

Apart from the results (core/results.py, which names them too) because `validate` needs these alone: the results'
two dozen models cost every start that imports them their classes, even built when first used.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Search(BaseModel):
    """The search a test is a step of (`concurrency: auto`, core/loadsearch.py): the load parameter it doubles from 1,
    the largest load it may reach, and the latency bound that stops it (None: none)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    param: str                  # "concurrency", "iodepth", "clients"
    max: int
    latency_max_s: float | None = None
    repeats: int = 1            # runs of each step (its noise their spread); 1: its per-second spread


class SearchStop(BaseModel):
    """Why a search stopped, on its last step: throughput stopped growing (or latency grew more than the knee
    rule allows), the latency passed the suite's bound, the largest load was reached, the step failed, the
    capacity guard left no room for the next write, or its steps changed within their noise (the knee unclear)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    reason: Literal["throughput", "latency", "max", "failed", "capacity", "unclear"]
    text: str


class Test(BaseModel):
    """One fully resolved benchmark: every parameter known, nothing left to expand."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    __test__ = False  # not a pytest test class

    id: str                     # unique in the run, e.g. "0003-rados-write-4MiB-t16-r1"
    index: int
    workload: str               # the suite's workload name
    kind: str                   # the driver: rados_bench, osd_bench, fio_rados, ...
    group: str                  # tests of one group share setup (a pool, written objects)
    params: dict[str, Any]
    repeat: int = 1
    est_duration_s: float = 0.0
    variant: str | None = None  # the suite's variant it runs under; None: no variants (the cluster as it is)
    search: Search | None = None    # a step of a search; its load is in params as any load is

    def match_key(self) -> str:
        """What makes two tests of different runs comparable: driver, parameters and variant, not ids."""
        key: dict[str, Any] = {"kind": self.kind, "params": self.params}
        if self.variant is not None:        # without variants, the key of every run before them
            key["variant"] = self.variant
        return json.dumps(key, sort_keys=True)
