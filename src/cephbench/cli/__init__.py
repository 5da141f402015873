"""The `cephbench` command: one module per command, each a thin function; the work is in the other packages.

`common` holds the root group (`main`), the consoles and what several commands share; its `COMMANDS` names each
command's module, imported only when that command runs, so a start-up pays for one command's imports alone.
"""

from __future__ import annotations

from .common import main

__all__ = ["main"]
