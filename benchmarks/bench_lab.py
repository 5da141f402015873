"""`cephbench lab up` (3 OSDs + RGW) and `lab down`: median of 3. Goal: up <= 30 s, down <= 5 s."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from common import median, result_line

from cephbench.lab import Lab

RUNS = 3


def main() -> None:
    ups, downs = [], []
    for i in range(RUNS):
        d = Path(tempfile.mkdtemp(prefix="cephbench-bench-lab-"))
        lb = Lab(d / "lab")
        t0 = time.monotonic()
        lb.up(osds=3, osd_size_bytes=10 * 1024**3, rgw=True)
        ups.append(time.monotonic() - t0)
        t0 = time.monotonic()
        lb.down()
        downs.append(time.monotonic() - t0)
        shutil.rmtree(d, ignore_errors=True)
        print(f"run {i + 1}: up {ups[-1]:.1f} s, down {downs[-1]:.1f} s", flush=True)
    result_line("lab", up_s_median=median(ups), down_s_median=median(downs), up_goal_s=30.0, down_goal_s=5.0,
                up_ratio_to_goal=median(ups) / 30.0, down_ratio_to_goal=median(downs) / 5.0)
