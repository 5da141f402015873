"""Files the user names (suites, CBT configurations, tool output to import, ceph.conf): read only when they are
regular files of a sane size.

A FIFO blocks a read forever, /dev/zero never ends, and a directory or a socket is no file at all: each is one
line naming what it is, never a hang or a MemoryError.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from .errors import UserError
from .units import format_size

_KINDS = [(stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]


def _not_a_file(mode: int) -> str | None:
    """What a path is when it is not a regular file ("a FIFO (named pipe)"); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _name(what: str, path: Path) -> str:
    return f"{what} {path}" if what else str(path)


def check_regular(path: Path, what: str, hint: str, where: str = "") -> os.stat_result:
    """The stat of `path` when it is a regular file (symbolic links followed); else one line saying what it is."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{_name(what, path)} does not exist", hint, where=where) from None
    except OSError as exc:
        raise UserError(f"{_name(what, path)} cannot be read: {exc.strerror}", hint, where=where) from None
    kind = _not_a_file(st.st_mode)
    if kind is not None:
        raise UserError(f"{_name(what, path)} is {kind}, not a file", hint, where=where)
    return st


def read_bytes(path: Path, what: str, hint: str, max_bytes: int, where: str = "") -> bytes:
    """The content of a regular file of at most `max_bytes`; UserError (one line) for anything else.

    Opened without blocking and checked on the open descriptor: a path swapped for a FIFO after a look is still
    refused, not waited on."""
    check_regular(path, what, hint, where)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise UserError(f"{_name(what, path)} does not exist", hint, where=where) from None
        raise UserError(f"{_name(what, path)} cannot be read: {exc.strerror}", hint, where=where) from None
    with os.fdopen(fd, "rb") as f:
        kind = _not_a_file(os.fstat(fd).st_mode)
        if kind is not None:
            raise UserError(f"{_name(what, path)} is {kind}, not a file", hint, where=where)
        try:
            data = f.read(max_bytes + 1)
        except OSError as exc:
            raise UserError(f"{_name(what, path)} cannot be read: {exc.strerror}", hint, where=where) from None
    if len(data) > max_bytes:
        raise UserError(f"{_name(what, path)} is larger than {format_size(max_bytes)}, too large to be one", hint,
                        where=where)
    return data


# ceph.conf names its monitors one of these ways (Ceph reads " ", "_" and "-" in a key alike); without any, librados
# finds no monitor and says ENOENT, which reads as a missing key.
_MON_KEY = re.compile(r"^\s*mon[ _-]+(host|addr|dns[ _-]+srv[ _-]+name)\s*=", re.M | re.I)
MAX_CONF_BYTES = 1024**2


def check_ceph_conf(conf: Path, keyring: Path | None) -> None:
    """-c and --keyring as a client reads them: regular files, and a conf that names its monitors."""
    hint = "give the path of the cluster's ceph.conf"
    text = read_bytes(conf, "Ceph config", hint, MAX_CONF_BYTES, where="--conf").decode("utf-8", errors="replace")
    meaningful = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", ";", "["))]
    if not meaningful:
        raise UserError(f"Ceph config {conf} is empty", f"{hint}, with mon_host", where="--conf")
    if not _MON_KEY.search(text):
        raise UserError(f"Ceph config {conf} names no monitor (no mon_host line)",
                        "add mon_host = ADDRESS[,ADDRESS...] to its [global] section, or give another --conf",
                        where="--conf")
    if keyring is not None:
        check_regular(keyring, "keyring", "give a readable keyring", where="--keyring")
