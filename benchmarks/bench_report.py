"""Generating the report of a 1,000-test run (goal: <= 2 s), and of a 1-test run.

The run is made of real parsed rados bench outputs (tests/fixtures), spread over
10 workloads of a sweep (object size x concurrency x repeats), so the report draws
the time-series and sweep charts it would for a real sweep. Every `cephbench run`
renders its report at the end, so the 1-test figure is what a small run pays
(mostly imports). Rounds alternate the two runs; medians are printed.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import median, result_line

from cephbench.drivers import rados_bench as rb
from cephbench.core.results import Result, RunDir, Test

FIX = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rados_bench"
TESTS = 1000
GOAL_S = 2.0
ROUNDS = 3


def make_run(path: Path, tests: int = TESTS) -> RunDir:
    rng = random.Random(1)
    parsed = {(size, mode): rb.parse((FIX / f"ceph16.2.15_{mode}_{size}.txt").read_text(), mode)
              for size in ("4K", "4M") for mode in ("write", "seq", "rand")}
    rd = RunDir.create(path, {"suite_name": "bench-report", "suite": {"pools": {}}, "started_unix": time.time()})
    sizes = [4096, 16384, 65536, 262144, 1048576, 4194304]
    concurrencies = [1, 4, 16, 64, 256]
    i = 0
    lines = []
    while i < tests:
        for w in range(10):
            for size in sizes:
                for conc in concurrencies:
                    for mode in ("write", "seq", "rand"):
                        if i >= tests:
                            break
                        i += 1
                        base = parsed[("4K" if size < 1048576 else "4M", mode)]
                        m = base.model_copy(update={"bytes_per_s": base.bytes_per_s * rng.uniform(0.8, 1.2)})
                        t = Test(id=f"{i:04d}-w{w}-{mode}-{size}-t{conc}", index=i, workload=f"w{w}",
                                 kind="rados_bench", group=f"g{i // 3}",
                                 params={"phase": mode, "object_size": size, "concurrency": conc, "instances": 1,
                                         "repeat_of": w})
                        lines.append(Result(test=t, status="ok", started_unix=time.time(), duration_s=m.duration_s,
                                            measurement=m).model_dump_json(exclude_none=True))
    rd.results_jsonl.write_text("\n".join(lines) + "\n")
    return rd


def timed_report(rd: RunDir) -> tuple[float, float, str]:
    """Wall and CPU seconds of `cephbench report` in a fresh process: its imports count, as for the user."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "cephbench.cli", "report", str(rd.path)], capture_output=True,
                         text=True, check=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, res.stdout.strip()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        big, one = make_run(Path(tmp) / "run"), make_run(Path(tmp) / "one", tests=1)
        walls: dict[str, list[float]] = {"big": [], "one": []}
        cpus: dict[str, list[float]] = {"big": [], "one": []}
        for rnd in range(ROUNDS):
            # alternate which goes first: the machine is shared and its load drifts
            for name in (("big", "one") if rnd % 2 == 0 else ("one", "big")):
                wall, cpu, out = timed_report(big if name == "big" else one)
                walls[name].append(wall)
                cpus[name].append(cpu)
                print(f"round {rnd + 1} {name}: {wall:.2f} s wall, {cpu:.2f} s CPU: {out}", flush=True)
        size = (big.path / "report.html").stat().st_size
        charts = (big.path / "report.html").read_text().count('<figure class="chart"')
    elapsed = median(walls["big"])
    result_line("report", tests=TESTS, seconds=elapsed, goal_s=GOAL_S, ratio_to_goal=elapsed / GOAL_S,
                cpu_s=median(cpus["big"]), one_test_s=median(walls["one"]), one_test_cpu_s=median(cpus["one"]),
                charts=charts, html_bytes=size, rounds=ROUNDS)
