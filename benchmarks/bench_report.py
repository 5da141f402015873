"""Generating the report of a 1,000-test run. Goal: <= 10 s.

The run is made of real parsed rados bench and OSD bench outputs (tests/fixtures),
spread over 10 workloads of a sweep (object size x concurrency x repeats), so the
report draws every kind of chart it would for a real sweep.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import result_line

from cephbench.drivers import rados_bench as rb
from cephbench.results import Result, RunDir, Test

FIX = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rados_bench"
TESTS = 1000


def make_run(path: Path) -> RunDir:
    rng = random.Random(1)
    parsed = {(size, mode): rb.parse((FIX / f"ceph16.2.15_{mode}_{size}.txt").read_text(), mode)
              for size in ("4K", "4M") for mode in ("write", "seq", "rand")}
    rd = RunDir.create(path, {"suite_name": "bench-report", "suite": {"pools": {}}, "started_unix": time.time()})
    sizes = [4096, 16384, 65536, 262144, 1048576, 4194304]
    concurrencies = [1, 4, 16, 64, 256]
    i = 0
    lines = []
    while i < TESTS:
        for w in range(10):
            for size in sizes:
                for conc in concurrencies:
                    for mode in ("write", "seq", "rand"):
                        if i >= TESTS:
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


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rd = make_run(Path(tmp) / "run")
        # the user's command, in a fresh process: imports (matplotlib) count
        t0 = time.monotonic()
        res = subprocess.run([sys.executable, "-m", "cephbench.cli", "report", str(rd.path)], capture_output=True,
                             text=True, check=True)
        elapsed = time.monotonic() - t0
        print(res.stdout.strip(), flush=True)
        size = (rd.path / "report.html").stat().st_size
    result_line("report", tests=TESTS, seconds=elapsed, goal_s=10.0, ratio_to_goal=elapsed / 10.0,
                html_bytes=size)
