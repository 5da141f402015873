"""A lab's daemons and tools run from a release's root (roots.py): the command that runs one there, and the
mount points the lab needs inside the root.

Each command gets a private mount namespace of its own (inroot.py) in which /proc, /sys, /dev and the lab
directory are bound into the root, and /run is a tmpfs of its own: nothing is mounted on the host, so nothing can
be left mounted. What a lab does leave in the shared root is the empty directories on its own path (the lab
directory's mount point). Several labs may run from one root at once, their paths sharing parents: which lab
needs each directory a lab made is kept beside the root (LEDGER, under a lock), written before anything is made;
`lab down` removes the directories no running lab needs any more, if still empty.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from ..core.userfiles import write_file

RECORD_NAME = "root.json"
LEDGER = "lab-dirs.json"
_HINT = "remove what is there instead of a file (cephbench keeps its lab records there)"
HELPER = Path(__file__).with_name("inroot.py")


# where a root's tools are: what a session's PATH would search there
_BIN_DIRS = ("usr/local/bin", "usr/bin", "bin", "usr/sbin", "sbin")


@dataclass(frozen=True)
class InRoot:
    root: Path          # the root file system of the release
    lab_dir: Path
    release: str = ""   # the release the root is of (what a note names it by)

    def argv(self, argv: Sequence[object]) -> list[str]:
        """`argv` run inside the root, in the same process (its PID is the daemon's)."""
        return ["unshare", "--mount", "--propagation", "private", sys.executable, "-I", str(HELPER),
                str(self.root), str(self.lab_dir), "--", *map(str, argv)]

    def has(self, tool: str) -> bool:
        """Whether the root has `tool` (a link counts: the root's own links point inside it, not here)."""
        return any(os.path.lexists(self.root / d / tool) for d in _BIN_DIRS)


def missing_dirs(root: Path, lab_dir: Path) -> list[Path]:
    """The directories of the lab directory's path that the root lacks, outermost first (what `lab up` makes)."""
    out: list[Path] = []
    inside = root / lab_dir.absolute().relative_to("/")
    for p in [inside, *inside.parents]:
        if p == root or root not in p.parents:
            break
        if not p.exists():
            out.append(p)
    return out[::-1]


def make_mount_point(root: Path, lab_dir: Path, record: Path) -> list[Path]:
    """Make the lab directory's mount point inside the root; claim, in the ledger, each directory on its path that
    a lab made (this one or another still running), before any is made. The directories this lab made."""
    lab = str(lab_dir.absolute())
    with _ledger(root) as dirs:
        _forget_gone_labs(root, dirs)
        made = missing_dirs(root, lab_dir)
        write_record(record, root, made)
        for p in _lab_path(root, lab_dir):
            if p in made or str(p) in dirs:
                dirs.setdefault(str(p), [])
                if lab not in dirs[str(p)]:
                    dirs[str(p)].append(lab)
        _write_ledger(root, dirs)
        for p in made:
            p.mkdir(exist_ok=True)
    return made


def write_record(record: Path, root: Path, made: list[Path]) -> None:
    write_file(record, json.dumps({"root": str(root), "made_dirs": [str(p) for p in made]}, indent=1) + "\n",
               _HINT, within=record.parent)


def remove_mount_points(record: Path) -> None:
    """Give up this lab's claims on the root's directories and remove those no lab needs any more, innermost
    first, each only while empty; then the record. A record that names no root of ours touches nothing."""
    try:
        data = json.loads(record.read_text())
        root, made = Path(data["root"]), [str(p) for p in data.get("made_dirs", [])]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return
    if _ours(root):
        lab = str(record.parent.absolute())
        with _ledger(root) as dirs:
            claimed = [labs for labs in dirs.values() if lab in labs]
            for labs in claimed:
                labs.remove(lab)
            if not claimed:
                # a lab started before the ledger: what its record says it made, unless a lab claims it now, and
                # only on its own path (a record naming other directories of the root is not believed)
                own = {str(p) for p in _lab_path(root, record.parent)}
                dirs.update({p: [] for p in made if p in own and p not in dirs})
            _forget_gone_labs(root, dirs)
            _write_ledger(root, dirs)
    record.unlink(missing_ok=True)


def ledger_file(release_dir: Path) -> Path:
    """The ledger of a release's root (beside the root, in the release's directory, which is what is locked)."""
    return release_dir / LEDGER


def _lab_path(root: Path, lab_dir: Path) -> list[Path]:
    """The directories inside the root from its top down to the lab directory's mount point."""
    inside = root / lab_dir.absolute().relative_to("/")
    return [p for p in [*reversed(inside.parents), inside] if root in p.parents]


def _ours(root: Path) -> bool:
    # a root cephbench built: its manifest beside it (a forged record must not reach a ledger elsewhere)
    return root.name == "root" and (root.parent / "manifest.json").is_file() and ".." not in root.parts


@contextlib.contextmanager
def _ledger(root: Path) -> Iterator[dict[str, list[str]]]:
    # the lock is on the release's directory itself: no lock file to leave behind or to be swapped for a link
    fd = os.open(root.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            data = json.loads(ledger_file(root.parent).read_text())["dirs"]
            dirs = {str(k): [str(x) for x in v] for k, v in data.items() if isinstance(v, list)}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            dirs = {}
        yield dirs
    finally:
        os.close(fd)


def _write_ledger(root: Path, dirs: dict[str, list[str]]) -> None:
    write_file(ledger_file(root.parent), json.dumps({"root": str(root), "dirs": dirs}, indent=1) + "\n", _HINT,
               within=root.parent)


def _forget_gone_labs(root: Path, dirs: dict[str, list[str]]) -> None:
    """Drop the claims of labs whose directory is gone (removed without `lab down`), then remove, innermost first,
    the directories nobody claims: only inside the root, only while empty, never a mount point."""
    for path in list(dirs):
        dirs[path] = [lab for lab in dirs[path] if os.path.isdir(lab)]
    for path in sorted((p for p, labs in dirs.items() if not labs), key=lambda p: -len(Path(p).parts)):
        p = Path(path)
        if root in p.parents and ".." not in p.parts and p.is_dir() and not os.path.ismount(p):
            try:
                p.rmdir()
            except OSError:
                pass            # something else was put there: it is no longer the lab's to remove
        del dirs[path]
