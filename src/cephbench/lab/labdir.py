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
import re
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

# What the lab's daemons write into log/, by the names the lab gives them (conf.py: `log file = log/$cluster-$name.log`,
# `mon cluster log file = log/$cluster.log`; daemons.py: a daemon's stdout in log/<name>.out), its daemons being
# those lab.py, sshd.py and monitoring.py start. Anything else in log/ is not the lab's: a user's file left there is
# kept (a `lab down` once deleted one with the directory).
_DAEMON = r"(?:mon|mgr|osd|mds|client|sshd|node-exporter|process-exporter)\.[A-Za-z0-9_.-]+|prometheus|cadvisor"
_LAB_LOG = re.compile(rf"ceph-(?:{_DAEMON})\.log|ceph\.log|ceph\.audit\.log|(?:{_DAEMON})\.out")
_NOTHING = re.compile(r"(?!)")
# Entries whose contents the lab names one by one, each as (its files, its directories, whole trees): log/; keyring/
# (lab.py: ceph.<name>.keyring as conf.py's `keyring = keyring/$cluster.$name.keyring`, and the mon's mkfs keyring);
# crash/ (Ceph's crash reports, a directory per crash id, and posted/). The other entries' trees are the daemons' own
# data (Ceph's layout of mon/, osd/, ...) and the lab's run/ state.
_BY_NAME = {"log": (_LAB_LOG, _NOTHING),
            "keyring": (re.compile(r"ceph\.[A-Za-z0-9_.-]+\.keyring|mon-mkfs\.keyring"), _NOTHING),
            "crash": (_NOTHING, re.compile(r"posted|\d{4}-\d\d-\d\dT[\d:._]+Z_[0-9a-f-]+"))}


def _own(p: Path, files: re.Pattern, dirs: re.Pattern) -> bool:
    """One entry of such a directory is the lab's: a file or a directory by its name (a link never is)."""
    if p.is_symlink():
        return False
    return bool((dirs if p.is_dir() else files).fullmatch(p.name))


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
    """No lab and nothing else here (a run's claim to shape the lab, SHAPED, stays through the lab's rebuilds)."""
    return not d.exists() or (d.is_dir() and all(p.name == SHAPED for p in d.iterdir()))


# A run that shapes the lab (run/shapes.py) writes its claim here before the lab's first change, and removes it once
# the lab is back as the user had it: the proof `cephbench cleanup` of a killed run asks for before it takes a lab
# down or rebuilds it (a hand-edited ledger naming another lab's directory finds no claim of that run there). It is
# not one of the lab's entries: a rebuild (down, then up) leaves it.
SHAPED = ".cephbench-shaped"


def claim_shape(d: Path, run_id: str, run_dir: str, record: str) -> None:
    """`record`: the run's ledger entry for the lab (the build to put back), which a cleanup holds to this copy."""
    lab = read(d)
    tmp = d / f"{SHAPED}.tmp"
    tmp.write_text(json.dumps({"what": "cephbench lab shaped by a run", "run": run_id, "run_dir": run_dir,
                               "made_dir": bool(lab and lab.made_dir), "record": record}) + "\n")
    tmp.replace(d / SHAPED)


def shaped_by(d: Path) -> dict | None:
    """The claim of the run shaping the lab in `d` ({"run", "run_dir"}), or None."""
    try:
        data = json.loads((d / SHAPED).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("what") == "cephbench lab shaped by a run" else None


def release_shape(d: Path, run_id: str | None) -> None:
    """The run's claim removed once the lab is back (and the directory, when the lab it made there went too);
    `run_id` None: whichever run's (a cleanup checked it was one of the run's ids first)."""
    claim = shaped_by(d)
    if claim is None or run_id is not None and claim.get("run") != run_id:
        return
    (d / SHAPED).unlink(missing_ok=True)
    if d.is_dir() and not any(d.iterdir()) and claim.get("made_dir"):
        d.rmdir()


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
    own = {*marker.entries, MARKER, f"{MARKER}.tmp", SHAPED, f"{SHAPED}.tmp"}
    return sorted(p.name for p in marker.dir.iterdir() if p.name not in own)


def not_made(marker: Marker) -> list[str]:
    """Files inside the lab's own entries that the lab did not make (by the names it gives them), relative to the
    lab directory."""
    out = []
    for name, (files, dirs) in _BY_NAME.items():
        top = marker.dir / name
        if name not in marker.entries or top.is_symlink() or not top.is_dir():
            continue
        out.extend(f"{name}/{p.name}" for p in top.iterdir() if not _own(p, files, dirs))
    return sorted(out)


def check_removable(d: Path, inside: bool = False) -> Marker:
    """The marker of a lab directory whose contents are all the lab's (with `inside`, down to the files of the
    entries the lab names file by file); UserError naming what is not, else."""
    marker = read(d)
    if marker is None:
        raise UserError(f"{d} is not a cephbench lab directory (it has no {MARKER} marker of a lab made there): "
                        "nothing in it was touched", "give --dir the directory 'cephbench lab up' made",
                        where="--dir")
    other = foreign(marker) + (not_made(marker) if inside else [])
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


def _remove_named(top: Path, files: re.Pattern, dirs: re.Pattern) -> None:
    """What of `top` the lab names, then `top` itself when nothing else is in it."""
    for p in list(top.iterdir()):
        if _own(p, files, dirs):
            if p.is_dir():
                _rmtree(p)
            else:
                p.unlink(missing_ok=True)
    try:
        top.rmdir()
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
            raise


def remove(marker: Marker) -> list[str]:
    """The lab's own entries, then its marker, then the directory when the lab made it (and it is empty). Returns
    what was left because the lab did not make it (a user's file in log/), relative to the directory; the marker
    goes all the same: what is left is the user's, and the directory is no longer a lab."""
    left = not_made(marker)
    for name in marker.entries:
        p = marker.dir / name
        if p.is_dir() and not p.is_symlink():
            if name in _BY_NAME:
                _remove_named(p, *_BY_NAME[name])
            else:
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
    return left


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
