"""The multi-host lab's drives: a sparse file per OSD drive, attached to a loop device, and its cgroups.

Each OSD has a data drive and, with --db-device, a second drive for BlueStore's WAL/DB (FileStore's journal).
A drive is a sparse file under `<lab>/drives/` attached to a loop device, so that blkio can throttle it alone.
When loop devices cannot be used (no /dev/loop-control, losetup fails) the OSD gets the plain file, and the
record says so and why: a throttle then applies to the disk holding the file, i.e. to all of that OSD's I/O.

Loop devices are attached with direct I/O on (`--direct-io=on`): without it the loop driver reads and writes
its backing file through the host's page cache, so an OSD's O_DIRECT reads came from memory (4.3 GB/s here
against 0.7 GB/s with it on) and a "cold" read was not cold, and the data was cached twice. With it on, the
drive behaves as today's file-backed OSDs do (BlueStore's O_DIRECT on a file). Throttling works the same either
way: a direct dd through a 20 MiB/s limit ran at 21.4 MB/s (20.4 MiB/s) with it on and off.

For FileStore the data drive gets a file system (xfs, ext4 or btrfs) mounted on the OSD's data directory.

Like netns.py: everything is planned in pure code and written to `drives.json` before anything is made;
`destroy` works from that record (a loop device attached but not yet recorded is found with `losetup -j`),
skips what is gone, and raises naming what it could not remove. A create that fails removes what it made.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping, Sequence

from ..core.errors import OperationFailed, UserError
from ..hosts.local import CommandResult, LocalHost
from . import cgroups, monitoring
from .cpulimit import PERIOD_US
# the stores a shape may ask for are checked in stores.py (validate reads shapes without this module); named here too
from .stores import DEFAULT_FILESTORE_FS, FILESYSTEMS, OBJECTSTORES, FsRecipe, StoreChoice, check_objectstore  # noqa: F401
from .throttle import DriveLimit, DriveRef, ThrottleSpec

log = logging.getLogger(__name__)

RECORD_NAME = "drives.json"
LOOP_CONTROL = Path("/dev/loop-control")
COMMAND_TIMEOUT_S = 60.0
FILESTORE_JOURNAL_BYTES = 1024**3       # the journal file in the OSD's data dir, when there is no DB device


def objectstore_conf(choice: StoreChoice, journal_size_bytes: int = FILESTORE_JOURNAL_BYTES) -> str:
    """Lines for ceph.conf's [osd] section that the object store and file system need (empty for BlueStore).

    FileStore's journal is a file `journal` in the OSD's data dir unless drive_conf names a DB device.
    """
    if choice.objectstore == "bluestore":
        return ""
    lines = ["osd objectstore = filestore",
             # in MiB; used for a journal file (a journal on a device takes the whole device, drive_conf)
             f"osd journal size = {max(1, journal_size_bytes // 2**20)}",
             *FILESYSTEMS[choice.fs or DEFAULT_FILESTORE_FS].conf]
    return "\n".join(lines) + "\n"


# ---- the record ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Drive:
    """One drive of one OSD, as planned and then as made (device, kind, throttle target filled in)."""

    osd: int
    role: str                           # "data" or "db"
    backing: str                        # the sparse file
    size_bytes: int
    cgroup: str                         # the OSD's blkio group
    fs: str | None = None               # FileStore's data drive: the file system made on it
    mount: str | None = None            # ... and where it is mounted (the OSD's data dir)
    kind: str | None = None             # "loop" or "file", once made
    device: str | None = None           # /dev/loopN
    dev: str | None = None              # MAJ:MIN the blkio rules name (the loop device, or the file's disk)
    direct_io: bool | None = None
    limit: DriveLimit | None = None     # the throttle set now, None for none

    @property
    def ref(self) -> DriveRef:
        return DriveRef(self.osd, self.role)

    @property
    def path(self) -> str:
        """What the OSD is given: the loop device, or the plain file."""
        return self.device if self.kind == "loop" and self.device else self.backing

    def to_json(self) -> dict:
        d = {k: getattr(self, k) for k in ("osd", "role", "backing", "size_bytes", "cgroup", "fs", "mount", "kind",
                                           "device", "dev", "direct_io")}
        d["limit"] = self.limit.to_json() if self.limit else None
        return d

    @classmethod
    def from_json(cls, d: dict) -> Drive:
        return cls(**{**d, "limit": DriveLimit.from_json(d["limit"]) if d.get("limit") else None})


@dataclass
class LabDrives:
    """The record of a lab's drives and cgroups (`<lab>/drives.json`), saved before each thing is made."""

    lab_id: str
    drives: list[Drive]
    cgroups: list[str]                  # every group folder, parents before children
    hosts: dict[str, str] = field(default_factory=dict)     # host -> its cpuacct group
    fallback: str | None = None         # why drives are plain files instead of loop devices
    path: Path | None = None            # where the record is kept (not part of it)
    # a daemon's CPU limit ("osd.2") or a host's neighbour ("load.h2") -> its cpu group, and the quota it holds
    cpu: dict[str, str] = field(default_factory=dict)
    cpu_quota_us: dict[str, int] = field(default_factory=dict)

    def drive(self, ref: DriveRef) -> Drive:
        for d in self.drives:
            if d.ref == ref:
                return d
        raise KeyError(str(ref))

    def osd_cgroups(self, osd: int, host: str | None = None) -> list[Path]:
        """The groups an OSD's process starts in (cgroups.join_argv): its blkio group and its host's cpuacct."""
        groups = [Path(self.drive(DriveRef(osd)).cgroup)]
        groups += [Path(self.cpu[f"osd.{osd}"])] if f"osd.{osd}" in self.cpu else []
        return groups + ([Path(self.hosts[host])] if host is not None else [])

    def host_cgroups(self, host: str) -> list[Path]:
        return [Path(self.hosts[host])]

    def load_cgroups(self, host: str) -> list[Path]:
        """The groups a host's neighbour (--host-load) runs in: its quota's and its host's cpuacct."""
        return [Path(self.cpu[f"load.{host}"]), Path(self.hosts[host])]

    def replace_drive(self, i: int, drive: Drive) -> None:
        """Put the made `drive` in place of the planned one, and save."""
        self.drives[i] = drive
        self.save()

    def to_json(self) -> dict:
        return {"lab_id": self.lab_id, "drives": [d.to_json() for d in self.drives], "cgroups": self.cgroups,
                "hosts": self.hosts, "fallback": self.fallback, "cpu": self.cpu, "cpu_quota_us": self.cpu_quota_us}

    @classmethod
    def from_json(cls, d: dict, path: Path | None = None) -> LabDrives:
        return cls(d["lab_id"], [Drive.from_json(x) for x in d["drives"]], list(d["cgroups"]), dict(d["hosts"]),
                   d.get("fallback"), path, dict(d.get("cpu") or {}), dict(d.get("cpu_quota_us") or {}))

    def save(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        tmp.replace(self.path)

    @classmethod
    def load(cls, path: Path) -> LabDrives:
        return cls.from_json(json.loads(path.read_text()), path)


# ---- planning (pure) ----------------------------------------------------------------------------

def plan(lab_id: str, lab_dir: Path, osds: Mapping[int, str | None], data_size_bytes: int,
         db_size_bytes: int | None = None, fs: str | None = None, hosts: Sequence[str] = (),
         blkio_root: Path = cgroups.BLKIO_ROOT, cpuacct_root: Path = cgroups.CPUACCT_ROOT,
         cpu_quota_us: Mapping[str, int] | None = None, cpu_root: Path = cgroups.CPU_ROOT) -> LabDrives:
    """The drives of OSDs `osds` (id -> host, None on a one-host lab) and the groups of them and of `hosts`.

    Backing files are `<lab>/drives/osd.<N>.data.img` (and `.db.img`); a file system is mounted on the OSD's
    data dir `<lab>/osd/<N>`. Client hosts without OSDs go in `hosts` to get a cpuacct group too. `cpu_quota_us`
    (`osd.2` or `load.h2` -> its quota per cpulimit.PERIOD_US) adds a cpu group each.
    """
    lab_dir = lab_dir.resolve()          # losetup reports backing files by their real path
    drives_dir = lab_dir / "drives"
    drives: list[Drive] = []
    for osd in sorted(osds):
        group = str(cgroups.osd_blkio(lab_id, osd, blkio_root))
        drives.append(Drive(osd, "data", str(drives_dir / f"osd.{osd}.data.img"), data_size_bytes, group,
                            fs, str(lab_dir / "osd" / str(osd)) if fs else None))
        if db_size_bytes:
            drives.append(Drive(osd, "db", str(drives_dir / f"osd.{osd}.db.img"), db_size_bytes, group))
    all_hosts = sorted({h for h in osds.values() if h is not None} | set(hosts), key=_host_order)
    host_groups = {h: str(cgroups.host_cpuacct(lab_id, h, cpuacct_root)) for h in all_hosts}
    groups = [str(blkio_root / cgroups.lab_group(lab_id))] if drives else []
    groups += sorted({d.cgroup for d in drives}, key=lambda g: int(g.rsplit(".", 1)[1]))
    if host_groups:
        groups += [str(cpuacct_root / cgroups.lab_group(lab_id)), *host_groups.values()]
    quotas = dict(sorted((cpu_quota_us or {}).items()))
    cpu = {name: str(cgroups.cpu_group(lab_id, name, cpu_root)) for name in quotas}
    if cpu:
        groups += [str(cpu_root / cgroups.lab_group(lab_id)), *cpu.values()]
    return LabDrives(lab_id, drives, groups, host_groups, cpu=cpu, cpu_quota_us=quotas)


def _host_order(name: str) -> tuple[str, int]:
    digits = name.lstrip("abcdefghijklmnopqrstuvwxyz")
    return (name[: len(name) - len(digits)], int(digits) if digits.isdigit() else 0)


def drive_conf(record: LabDrives, osd: int, choice: StoreChoice) -> str:
    """The `[osd.N]` section naming the OSD's drives (its data dir itself is the lab's `osd data`)."""
    data = record.drive(DriveRef(osd, "data"))
    try:
        db: Drive | None = record.drive(DriveRef(osd, "db"))
    except KeyError:
        db = None
    lines = [f"[osd.{osd}]"]
    if choice.objectstore == "bluestore":
        lines.append(f"bluestore block path = {data.path}")
        if db:
            lines.append(f"bluestore block db path = {db.path}")
            if db.kind != "loop":
                lines.append(f"bluestore block db size = {db.size_bytes}")
    elif db:
        lines.append(f"osd journal = {db.path}")
        # 0: a journal on a block device takes all of it; a journal file is made this size (MiB).
        lines.append(f"osd journal size = {0 if db.kind == 'loop' else max(1, db.size_bytes // 2**20)}")
    elif data.mount:
        # Ceph's default, /var/lib/ceph/osd/$cluster-$id/journal, is not under the lab's `osd data`: mkfs fails
        lines.append(f"osd journal = {data.mount}/journal")
    return "\n".join(lines) + "\n"


# ---- looking at the host ------------------------------------------------------------------------

def _run(argv: Sequence[str]) -> CommandResult:
    return LocalHost().run(list(argv), COMMAND_TIMEOUT_S)


def _must(argv: Sequence[str]) -> str:
    res = _run(argv)
    if not res.ok:
        raise OperationFailed(f"{res.cmdline} failed: {res.error_text()}")
    return res.stdout


def loop_unavailable() -> str | None:
    """Why loop devices cannot be used here, or None when they can."""
    if shutil.which("losetup") is None:
        return "losetup (util-linux) is not installed"
    if not LOOP_CONTROL.exists():
        return f"{LOOP_CONTROL} does not exist (no loop driver, or a container without it)"
    if not os.access(LOOP_CONTROL, os.R_OK | os.W_OK):
        return f"{LOOP_CONTROL} is not writable by this user (loop devices need root)"
    return None


def _loop_info(devices: Sequence[str] = ()) -> list[dict]:
    res = _run(["losetup", "--list", "--json", "--output", "NAME,MAJ:MIN,DIO,BACK-FILE", *devices])
    if not res.ok or not res.stdout.strip():
        return []
    return json.loads(res.stdout).get("loopdevices", [])


def attached(backing: str) -> list[str]:
    """Loop devices whose backing file is `backing`, by inode (`losetup -j`) and, once it is deleted, by name."""
    found = []
    if Path(backing).exists():
        res = _run(["losetup", "--list", "--json", "--output", "NAME", "-j", backing])
        if res.ok and res.stdout.strip():
            found = [d["name"] for d in json.loads(res.stdout).get("loopdevices", [])]
    for d in _loop_info():
        back = (d.get("back-file") or "").removesuffix(" (deleted)")
        if back == backing and d["name"] not in found:
            found.append(d["name"])
    return found


def mounted(mount_point: str) -> bool:
    return mount_point in _mount_points()


def _mount_points() -> set[str]:
    # Field 5 of mountinfo, with the kernel's octal escapes for space, tab, newline and backslash.
    points = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        points.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4]))
    return points


def block_device_of(path: Path) -> str | None:
    """MAJ:MIN of the whole disk holding `path`, which blkio can throttle; None on tmpfs, overlay and the like."""
    st = os.stat(path)
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    sys_dev = Path(f"/sys/dev/block/{major}:{minor}")
    if major == 0 or not sys_dev.exists():
        return None
    if (sys_dev / "partition").exists():        # blkio takes whole disks only
        return (sys_dev.resolve().parent / "dev").read_text().strip()
    return f"{major}:{minor}"


# ---- making and removing ------------------------------------------------------------------------

def check_tools(record: LabDrives) -> None:
    if os.geteuid() != 0:
        raise UserError("the multi-host lab's drives need root (loop devices, mounts and cgroups)",
                        "run it as root, or use the one-host lab (no --hosts)")
    cgroups.check_controllers(sorted({Path(g).parent for g in record.cgroups
                                      if Path(g).name == cgroups.lab_group(record.lab_id)}))
    for fs in sorted({d.fs for d in record.drives if d.fs}):
        recipe = FILESYSTEMS[fs]
        if shutil.which(recipe.mkfs[0]) is None:
            raise UserError(f"{recipe.mkfs[0]} ({recipe.package}) is not installed: FileStore on {fs} needs it",
                            "run scripts/setup.sh")


def create(record: LabDrives, path: Path) -> LabDrives:
    """Save `record` (from `plan`) at `path`, then make its groups and drives. Any failure removes what was made.

    Drives are loop devices when possible; otherwise plain files, with `record.fallback` saying why. A file
    system needs a loop device: without one it is refused before anything is made.
    """
    check_tools(record)
    record.path = path
    why = loop_unavailable()
    if why and any(d.fs for d in record.drives):
        raise UserError(f"FileStore on a file system needs loop devices, and {why}",
                        "use --objectstore bluestore, or run where loop devices work")
    present = leftovers(record)
    if present:
        raise UserError(f"the drives of lab {record.lab_id} already exist ({', '.join(present[:3])})",
                        "take that lab down first with `cephbench lab down --dir DIR`")
    record.fallback = why
    record.save()
    try:
        for g in record.cgroups:
            cgroups.make(Path(g))
        for name, group in record.cpu.items():
            cgroups.set_cpu_quota(Path(group), record.cpu_quota_us[name], PERIOD_US)
        for i, drive in enumerate(record.drives):
            _make_drive(record, i, drive)
    except BaseException:
        try:
            destroy(record)
        except Exception as exc:            # the first failure is the one to report
            log.warning("removing a half-made lab's drives: %s", exc)
        raise
    return record


def _make_drive(record: LabDrives, i: int, drive: Drive) -> None:
    backing = Path(drive.backing)
    backing.parent.mkdir(parents=True, exist_ok=True)
    with open(backing, "ab") as f:          # sparse: no block is written until the OSD writes it
        if os.fstat(f.fileno()).st_size < drive.size_bytes:
            f.truncate(drive.size_bytes)
    if record.fallback is None:
        res = _run(["losetup", "--find", "--show", "--direct-io=on", drive.backing])
        if res.ok:
            device = res.stdout.strip()
            info = _loop_info([device])[0]
            drive = replace(drive, kind="loop", device=device, dev=info["maj:min"].strip(),
                            direct_io=bool(info.get("dio")))
        elif i == 0:                        # the first attach says whether loop devices work at all
            record.fallback = f"losetup failed: {res.error_text()}"
            if drive.fs:
                raise UserError(f"FileStore on a file system needs loop devices, and {record.fallback}",
                                "use --objectstore bluestore")
        else:
            raise OperationFailed(f"{res.cmdline} failed: {res.error_text()}")
    if drive.kind is None:
        drive = replace(drive, kind="file", dev=block_device_of(backing))
    record.replace_drive(i, drive)
    if drive.fs and drive.mount and drive.device:
        # A kept lab's drive already has its file system (and its OSD's data): made only when missing.
        if _fs_type(drive.device) != drive.fs:
            _must([*FILESYSTEMS[drive.fs].mkfs, drive.device])
        Path(drive.mount).mkdir(parents=True, exist_ok=True)
        _must(["mount", "-t", drive.fs, "-o", FILESYSTEMS[drive.fs].mount_options, drive.device, drive.mount])


def _fs_type(device: str) -> str:
    """The file system on `device` as its superblock says (blkid probes the device itself, no cache)."""
    return _run(["blkid", "-p", "-o", "value", "-s", "TYPE", device]).stdout.strip()


def leftovers(record: LabDrives) -> list[str]:
    """What of `record` exists now: mounts, attached loop devices, cgroup folders. Empty when all is gone."""
    points = _mount_points()
    out = [d.mount for d in record.drives if d.mount and d.mount in points]
    out += [f"{dev} ({d.backing})" for d in record.drives for dev in attached(d.backing)]
    return out + [g for g in record.cgroups if Path(g).exists()]


UMOUNT_BUSY_S = 30.0     # how long a mount may stay busy after its OSD was stopped
# How long a detached loop device may stay attached: `losetup --detach` of a device something still holds open
# succeeds and frees it once the last holder lets go (an unmounted btrfs a moment after its umount, on a busy machine:
# `make test`'s drives test found /dev/loop0 still attached, with no error from the detach).
DETACH_RELEASE_S = 10.0


def _umount(mount: str) -> CommandResult:
    """umount, retried while the mount is busy: a rebuild of suites/seed-bobtail-2012.yaml from FileStore on xfs
    to ext4 met "target is busy" on every OSD right after their daemons were killed mid-write (likely a killed
    OSD's threads still flushing after its main thread, which is what the stop waits for, had exited); a later
    `lab down` of the same mounts worked."""
    deadline = time.monotonic() + UMOUNT_BUSY_S
    while True:
        res = _run(["umount", mount])
        if res.ok or "busy" not in res.error_text() or time.monotonic() >= deadline:
            return res
        log.info("%s is busy: waiting for its OSD's last threads", mount)
        time.sleep(0.5)


def destroy(record: LabDrives, wait_s: float = cgroups.REMOVE_WAIT_S) -> list[str]:
    """Unmount, detach and remove the groups of `record`; backing files stay (they are in the lab's directory).

    Idempotent: what is gone is skipped. Returns what was removed; raises naming whatever is still there.
    """
    removed: list[str] = []
    errors: list[str] = []
    points = _mount_points()
    for d in reversed(record.drives):
        if d.mount and d.mount in points:
            res = _umount(d.mount)
            (removed.append(d.mount) if res.ok else errors.append(f"umount {d.mount}: {res.error_text()}"))
    for d in reversed(record.drives):
        for dev in attached(d.backing):
            res = _run(["losetup", "--detach", dev])
            (removed.append(dev) if res.ok else errors.append(f"losetup --detach {dev}: {res.error_text()}"))
    deadline = time.monotonic() + DETACH_RELEASE_S
    while any(attached(d.backing) for d in record.drives) and time.monotonic() < deadline:
        time.sleep(0.2)
    try:
        removed += [str(g) for g in cgroups.remove([Path(g) for g in record.cgroups], wait_s)]
    except OperationFailed as exc:
        errors.append(str(exc))
    left = leftovers(record)
    if left:
        detail = f" ({'; '.join(errors)})" if errors else ""
        raise OperationFailed(f"lab drives {record.lab_id}: could not remove {', '.join(left)}{detail}")
    return removed


# ---- throttles ----------------------------------------------------------------------------------

def _throttle_target(record: LabDrives, ref: DriveRef, where: str) -> tuple[int, Drive]:
    for i, d in enumerate(record.drives):
        if d.ref == ref:
            break
    else:
        raise UserError(f"{ref}: the lab has no such drive", "see `cephbench lab status`", where=where)
    if d.dev is None:
        raise UserError(f"{ref} is a plain file on a file system without a block device, which blkio cannot "
                        "throttle", "put the lab's directory on a disk, or run where loop devices work",
                        where=where)
    if d.role == "db" and record.drive(DriveRef(d.osd)).dev == d.dev:
        raise UserError(f"{ref}: osd.{d.osd}'s DB device and data are plain files on the same disk ({d.dev}), "
                        f"which blkio cannot throttle apart ({record.fallback})",
                        f"throttle osd.{d.osd}: on this disk that limits both", where=where)
    return i, d


def apply_throttle(record: LabDrives, spec: ThrottleSpec, where: str = "--osd-throttle") -> Drive:
    """Limit one drive (its OSD's blkio group, on its device), record the limit, and publish the drives' limits."""
    i, d = _throttle_target(record, spec.drive, where)
    assert d.dev is not None
    cgroups.set_limit(Path(d.cgroup), d.dev, spec.limit)
    record.replace_drive(i, replace(d, limit=spec.limit))
    publish_limits(record)
    return record.drives[i]


def clear_throttle(record: LabDrives, ref: DriveRef, where: str = "lab throttle --clear") -> Drive:
    i, d = _throttle_target(record, ref, where)
    assert d.dev is not None
    cgroups.clear_limit(Path(d.cgroup), d.dev)
    record.replace_drive(i, replace(d, limit=None))
    publish_limits(record)
    return record.drives[i]


def device_limits(record: LabDrives, sys_block: Path = Path("/sys/dev/block")) -> dict[str, DriveLimit]:
    """Each throttled device by its kernel name (what node-exporter's diskstats name it): a loop device, or the
    disk plain files sit on, where the OSDs' limits add up (each group may do its own); a device one of whose
    drives is not limited is not limited."""
    by_dev: dict[str, list[DriveLimit | None]] = {}
    for d in record.drives:
        if d.dev:
            by_dev.setdefault(d.dev, []).append(d.limit)
    out = {}
    for dev, limits in by_dev.items():
        if not limits or any(x is None for x in limits):
            continue
        try:
            name = (sys_block / dev).resolve(strict=True).name
        except OSError:
            continue
        total = lambda f: sum(getattr(x, f) for x in limits) if all(getattr(x, f) for x in limits) else None  # noqa: E731
        out[name] = DriveLimit(total("bytes_per_s"), total("iops"))
    return out


def publish_limits(record: LabDrives) -> None:
    """The drives' limits for the lab's node-exporters (monitoring.publish_limits), when the lab has them."""
    if record.path is not None:
        monitoring.publish_limits(record.path.parent / monitoring.DIR, device_limits(record))
