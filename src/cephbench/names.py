"""Names cephbench makes from others' words: a host or client name as part of a file name."""

from __future__ import annotations

import re

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """Anything -> a file-name part: each run of other characters becomes one "_"."""
    return _SAFE.sub("_", text)
