"""A lab's daemons and tools run from a release's root (roots.py): the command that runs one there, and the
mount points the lab needs inside the root.

Each command gets a private mount namespace of its own (inroot.py) in which /proc, /sys, /dev and the lab
directory are bound into the root: nothing is mounted on the host, so nothing can be left mounted. What a lab
does leave in the shared root is the empty directories on its own path (the lab directory's mount point); `lab
up` records the ones it made in root.json before making them and `lab down` removes them, if still empty.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

RECORD_NAME = "root.json"
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


def make_mount_point(root: Path, lab_dir: Path, record: Path, also: tuple[str, ...] = ()) -> list[Path]:
    """Make the lab directory's mount point inside the root, and the directories `also` names there (sshd's
    privilege separation directory /run/sshd, which no service makes in a root); record first what will be made."""
    made = list(dict.fromkeys(p for d in (lab_dir, *(Path("/") / a for a in also)) for p in missing_dirs(root, d)))
    write_record(record, root, made)
    for p in made:
        p.mkdir(exist_ok=True)
    return made


def write_record(record: Path, root: Path, made: list[Path]) -> None:
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps({"root": str(root), "made_dirs": [str(p) for p in made]}, indent=1) + "\n")
    tmp.replace(record)


def remove_mount_points(record: Path) -> None:
    """Remove the directories the record says this lab made in the root, innermost first, each only while empty
    (another lab on the same path may use it); then the record."""
    try:
        data = json.loads(record.read_text())
        root = Path(data["root"])
        made = [Path(p) for p in data["made_dirs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return
    for p in reversed(made):
        # only directories inside that root, as a record names them (a forged one must not reach elsewhere)
        if root in p.parents and ".." not in p.parts and p.is_dir() and not os.path.ismount(p):
            try:
                p.rmdir()
            except OSError:
                pass
    record.unlink(missing_ok=True)
