"""The cephbench-loadgen binary: where it is, and what its exit codes mean."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...core.errors import UserError

TOOL = "cephbench-loadgen"
REPO_BINARY = Path(__file__).resolve().parents[4] / "build" / "bin" / TOOL
EXIT_USAGE, EXIT_INTERRUPTED = 2, 130


def find_loadgen() -> str:
    """build/bin/cephbench-loadgen of this checkout, else cephbench-loadgen on PATH."""
    if REPO_BINARY.is_file() and os.access(REPO_BINARY, os.X_OK):
        return str(REPO_BINARY)
    found = shutil.which(TOOL)
    if found:
        return found
    raise UserError(f"{TOOL} is not built (looked for {REPO_BINARY} and on PATH)",
                    "run scripts/setup.sh (it runs 'make loadgen'; needs Go)")
