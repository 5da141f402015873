"""Running the `cephbench` CLI the way a user does, for every lab test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "cephbench.cli"]


def run_cli(args, env=None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout)


def write_suite(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p
