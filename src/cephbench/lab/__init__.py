"""The local lab cluster: a real Ceph cluster on this machine, from Debian's packages."""

from .lab import Lab, LabInfo, default_lab_dir

__all__ = ["Lab", "LabInfo", "default_lab_dir"]
