"""Which object store an OSD's drive gets in a lab, and the file systems FileStore was checked on: what a lab's
shape may ask for (`--objectstore`/`--fs`, a suite's `objectstore`/`fs`), checked here apart from making the drives
(drives.py): `validate` reads a suite's shapes with this alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UserError
from .shapekeys import FLAGS, Names

OBJECTSTORES = ("bluestore", "filestore")
DEFAULT_FILESTORE_FS = "xfs"


@dataclass(frozen=True)
class FsRecipe:
    """How FileStore wants a file system made and mounted (ceph-disk's choices, which Ceph documented)."""

    mkfs: tuple[str, ...]
    mount_options: str
    package: str
    conf: tuple[str, ...] = ()          # ceph.conf lines (for [osd]) FileStore needs on it
    note: str = ""                      # what the user should know


FILESYSTEMS: dict[str, FsRecipe] = {
    # -i size=2048: inodes large enough to hold FileStore's xattrs inline.
    "xfs": FsRecipe(("mkfs.xfs", "-q", "-f", "-i", "size=2048"), "rw,noatime,inode64", "xfsprogs"),
    # ext4 xattrs hold at most ~4 KiB per inode: Ceph's default 2048-character object names do not fit, so
    # an OSD on ext4 refuses to start ("backend (filestore) is unable to support max object name[space] len").
    "ext4": FsRecipe(("mkfs.ext4", "-q", "-F"), "rw,noatime,user_xattr", "e2fsprogs",
                     ("osd max object name len = 256", "osd max object namespace len = 64"),
                     "ext4: object names are limited to 256 characters, as Ceph requires on ext4"),
    # Pacific refuses btrfs ("deprecated btrfs support is not enabled") unless it is enabled by name.
    "btrfs": FsRecipe(("mkfs.btrfs", "-q", "-f"), "rw,noatime,user_subvol_rm_allowed", "btrfs-progs",
                      ("enable experimental unrecoverable data corrupting features = btrfs",),
                      "btrfs: Pacific's FileStore runs on it only as an experimental feature, enabled for this lab"),
}
_NO_FS_WHY = {
    "zfs": "Debian's ceph-osd is built without ZFS support and this kernel has no zfs module",
    "ext3": "FileStore needs large xattrs and syncfs; use ext4",
    "ext2": "FileStore needs a journaling file system; use ext4",
}


@dataclass(frozen=True)
class StoreChoice:
    objectstore: str
    fs: str | None                      # None for BlueStore, which uses the raw drive
    notes: tuple[str, ...] = ()


def check_objectstore(objectstore: str, fs: str | None, names: Names = FLAGS) -> StoreChoice:
    """Refuse an object store / file system pair that cannot work here, in one line saying why.

    Checked with Ceph 16.2.15 on this kind of machine (`ceph-osd --mkfs` and a start up to `load_pgs`):
    FileStore works on xfs; on ext4 with shorter object names; on btrfs only as an experimental feature.
    """
    store, on = names["objectstore"], names["fs"]       # `lab up`'s flags, or a suite's keys
    if objectstore not in OBJECTSTORES:
        raise UserError(f"unknown object store {objectstore!r}", "write bluestore or filestore", where=store)
    if objectstore == "bluestore":
        if fs is not None:
            raise UserError(f"BlueStore uses its drive raw, with no file system, so {on} {fs} has no meaning",
                            f"use {store} filestore {on} ..., or leave out {on}", where=on)
        return StoreChoice("bluestore", None)
    fs = DEFAULT_FILESTORE_FS if fs is None else fs
    if fs not in FILESYSTEMS:
        why = _NO_FS_WHY.get(fs, "it is not one FileStore was checked on")
        raise UserError(f"FileStore cannot run on {fs} here: {why}", f"use {on} xfs, ext4 or btrfs", where=on)
    recipe = FILESYSTEMS[fs]
    return StoreChoice("filestore", fs, (recipe.note,) if recipe.note else ())
