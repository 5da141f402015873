"""The local lab cluster: a real Ceph cluster on this machine, from Debian's packages."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lab import Lab, LabInfo
    from .labdir import default_lab_dir

__all__ = ["Lab", "LabInfo", "default_lab_dir"]


def __getattr__(name: str) -> object:
    # lab.py (daemons, namespaces, drives) is imported when a Lab is first asked for: the suite's lab shapes read
    # the lab's small modules (multihost, throttle, rates), and `validate` or `lab --help` need nothing more
    if name in ("Lab", "LabInfo"):
        from . import lab
        return getattr(lab, name)
    if name == "default_lab_dir":      # the lab directory's marker and lock (labdir.py): not a shape's either
        from .labdir import default_lab_dir
        return default_lab_dir
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
