"""Sweep expansion: Suite -> Plan, a list of fully resolved Tests.

Every list-valued workload parameter is a sweep dimension and the plan is their
product, in the order the parameters are declared, times `repeat` (for kinds in
REPEAT_INSIDE_TEST, `repeat` is a parameter of one test instead). A workload's
phase field (rados bench modes, fio rw) is not a dimension: its values are the
tests of one group, run in order on the same pool and objects.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from .config import Suite
from .results import Test
from .units import format_size

# workload type -> (phase field or None, seconds of setup per group for the estimate)
PHASES: dict[str, str | None] = {"rados_bench": "modes", "fio_rados": "rw", "osd_bench": None,
                                 "rbd_bench": "io_type", "fio_rbd": "rw", "rgw": "op"}
GROUP_SETUP_S = 8.0
OSD_BENCH_EST_S = 20.0
# kinds whose `repeat` counts rounds inside one test (the driver interleaves them), not separate tests
REPEAT_INSIDE_TEST = {"osd_bench"}
_FIXED = {"name", "type", "repeat"}
_SIZE_KEYS = {"object_size", "block_size", "total", "io_size"}
_ALWAYS_LABEL = {"object_size", "block_size", "concurrency", "iodepth", "io_size", "io_threads"}


@dataclass(frozen=True)
class Plan:
    suite: Suite
    tests: list[Test]

    @property
    def est_duration_s(self) -> float:
        groups = {t.group for t in self.tests}
        return sum(t.est_duration_s for t in self.tests) + GROUP_SETUP_S * len(groups)


def _label(key: str, value: Any) -> str:
    if key in _SIZE_KEYS:
        return format_size(value)
    if key in ("concurrency", "io_threads"):
        return f"t{value}"
    if key == "iodepth":
        return f"qd{value}"
    if key == "instances":
        return f"x{value}"
    if key == "duration":
        return f"{value:g}s"
    return str(value)


def baseline_tests(suite: Suite) -> list[Test]:
    """The suite's disk and network baselines: the first tests of the plan, one group each."""
    from .drivers import disk_baseline, iperf
    b = suite.baseline
    tests: list[Test] = []
    if b is not None and b.disks is not None:
        d = b.disks
        n = len(d.paths) if isinstance(d.paths, list) else 3
        tests += disk_baseline.make_tests(
            d.patterns or disk_baseline.DEFAULT_PATTERNS,
            {"paths": d.paths, "size": d.size, "runtime_s": d.runtime, "allow_raw_device": d.allow_raw_device},
            start_index=len(tests) + 1, est_scopes=n + (n > 1))
    if b is not None and b.network is not None:
        nw = b.network
        tests += iperf.make_tests(nw.hosts, nw.streams, nw.duration, nw.port, start_index=len(tests) + 1)
    return tests


def expand(suite: Suite) -> Plan:
    tests: list[Test] = baseline_tests(suite)
    group_no = 0
    for wi, w in enumerate(suite.workloads):
        data = w.model_dump()
        kind = data["type"]
        name = w.name or kind
        phase_field = PHASES[kind]
        phases = data[phase_field] if phase_field else [None]
        dims = [k for k, v in data.items() if isinstance(v, list) and k not in _FIXED and k != phase_field]
        fixed = {k: v for k, v in data.items() if k not in dims and k not in _FIXED and k != phase_field}
        inside = kind in REPEAT_INSIDE_TEST
        rounds, test_repeats = (w.repeat, 1) if inside else (1, w.repeat)
        if inside:
            fixed["repeat"] = rounds
        for combo in itertools.product(*(data[k] for k in dims)):
            params_base = dict(zip(dims, combo))
            for rep in range(1, test_repeats + 1):
                group_no += 1
                group = f"g{group_no:03d}"
                for phase in phases:
                    params = {**fixed, **params_base}
                    if phase_field:
                        params["phase"] = phase
                    if "pool" in params:
                        params["pool_profile"] = suite.pools[params["pool"]].model_dump()
                    if params.get("metadata_pool"):
                        params["metadata_profile"] = suite.pools[params["metadata_pool"]].model_dump()
                    if "duration" in params:
                        params["duration_s"] = params.pop("duration")
                    labels = [_label(k, params_base[k]) for k in dims
                              if k in _ALWAYS_LABEL or len(data[k]) > 1]
                    parts = ([name] + ([str(phase)] if phase else []) + labels
                             + ([f"r{rep}"] if test_repeats > 1 else []))
                    index = len(tests) + 1
                    tests.append(Test(
                        id=f"{index:03d}-" + "-".join(parts),
                        index=index,
                        workload=name,
                        kind=kind,
                        group=group,
                        params=params,
                        repeat=rep,
                        est_duration_s=params.get("duration_s") or OSD_BENCH_EST_S * rounds,
                    ))
    return Plan(suite=suite, tests=tests)
