"""Root file systems of Ceph releases other than the host's, built once from Debian's archive and reused.

A lab on another release runs its daemons from such a root under chroot (lab/chroot.py). Each root lives in
`<roots dir>/<release>/`: `root/` is the file system and `manifest.json` proves that cephbench built it and says
from what (suite, package versions, when, how long, how big). A build goes into a hidden temporary directory
first, marked before mmdebstrap writes anything, and is renamed into place only with its manifest written: a root
without a manifest is never used and never deleted by `lab roots --remove`, and a killed build leaves only a
marked temporary directory that the next build of that release removes.

Nothing outside lab/ knows where a root lives.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path

from ..core.errors import OperationFailed, UserError
from . import chroot
from ..core.releases import release_of_version  # noqa: F401 - lab.py reads a version through roots

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
BUILD_MARKER = ".cephbench-root-build"
_MAGIC = "cephbench lab root"
BUILD_TIMEOUT_S = 3600.0
# What a lab host of the release runs: its daemons, the tools a run starts there, and sshd for multi-host labs.
PACKAGES = ("ceph-mon", "ceph-osd", "ceph-mgr", "ceph-common", "radosgw", "python3-rados", "fio", "iperf3",
            "iproute2", "procps", "openssh-server")
# a binary every root must have: a root without it is not whole (a copy cut short, a file removed by hand); the
# baselines' tools too, which a lab host of the release runs from its root (drivers/disk_baseline.py, iperf.py)
ESSENTIAL = ("usr/bin/ceph-osd", "usr/bin/ceph-mon", "usr/bin/ceph-mgr", "usr/bin/radosgw", "usr/bin/ceph",
             "usr/bin/fio", "usr/bin/iperf3")


# Debian 13's python3-bcrypt is a PyO3 module, which refuses to load in ceph-mgr's subinterpreters (PyO3 issue
# 576): Reef's mgr_util imports it at the top, so every mgr module failed to load (MGR_MODULE_DEPENDENCY, never
# HEALTH_OK). This module, first on the mgr's path, takes its place; only the dashboard's passwords use bcrypt.
MGR_BCRYPT_SHIM = ("usr/share/ceph/mgr/bcrypt.py", '''"""Put here by cephbench when it built this root (lab/roots.py):
the system's bcrypt cannot load in ceph-mgr's subinterpreters. Only the dashboard's passwords use it."""


def gensalt(*args, **kwargs):
    raise RuntimeError("bcrypt is not available in a cephbench lab root")


hashpw = checkpw = kdf = gensalt
''')


@dataclass(frozen=True)
class Release:
    name: str
    major: int
    suite: str                       # the Debian suite whose archive carries it
    aptopts: tuple[str, ...] = ()    # what that archive needs (sid's Release file expires on mirrors)
    # files added to the root after mmdebstrap (path inside the root, text), recorded in the manifest
    fixups: tuple[tuple[str, str], ...] = ()
    # why a lab cannot run it yet ('' when it can); its root can still be built and listed
    no_lab: str = ""
    # cephx: the key type of the daemons' keys (keys.KEY_*), and the ciphers the monmap allows ('' Ceph's default)
    service_key_type: int = 1
    mon_ciphers: str = ""


RELEASES: dict[str, Release] = {r.name: r for r in (
    Release("pacific", 16, "bookworm"),
    Release("reef", 18, "trixie", fixups=(MGR_BCRYPT_SHIM,)),
    # Tentacle's monitors allow only aes256k keys by default, which the host's Ceph 16 client (cephbench's librados,
    # ceph, rados) does not know: the monmap also allows aes, for client.admin alone; the daemons' keys are aes256k
    Release("tentacle", 20, "sid", ('Acquire::Check-Valid-Until "false"',), service_key_type=2,
            mon_ciphers="aes,aes256k"),
)}


def release(name: str, where: str = "--release") -> Release:
    """The offered release called `name`, or one line listing those offered."""
    r = RELEASES.get(name.strip().lower())
    if r is not None:
        return r
    close = get_close_matches(name.lower(), list(RELEASES), n=1)
    hint = f"did you mean {close[0]}?" if close else "choose one of those"
    raise UserError(f"release {name!r} is not offered: offered are {', '.join(RELEASES)}", hint, where=where)


def roots_dir() -> Path:
    """Where roots are cached: CEPHBENCH_ROOTS_DIR (tests, CI), else the user's cache directory."""
    env = os.environ.get("CEPHBENCH_ROOTS_DIR")
    if env:
        return Path(env).absolute()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cephbench" / "roots"


@dataclass(frozen=True)
class BuildPlan:
    """Everything a build does, decided before anything is made."""

    release: Release
    final: Path          # <roots>/<release>
    staging: Path        # <roots>/.<release>.build-<pid>: renamed to `final` when whole
    argv: tuple[str, ...]

    @property
    def root(self) -> Path:
        return self.staging / "root"


def plan_build(rel: Release, base: Path, pid: int, mmdebstrap: str = "mmdebstrap") -> BuildPlan:
    staging = base / f".{rel.name}.build-{pid}"
    argv = [mmdebstrap, "--variant=apt", "--include=" + ",".join(PACKAGES)]
    argv += [f"--aptopt={opt}" for opt in rel.aptopts]
    argv += [rel.suite, str(staging / "root")]
    return BuildPlan(rel, base / rel.name, staging, tuple(argv))


@dataclass(frozen=True)
class Root:
    """A whole root on disk, as its manifest describes it."""

    release: str
    dir: Path
    suite: str
    ceph_version: str                # the Debian version of ceph-osd, e.g. 18.2.7+ds-1
    packages: dict[str, str]
    built_unix: float
    build_s: float
    size_bytes: int
    manifest_sha256: str

    @property
    def path(self) -> Path:
        return self.dir / "root"

    @property
    def manifest(self) -> Path:
        return self.dir / MANIFEST

    def record(self) -> dict:
        """What lab.json keeps of the root the lab ran from."""
        return {"release": self.release, "suite": self.suite, "path": str(self.path), "manifest": str(self.manifest),
                "manifest_sha256": self.manifest_sha256, "ceph_package_version": self.ceph_version}


def parse_dpkg_query(text: str) -> dict[str, str]:
    """`dpkg-query -W -f '${Package}\\t${Version}\\n'` -> {package: version}; lines without a version (known but
    not installed) are left out."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        name, _, version = line.partition("\t")
        if name.strip() and version.strip():
            out[name.strip()] = version.strip()
    return out


def manifest_json(rel: Release, packages: dict[str, str], built_unix: float, build_s: float, size_bytes: int,
                  argv: tuple[str, ...]) -> dict:
    return {"what": _MAGIC, "release": rel.name, "suite": rel.suite, "ceph_version": packages.get("ceph-osd", ""),
            "built_unix": round(built_unix, 1), "build_s": round(build_s, 1), "size_bytes": size_bytes,
            "argv": list(argv), "fixups": [path for path, _ in rel.fixups], "packages": dict(sorted(packages.items()))}


def parse_manifest(text: str, d: Path) -> Root | None:
    """The root a manifest describes, when it is ours and whole; None for anything else."""
    try:
        data = json.loads(text)
        if data.get("what") != _MAGIC or data.get("release") != d.name:
            return None
        packages = {str(k): str(v) for k, v in data["packages"].items()}
        return Root(str(data["release"]), d, str(data["suite"]), str(data["ceph_version"]), packages,
                    float(data["built_unix"]), float(data["build_s"]), int(data["size_bytes"]),
                    hashlib.sha256(text.encode()).hexdigest())
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def read_root(d: Path) -> Root | None:
    try:
        text = (d / MANIFEST).read_text()
    except OSError:
        return None
    return parse_manifest(text, d)


def whole(root: Root) -> str:
    """'' when the root looks whole, else what is wrong with it."""
    fixups = [path for path, _ in RELEASES[root.release].fixups] if root.release in RELEASES else []
    missing = [p for p in (*ESSENTIAL, *fixups) if not (root.path / p).exists()]
    if missing:
        return f"{root.path} lacks {', '.join(missing)}"
    if not root.ceph_version or "ceph-osd" not in root.packages:
        return f"{root.manifest} names no ceph-osd"
    # a root built from an older package list than today's lacks what was added since: it is rebuilt, not used
    # with this machine's tools standing in
    unlisted = [p for p in PACKAGES if p not in root.packages]
    if unlisted:
        return f"{root.manifest} lists no {', '.join(unlisted)} (built from an older package list)"
    return ""


def list_roots(base: Path | None = None) -> list[Root]:
    base = base or roots_dir()
    if not base.is_dir():
        return []
    found = (read_root(d) for d in sorted(base.iterdir()) if d.is_dir() and not d.name.startswith("."))
    return [r for r in found if r is not None]


def mounts_under(path: Path) -> list[str]:
    """Mount points at or below `path` (a lab running from this root has its /proc, /sys, /dev and lab there)."""
    prefix = str(path.resolve())
    out = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = fields[4].replace("\\040", " ")
            if point == prefix or point.startswith(prefix + "/"):
                out.append(point)
    return out


def processes_in(path: Path) -> list[int]:
    """PIDs of processes whose root directory is `path` (a lab's daemons run there in mount namespaces of their
    own, whose mounts the host does not see)."""
    target = str(path.resolve())
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if os.readlink(p / "root") == target:
                    out.append(int(p.name))
            except OSError:
                continue
    return out


def _remove_tree(path: Path) -> None:
    """Remove a root's tree; refused while anything is mounted inside it (rmtree would walk into a lab's data)."""
    mounted = mounts_under(path)
    if mounted:
        raise UserError(f"{path} has mounts inside it ({', '.join(mounted[:3])}): a lab runs from it",
                        "stop that lab with cephbench lab down first")
    shutil.rmtree(path)


def remove(name: str, base: Path | None = None) -> Root:
    """Remove the root of release `name`: only a directory that holds our manifest."""
    rel = release(name, where="--remove")
    d = (base or roots_dir()) / rel.name
    root = read_root(d)
    if root is None:
        raise UserError(f"there is no cephbench root of {rel.name} in {d.parent}: nothing was removed",
                        "cephbench lab roots lists them", where="--remove")
    mounted = mounts_under(d)
    users = processes_in(root.path)
    if mounted or users:
        what = f"mounts inside it ({', '.join(mounted[:3])})" if mounted else f"processes running from it ({users[0]})"
        raise UserError(f"the {rel.name} root has {what}: a lab runs from it",
                        "stop that lab with cephbench lab down first", where="--remove")
    # the manifest goes last: a removal cut short still leaves a directory that proves what it is
    if root.path.exists():
        shutil.rmtree(root.path)
    chroot.ledger_file(d).unlink(missing_ok=True)
    (d / MANIFEST).unlink()
    d.rmdir()
    return root


def _size_bytes(path: Path) -> int:
    total = 0
    dev = path.stat().st_dev
    for dirpath, dirnames, filenames in os.walk(path):
        for n in filenames:
            try:
                st = os.lstat(os.path.join(dirpath, n))
            except OSError:
                continue
            if st.st_dev == dev:
                total += st.st_blocks * 512
    return total


def _remove_dead_builds(base: Path, rel: Release) -> None:
    """Staging directories of builds that were killed: marked by us and their builder gone."""
    for d in base.glob(f".{rel.name}.build-*"):
        marker = d / BUILD_MARKER
        try:
            pid = int(marker.read_text().strip())
        except (OSError, ValueError):
            continue           # not marked by us: not ours to delete
        if pid != os.getpid() and Path(f"/proc/{pid}").exists():
            continue           # another build of the same release is going on
        log.info("removing %s, left by a build that was killed", d)
        _remove_tree(d)


def ensure(name: str, base: Path | None = None, progress=lambda msg: None, where: str = "--release") -> Root:
    """The root of release `name`, built now if there is none (or the cached one is not whole). One build at a
    time: a second `lab up --release` (or `lab roots --build`) waits for the first's and uses its root, rather than
    building it again beside it."""
    rel = release(name, where)
    base = base or roots_dir()
    if read_root(base / rel.name) is None:
        _mmdebstrap(rel)        # before the roots directory is made: a build that cannot start leaves nothing
    base.mkdir(parents=True, exist_ok=True)
    # the lock is on the roots directory itself: no lock file to leave behind; builds of two releases take turns
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"another process is building a root in {base}: waiting for it")
            fcntl.flock(fd, fcntl.LOCK_EX)
        return _ensure_locked(rel, base, progress)
    finally:
        os.close(fd)


def _ensure_locked(rel: Release, base: Path, progress) -> Root:
    existing = read_root(base / rel.name)
    if existing is not None:
        problem = whole(existing)
        if not problem:
            return existing
        progress(f"the cached {rel.name} root is not whole ({problem}): rebuilding it")
        remove(rel.name, base)
    elif (base / rel.name).exists():
        raise UserError(f"{base / rel.name} exists and is not a cephbench root: nothing in it was touched",
                        "move it away, or set CEPHBENCH_ROOTS_DIR to another directory")
    return build(rel, base, progress)


def _run_mmdebstrap(argv: tuple[str, ...], rel: Release) -> tuple[int, str]:
    """mmdebstrap to its end. Stopped (a timeout, Ctrl-C, SIGTERM) it gets SIGTERM and time to unmount what it
    mounted in the new root: SIGKILL, as subprocess.run sends, would leave /proc and /dev mounted there."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=BUILD_TIMEOUT_S)
        return proc.returncode, stderr or ""
    except BaseException as exc:
        proc.terminate()
        try:
            proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise UserError(f"building the {rel.name} root took over {BUILD_TIMEOUT_S:.0f} s: stopped",
                            "check the network to Debian's archive", where="--release") from None
        raise


def _unmount_own_build(staging: Path) -> None:
    """What a stopped mmdebstrap left mounted in the root this process was building (its /dev/pts, /dev/shm, /sys:
    under load its cleanup may not finish within its grace, and the build was killed): unmounted, deepest first,
    so the half-built root can go. Only a staging directory whose build marker names this process is touched."""
    try:
        mine = (staging / BUILD_MARKER).read_text().strip() == str(os.getpid())
    except OSError:
        mine = False
    if not mine:
        return
    deadline = time.monotonic() + 30          # its own cleanup first, if it is still unmounting
    while mounts_under(staging) and time.monotonic() < deadline:
        time.sleep(0.5)
    for point in sorted(mounts_under(staging), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], capture_output=True, timeout=60)


def _mmdebstrap(rel: Release) -> str:
    exe = shutil.which("mmdebstrap")
    if exe is None:
        raise UserError(f"building the {rel.name} root needs mmdebstrap, which is not installed",
                        "apt-get install mmdebstrap", where="--release")
    return exe


def build(rel: Release, base: Path, progress=lambda msg: None) -> Root:
    exe = _mmdebstrap(rel)
    base.mkdir(parents=True, exist_ok=True)
    _remove_dead_builds(base, rel)
    plan = plan_build(rel, base, os.getpid(), exe)
    plan.staging.mkdir()
    try:
        (plan.staging / BUILD_MARKER).write_text(f"{os.getpid()}\n")
        progress(f"building the {rel.name} root from Debian {rel.suite} into {plan.final} (a few minutes, once)")
        t0 = time.monotonic()
        returncode, stderr = _run_mmdebstrap(plan.argv, rel)
        if returncode != 0:
            tail = [ln for ln in stderr.splitlines() if ln.strip()][-1:] or ["no output"]
            raise UserError(f"building the {rel.name} root from Debian {rel.suite} failed "
                            f"(mmdebstrap exit {returncode}): {tail[0].strip()}",
                            "check that Debian's archive is reachable; nothing was kept", where="--release")
        build_s = time.monotonic() - t0
        q = subprocess.run(["dpkg-query", f"--admindir={plan.root}/var/lib/dpkg", "-W",
                            "-f", "${Package}\t${Version}\n"], capture_output=True, text=True, timeout=120)
        if q.returncode != 0:
            raise OperationFailed(f"dpkg-query in the new {rel.name} root failed: {q.stderr.strip()}")
        packages = parse_dpkg_query(q.stdout)
        for path, text in rel.fixups:
            (plan.root / path).write_text(text)
        manifest = manifest_json(rel, packages, time.time(), build_s, _size_bytes(plan.root), plan.argv)
        (plan.staging / BUILD_MARKER).unlink()
        (plan.staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        plan.staging.rename(plan.final)
    except BaseException:
        if plan.staging.exists():
            _unmount_own_build(plan.staging)
            _remove_tree(plan.staging)
        raise
    root = read_root(plan.final)
    if root is None or whole(root):
        raise OperationFailed(f"the {rel.name} root built in {plan.final} is not whole: "
                              f"{whole(root) if root else 'no manifest'}")
    progress(f"built the {rel.name} root in {build_s:.0f} s ({root.size_bytes / 2**20:.0f} MiB, "
             f"ceph {root.ceph_version})")
    return root
