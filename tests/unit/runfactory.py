"""Run directories for tests, built from measurements parsed out of real fixture outputs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from conftest import FIXTURES
from cephbench.drivers import rados_bench
from cephbench.core.results import Analysis, Latency, Measurement, Result, RunDir, Test

NOISE = (0.99, 1.01, 1.0, 0.995, 1.005, 0.998, 1.002, 0.997)


def fixture_measurement(name: str = "ceph16.2.15_write_4M.txt", mode: str = "write") -> Measurement:
    return rados_bench.parse((FIXTURES / "rados_bench" / name).read_text(), mode)


def scaled(m: Measurement, factor: float) -> Measurement:
    """The same run `factor` times faster: bandwidth and IOPS × factor, latency ÷ factor."""
    lat = m.latency
    return m.model_copy(update={
        "bytes_per_s": m.bytes_per_s * factor, "ops_per_s": m.ops_per_s * factor,
        "latency": Latency(mean_ns=lat.mean_ns / factor if lat.mean_ns else None,
                           max_ns=lat.max_ns, min_ns=lat.min_ns, stddev_ns=lat.stddev_ns,
                           percentiles_ns={k: v / factor for k, v in lat.percentiles_ns.items()})})


def write_run(path: Path, configs: list[tuple[str, dict[str, Any], list[Measurement]]
                                      | tuple[str, dict[str, Any], list[Measurement], str | None]],
              meta: dict[str, Any] | None = None, analyses: dict[int, Analysis] | None = None) -> Path:
    """One Test per measurement (its repeats share kind and params), appended as ok Results. A config's fourth
    element is the variant its tests ran under; `analyses` puts an Analysis on the result of that plan index."""
    rd = RunDir.create(path, {"cephbench_version": "test", "suite_name": "test", "run_ids": ["abc123"],
                              "started_unix": 1_700_000_000.0, **(meta or {})})
    index = 0
    for kind, params, ms, *variant in configs:
        v = variant[0] if variant else None
        for rep, m in enumerate(ms, 1):
            index += 1
            label = "-".join(str(x) for x in [*params.values(), *([v] if v else [])])
            t = Test(id=f"{index:03d}-{kind}-{label}-r{rep}", index=index, workload=kind, kind=kind,
                     group=f"g{index:03d}", params=params, repeat=rep, variant=v)
            rd.append(Result(test=t, status="ok", started_unix=1_700_000_000.0 + index, duration_s=5.0,
                             measurement=m, analysis=(analyses or {}).get(index)))
    return path


def repeats(m: Measurement, factor: float, n: int = 5, offset: int = 0) -> list[Measurement]:
    return [scaled(m, factor * NOISE[(i + offset) % len(NOISE)]) for i in range(n)]


def copy_fixture_run(prefix: Path | str, path: Path) -> Path:
    """A run directory at `path` from a real run kept as fixtures: PREFIX.run.json and PREFIX.results.jsonl (raw/
    is never kept)."""
    path.mkdir()
    shutil.copy(f"{prefix}.run.json", path / "run.json")
    shutil.copy(f"{prefix}.results.jsonl", path / "results.jsonl")
    return path
