"""A daemon's admin socket, spoken directly: what a lab daemon reports about itself, without a `ceph daemon`
process (~0.3 s of Python start-up each) and without needing the monitors to answer.

The protocol (src/common/admin_socket.cc): the client sends one JSON command ended by a NUL byte; the daemon
answers with a 4-byte big-endian length and that many bytes.
"""

from __future__ import annotations

import json
import socket
import struct
from pathlib import Path
from typing import Any


class AsokError(OSError):
    """The socket is not there (yet), refused, or the daemon answered with an error."""


def asok_command(path: Path, prefix: str, timeout_s: float = 5.0, **args: Any) -> Any:
    """Run one admin-socket command; its JSON answer (or text when it is not JSON)."""
    request = json.dumps({"prefix": prefix, "format": "json", **args}).encode() + b"\0"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(str(path))
            s.sendall(request)
            (length,) = struct.unpack(">I", _read_exactly(s, 4))
            body = _read_exactly(s, length)
    except (OSError, struct.error) as exc:
        raise AsokError(f"{path}: {exc}") from exc
    text = body.decode(errors="replace")
    if text.startswith("ERROR:"):
        raise AsokError(f"{path}: {prefix}: {text.strip()}")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _read_exactly(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise AsokError("admin socket closed mid-answer")
        buf += chunk
    return bytes(buf)
