"""Disk baseline: what each disk can do alone, and what it still does when all work at once.

fio with direct I/O on a test file in each given directory (the OSD data
directories on the lab; a mount point per disk on a real cluster), or on a raw
block device when explicitly allowed and provably unused. Patterns: a
dd-equivalent line (the whole file in one direct write, as the seeds' `dd bs=1G
count=1 oflag=direct`), sequential write and read at 1 MiB and 4 MiB, random
4 KiB read and write at iodepth 1 and 32. Every path runs alone, then all paths
at once; the drop under parallel load is what CenterDevice's 154 -> 93 MB/s
showed. Test files are removed afterwards, whatever happens.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import socket
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator

from ..core.settings import SshSettings
from ..core.errors import OperationFailed, UserError
from ..core.interrupts import held
from ..core.resources import Ledger, Resource, remote_file_parts
from ..hosts.local import CommandResult, LocalHost, Spawn, run_together
from ..hosts.remote import HostRef, host_ref, run_on_all, unreachable
from ..cluster.osd_hosts import osd_hosts
from ..core.results import Measurement, RunDir, Test
from ..core.units import format_size
from ..lab import Lab
from ..lab.chroot import InRoot
from ..evidence.rounds import Seen
from ..core.errors import ParseError
from ..core.figures import array, count, mapping
from .base import BaselineWatch, DriverContext, Outcome
from ..kinds.disk_baseline import DISK_FILE, PATTERNS, Pattern, steps_for      # the plan of a disk baseline
from .fio import FioJob, fio_argv, parse_fio_json, to_measurement
from .osd_devices import OsdDevice, check as osd_device_check

MIB = 1024 * 1024

log = logging.getLogger(__name__)

KIB, MIB, GIB = 1024, 1024**2, 1024**3
DD_MAX_BS = GIB
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
# Filesystems that would measure memory or nothing, not a disk.
NOT_A_DISK_FS = {"tmpfs", "ramfs", "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs",
                 "securityfs", "pstore", "bpf", "tracefs", "hugetlbfs", "mqueue", "configfs", "fusectl"}
# Signatures that mean a block device holds something (lsblk FSTYPE / blkid TYPE).
SIGNATURE_WORDS = {"LVM2_member": "an LVM physical volume", "ceph_bluestore": "a Ceph BlueStore OSD",
                   "crypto_LUKS": "a LUKS volume", "linux_raid_member": "an MD RAID member", "swap": "swap"}


@dataclass(frozen=True)
class DiskTarget:
    path: str           # what the user gave
    file: str           # what fio opens: a test file in the directory, or the raw device
    raw: bool
    device: str         # major:minor of the backing device, to spot paths that share one disk
    ref: HostRef | None = None      # the host it is on; None: this machine
    machine: str = ""               # the host's boot id: hosts that are one machine (the lab) share disks too
    real: str = ""                  # the path with every symlink resolved, on its host
    drive: LabDrive | None = None   # a lab OSD's own drive, when the lab records it
    disks: tuple[str, ...] = ()     # the whole disks the path is on (PathFacts.disks)
    osd_device: OsdDevice | None = None   # whether it is an OSD's own device (osd_device_check)
    in_root: InRoot | None = None   # fio runs from this lab root: the lab's hosts are of its release (with_lab_root)

    @property
    def host(self) -> str:
        return self.ref.name if self.ref is not None else socket.gethostname()

    @property
    def label(self) -> str:
        """How results name it: the path on this machine, host:path on another; a lab OSD by its drive."""
        if self.drive is not None:
            return f"{self.host}:{self.drive.device} (osd.{self.drive.osd})"
        return self.path if self.ref is None or self.ref.address is None else f"{self.ref.name}:{self.path}"

    @property
    def group(self) -> str:
        """One fio process per group: a process sits in one blkio group, and each lab OSD has its own."""
        return self.host if self.drive is None else f"{self.host}-osd.{self.drive.osd}"

    def file_for(self, pattern: Pattern) -> str:
        """A BlueStore OSD's raw device is read, never written: its OSD is running on it."""
        return self.drive.read_device if self.drive and self.drive.read_device and pattern.op == "read" \
            else self.file


@dataclass(frozen=True)
class LabDrive:
    """A lab OSD's data drive as the lab's drives.json records it (lab/drives.py)."""
    osd: int
    device: str                     # /dev/loopN, or the backing file when loop devices were not available
    dev: str                        # MAJ:MIN its blkio throttle names
    cgroup: str                     # the OSD's blkio group: fio runs in it, so the drive's throttle holds for fio
    read_device: str = ""           # BlueStore's raw loop device: reads run on it, read-only
    size: int = 0
    write_bps: int | None = None    # its throttle; caps the write figures fio measured beside the device
    write_iops: int | None = None


# ---- checks: everything that can refuse, before anything is written ------------------------
#
# One probe script gathers what the checks need, on this machine or over ssh alike, so that a remote path gets
# exactly the checks a local one gets. Its output is key=value lines, one block per path, then the host's
# /proc/mounts and /proc/swaps.

PROBE_SH = r"""probe=$1; shift
echo "boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
for t in fio timeout lsblk blkid; do command -v "$t" > /dev/null && echo "tool=$t"; done
disks() {  # the whole disks under a sysfs block device: a partition's disk, a device-mapper device's slaves
  local s found=""
  if [ -e "$1/partition" ]; then echo "disk=$(basename "$(dirname "$1")")"; return; fi
  for s in "$1"/slaves/*; do [ -e "$s" ] && found=1 && disks "$(readlink -f "$s")"; done
  [ -n "$found" ] || echo "disk=$(basename "$1")"
}
for p in "$@"; do
  echo "path=$p"
  if [ ! -e "$p" ]; then echo "kind=missing"; continue; fi
  echo "real=$(readlink -f -- "$p")"
  if [ -b "$p" ]; then
    echo "kind=block"; echo "rdev=$(stat -L -c '%t:%T' -- "$p")"
    mm=$(( 0x$(stat -L -c '%t' -- "$p") )):$(( 0x$(stat -L -c '%T' -- "$p") ))
  elif [ -d "$p" ]; then
    echo "kind=dir"; d=$(stat -L -c '%d' -- "$p"); echo "dev=$d"; echo "free=$(stat -f -L -c '%a %S' -- "$p")"
    mm=$(( (d >> 8) & 0xfff )):$(( (d & 0xff) | ((d >> 12) & 0xfff00) ))
    f="$p/$probe"
    if err=$( (set -C; : > "$f") 2>&1 ); then rm -f -- "$f"; echo "write=ok"; else echo "write=$err"; fi
  else
    echo "kind=other"; continue
  fi
  sys=$(readlink -f "/sys/dev/block/$mm" 2>/dev/null) && [ -d "$sys" ] && disks "$sys"
done
echo "@mounts"; cat /proc/mounts
echo "@swaps"; cat /proc/swaps 2>/dev/null
"""


@dataclass(frozen=True)
class PathFacts:
    path: str
    kind: str                   # missing, dir, block, other
    real: str = ""
    device: str = ""            # major:minor (of the filesystem for a directory, of the device for a block device)
    free: int | None = None     # bytes this user may still write (directories)
    write_error: str | None = None
    disks: tuple[str, ...] = ()  # the whole disks it is on (kernel names, as `ceph osd metadata` names devices)


@dataclass(frozen=True)
class HostProbe:
    boot_id: str
    tools: frozenset[str]
    paths: list[PathFacts]
    mounts: str
    swaps: str


def probe_argv(probe_name: str, paths: list[str]) -> list[str]:
    return ["sh", "-c", PROBE_SH, "cephbench-probe", probe_name, *paths]


_HEX_DEV_RE = re.compile(r"([0-9a-f]{1,8}):([0-9a-f]{1,8})")
_DEC_RE = re.compile(r"[0-9]{1,20}")


def _devnum(text: str) -> str:
    """"65024" (st_dev) or "fe:0" (hex major:minor) -> "254:0"."""
    if (m := _HEX_DEV_RE.fullmatch(text)) is not None:
        return f"{int(m.group(1), 16)}:{int(m.group(2), 16)}"
    if _DEC_RE.fullmatch(text) is None or int(text) >= 2**64:
        raise ParseError(f"not a device number: {text[:40]!r}")
    return f"{os.major(int(text))}:{os.minor(int(text))}"


def parse_probe(text: str) -> HostProbe:
    """PROBE_SH's output -> HostProbe; ParseError when it is cut short or not that output."""
    if "\n@mounts\n" not in text:
        raise ParseError("the path probe ended early" + (f" ({text.strip().splitlines()[-1][:200]})"
                                                        if text.strip() else ""))
    head, rest = text.split("\n@mounts\n", 1)
    mounts, _, swaps = rest.partition("@swaps\n")
    boot, tools, paths = "", set(), []
    cur: dict[str, str] | None = None

    def done() -> None:
        if cur is not None:
            free = cur.get("free", "").split()
            if "free" in cur and (len(free) != 2 or not all(_DEC_RE.fullmatch(x) for x in free)):
                raise ParseError(f"free space of {cur['path']} unreadable: {cur['free'][:40]!r}")
            nbytes = int(free[0]) * int(free[1]) if free else None
            write = cur.get("write")
            paths.append(PathFacts(
                cur["path"], cur.get("kind", "missing"), cur.get("real", ""),
                _devnum(cur["rdev"]) if "rdev" in cur else _devnum(cur["dev"]) if "dev" in cur else "",
                nbytes, None if write in (None, "ok") else (write.rsplit(": ", 1)[-1] or write),
                tuple(dict.fromkeys(cur.get("disks", "").split()))))
    for line in head.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key == "boot":
            boot = value
        elif key == "tool":
            tools.add(value)
        elif key == "path":
            done()
            cur = {"path": value}
        elif key == "disk" and cur is not None:
            cur["disks"] = f"{cur.get('disks', '')} {value}".strip()
        elif cur is not None:
            cur[key] = value
    done()
    return HostProbe(boot, frozenset(tools), paths, mounts, swaps)


def _fs_type(real: str, mounts_text: str) -> str | None:
    """The filesystem type of the mount holding the resolved path `real` (longest mount point prefix)."""
    best, fstype = "", None
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, fstype = mnt, parts[2]
    return fstype


def directory_target(facts: PathFacts, size: int, mounts_text: str, test_name: str, ref: HostRef | None = None,
                     machine: str = "") -> DiskTarget:
    """A directory fio may write `size` bytes in. Raises UserError with the reason otherwise."""
    where = f" on host {ref.where}" if ref is not None and ref.address is not None else ""
    path = facts.path
    if facts.kind == "missing":
        raise UserError(f"{path} does not exist{where}", "give an existing directory on the disk to measure")
    if facts.kind != "dir":
        raise UserError(f"{path}{where} is not a directory", "give a directory on the disk to measure "
                        "(a raw block device needs --allow-raw-device)")
    fstype = _fs_type(facts.real or path, mounts_text)
    if fstype in NOT_A_DISK_FS:
        raise UserError(f"{path}{where} is on {fstype}, which is memory, not a disk",
                        "give a directory on the disk itself (BlueStore OSD directories are tmpfs: "
                        "use a mount point of the disk instead)")
    if facts.free is not None and facts.free < size:
        raise UserError(f"{path}{where} has {format_size(facts.free)} free, less than the test file of "
                        f"{format_size(size)}", "free some space or choose a smaller --size")
    if facts.write_error is not None:
        raise UserError(f"cannot write in {path}{where}: {facts.write_error}",
                        "give a directory this user can write to")
    return DiskTarget(path, str(PurePosixPath(path) / test_name), False, facts.device, ref, machine, facts.real,
                      disks=facts.disks)


def _probe(paths: list[str], probe_name: str, host: LocalHost, ref: HostRef | None,
           ssh: SshSettings) -> HostProbe:
    bad = [p for p in paths if "\n" in p or not p]
    if bad:
        raise UserError(f"{bad[0]!r} is not a path", "give each path on one line")
    argv = probe_argv(probe_name, paths)
    res = host.run(ref.argv(argv, ssh) if ref is not None else argv, 60)
    why = unreachable(ref, res) if ref is not None else None
    if why:
        raise UserError(why, "cephbench runs fio there over ssh: check settings.ssh (user, port, identity_file, "
                        "hosts: {name: address})", where="settings.ssh")
    try:
        return parse_probe(res.stdout)
    except ParseError as exc:
        raise UserError(f"cannot check the paths on {ref.where if ref else 'this host'}: {res.error_text()} "
                        f"({exc})") from None


def check_directory(path: Path, size: int, mounts_text: str, test_name: str,
                    host: LocalHost | None = None) -> DiskTarget:
    """A directory on this machine fio may write `size` bytes in (the probe's own mounts replaced by
    `mounts_text`). Raises UserError with the reason otherwise."""
    probe = _probe([str(path)], f".{test_name}.probe", host or LocalHost(), None, SshSettings())
    return directory_target(probe.paths[0], size, mounts_text, test_name, None, probe.boot_id)


def parse_lsblk(text: str) -> dict[str, Any]:
    """`lsblk -J` output -> its document; ParseError when it is not one."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"lsblk output is not JSON: {exc}") from None
    return mapping(doc, "lsblk output")


@dataclass(frozen=True)
class _BlockNode:
    """One device of lsblk's tree, its fields checked (lsblk -J -b -o NAME,PATH,TYPE,SIZE,RO,MOUNTPOINTS,FSTYPE)."""
    name: str | None
    path: str
    type: str | None
    fstype: str | None
    mountpoints: list[str]
    children: list[dict[str, Any]]


def _block_node(d: Any, where: str) -> _BlockNode:
    d = mapping(d, where)

    def text(key: str) -> str | None:
        v = d.get(key)
        if v is not None and not isinstance(v, str):
            raise ParseError(f"lsblk {where}.{key} is not text")
        return v
    mounts = d.get("mountpoints")
    mounts = array(mounts, f"lsblk {where}.mountpoints") if mounts is not None else [text("mountpoint")]
    if any(m is not None and not isinstance(m, str) for m in mounts):
        raise ParseError(f"lsblk {where}.mountpoints holds something other than paths")
    name = text("name")
    return _BlockNode(name, text("path") or f"/dev/{name}", text("type"), text("fstype"), [m for m in mounts if m],
                      array(d.get("children") or [], f"lsblk {where}.children"))


def raw_device_problems(lsblk: dict[str, Any], blkid_rc: int, blkid_out: str, size: int,
                        mounts_text: str = "", swaps_text: str = "") -> list[str]:
    """Why a block device must not be written to (empty list: it looks unused).

    `lsblk` is `lsblk -J -b -o NAME,PATH,TYPE,SIZE,RO,MOUNTPOINTS,FSTYPE DEV` (children included, see
    parse_lsblk); `blkid_rc`/`blkid_out` are from `blkid -p -o export DEV` (rc 2: no signature found).
    ParseError when the lsblk document does not have lsblk's shape.
    """
    devs = array(lsblk.get("blockdevices") or [], "lsblk blockdevices")
    if not devs:
        return ["lsblk does not know it"]
    raw_dev = devs[0]
    dev = _block_node(raw_dev, "blockdevices[0]")
    problems: list[str] = []
    children = [_block_node(c, f"blockdevices[0].children[{i}]") for i, c in enumerate(dev.children)]
    nodes, todo = [dev], [(c, f"blockdevices[0].children[{i}]") for i, c in enumerate(children)]
    while todo:             # a loop, not recursion: the tree comes from outside
        node, where = todo.pop()
        nodes.append(node)
        todo += [(_block_node(c, f"{where}.children[{i}]"), f"{where}.children[{i}]")
                 for i, c in enumerate(node.children)]
    paths = {n.path for n in nodes}
    mounted = sorted({m for n in nodes for m in n.mountpoints})
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in paths:
            mounted.append(parts[1])
    for line in swaps_text.splitlines()[1:]:
        parts = line.split()
        if parts and parts[0] in paths:
            mounted.append("[SWAP]")
    if mounted:
        problems.append(f"it is mounted ({', '.join(sorted(set(mounted)))})")
    parts = [str(n.name) for n in children if n.type == "part"]
    if parts:
        problems.append(f"it has partitions ({', '.join(parts)})")
    holders = [f"{n.name} ({n.type})" for n in children if n.type != "part"]
    if holders:
        problems.append(f"it is in use by {', '.join(holders)}")
    for n in nodes:
        if n.fstype:
            problems.append(f"{n.name} carries {SIGNATURE_WORDS.get(n.fstype, f'a {n.fstype} signature')}")
    if "error" in blkid_out.lower():
        problems.append(f"blkid could not check it for signatures ({blkid_out.strip().splitlines()[-1]})")
    elif blkid_rc == 0:
        found = dict(line.split("=", 1) for line in blkid_out.splitlines() if "=" in line)
        kind = found.get("TYPE") or (f"a {found['PTTYPE']} partition table" if "PTTYPE" in found else None)
        if kind:
            text = SIGNATURE_WORDS.get(kind, kind if kind.startswith("a ") else f"a {kind} signature")
            if not any(text in p for p in problems):
                problems.append(f"it carries {text} (blkid)")
    elif blkid_rc != 2:
        problems.append(f"blkid could not check it for signatures ({blkid_out.strip() or f'exit code {blkid_rc}'})")
    if raw_dev.get("ro"):
        problems.append("it is read-only")
    dsize = count(raw_dev.get("size") or 0, "lsblk blockdevices[0].size")
    if dsize < size:
        problems.append(f"it holds {format_size(dsize)}, less than --size {format_size(size)}")
    return problems


def check_raw_device(facts: PathFacts, size: int, allow_raw: bool, host: LocalHost, probe: HostProbe,
                     ref: HostRef | None = None, ssh: SshSettings | None = None) -> DiskTarget:
    path = facts.path
    where = f" on host {ref.where}" if ref is not None and ref.address is not None else ""
    if not allow_raw:
        raise UserError(f"{path}{where} is a raw block device and the baseline would overwrite it",
                        "pass --allow-raw-device if it holds nothing (cephbench checks that), "
                        "or give a directory on it")
    ssh = ssh or SshSettings()

    def run(argv: list[str]) -> CommandResult:
        return host.run(ref.argv(argv, ssh) if ref is not None else argv, 30)
    res = run(["lsblk", "-J", "-b", "-o", "NAME,PATH,TYPE,SIZE,RO,MOUNTPOINTS,FSTYPE", path])
    if not res.ok:
        raise UserError(f"lsblk cannot read {path}{where}: {res.error_text()}")
    blk = run(["blkid", "-p", "-o", "export", path])
    try:
        problems = raw_device_problems(parse_lsblk(res.stdout), blk.returncode, blk.stdout + blk.stderr, size,
                                       probe.mounts, probe.swaps)
    except ParseError as exc:
        raise UserError(f"cannot tell whether {path}{where} is in use: {exc}",
                        "check that lsblk works there (util-linux), or give a directory on the disk") from None
    if problems:
        raise UserError(f"refusing to write to {path}{where}: {'; '.join(problems)}",
                        "give an unused device, or a directory on a mounted disk")
    return DiskTarget(path, path, True, facts.device, ref, probe.boot_id, facts.real, disks=facts.disks)


def check_host_paths(ref: HostRef | None, paths: list[str], size: int, allow_raw: bool, test_name: str,
                     host: LocalHost, ssh: SshSettings) -> list[DiskTarget]:
    """Every check of `paths` on one host (this machine when `ref` is None or has no address), run there."""
    probe = _probe(paths, f".{test_name}.probe", host, ref, ssh)
    where = f"host {ref.where}" if ref is not None and ref.address is not None else "this host"
    missing = [t for t in ("fio", "timeout") if t not in probe.tools]
    if missing:
        raise UserError(f"{missing[0]} is not installed on {where}", f"install {missing[0]} there "
                        "(scripts/setup.sh does on this host; Debian: apt-get install fio)")
    targets = []
    for facts in probe.paths:
        if facts.kind == "block":
            targets.append(check_raw_device(facts, size, allow_raw, host, probe, ref, ssh))
        else:
            targets.append(directory_target(facts, size, probe.mounts, test_name, ref, probe.boot_id))
    return targets


def check_targets(per_host: list[tuple[HostRef | None, list[str]]], size: int, allow_raw: bool, test_name: str,
                  host: LocalHost | None = None, ssh: SshSettings | None = None) -> list[DiskTarget]:
    """The paths of every host checked, each on its own host; hosts in the order given."""
    host, ssh = host or LocalHost(), ssh or SshSettings()
    if not any(paths for _, paths in per_host):
        raise UserError("give at least one directory (or raw device) to measure", where="PATH")
    if size <= 0:
        raise UserError("the test file size must be larger than zero", where="--size")
    targets: list[DiskTarget] = []
    for ref, paths in per_host:
        targets += check_host_paths(ref, paths, size, allow_raw, test_name, host, ssh)
    seen: set[tuple[str, str]] = set()
    for t in targets:
        key = (t.machine or t.host, t.real or t.path)       # two lab hosts are one machine: one directory
        if key in seen:
            raise UserError(f"{t.label} is given twice", "give each disk once")
        seen.add(key)
    return targets


def check_paths(paths: list[Path], size: int, allow_raw: bool, test_name: str,
                host: LocalHost | None = None) -> list[DiskTarget]:
    """Paths on this machine (`cephbench baseline disk PATH...`)."""
    return check_targets([(None, [str(p) for p in paths])], size, allow_raw, test_name, host)


# ---- fio jobs -------------------------------------------------------------------------------

def fio_job(pattern: Pattern, target: DiskTarget, size: int, runtime_s: float, name: str,
            first_of_step: bool) -> FioJob:
    bs = pattern.bs or min(size, DD_MAX_BS)
    extra: dict[str, Any] = {"filename": target.file_for(pattern), "randrepeat": 0, "norandommap": 1}
    if extra["filename"] != target.file and target.drive and target.drive.size:
        size = min(size, target.drive.size)
    if first_of_step:
        extra["stonewall"] = True    # wait for the previous step; jobs of one step run together
        extra["new_group"] = True
    if pattern.name == "dd":
        extra.pop("norandommap")
    return FioJob(name=name, rw=pattern.rw, bs=bs, iodepth=pattern.iodepth, size=size,
                  runtime_s=None if not pattern.time_based else runtime_s, time_based=pattern.time_based,
                  direct=True, engine="libaio", extra=extra)


def scope_jobs(steps: list[Pattern], targets: list[DiskTarget], size: int, runtime_s: float,
               numbers: list[int] | None = None) -> list[FioJob]:
    """One fio invocation: each step waits for the previous one; within a step every target runs at once.
    Jobs are named pattern@N, N the target's number in the whole baseline (`numbers`; default 0, 1, ...)."""
    numbers = numbers if numbers is not None else list(range(len(targets)))
    jobs = []
    for p in steps:
        for i, (n, t) in enumerate(zip(numbers, targets)):
            jobs.append(fio_job(p, t, size, runtime_s, f"{p.name}@{n}", first_of_step=(i == 0)))
    return jobs


def invocation_timeout(steps: list[Pattern], size: int, runtime_s: float) -> float:
    # time-based steps take runtime (x3 for fio's own setup); dd is size-bound: allow 5 MB/s
    return sum(runtime_s * 3 + 30 for p in steps if p.time_based) + size / 5e6 + 120


# ---- aggregation ---------------------------------------------------------------------------

def capped(m: Measurement, pattern: Pattern, target: DiskTarget) -> Measurement:
    """A write to a BlueStore OSD's device would destroy the OSD, so fio wrote beside it, on the disk that backs
    the lab's drive; the drive's own throttle bounds what the OSD can write, and caps that figure."""
    d = target.drive
    if d is None or not d.read_device or pattern.op != "write" or not (d.write_bps or d.write_iops):
        return m
    bs = m.op_size_bytes or pattern.bs or 1
    bw, ops = m.bytes_per_s, m.ops_per_s
    if d.write_bps and bw is not None and bw > d.write_bps:
        bw, ops = float(d.write_bps), d.write_bps / bs
    if d.write_iops and ops is not None and ops > d.write_iops:
        ops, bw = float(d.write_iops), d.write_iops * bs
    return m.model_copy(update={"bytes_per_s": bw, "ops_per_s": ops})


def drive_notes(pattern: Pattern, targets: list[DiskTarget]) -> list[str]:
    """How each lab OSD's drive was measured, said once (with dd, which every baseline runs)."""
    if pattern.name != "dd":
        return []
    out = []
    for t in targets:
        d = t.drive
        if d is None:
            continue
        if d.read_device:
            limit = " and ".join(x for x in (f"{format_size(d.write_bps)}/s" if d.write_bps else "",
                                              f"{d.write_iops} IOPS" if d.write_iops else "") if x)
            out.append(f"{t.label}: reads on the device itself, read-only, in the OSD's blkio group; writes on the "
                       "disk that backs it (BlueStore runs on the device: a write would destroy the OSD)"
                       + (f", capped by the device's cgroup throttle ({limit})" if limit else ""))
        else:
            out.append(f"{t.label}: in {t.path}, on the OSD's own drive, in the OSD's blkio group")
    return out

def _summary(m: Measurement) -> dict[str, Any]:
    return {"bytes_per_s": m.bytes_per_s, "ops_per_s": m.ops_per_s, "lat_mean_ns": m.latency.mean_ns,
            "lat_p99_ns": m.latency.percentiles_ns.get("99"), "duration_s": m.duration_s}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _per_host(targets: list[DiskTarget], alone: dict[int, Measurement],
              parallel: dict[int, Measurement]) -> dict[str, dict[str, Any]]:
    """Each host's median disk, alone and with every disk of the cluster at once."""
    out: dict[str, dict[str, Any]] = {}
    for host in dict.fromkeys(t.host for t in targets):
        mine = [i for i, t in enumerate(targets) if t.host == host]
        out[host] = {"disks": len(mine)}
        for scope, figures in (("alone", alone), ("parallel", parallel)):
            for key, attr in (("bytes_per_s", "bytes_per_s"), ("ops_per_s", "ops_per_s")):
                out[host][f"{scope}_median_{key}"] = _median([getattr(figures[i], attr) or 0.0
                                                              for i in mine if i in figures])
    return out


def _slowest_host(per_host: dict[str, dict[str, Any]], by: str) -> str | None:
    """The host whose median disk is slowest (under parallel load when measured, else alone)."""
    def figure(h: str) -> float:
        x = per_host[h]
        return x[f"parallel_median_{by}"] if x[f"parallel_median_{by}"] is not None else x[f"alone_median_{by}"] or 0.0
    return min(per_host, key=figure) if len(per_host) > 1 else None


def pattern_measurement(pattern: Pattern, targets: list[DiskTarget], alone: dict[int, Measurement],
                        parallel: dict[int, Measurement], size: int) -> tuple[Measurement, list[str]]:
    """One pattern's Measurement: the median disk alone as the headline; every disk alone and in parallel, and
    each host's median disk, in extra."""
    notes: list[str] = []
    alone_bw = [alone[i].bytes_per_s or 0.0 for i in sorted(alone)]
    par_bw = [parallel[i].bytes_per_s or 0.0 for i in sorted(parallel)]
    alone_iops = [alone[i].ops_per_s or 0.0 for i in sorted(alone)]
    par_iops = [parallel[i].ops_per_s or 0.0 for i in sorted(parallel)]
    head = alone[sorted(alone)[0]] if alone else parallel[sorted(parallel)[0]]
    med_alone, med_par = _median(alone_bw), _median(par_bw)
    devices = {t.label: t.device for t in targets}
    shared = len(targets) > 1 and len({(t.machine, t.device) for t in targets}) < len(targets)
    per_host = _per_host(targets, alone, parallel)
    by = "ops_per_s" if pattern.rw.startswith("rand") else "bytes_per_s"
    slowest = _slowest_host(per_host, by)

    def summary(t: DiskTarget, m: Measurement) -> dict[str, Any]:
        return {"host": t.host, "path": t.path, **_summary(m)}
    extra: dict[str, Any] = {
        "pattern": pattern.name, "rw": pattern.rw, "iodepth": pattern.iodepth,
        "block_size": pattern.bs or min(size, DD_MAX_BS), "file_size": size,
        "paths": [t.label for t in targets], "devices": devices, "shared_device": shared,
        "hosts": list(per_host), "per_host": per_host, "slowest_host": slowest,
        "alone": {targets[i].label: summary(targets[i], m) for i, m in alone.items()},
        "parallel": {targets[i].label: summary(targets[i], m) for i, m in parallel.items()},
        "alone_median_bytes_per_s": med_alone, "alone_median_ops_per_s": _median(alone_iops),
        "parallel_median_bytes_per_s": med_par, "parallel_median_ops_per_s": _median(par_iops),
        "parallel_total_bytes_per_s": sum(par_bw) if par_bw else None,
        "parallel_total_ops_per_s": sum(par_iops) if par_iops else None,
        "aggregate": "headline: median disk alone; parallel_*: every disk at once; per_host: each host's median",
    }
    versions = sorted({str(x.extra["version"]) for x in [*alone.values(), *parallel.values()] if "version" in x.extra})
    if versions:
        extra["version"] = ", ".join(versions)     # the fio that ran, as its output says (hosts may differ)
    checked = {t.label: t.osd_device.as_dict() for t in targets if t.osd_device is not None}
    if checked:
        extra["osd_devices"] = checked      # per path: an OSD's own device or not (analysis/disks.py reads it)
        if pattern.name == "dd":
            notes += [t.osd_device.text for t in targets if t.osd_device is not None and t.osd_device.own is not True]
    if med_alone and med_par is not None and len(targets) > 1:
        drop = 1 - med_par / med_alone
        extra["parallel_drop"] = drop
        notes.append(f"{pattern.name}: {med_alone / MIB:,.1f} MiB/s per disk alone, {med_par / MIB:,.1f} MiB/s per "
                     f"disk with all {len(targets)} at once ({abs(drop):.0%} {'less' if drop >= 0 else 'more'} each)")
    if shared and pattern.name == "dd":
        notes.append(f"{pattern.name}: the {len(targets)} paths share one device "
                     f"({', '.join(sorted(set(devices.values())))}): the parallel figures split one disk between them")
    if slowest is not None:
        x, others = per_host[slowest], [h for h in per_host if h != slowest]
        scope = "parallel" if x[f"parallel_median_{by}"] is not None else "alone"
        unit, f = ("IOPS", 1.0) if by == "ops_per_s" else ("MiB/s", 1 / MIB)
        rest = _median([per_host[h][f"{scope}_median_{by}"] or 0.0 for h in others]) or 0.0
        notes.append(f"{pattern.name}: slowest host {slowest}, {(x[f'{scope}_median_{by}'] or 0.0) * f:,.1f} {unit} per disk "
                     f"against {rest * f:,.1f} on the other {len(others)} host(s) "
                     f"({'all disks at once' if scope == 'parallel' else 'each disk alone'})")
    if len(targets) > 1:
        scope_figs = parallel or alone
        extra["slowest_disk"] = targets[min(scope_figs, key=lambda i: getattr(scope_figs[i], by) or 0.0)].label
    notes += drive_notes(pattern, targets)
    if pattern.name == "dd" and med_alone:
        # dd's own unit beside ours: the published figures it is compared with are dd's MB/s
        notes.append(f"dd-equivalent ({format_size(extra['block_size'])} in one direct write): {med_alone / MIB:,.1f} "
                     f"MiB/s per disk = {med_alone / 1e6:,.1f} MB/s as dd prints it (MB = 10^6 bytes; the community "
                     "guides' dd runs gave 107 MB/s and 154 MB/s)")
    m = Measurement(tool="fio", op=pattern.op, duration_s=max(x.duration_s for x in [*alone.values(), *parallel.values()]),
                    bytes_per_s=med_alone, ops_per_s=_median(alone_iops),
                    op_size_bytes=pattern.bs or min(size, DD_MAX_BS), latency=head.latency, extra=extra)
    return m, notes


# ---- running ------------------------------------------------------------------------------
#
# fio runs the same way on every host: in the background of a small shell that writes its PID next to the test
# file, under `timeout` so that it never outlives its run. Cleanup stops it by that PID (an ssh client killed
# by Ctrl-C leaves the remote fio running) and removes the test files.

def _pid_files(targets: list[DiskTarget]) -> dict[str, str]:
    """One PID file per group (host, or lab OSD), whichever of its paths fio runs on: next to its first test file;
    with raw devices only, named for the first device."""
    out = {}
    for group, mine in _by_host(targets, list(range(len(targets)))).items():
        d = next((targets[i] for i in mine if not targets[i].raw), None)
        out[group] = f"{d.file}.pid" if d is not None \
            else f"/tmp/cephbench-fio{_SAFE.sub('_', targets[mine[0]].path)}.pid"
    return out


def fio_command(fio: list[str], limit_s: float, pid_file: str, cgroup: str = "") -> list[str]:
    """`fio` under timeout, its PID in `pid_file` while it runs; the exit code is fio's. With `cgroup` the shell
    joins that blkio group first, so fio meets the throttle its OSD meets (cgroup v1: /sys/fs/cgroup is not
    mounted inside a lab host's namespace, so this runs on the machine itself, as the lab's OSDs start)."""
    q = shlex.quote
    script = (f"{shlex.join(['timeout', '-k', '10', str(int(limit_s) + 1), *fio])} & echo $! > {q(pid_file)}; "
              f"wait $!; rc=$?; rm -f {q(pid_file)}; exit $rc")
    if cgroup:
        script = f"echo $$ > {q(str(PurePosixPath(cgroup) / 'cgroup.procs'))} || exit 126; {script}"
    return ["sh", "-c", script]


CLEANUP_SH = r"""pf=$1; shift
if [ -s "$pf" ]; then
  pid=$(cat "$pf")
  if grep -qa fio "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid"; i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  fi
fi
rm -f -- "$pf" "$@"
"""


def _by_host(targets: list[DiskTarget], idx: list[int]) -> dict[str, list[int]]:
    """The targets of each fio process: one per host, one per lab OSD (DiskTarget.group)."""
    out: dict[str, list[int]] = {}
    for i in idx:
        out.setdefault(targets[i].group, []).append(i)
    return out


def run(tests: list[Test], targets: list[DiskTarget], size: int, runtime_s: float, rundir: RunDir | None,
        host: LocalHost, note: Callable[[str], None], test_started: Callable[[Test], None] | None = None,
        ssh: SshSettings | None = None, watch: BaselineWatch | None = None) -> Iterator[Outcome]:
    """Every path alone (one at a time, over all hosts), then all at once (one fio per host, all hosts together);
    one Outcome per test (a test = one pattern). Test files always removed, on every host. `watch`: the run's
    (DriverContext.run_baseline_tools), around every fio step: the hosts' CPU, on each Outcome; fio's PIDs in the
    ledger."""
    ssh = ssh or SshSettings()
    started, t0 = time.time(), time.monotonic()
    steps = steps_for([t.params["pattern"] for t in tests])
    scopes: list[tuple[str, list[int]]] = [(f"alone-{i}", [i]) for i in range(len(targets))]
    if len(targets) > 1:
        scopes.append(("parallel", list(range(len(targets)))))
    raw_dir = rundir.raw_dir("baseline-disk") if rundir else Path(os.environ.get("TMPDIR", "/tmp"))
    several_hosts = len({t.host for t in targets}) > 1
    several_groups = len({t.group for t in targets}) > 1
    per_scope: dict[str, list] = {}
    commands, raw, errors = [], [], []
    limit = invocation_timeout(steps, size, runtime_s)
    pid_files = _pid_files(targets)
    if test_started and tests:
        test_started(tests[0])

    def run_steps(tick: Callable[[], bool], tools_started: Callable[[list[int]], None]) -> None:
        for scope, idx in scopes:
            what = targets[idx[0]].label if len(idx) == 1 else f"all {len(idx)} paths at once"
            note(f"disk baseline: {what} ({len(steps)} fio steps)")
            spawns = []
            for h, mine in _by_host(targets, idx).items():
                mine_t = [targets[i] for i in mine]
                fio = fio_argv(scope_jobs(steps, mine_t, size, runtime_s, mine), {"eta": "never"}, None)
                if mine_t[0].in_root is not None:
                    fio = mine_t[0].in_root.argv(fio)
                cmd = fio_command(fio, limit, pid_files[h], mine_t[0].drive.cgroup if mine_t[0].drive else "")
                ref = mine_t[0].ref
                name = f"fio-{scope}-{_SAFE.sub('_', h)}.json" if scope == "parallel" and several_groups \
                    else f"fio-{scope}.json"
                spawns.append(Spawn(ref.argv(cmd, ssh) if ref is not None else cmd, raw_dir / name))
            results = run_together(spawns, limit + 30, tick=tick, started=tools_started)
            commands.extend(r.cmdline for r in results)
            if rundir:
                raw.extend(str(sp.output.relative_to(rundir.path)) for sp in spawns)
            jobs = []
            for h, res in zip(_by_host(targets, idx), results):
                if not res.ok:
                    errors.append(f"fio ({scope}{f' on {h}' if several_hosts else ''}) failed: {res.error_text()}")
                    break
                try:
                    jobs += parse_fio_json(res.stdout)
                except ParseError as exc:
                    errors.append(f"fio ({scope}): {exc}")
                    break
            if errors:
                break
            per_scope[scope] = jobs

    seen: Seen | None = None    # the hosts' CPU over every step, on each pattern's Outcome
    try:
        if watch is not None and tests:
            _, seen = watch(tests, [t.ref for t in targets if t.ref is not None], run_steps)
        else:
            run_steps(lambda: False, lambda _pids: None)
    finally:
        remove_test_files(targets, host, ssh)

    def own_seen() -> Seen | None:
        return None if seen is None else replace(seen, hosts=list(seen.hosts))
    for test in tests:
        pat = PATTERNS[test.params["pattern"]]
        if errors:
            yield Outcome(test, started, time.monotonic() - t0, error="; ".join(errors), commands=commands, raw=raw,
                          seen=own_seen())
            continue
        try:
            def figures(scope: str, i: int) -> Measurement:
                return capped(to_measurement([j for j in per_scope[scope] if j.name == f"{pat.name}@{i}"], pat.rw),
                              pat, targets[i])
            alone = {i: figures(f"alone-{i}", i) for i in range(len(targets))}
            parallel = {i: figures("parallel", i) for i in range(len(targets))} if "parallel" in per_scope else {}
            m, notes = pattern_measurement(pat, targets, alone, parallel, size)
        except ParseError as exc:
            yield Outcome(test, started, time.monotonic() - t0, error=str(exc), commands=commands, raw=raw,
                          seen=own_seen())
            continue
        yield Outcome(test, started, time.monotonic() - t0, measurement=m, commands=commands, raw=raw, notes=notes,
                      seen=own_seen())


def remove_test_files(targets: list[DiskTarget], host: LocalHost, ssh: SshSettings) -> None:
    """On every host at once: stop a fio still running there (its ssh client may have been killed), then remove
    the test files and the PID file."""
    by_host, pid_files = _by_host(targets, list(range(len(targets)))), _pid_files(targets)
    groups = list(by_host.values())
    argvs = []
    for host_name, mine in by_host.items():
        mine_t = [targets[i] for i in mine]
        cmd = ["sh", "-c", CLEANUP_SH, "cephbench-cleanup", pid_files[host_name],
               *[t.file for t in mine_t if not t.raw]]
        ref = mine_t[0].ref
        argvs.append(ref.argv(cmd, ssh) if ref is not None else cmd)
    for mine, why in zip(groups, run_on_all(host, argvs, 60)):
        if why is not None:
            log.warning("could not remove the disk baseline's test files on %s (%s): %s", targets[mine[0]].host,
                        ", ".join(targets[i].file for i in mine if not targets[i].raw), why)


def lab_osd_dirs(conf: Path) -> list[Path]:
    """A lab keeps each OSD's data (and its BlueStore block file) in <lab>/osd/<id>."""
    osd = Path(conf).parent / "osd"
    dirs = sorted((d for d in osd.iterdir() if d.is_dir()), key=lambda d: int(d.name) if d.name.isdigit() else 0) \
        if osd.is_dir() else []
    return dirs


@dataclass(frozen=True)
class LabDisks:
    host: str               # the lab host's name (h1, ...)
    address: str | None     # where ssh reaches it; None: this machine
    dirs: list[str]         # its OSDs' data directories


def _topology(lab_json: Path) -> dict[str, Any]:
    try:
        doc = json.loads(Path(lab_json).read_text())
    except (OSError, ValueError):
        return {}
    topo = doc.get("topology") if isinstance(doc, dict) else None
    return topo if isinstance(topo, dict) else {}


def lab_targets(lab_json: Path) -> list[LabDisks]:
    """Each OSD host of a multi-host lab, where ssh reaches it and its OSD data directories (<lab>/osd/<id>),
    from lab.json's `topology`; [] for a lab without one (every OSD on this machine: `lab_osd_dirs`).

    topology = {"hosts": [{"name": "h1", "role": "osd", "addresses": {"public": ...}, "osds": [0, 1]}, ...],
                "ssh": {"user": ..., "identity_file": ..., "options": [...], "hosts": {"h1": address}}}
    Without an "ssh" section the hosts are this machine."""
    topo = _topology(lab_json)
    lab = Path(lab_json).parent
    ssh_hosts = (topo.get("ssh") or {}).get("hosts") or {}
    out = []
    for h in topo.get("hosts") or []:
        if not h.get("osds"):
            continue
        address = (ssh_hosts.get(h["name"]) or (h.get("addresses") or {}).get("public")) if topo.get("ssh") else None
        out.append(LabDisks(h["name"], address, [str(lab / "osd" / str(i)) for i in h["osds"]]))
    return out


def lab_drives(lab_dir: Path) -> dict[int, LabDrive]:
    """Each OSD's data drive from the lab's drives.json (lab/drives.py's record); {} for a lab without one."""
    try:
        doc = json.loads((Path(lab_dir) / "drives.json").read_text())
    except (OSError, ValueError):
        return {}
    out = {}
    for d in (doc.get("drives") or [] if isinstance(doc, dict) else []):
        if not isinstance(d, dict) or d.get("role") != "data" or not d.get("cgroup") or not d.get("dev"):
            continue
        limit = d.get("limit") or {}
        raw_loop = d.get("kind") == "loop" and not d.get("fs") and d.get("device")
        out[int(d["osd"])] = LabDrive(int(d["osd"]), str(d.get("device") or d.get("backing")), str(d["dev"]),
                                      str(d["cgroup"]), str(d["device"]) if raw_loop else "",
                                      int(d.get("size_bytes") or 0), limit.get("bytes_per_s"), limit.get("iops"))
    return out


def with_lab_drives(targets: list[DiskTarget], params: dict[str, Any], target: Any) -> list[DiskTarget]:
    """`lab-osds` on a lab that records its drives: each OSD directory's target names the OSD's drive, so that fio
    runs in the OSD's blkio group and reads the OSD's raw device (see LabDrive)."""
    if params["paths"] != "lab-osds":
        return targets
    drives = lab_drives(Path(target.conf).parent)
    out = []
    for t in targets:
        name = PurePosixPath(t.path).name
        d = drives.get(int(name)) if name.isdigit() else None
        out.append(t if d is None else replace(t, drive=d, device=d.dev))
    return out


def with_lab_root(targets: list[DiskTarget], params: dict[str, Any], target: Any
                  ) -> tuple[list[DiskTarget], list[str]]:
    """`lab-osds` on a lab of another release: fio on this machine runs from the lab's root, as its OSDs do (on a
    multi-host lab's hosts reached over ssh, the sessions run the root's already); where the root has no fio, this
    machine's runs, and the note returned says so."""
    def here(t: DiskTarget) -> bool:
        return t.ref is None or t.ref.address is None
    if params["paths"] != "lab-osds" or not any(here(t) for t in targets):
        return targets, []
    in_root, instead = Lab(Path(target.conf).parent).tool_root("fio")
    return [replace(t, in_root=in_root) if here(t) else t for t in targets], [instead] if instead else []


def with_osd_devices(targets: list[DiskTarget], params: dict[str, Any], metadata: list[dict[str, Any]]
                     ) -> list[DiskTarget]:
    """Each target with whether it is an OSD's own device (osd_devices.check): `lab-osds` names the OSD of each
    directory; any other path stands for the OSDs of its host whose device it is on."""
    out = []
    for t in targets:
        name = PurePosixPath(t.path).name
        osd = int(name) if params["paths"] == "lab-osds" and name.isdigit() else None
        drive = PurePosixPath(t.drive.read_device or t.drive.device).name if t.drive else ""
        out.append(replace(t, osd_device=osd_device_check(t.label, t.host, t.disks, metadata, osd, drive)))
    return out


def osd_metadata(cluster: Any) -> list[dict[str, Any]]:
    """`ceph osd metadata`, or [] when the cluster cannot say (each path then says it cannot tell)."""
    try:
        md = cluster.ceph_json("osd", "metadata") if cluster is not None else []
    except Exception as exc:    # noqa: BLE001 - any failure only leaves the paths unchecked, and they say so
        log.warning("ceph osd metadata: %s", exc)
        return []
    return [m for m in md if isinstance(m, dict)] if isinstance(md, list) else []


def lab_ssh(lab_json: Path) -> SshSettings | None:
    """How cephbench reaches a multi-host lab's hosts (lab.json's topology.ssh); None without one."""
    ssh = _topology(lab_json).get("ssh")
    return SshSettings.model_validate(ssh) if ssh else None


def resolve_hosts(params: dict[str, Any], target: Any, ssh: SshSettings,
                  cluster: Any = None) -> tuple[list[tuple[HostRef | None, list[str]]], SshSettings]:
    """The suite's baseline.disks -> the paths of each host (None: this machine), and the ssh settings to reach
    them.

    paths [..]             this machine, or each of `hosts` (names, or osd-hosts: every host with an OSD)
    paths {host: [..]}     each host its own paths
    paths lab-osds         the lab's OSD directories: on this machine, or on each host of a multi-host lab
    """
    paths, hosts = params["paths"], params.get("hosts")
    if paths == "lab-osds":
        if not target.is_lab:
            raise UserError("paths 'lab-osds' only works against a lab", "list a mount point of each disk",
                            where="baseline.disks.paths")
        lab_json = Path(target.conf).parent / "lab.json"
        per_lab_host = lab_targets(lab_json)
        if not per_lab_host:
            return [(None, [str(p) for p in lab_osd_dirs(target.conf)])], ssh
        # a lab's hosts are this machine; where the lab records its drives, fio joins each OSD's blkio group, which
        # only this machine's own mounts can do (a host's namespace has no /sys/fs/cgroup)
        here = (Path(target.conf).parent / "drives.json").is_file()
        return [(HostRef(d.host, None if here else d.address) if d.address else None, d.dirs)
                for d in per_lab_host], lab_ssh(lab_json) or ssh
    if isinstance(paths, dict):
        return [(host_ref(name, ssh), list(p)) for name, p in paths.items()], ssh
    if hosts is None:
        return [(None, list(paths))], ssh
    if hosts == "osd-hosts":
        if cluster is None:
            raise UserError("hosts 'osd-hosts' needs the cluster", where="baseline.disks.hosts")
        refs = osd_hosts(cluster, ssh)
        if not refs:
            raise UserError("the cluster names no OSD host (ceph osd metadata)", "list the hosts by name",
                            where="baseline.disks.hosts")
        return [(r, list(paths)) for r in refs], ssh
    return [(host_ref(name, ssh), list(paths)) for name in hosts], ssh


def _where(exc: UserError, params: dict[str, Any]) -> UserError:
    """A refusal names the suite's key: where the host was named (hosts, or paths per host) for one ssh cannot
    reach, settings.ssh for hosts the cluster or the lab named; paths for everything else."""
    if exc.where in ("", "PATH"):
        exc.where = "baseline.disks.paths"
    elif exc.where == "settings.ssh" and isinstance(params.get("hosts"), list):
        exc.where = "baseline.disks.hosts"
    elif exc.where == "settings.ssh" and isinstance(params.get("paths"), dict):
        exc.where = "baseline.disks.paths"
    return exc


def preflight(cluster, tests: list[Test], settings) -> None:
    """Refuse a bad path, on whichever host it is, before the run changes anything (the checks `run_group` makes)."""
    first = tests[0].params
    try:
        per_host, ssh = resolve_hosts(first, cluster.target, settings.ssh, cluster)
        with_osd_devices(with_lab_drives(check_targets(per_host, first["size"], first.get("allow_raw_device", False),
                                                       ".cephbench-preflight.dat", ssh=ssh), first, cluster.target),
                         first, osd_metadata(cluster))
    except UserError as exc:
        raise _where(exc, first) from None


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    """The runner's entry: check the paths on their hosts, run every pattern of the group, remove the test files."""
    first = group[0].params
    per_host, ssh = resolve_hosts(first, ctx.target, ctx.settings.ssh, ctx.cluster)
    tests = [t for t in group if t.id in todo]
    if ctx.dry_run:
        where = "; ".join(f"{ref.name if ref else 'this host'}: {', '.join(p)}" for ref, p in per_host)
        ctx.planned.append(f"fio direct I/O test files in {where} (removed after)")
        return
    name = DISK_FILE.only_name(ctx.run_id)      # the one name its proof of ownership accepts
    try:
        targets = with_lab_drives(check_targets(per_host, first["size"], first.get("allow_raw_device", False), name,
                                                ctx.host, ssh), first, ctx.target)
        targets = with_osd_devices(targets, first, osd_metadata(ctx.cluster))
    except UserError as exc:
        raise _where(exc, first) from None
    targets, instead = with_lab_root(targets, first, ctx.target)
    files = enter_files(ctx.ledger, targets, ctx.host, ssh)
    for n, o in enumerate(run(tests, targets, first["size"], first["runtime_s"], ctx.rundir, ctx.host,
                              ctx.events.note, ctx.events.test_started, ssh, ctx.run_baseline_tools)):
        yield replace(o, notes=[*instead, *o.notes]) if instead and n == 0 else o
    for r in files:         # run removed them (all hosts at once); this checks they are gone, and says so
        ctx.ledger.release_one(r)


def enter_files(ledger: Ledger, targets: list[DiskTarget], host: LocalHost, ssh: SshSettings) -> list[Resource]:
    """Each test file enters the ledger before fio writes it: a run killed with -9 leaves its name in
    resources.json, and `cephbench cleanup` stops that fio and removes the file."""
    files = [Resource(DISK_FILE.name, f"{t.ref.address if t.ref and t.ref.address else 'localhost'}:{t.file}")
             for t in targets if not t.raw]
    with held():
        for r in files:
            ledger.add(r, lambda name=r.name: remove_disk_file(host, ssh, name))
    return files


def remove_file_entry(ctx: DriverContext, entry: Resource) -> None:
    """DISK_FILE's remover (kinds/disk_baseline.py): its ledger entry names the host and the file."""
    remove_disk_file(ctx.host, ctx.settings.ssh, entry.name)


def remove_disk_file(host: LocalHost, ssh: SshSettings, name: str) -> None:
    """Stop the fio still writing a test file (by the PID file beside it) and remove both, by the file's ledger
    name "<address or localhost>:<path>"; gone already is fine."""
    address, path = remote_file_parts(name)
    ref = HostRef(address, None if address == "localhost" else address)
    res = host.run(ref.argv(["sh", "-c", CLEANUP_SH, "cephbench-cleanup", f"{path}.pid", path], ssh), 60)
    if not res.ok:
        raise OperationFailed(f"{ref.where}: removing {path} failed: {res.error_text()}")
