"""The `cephbench` command: one module per command, each a thin function; the work is in the other packages.

`common` holds the root group (`main`), the consoles and what several commands share; importing a command's
module adds it to `main`.
"""

from __future__ import annotations

from . import (baseline, cleanup, compare, export, history, import_, lab, report, run, show, suite,  # noqa: F401
               validate)
from .common import main

__all__ = ["main"]
