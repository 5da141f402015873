"""Shared helpers for benchmarks: a throwaway lab, medians, the RESULT line."""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from cephbench.cluster.ceph import Cluster
from cephbench.lab import Lab


T = TypeVar("T")


def each_release(one: Callable[[str, dict[str, str]], T | None]) -> list[T]:
    """`one(release, env)` for each release CEPHBENCH_BENCH_RELEASES names (default pacific,reef,tentacle), in an
    environment without CEPH_CONF and CEPH_KEYRING (each makes its own lab); those whose lab did not start (None)
    left out."""
    env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}
    picked = os.environ.get("CEPHBENCH_BENCH_RELEASES", "pacific,reef,tentacle").split(",")
    return [x for x in (one(r, env) for r in picked) if x is not None]


def result_line(name: str, **figures: object) -> None:
    parts = " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items())
    print(f"RESULT {name} {parts}", flush=True)


def median(xs: list[float]) -> float:
    return statistics.median(xs)


@contextlib.contextmanager
def lab(osds: int = 3, osd_size: int = 6 * 1024**3, rgw: bool = True) -> Iterator[Lab]:
    """A lab for one benchmark; CEPHBENCH_BENCH_LAB=DIR reuses a running one."""
    reuse = os.environ.get("CEPHBENCH_BENCH_LAB")
    if reuse:
        yield Lab(Path(reuse))
        return
    d = Path(tempfile.mkdtemp(prefix="cephbench-bench-"))
    lb = Lab(d / "lab")
    lb.up(osds=osds, osd_size_bytes=osd_size, rgw=rgw)
    try:
        yield lb
    finally:
        lb.down()
        shutil.rmtree(d, ignore_errors=True)


def settle(cluster: Cluster, limit_s: float = 60.0) -> None:
    """Wait until the OSDs have finished removing deleted pools' objects (raw use stops falling)."""
    deadline = time.monotonic() + limit_s
    last = cluster.raw_capacity()[1]
    while time.monotonic() < deadline:
        time.sleep(2.0)
        used = cluster.raw_capacity()[1]
        if used >= last:
            return
        last = used
