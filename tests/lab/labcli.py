"""Running the `cephbench` CLI the way a user does, for every lab test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "cephbench.cli"]


# The small suite of test_run.py: one pool, rados bench write and seq at two sizes, and one round of OSD bench
# (5 tests)
TINY = """
name: tiny
pools:
  rep2: {type: replicated, size: 2, pg_num: 16}
workloads:
  - name: rados
    type: rados_bench
    pool: rep2
    modes: [write, seq]
    object_size: [64KiB, 1MiB]
    concurrency: 4
    duration: 2s
  - name: osd
    type: osd_bench
    total: 32MiB
    block_size: 4MiB
    repeat: 1
"""
# TINY's rados bench alone, for the tests that have no use for its OSD bench (9 `ceph tell` round trips at the
# default of 3 rounds; the rounds are test_osd_bench.py's)
TINY_RADOS = TINY[:TINY.index("  - name: osd")]


def run_cli(args, env=None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout)


def write_suite(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p
