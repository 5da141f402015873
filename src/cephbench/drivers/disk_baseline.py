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
import shutil
import stat
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import UserError
from ..hosts import LocalHost
from ..results import Measurement, RunDir, Test
from ..units import format_size
from . import ParseError
from .figures import array, count, mapping
from .base import Outcome
from .fio import FioJob, fio_argv, parse_fio_json, to_measurement

log = logging.getLogger(__name__)

KIB, MIB, GIB = 1024, 1024**2, 1024**3
DD_MAX_BS = GIB
SEQ_IODEPTH = 16
# Filesystems that would measure memory or nothing, not a disk.
NOT_A_DISK_FS = {"tmpfs", "ramfs", "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs",
                 "securityfs", "pstore", "bpf", "tracefs", "hugetlbfs", "mqueue", "configfs", "fusectl"}
# Signatures that mean a block device holds something (lsblk FSTYPE / blkid TYPE).
SIGNATURE_WORDS = {"LVM2_member": "an LVM physical volume", "ceph_bluestore": "a Ceph BlueStore OSD",
                   "crypto_LUKS": "a LUKS volume", "linux_raid_member": "an MD RAID member", "swap": "swap"}


@dataclass(frozen=True)
class Pattern:
    name: str
    rw: str
    bs: int | None          # None: the whole file in one write (dd-equivalent)
    iodepth: int
    time_based: bool = True

    @property
    def op(self) -> str:
        return "write" if "write" in self.rw else "read"


PATTERNS: dict[str, Pattern] = {p.name: p for p in (
    Pattern("dd", "write", None, 1, time_based=False),
    Pattern("write-1MiB", "write", MIB, SEQ_IODEPTH),
    Pattern("write-4MiB", "write", 4 * MIB, SEQ_IODEPTH),
    Pattern("read-1MiB", "read", MIB, SEQ_IODEPTH),
    Pattern("read-4MiB", "read", 4 * MIB, SEQ_IODEPTH),
    Pattern("randread-4KiB-qd1", "randread", 4 * KIB, 1),
    Pattern("randread-4KiB-qd32", "randread", 4 * KIB, 32),
    Pattern("randwrite-4KiB-qd1", "randwrite", 4 * KIB, 1),
    Pattern("randwrite-4KiB-qd32", "randwrite", 4 * KIB, 32),
)}
DEFAULT_PATTERNS = list(PATTERNS)


@dataclass(frozen=True)
class DiskTarget:
    path: str           # what the user gave
    file: str           # what fio opens: a test file in the directory, or the raw device
    raw: bool
    device: str         # major:minor of the backing device, to spot paths that share one disk


# ---- checks: everything that can refuse, before anything is written ------------------------

def _fs_type(path: Path, mounts_text: str) -> str | None:
    """The filesystem type of the mount holding `path` (longest mount point prefix)."""
    real = str(path.resolve())
    best, fstype = "", None
    for line in mounts_text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, fstype = mnt, parts[2]
    return fstype


def check_directory(path: Path, size: int, mounts_text: str, test_name: str) -> DiskTarget:
    """A directory fio may write `size` bytes in. Raises UserError with the reason otherwise."""
    if not path.exists():
        raise UserError(f"{path} does not exist", "give an existing directory on the disk to measure")
    if not path.is_dir():
        raise UserError(f"{path} is not a directory", "give a directory on the disk to measure "
                        "(a raw block device needs --allow-raw-device)")
    fstype = _fs_type(path, mounts_text)
    if fstype in NOT_A_DISK_FS:
        raise UserError(f"{path} is on {fstype}, which is memory, not a disk",
                        "give a directory on the disk itself (BlueStore OSD directories are tmpfs: "
                        "use a mount point of the disk instead)")
    free = shutil.disk_usage(path).free
    if free < size:
        raise UserError(f"{path} has {format_size(free)} free, less than the test file of {format_size(size)}",
                        "free some space or choose a smaller --size")
    probe = path / f".{test_name}.probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"cannot write in {path}: {exc.strerror}",
                        "give a directory this user can write to") from None
    return DiskTarget(str(path), str(path / test_name), False, _device_of(path))


def _device_of(path: Path) -> str:
    st = path.stat()
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    return f"{os.major(dev)}:{os.minor(dev)}"


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


def check_raw_device(path: Path, size: int, allow_raw: bool, host: LocalHost) -> DiskTarget:
    if not allow_raw:
        raise UserError(f"{path} is a raw block device and the baseline would overwrite it",
                        "pass --allow-raw-device if it holds nothing (cephbench checks that), "
                        "or give a directory on it")
    res = host.run(["lsblk", "-J", "-b", "-o", "NAME,PATH,TYPE,SIZE,RO,MOUNTPOINTS,FSTYPE", str(path)], 30)
    if not res.ok:
        raise UserError(f"lsblk cannot read {path}: {res.error_text()}")
    blk = host.run(["blkid", "-p", "-o", "export", str(path)], 30)
    try:
        problems = raw_device_problems(parse_lsblk(res.stdout), blk.returncode, blk.stdout + blk.stderr, size,
                                       _read("/proc/mounts"), _read("/proc/swaps"))
    except ParseError as exc:
        raise UserError(f"cannot tell whether {path} is in use: {exc}",
                        "check that lsblk works here (util-linux), or give a directory on the disk") from None
    if problems:
        raise UserError(f"refusing to write to {path}: {'; '.join(problems)}",
                        "give an unused device, or a directory on a mounted disk")
    return DiskTarget(str(path), str(path), True, _device_of(path))


def _read(p: str) -> str:
    try:
        return Path(p).read_text()
    except OSError:
        return ""


def check_paths(paths: list[Path], size: int, allow_raw: bool, test_name: str,
                host: LocalHost | None = None) -> list[DiskTarget]:
    host = host or LocalHost()
    if not paths:
        raise UserError("give at least one directory (or raw device) to measure", where="PATH")
    if size <= 0:
        raise UserError("the test file size must be larger than zero", where="--size")
    seen: set[str] = set()
    targets = []
    mounts = _read("/proc/mounts")
    for p in paths:
        p = Path(p)
        key = str(p.resolve()) if p.exists() else str(p)
        if key in seen:
            raise UserError(f"{p} is given twice", "give each disk once")
        seen.add(key)
        if p.exists() and stat.S_ISBLK(p.stat().st_mode):
            targets.append(check_raw_device(p, size, allow_raw, host))
        else:
            targets.append(check_directory(p, size, mounts, test_name))
    return targets


# ---- fio jobs -------------------------------------------------------------------------------

def fio_job(pattern: Pattern, target: DiskTarget, size: int, runtime_s: float, name: str,
            first_of_step: bool) -> FioJob:
    bs = pattern.bs or min(size, DD_MAX_BS)
    extra: dict[str, Any] = {"filename": target.file, "randrepeat": 0, "norandommap": 1}
    if first_of_step:
        extra["stonewall"] = True    # wait for the previous step; jobs of one step run together
        extra["new_group"] = True
    if pattern.name == "dd":
        extra.pop("norandommap")
    return FioJob(name=name, rw=pattern.rw, bs=bs, iodepth=pattern.iodepth, size=size,
                  runtime_s=None if not pattern.time_based else runtime_s, time_based=pattern.time_based,
                  direct=True, engine="libaio", extra=extra)


def steps_for(patterns: list[str]) -> list[Pattern]:
    """The patterns in run order. dd always runs first: it writes the whole file, so reads read real data."""
    names = ["dd"] + [n for n in DEFAULT_PATTERNS if n in patterns and n != "dd"]
    return [PATTERNS[n] for n in names]


def scope_jobs(steps: list[Pattern], targets: list[DiskTarget], size: int, runtime_s: float) -> list[FioJob]:
    """One fio invocation: each step waits for the previous one; within a step every target runs at once."""
    jobs = []
    for p in steps:
        for i, t in enumerate(targets):
            jobs.append(fio_job(p, t, size, runtime_s, f"{p.name}@{i}", first_of_step=(i == 0)))
    return jobs


def invocation_timeout(steps: list[Pattern], size: int, runtime_s: float) -> float:
    # time-based steps take runtime (x3 for fio's own setup); dd is size-bound: allow 5 MB/s
    return sum(runtime_s * 3 + 30 for p in steps if p.time_based) + size / 5e6 + 120


# ---- aggregation ---------------------------------------------------------------------------

def _summary(m: Measurement) -> dict[str, Any]:
    return {"bytes_per_s": m.bytes_per_s, "ops_per_s": m.ops_per_s, "lat_mean_ns": m.latency.mean_ns,
            "lat_p99_ns": m.latency.percentiles_ns.get("99"), "duration_s": m.duration_s}


def pattern_measurement(pattern: Pattern, targets: list[DiskTarget], alone: dict[int, Measurement],
                        parallel: dict[int, Measurement], size: int) -> tuple[Measurement, list[str]]:
    """One pattern's Measurement: the median disk alone as the headline; every disk alone and in parallel in extra."""
    notes: list[str] = []
    alone_bw = [alone[i].bytes_per_s or 0.0 for i in sorted(alone)]
    par_bw = [parallel[i].bytes_per_s or 0.0 for i in sorted(parallel)]
    alone_iops = [alone[i].ops_per_s or 0.0 for i in sorted(alone)]
    par_iops = [parallel[i].ops_per_s or 0.0 for i in sorted(parallel)]
    head = alone[sorted(alone)[0]] if alone else parallel[sorted(parallel)[0]]
    med_alone = statistics.median(alone_bw) if alone_bw else None
    med_par = statistics.median(par_bw) if par_bw else None
    devices = {t.path: t.device for t in targets}
    shared = len(targets) > 1 and len(set(devices.values())) < len(targets)
    extra: dict[str, Any] = {
        "pattern": pattern.name, "rw": pattern.rw, "iodepth": pattern.iodepth,
        "block_size": pattern.bs or min(size, DD_MAX_BS), "file_size": size,
        "paths": [t.path for t in targets], "devices": devices, "shared_device": shared,
        "alone": {targets[i].path: _summary(m) for i, m in alone.items()},
        "parallel": {targets[i].path: _summary(m) for i, m in parallel.items()},
        "alone_median_bytes_per_s": med_alone, "alone_median_ops_per_s": statistics.median(alone_iops) if alone_iops else None,
        "parallel_median_bytes_per_s": med_par, "parallel_median_ops_per_s": statistics.median(par_iops) if par_iops else None,
        "parallel_total_bytes_per_s": sum(par_bw) if par_bw else None,
        "parallel_total_ops_per_s": sum(par_iops) if par_iops else None,
        "aggregate": "headline: median disk alone; parallel_*: every disk at once",
    }
    if med_alone and med_par is not None and len(targets) > 1:
        drop = 1 - med_par / med_alone
        extra["parallel_drop"] = drop
        notes.append(f"{pattern.name}: {med_alone / 1e6:.1f} MB/s per disk alone, {med_par / 1e6:.1f} MB/s per disk "
                     f"with all {len(targets)} at once ({drop:.0%} less each; MB = 10^6 bytes)")
    if shared and pattern.name == "dd":
        notes.append(f"{pattern.name}: the {len(targets)} paths share one device "
                     f"({', '.join(sorted(set(devices.values())))}): the parallel figures split one disk between them")
    if pattern.name == "dd" and med_alone:
        notes.append(f"dd-equivalent ({format_size(extra['block_size'])} in one direct write): {med_alone / 1e6:.1f} MB/s "
                     "per disk (MB = 10^6 bytes, as dd prints; compare with the seeds' 107 MB/s, 154 MB/s)")
    m = Measurement(tool="fio", op=pattern.op, duration_s=max(x.duration_s for x in [*alone.values(), *parallel.values()]),
                    bytes_per_s=med_alone, ops_per_s=statistics.median(alone_iops) if alone_iops else None,
                    op_size_bytes=pattern.bs or min(size, DD_MAX_BS), latency=head.latency, extra=extra)
    return m, notes


# ---- running ------------------------------------------------------------------------------

def run(tests: list[Test], targets: list[DiskTarget], size: int, runtime_s: float, rundir: RunDir | None,
        host: LocalHost, note: Callable[[str], None], test_started: Callable[[Test], None] | None = None,
        ) -> Iterator[Outcome]:
    """Every path alone, then all at once; one Outcome per test (a test = one pattern). Test files always removed."""
    started, t0 = time.time(), time.monotonic()
    steps = steps_for([t.params["pattern"] for t in tests])
    scopes: list[tuple[str, list[int]]] = [(f"alone-{i}", [i]) for i in range(len(targets))]
    if len(targets) > 1:
        scopes.append(("parallel", list(range(len(targets)))))
    raw_dir = rundir.raw_dir("baseline-disk") if rundir else Path(os.environ.get("TMPDIR", "/tmp"))
    per_scope: dict[str, list] = {}
    commands, raw, errors = [], [], []
    if test_started and tests:
        test_started(tests[0])
    try:
        for scope, idx in scopes:
            what = targets[idx[0]].path if len(idx) == 1 else f"all {len(idx)} paths at once"
            note(f"disk baseline: {what} ({len(steps)} fio steps)")
            out = raw_dir / f"fio-{scope}.json"
            argv = fio_argv(scope_jobs(steps, [targets[i] for i in idx], size, runtime_s), {}, out)
            res = host.run(argv, invocation_timeout(steps, size, runtime_s))
            commands.append(res.cmdline)
            text = out.read_text(errors="replace") if out.exists() else ""
            if rundir:
                raw.append(str(out.relative_to(rundir.path)))
            if not res.ok:
                errors.append(f"fio ({scope}) failed: {res.error_text()}")
                break
            try:
                per_scope[scope] = parse_fio_json(text)
            except ParseError as exc:
                errors.append(f"fio ({scope}): {exc}")
                break
    finally:
        remove_test_files(targets)
    for test in tests:
        pat = PATTERNS[test.params["pattern"]]
        if errors:
            yield Outcome(test, started, time.monotonic() - t0, error="; ".join(errors), commands=commands, raw=raw)
            continue
        try:
            alone = {i: to_measurement([j for j in per_scope[f"alone-{i}"] if j.name == f"{pat.name}@0"], pat.rw)
                     for i in range(len(targets))}
            parallel = {}
            if "parallel" in per_scope:
                parallel = {i: to_measurement([j for j in per_scope["parallel"] if j.name == f"{pat.name}@{i}"],
                                              pat.rw) for i in range(len(targets))}
            m, notes = pattern_measurement(pat, targets, alone, parallel, size)
        except ParseError as exc:
            yield Outcome(test, started, time.monotonic() - t0, error=str(exc), commands=commands, raw=raw)
            continue
        yield Outcome(test, started, time.monotonic() - t0, measurement=m, commands=commands, raw=raw, notes=notes)


def remove_test_files(targets: list[DiskTarget]) -> None:
    for t in targets:
        if not t.raw:
            try:
                os.unlink(t.file)
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("could not remove the test file %s: %s", t.file, exc)


def make_tests(patterns: list[str], params: dict[str, Any], start_index: int = 1, group: str = "b001",
               workload: str = "baseline-disk", est_scopes: int = 1) -> list[Test]:
    """One test per pattern, in run order; dd always (it writes the file the reads read, and it is the
    dd-equivalent line to compare with published figures)."""
    out = []
    for n, name in enumerate(steps_for(patterns)):
        index = start_index + n
        out.append(Test(id=f"{index:03d}-{workload}-{name.name}", index=index, workload=workload,
                        kind="disk_baseline", group=group, params={**params, "pattern": name.name},
                        est_duration_s=float(params.get("runtime_s") or 0) * est_scopes))
    return out


def lab_osd_dirs(conf: Path) -> list[Path]:
    """A lab keeps each OSD's data (and its BlueStore block file) in <lab>/osd/<id>."""
    osd = Path(conf).parent / "osd"
    dirs = sorted((d for d in osd.iterdir() if d.is_dir()), key=lambda d: int(d.name) if d.name.isdigit() else 0) \
        if osd.is_dir() else []
    return dirs


def _paths(params: dict[str, Any], target) -> list[str]:
    """The suite's paths; "lab-osds" resolves to the lab's OSD directories."""
    paths = params["paths"]
    if paths != "lab-osds":
        return list(paths)
    if not target.is_lab:
        raise UserError("paths 'lab-osds' only works against a lab", "list a mount point of each disk",
                        where="baseline.disks.paths")
    return [str(p) for p in lab_osd_dirs(target.conf)]


def preflight(cluster, tests: list[Test], settings) -> None:  # noqa: ARG001 - the runner's preflight hook
    """Refuse a bad path before the run changes anything (the same checks the CLI makes)."""
    first = tests[0].params
    try:
        check_paths([Path(p) for p in _paths(first, cluster.target)], first["size"],
                    first.get("allow_raw_device", False), ".cephbench-preflight.dat")
    except UserError as exc:
        exc.where = exc.where or "baseline.disks.paths"
        raise


def run_group(ctx, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    """The runner's entry: check the paths, run every pattern of the group, remove the test files."""
    first = group[0].params
    paths = _paths(first, ctx.target)
    tests = [t for t in group if t.id in todo]
    if ctx.dry_run:
        ctx.planned.append(f"fio direct I/O test files in {', '.join(paths)} (removed after)")
        return
    name = f"cephbench-{ctx.run_id}-baseline.dat"
    targets = check_paths([Path(p) for p in paths], first["size"], first.get("allow_raw_device", False), name,
                          ctx.host)
    yield from run(tests, targets, first["size"], first["runtime_s"], ctx.rundir, ctx.host, ctx.events.note,
                   ctx.events.test_started)
