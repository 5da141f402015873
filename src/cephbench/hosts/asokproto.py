"""A Ceph daemon's admin socket, spoken directly: the one client of its protocol (src/common/admin_socket.cc).

The client sends one JSON command ended by a NUL byte; the daemon answers with a 4-byte big-endian length and
that many bytes. Standard library only (Python 3.6 and up), and nothing else at module level: evidence/asok.py
ships this file's text as part of the script it runs over ssh on each OSD host, so the socket is read there by this
same code.
"""

import json
import socket
import struct
from os import PathLike  # noqa: F401 - named by an annotation


class AsokError(OSError):
    """The socket is not there (yet), refused, closed mid-answer, or the daemon answered with an error."""


def ask(path: "str | PathLike[str]", prefix: str, timeout_s: float = 5.0, **args: object) -> str:
    """One admin-socket command's answer, as text (JSON for the commands cephbench sends); AsokError otherwise."""
    return ask_peer(path, prefix, timeout_s, **args)[0]


def ask_peer(path: "str | PathLike[str]", prefix: str, timeout_s: float = 5.0, **args: object) -> "tuple":
    """ask's answer and the PID of the process that answered (SO_PEERCRED: the daemon that listens on the socket,
    as this host's kernel numbers it; None where the kernel does not say)."""
    request = json.dumps({"prefix": prefix, "format": "json", **args}).encode() + b"\0"
    pid = None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(str(path))
            if hasattr(socket, "SO_PEERCRED"):
                pid = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                       struct.calcsize("3i")))[0] or None
            s.sendall(request)
            (length,) = struct.unpack(">I", _read_exactly(s, 4))
            text = _read_exactly(s, length).decode(errors="replace")
    except (OSError, struct.error) as exc:
        raise AsokError(f"{path}: {exc}") from exc
    if text.startswith("ERROR:"):
        raise AsokError(f"{path}: {prefix}: {text.strip()}")
    return text, pid


def _read_exactly(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise AsokError("admin socket closed mid-answer")
        buf += chunk
    return bytes(buf)
