"""The whole `make demo` path: lab up, suites/quick.yaml, lab down. Goal: within 5 minutes on 2 cores."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import result_line

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    d = Path(tempfile.mkdtemp(prefix="cephbench-bench-demo-"))
    cli = [sys.executable, "-m", "cephbench.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}
    t0 = time.monotonic()
    try:
        subprocess.run([*cli, "lab", "up", "--dir", str(d / "lab")], check=True, env=env)
        t_lab = time.monotonic() - t0
        subprocess.run([*cli, "run", str(REPO / "suites" / "quick.yaml"), "--lab-dir", str(d / "lab"),
                        "--out", str(d / "run")], check=True, env=env)
        t_run = time.monotonic() - t0 - t_lab
        from cephbench.suite.config import load_suite
        from cephbench.suite.plan import expand
        estimate = expand(load_suite(REPO / "suites" / "quick.yaml")).est_duration_s   # what validate and run say
    finally:
        subprocess.run([*cli, "lab", "down", "--dir", str(d / "lab")], env=env)
        shutil.rmtree(d, ignore_errors=True)
    total = time.monotonic() - t0
    result_line("demo", total_s=total, lab_up_s=t_lab, quick_suite_s=t_run, quick_suite_estimate_s=estimate,
                estimate_ratio=estimate / t_run, goal_s=300.0, ratio_to_goal=total / 300)
