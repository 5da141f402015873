"""A daemon's admin socket: what a lab daemon reports about itself, without a `ceph daemon` process (~0.3 s of
Python start-up each) and without needing the monitors to answer. The protocol's one client is
hosts/asokproto.py (the OSD counters' readings use it too)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..hosts.asokproto import AsokError, ask

__all__ = ["AsokError", "asok_command"]


def asok_command(path: Path, prefix: str, timeout_s: float = 5.0, **args: Any) -> Any:
    """Run one admin-socket command; its JSON answer (or text when it is not JSON)."""
    text = ask(path, prefix, timeout_s, **args)
    try:
        return json.loads(text)
    except ValueError:
        return text
