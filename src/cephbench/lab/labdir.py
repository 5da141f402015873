"""The proof that a directory is a lab cephbench made, and the removal of exactly what that lab made in it.

`lab up` writes the marker first, into a directory that did not exist or was empty, before anything else: it names
the directory, every top-level entry a lab may make there, and whether the directory itself was made. Removal
deletes those entries only, refuses (removing nothing) a directory that holds anything else, and deletes the marker
last, so that a removal cut short by a signal or kill -9 still leaves a directory that proves what it is.

While `lab up` makes the lab it holds an flock on the marker (the kernel drops it when the process dies, however it
dies): a marker that says "not started" and is not locked is a start that was killed, whose leftovers the next
`lab up` removes.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UserError

MARKER = ".cephbench-lab"

# every top-level name a lab makes in its directory (lab.py, drives.py, netns.py, sshd.py), with the temporary
# names its records are written under before they replace the record
ENTRIES = ("ceph.conf", "lab.json", "lab.tmp", "keyring", "mon", "mgr", "osd", "rgw", "run", "log", "crash",
           "rgw-user.json", "netns.json", "netns.json.tmp", "drives.json", "drives.json.tmp", "drives", "ssh",
           "hosts", "root.json", "root.tmp", "monitoring")
_MAGIC = "cephbench lab directory"


def default_lab_dir() -> Path:
    """Where a lab lives when no --dir names one."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cephbench" / "lab"


@dataclass(frozen=True)
class Marker:
    dir: Path
    made_dir: bool
    entries: tuple[str, ...]
    started: bool           # `lab up` finished: the lab was whole once

    @property
    def path(self) -> Path:
        return self.dir / MARKER

    def to_json(self) -> dict:
        return {"what": _MAGIC, "dir": str(self.dir), "made_dir": self.made_dir, "entries": list(self.entries),
                "started": self.started}

    def write(self) -> None:
        tmp = self.dir / f"{MARKER}.tmp"
        tmp.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        tmp.replace(self.path)


def read(d: Path) -> Marker | None:
    """The marker of directory `d`, when it proves that `d` is a lab cephbench made there; else None."""
    try:
        data = json.loads((d / MARKER).read_text())
        if data.get("what") != _MAGIC or Path(data["dir"]) != d.absolute():
            return None
        # only names a lab makes: a marker's entries are removed, and a forged one could name "../anything"
        return Marker(d.absolute(), bool(data["made_dir"]), tuple(e for e in map(str, data["entries"]) if e in ENTRIES),
                      bool(data["started"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def is_empty(d: Path) -> bool:
    return not d.exists() or (d.is_dir() and not any(d.iterdir()))


def claim(d: Path) -> Marker:
    """Make `d` a lab directory: it must not exist, or be empty. The marker is written before anything else."""
    if not is_empty(d):
        raise UserError(f"{d} is not empty and is not a cephbench lab directory: nothing in it was touched",
                        "choose another --dir, or an empty one", where="--dir")
    made = not d.exists()
    try:
        d.mkdir(parents=True, exist_ok=True)
        marker = Marker(d.absolute(), made, ENTRIES, started=False)
        marker.write()
    except OSError as exc:
        raise UserError(f"cannot make the lab directory {d}: {exc.strerror}",
                        "give --dir a directory you may write", where="--dir") from None
    return marker


def foreign(marker: Marker) -> list[str]:
    """What the directory holds that the lab did not make (a user's files)."""
    own = {*marker.entries, MARKER, f"{MARKER}.tmp"}
    return sorted(p.name for p in marker.dir.iterdir() if p.name not in own)


def check_removable(d: Path) -> Marker:
    """The marker of a lab directory whose contents are all the lab's; UserError naming what is not, else."""
    marker = read(d)
    if marker is None:
        raise UserError(f"{d} is not a cephbench lab directory (it has no {MARKER} marker of a lab made there): "
                        "nothing in it was touched", "give --dir the directory 'cephbench lab up' made",
                        where="--dir")
    other = foreign(marker)
    if other:
        shown = ", ".join(other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
        raise UserError(f"{d} holds files the lab did not make ({shown}): nothing in it was touched",
                        "move them out of the lab directory, then run it again", where="--dir")
    return marker


def _rmtree(p: Path, tries: int = 5) -> None:
    """rmtree of one of the lab's own directories, where an entry may vanish or appear while it runs: a killed
    start's OSD mkfs was still renaming its files (CI: `ceph_version_when_created.tmp` gone between the listing
    and the unlink), so a vanished entry is fine and a directory that filled again is tried once more."""
    def gone_is_fine(func, path, exc_info) -> None:
        if not isinstance(exc_info[1], FileNotFoundError):
            raise exc_info[1]
    for attempt in range(tries):
        try:
            shutil.rmtree(p, onerror=gone_is_fine)
            return
        except OSError:
            if attempt == tries - 1:
                raise
            time.sleep(0.2)


def remove(marker: Marker) -> None:
    """The lab's own entries, then its marker, then the directory when the lab made it (and it is empty)."""
    for name in marker.entries:
        p = marker.dir / name
        if p.is_dir() and not p.is_symlink():
            _rmtree(p)
        else:
            p.unlink(missing_ok=True)
    Path(f"{marker.path}.tmp").unlink(missing_ok=True)
    marker.path.unlink(missing_ok=True)
    if marker.made_dir:
        try:
            marker.dir.rmdir()
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.ENOENT):
                raise


class StartLock:
    """Held by the process making the lab, for as long as it does (flock on the marker)."""

    def __init__(self, marker: Marker) -> None:
        self._fd: int | None = os.open(marker.path, os.O_RDONLY | os.O_CLOEXEC)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def starting_elsewhere(marker: Marker) -> bool:
    """Another live process is making this lab right now."""
    try:
        fd = os.open(marker.path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
