"""Every file cephbench reads from a user or a run directory, and every file it writes: regular files only.

Reading (suites, CBT configurations, tool output to import, ceph.conf, a run directory's run.json and results.jsonl):
a FIFO blocks a read forever, /dev/zero never ends, and a directory or a socket is no file at all: each is one line
naming what it is, never a hang or a MemoryError; a regular file larger than its bound is refused before it is read.

Writing (`write_file`, the one writer of every output: `--out` files, reports, exports, run.json, raw outputs; and
`append_file`, results.jsonl's appends; `writable`, for the history catalog that sqlite itself writes): a new path
or a regular file only, never a device, FIFO or socket, and never through a symbolic link that leads out of the
directory the file belongs in. A whole file is written beside its path and renamed over it, so a reader never sees
half of one, and a rename replaces only a regular file: `--out /dev/full` once put a CSV file where the machine's
/dev/full was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path
from typing import IO, Iterator

from .errors import UserError
from .units import format_size

_KINDS = [(stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]


def not_a_file(mode: int) -> str | None:
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
    kind = not_a_file(st.st_mode)
    if kind is not None:
        raise UserError(f"{_name(what, path)} is {kind}, not a file", hint, where=where)
    return st


@contextlib.contextmanager
def open_read(path: Path, what: str, hint: str, max_bytes: int, where: str = "") -> Iterator[IO[bytes]]:
    """A regular file of at most `max_bytes`, open for reading (without blocking: a FIFO put in its place after the
    look is still refused); a reader of lines stops at the bound even if the file grows meanwhile."""
    check_regular(path, what, hint, where)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise UserError(f"{_name(what, path)} does not exist", hint, where=where) from None
        raise UserError(f"{_name(what, path)} cannot be read: {exc.strerror}", hint, where=where) from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        kind = not_a_file(st.st_mode)
        if kind is not None:
            raise UserError(f"{_name(what, path)} is {kind}, not a file", hint, where=where)
        if st.st_size > max_bytes:
            raise UserError(f"{_name(what, path)} is {format_size(st.st_size)}, larger than {format_size(max_bytes)}:"
                            " too large to be one", hint, where=where)
        yield f


def read_lines(f: IO[bytes], max_line: int, max_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) of an open file, each at most `max_line` bytes (None for a longer one, skipped to its
    end) and `max_bytes` in all: a sparse file of zeros has no newline to stop a plain readline."""
    n = total = 0
    while total <= max_bytes:
        line = f.readline(max_line + 1)
        if not line:
            return
        n += 1
        total += len(line)
        if len(line) <= max_line or line.endswith(b"\n"):
            yield n, line
            continue
        while total <= max_bytes:       # the rest of an over-long line, a MiB at a time (not a copy of it)
            chunk = f.read(1 << 20)
            end = chunk.find(b"\n")
            if end >= 0:
                f.seek(end + 1 - len(chunk), os.SEEK_CUR)
                total += end + 1
                break
            if not chunk:
                break
            total += len(chunk)
        yield n, None


# ---- writing ---------------------------------------------------------------------------------------------------

def _refuse(path: Path, why: str, hint: str, where: str) -> UserError:
    return UserError(f"{path} {why}", hint, where=where)


def _inside(p: Path, base: Path) -> bool:
    return p == base or base in p.parents


def writable(path: Path, hint: str, where: str = "", within: Path | None = None) -> Path:
    """The path to write for `path`: itself when it is new or a regular file; the file a symbolic link names when
    that stays inside `within` (the run directory a file belongs in; for a path the user names, the directory that
    holds it) and is new or a regular file. Anything else is one line naming what it is.

    A path inside `within` whose directories lead out of it (a run directory's raw/ made a link to /etc) is refused
    too: cephbench writes only where it was asked to."""
    path = Path(path)
    base = Path(os.path.realpath(within if within is not None else path.parent))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _refuse(path, f"cannot be written: {exc.strerror}", hint, where) from None
    target = path
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)          # what the link leads to, first: /dev/stdout is a pipe's or a terminal's
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise _refuse(path, f"cannot be written: {exc.strerror}", hint, where) from None
        kind = None if st is None else not_a_file(st.st_mode)
        if kind is not None:
            raise _refuse(path, f"is a symbolic link to {kind}, not to a file: not written", hint, where)
        target = Path(os.path.realpath(path))
        if not _inside(target, base):
            raise _refuse(path, f"is a symbolic link to {target}, outside {base}: not written", hint, where)
    if st is not None:
        kind = not_a_file(st.st_mode)
        if kind is not None:
            raise _refuse(path, f"is {kind}, not a file: not written", hint, where)
    parent = Path(os.path.realpath(target.parent))
    if within is not None and not _inside(parent, base):
        raise _refuse(path, f"leads to {parent}, outside {base}: not written", hint, where)
    if not parent.is_dir():
        why = "does not exist" if not os.path.lexists(target.parent) else "is not a directory"
        raise _refuse(path, f"cannot be written: its directory {target.parent} {why}", hint, where)
    return target


def write_file(path: Path, data: str | bytes, hint: str, where: str = "", within: Path | None = None,
               sync: bool = True) -> Path:
    """The one writer of a whole file: checked by `writable`, written to a new temporary file beside it (a name
    no one else holds: O_EXCL), then renamed over it, only while it is still a regular file or absent. Returns
    the path written. Whatever fails is one line and the temporary file is gone."""
    target = writable(path, hint, where, within)
    body = data.encode("utf-8") if isinstance(data, str) else data
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        old_mode = None
    tmp, fd = None, -1
    try:
        for _ in range(100):
            tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
                break
            except FileExistsError:
                continue
        with os.fdopen(fd, "wb") as f:
            fd = -1
            if old_mode is not None:
                os.fchmod(f.fileno(), old_mode)
            f.write(body)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        writable(target, hint, where, within)      # still new or a regular file: a swap meanwhile is refused
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise _refuse(path, f"cannot be written: {exc.strerror}", hint, where) from None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return target


def _open_file(path: Path, flags: int, hint: str, where: str, within: Path | None) -> int:
    """`path` opened for writing with `flags` besides, never through a last link nor blocking on a FIFO, and refused
    unless the open descriptor is a regular file's; its descriptor."""
    target = writable(path, hint, where, within)
    try:
        fd = os.open(target, os.O_WRONLY | flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise _refuse(path, f"cannot be written: {exc.strerror}", hint, where) from None
    kind = not_a_file(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise _refuse(path, f"is {kind}, not a file: not written", hint, where)
    return fd


def open_output(path: Path, hint: str, where: str = "", within: Path | None = None) -> IO[bytes]:
    """A new or regular file, emptied and open for a stream that cannot be one whole text (a tool's output while it
    runs, handed to it as its stdout); opened without following a last link or blocking, checked on the open
    descriptor."""
    fd = _open_file(path, os.O_CREAT, hint, where, within)
    try:
        os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb")


def append_file(path: Path, data: bytes, hint: str, where: str = "", within: Path | None = None) -> None:
    """Append to a new or regular file (results.jsonl, a line at a time, synced: nothing lost on a crash); opened
    without following a last link or blocking, and checked on the open descriptor."""
    fd = _open_file(path, os.O_APPEND | os.O_CREAT, hint, where, within)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        raise _refuse(path, f"cannot be written: {exc.strerror}", hint, where) from None
    finally:
        os.close(fd)


def read_bytes(path: Path, what: str, hint: str, max_bytes: int, where: str = "") -> bytes:
    """The content of a regular file of at most `max_bytes`; UserError (one line) for anything else."""
    with open_read(path, what, hint, max_bytes, where) as f:
        try:
            data = f.read(max_bytes + 1)
        except OSError as exc:
            raise UserError(f"{_name(what, path)} cannot be read: {exc.strerror}", hint, where=where) from None
    if len(data) > max_bytes:      # grew since its size was looked at
        raise UserError(f"{_name(what, path)} is larger than {format_size(max_bytes)}, too large to be one", hint,
                        where=where)
    return data


# A tool's output read back (fio's JSON and logs, rbd bench's, loadgen's, a host's watch): far above any run's, far
# below what would exhaust memory when a tool runs away or a file there was replaced.
MAX_TOOL_OUTPUT_BYTES = 1024**3


def read_output(path: Path) -> str:
    """A tool's output as text: a regular file of a bounded size (UserError, one line, else); a missing one is
    FileNotFoundError, as a plain read's, for the callers that wait for it to appear."""
    if not os.path.lexists(path):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
    return read_bytes(path, "tool output", "give the run a directory of regular files", MAX_TOOL_OUTPUT_BYTES
                      ).decode("utf-8", errors="replace")


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
        # librados reads it: a regular file of a keyring's size (its secrets are not read here)
        st = check_regular(keyring, "keyring", "give a readable keyring", where="--keyring")
        if st.st_size > MAX_CONF_BYTES:
            raise UserError(f"keyring {keyring} is {format_size(st.st_size)}, larger than "
                            f"{format_size(MAX_CONF_BYTES)}: too large to be one", "give the cluster's keyring",
                            where="--keyring")
