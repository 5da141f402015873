"""Create, start, inspect and stop a lab cluster.

A lab is one directory: ceph.conf, keyrings, mon/mgr/osd data, sparse files that hold BlueStore, an RGW,
logs, PID files and lab.json. Daemons run in the foreground of their own session (they do not wait for each
other to start) and write PID files there; `down` stops exactly those PIDs, after checking each is still this
lab's process.

Start-up does everything that does not need the monitor before or beside it: keys are made in Python and the
monitor imports them all at mkfs, the OSDs' `--mkfs` runs while the monitor starts, and one librados
connection does the rest (OSD ids, RGW's pools, every poll) instead of `ceph` CLI processes.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
import contextlib
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from ..core.capacity import df_capacity
from ..core import interrupts
from ..core.errors import OperationFailed, ParseError, UserError
from ..core.rgwusers import user_keys
from ..core.fetch import fetch
from ..hosts.local import CommandResult, LocalHost
from ..core.units import format_size
from . import daemons as dm
from . import cgroups, containers, drives, labdir, monitoring as mon_stack, netns, roots, sshd
from .chroot import InRoot, make_mount_point, remove_mount_points
from .chroot import RECORD_NAME as ROOT_RECORD
from .asok import AsokError, asok_command
from .conf import AIO_POLL_MS, LabNet, LabPorts, disk_room, mon_addrs, render_conf
from .keys import KEY_AES, Entity, new_secret, write_keyring
from .monclient import LabMon
from .multihost import MGR, MON, RGW, MultiHostSpec, daemon_host, osd_host, spec_from_topology, topology_json

log = logging.getLogger(__name__)

# ceph and rados are not used to start the lab, but are what a lab is for.
REQUIRED_BINARIES = ("ceph", "ceph-mon", "ceph-mgr", "ceph-osd", "monmaptool", "radosgw", "radosgw-admin", "rados")
# Health checks a healthy one-host lab may still show, and why they are harmless there.
ACCEPTED_WARNINGS = {
    "MON_DISK_LOW": "the lab shares the developer's disk; only the OSD files matter",
    "TOO_FEW_OSDS": "a lab with fewer OSDs than the default pool size is the user's choice",
    "RECENT_CRASH": "a crash report from an earlier lab in a reused directory",
    "OSDMAP_FLAGS": "noscrub/nodeep-scrub are set by cephbench while it runs",
    # a Tentacle lab: its client.admin key is of the type the host's Ceph 16 client knows (roots.py)
    "AUTH_INSECURE_CLIENT_KEY_TYPE": "client.admin's key is aes, for the host's older client",
    "AUTH_INSECURE_KEYS_ALLOWED": "the monmap allows aes keys, for the host's older client",
    "AUTH_INSECURE_KEYS_CREATABLE": "the monmap allows aes keys, for the host's older client",
}
LAB_USER = "cephbench-lab"
# RGW's pools, made before the OSDs are up so that all PGs peer at once. Without them RGW makes its own
# pools one by one at start, and the bucket pools on the first write: the first benchmark would measure
# pool creation (8 PUT/s at 2 s each).
# where cephadm keeps a cluster's daemons' sockets on a host: <this>/<fsid>/ceph-osd.N.asok
CEPHADM_RUN_DIR = Path("/var/run/ceph")
RGW_POOLS = (".rgw.root", "default.rgw.log", "default.rgw.control", "default.rgw.meta",
             "default.rgw.buckets.index", "default.rgw.buckets.data", "default.rgw.buckets.non-ec")
# Environment variables Ceph programs read. An earlier `eval "$(cephbench lab env)"` leaves CEPH_KEYRING
# pointing at a lab that is gone, and it overrides ceph.conf: the monitor then starts without cephx keys and
# nothing can talk to it. The lab's processes never see them.
CEPH_ENV_PREFIX = "CEPH_"
# for the --mkfs runs: run/<name>.pid is the daemon's, and `down` would take a finished mkfs for it
# mkfs: no PID file (the daemon's own, which its start writes), and in the foreground: Ceph's commands daemonize
# by default, and a mkfs forks a child in a session of its own that a killed start would leave running
MKFS_ARGS = ("--pid-file", "", "-f")
RUNNING = ".running"        # run/<pid>.running: a command of the start (an OSD's mkfs) while it runs
# the mgr's niceness while the lab starts (bench lab, one-host, alternated: up 2.43 -> 2.2 s median, and none of its
# 5 starts waited 1.5 s more for the mgr, as 1 in 2 or 3 plain starts did); 0 again once the lab is healthy
MGR_START_NICE = -10
# Where the host's mgr keeps its modules' bytecode (PYTHONPYCACHEPREFIX): Ceph's packages ship the modules as source
# alone, in a directory only root may write, so each mgr start compiled them again, in each module's subinterpreter
# (mgr_module.py in all eleven): part of what a lab's start waited for. CEPHBENCH_MGR_BYTECODE_DIR (tests) overrides.
MGR_BYTECODE_DIR = "mgr-bytecode"


def mgr_bytecode_env() -> dict[str, str]:
    """The environment a lab's mgr on the host's Ceph starts with: its modules' bytecode written once, to the user's
    cache, and read by every later start (Python checks each against its source's time and size, so a package
    upgrade compiles again). A caller's PYTHONDONTWRITEBYTECODE is the caller's: not the mgr's (empty: unset)."""
    env = os.environ.get("CEPHBENCH_MGR_BYTECODE_DIR")
    where = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cephbench" / \
        MGR_BYTECODE_DIR
    return {"PYTHONPYCACHEPREFIX": str(where.absolute()), "PYTHONDONTWRITEBYTECODE": ""}


# the last waits of a start look every 0.1 s at most, not 0.25 s: each is a few mon commands of a ms or two, and a
# step seen done 0.2 s late was 0.2 s of a 2 s start
START_POLL_S = 0.1


@dataclass
class LabInfo:
    """What lab.json holds: enough for clients and for `down` to find everything."""

    dir: str
    fsid: str
    osds: int
    osd_size_bytes: int
    rgw: bool
    ports: dict[str, int]
    created_unix: float
    ceph_version: str = ""
    startup_s: float = 0.0
    # when each start-up step ended, in seconds from the start (`make bench NAME=lab` prints them)
    startup_steps: dict[str, float] = field(default_factory=dict)
    rgw_address: str = "127.0.0.1"
    # a multi-host lab: hosts, addresses, link rates, which network each daemon uses, ssh (multihost.topology_json);
    # None: the one-host loopback lab
    topology: dict | None = None
    # the Ceph release the daemons run (pacific, reef, ...), and the root they run from when it is not the host's
    # own Ceph (roots.Root.record: path, manifest and its sha256, suite); `ceph versions` once the lab was whole
    release: str = ""
    root: dict | None = None
    versions: dict = field(default_factory=dict)
    # `lab up --monitoring`: Prometheus's URL, each host's node-exporter, the mgr module (monitoring.MonitoringPlan)
    monitoring: dict | None = None
    # up(container_sockets=True): the directory of the OSDs' admin sockets, where cephadm puts them on a host
    # (/var/run/ceph/<fsid>), which the lab's ceph.conf does not name; None: the lab's run/, as its conf says
    osd_sockets: str | None = None

    @property
    def conf(self) -> Path:
        return Path(self.dir) / "ceph.conf"

    @property
    def rgw_endpoint(self) -> str | None:
        return f"http://{self.rgw_address}:{self.ports['rgw']}" if self.rgw else None

    @property
    def rgw_credentials_path(self) -> Path:
        return Path(self.dir) / "rgw-user.json"


@dataclass
class DaemonStatus:
    name: str
    pid: int | None
    running: bool


def _free_ports(n: int) -> list[int]:
    """n distinct free loopback ports (all held open while choosing, so none is handed out twice)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def _lab_host() -> LocalHost:
    return LocalHost(unset_env=frozenset(k for k in os.environ if k.startswith(CEPH_ENV_PREFIX)))


class _Steps:
    """Seconds from the start at which each step ended, for the start-up breakdown."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.done: dict[str, float] = {}

    def mark(self, step: str) -> None:
        self.done[step] = round(time.monotonic() - self.t0, 3)
        log.info("lab start: %s at %.2f s", step, self.done[step])


@dataclass
class Lab:
    dir: Path
    host: LocalHost = field(default_factory=_lab_host)
    # daemons this object started, by name: their PID before the daemon has written its PID file
    _started: dict[str, subprocess.Popen] = field(default_factory=dict, repr=False)
    # a multi-host lab being started: its plan and its network
    _spec: MultiHostSpec | None = field(default=None, repr=False)
    _net: netns.Topology | None = field(default=None, repr=False)
    _drives: drives.LabDrives | None = field(default=None, repr=False)
    # the release's root of a lab being started (None: the host's own Ceph)
    _root: roots.Root | None = field(default=None, repr=False)
    # a lab being started with its monitoring stack (`lab up --monitoring`)
    _monitoring: bool = field(default=False, repr=False)
    # a lab being started with its OSDs' admin sockets where cephadm puts them (up(container_sockets=True))
    _container_sockets: bool = field(default=False, repr=False)
    # a lab being started with its daemons in containers (up(deploy=...)): what containers.py does for it
    _ctr: containers.Deploy | None = field(default=None, repr=False)
    _full_ratio: float | None = field(default=None, repr=False)     # conf.disk_room's, for this up
    # what the last down left in the directory because the lab did not make it (a user's file in log/)
    left: list[str] = field(default_factory=list, repr=False)

    # ---- paths and state -------------------------------------------------
    @property
    def info_path(self) -> Path:
        return self.dir / "lab.json"

    @property
    def conf(self) -> Path:
        return self.dir / "ceph.conf"

    @property
    def admin_keyring(self) -> Path:
        return self.dir / "keyring" / "ceph.client.admin.keyring"

    @property
    def netns_record(self) -> Path:
        return self.dir / "netns.json"

    @property
    def drives_record(self) -> Path:
        return self.dir / drives.RECORD_NAME

    def drives(self) -> drives.LabDrives | None:
        try:
            return drives.LabDrives.load(self.drives_record)
        except (OSError, ValueError, KeyError):
            return None

    def host_bin(self, host: str) -> Path:
        """The directory first on a multi-host lab host's PATH in its ssh sessions (sshd.py)."""
        return self.dir / "hosts" / host / "bin"

    @property
    def ssh_files(self) -> sshd.SshFiles:
        return sshd.SshFiles(self.dir / "ssh")

    def info(self) -> LabInfo | None:
        try:
            data = json.loads(self.info_path.read_text())
        except (OSError, ValueError):
            return None
        return LabInfo(**data)

    def _multi(self) -> tuple[MultiHostSpec, netns.Topology] | None:
        """The plan and network of this multi-host lab (the one starting, or the one lab.json describes)."""
        if self._spec is not None and self._net is not None:
            return self._spec, self._net
        info = self.info()
        topo = self._topology()
        if info is None or info.topology is None or topo is None:
            return None
        return spec_from_topology(info.topology), topo

    def _topology(self) -> netns.Topology | None:
        try:
            return netns.Topology.load(self.netns_record)
        except (OSError, ValueError, KeyError):
            return None

    def _write_info(self, info: LabInfo) -> None:
        tmp = self.info_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(info), indent=2) + "\n")
        tmp.replace(self.info_path)

    def env(self) -> dict[str, str]:
        return {"CEPH_CONF": str(self.conf), "CEPH_KEYRING": str(self.admin_keyring)}

    def _daemon(self, name: str) -> dm.Daemon:
        return dm.Daemon(name, self.dir / "run", self.dir / "log")

    def _pid(self, d: dm.Daemon) -> int | None:
        # a process this object started, while it runs; else the pid file: a run's lab shape may have rebuilt the
        # lab from another process since (its daemons are new, and the ones this object started are gone)
        proc = self._started.get(d.name)
        return proc.pid if proc is not None and proc.poll() is None else d.pid()

    def daemons(self) -> list[DaemonStatus]:
        run = self.dir / "run"
        names = {p.stem for p in run.glob("*.pid")} if run.is_dir() else set()
        out = []
        for name in sorted(names | set(self._started)):
            pid = self._pid(self._daemon(name))
            out.append(DaemonStatus(name, pid, pid is not None and dm.is_lab_process(pid, self.conf)))
        return out

    def is_running(self) -> bool:
        return any(d.running for d in self.daemons())

    def _mon(self, patience_s: float = dm.OVERALL_S) -> LabMon:
        return LabMon(self.conf, self.admin_keyring, check_mon=self._check_mon_alive, patience_s=patience_s)

    def _check_mon_alive(self) -> None:
        d = self._daemon(MON)
        pid = self._pid(d)
        if pid is None or not dm.process_alive(pid):
            raise OperationFailed(dm.died_message(d, "an answer from the monitor"))

    def _check(self, res: CommandResult, what: str) -> CommandResult:
        if not res.ok:
            why = (f"killed by {signal.Signals(-res.returncode).name}" if res.returncode < 0 and not res.timed_out
                   else res.error_text())
            raise OperationFailed(f"lab: {what} failed: {why} (logs in {self.dir / 'log'})")
        return res

    def _in_root(self) -> InRoot | None:
        """How this lab's Ceph commands run from its release's root; None when they run from the host."""
        if self._root is not None:
            return InRoot(self._root.path, self.dir, self._root.release)
        info = self.info()
        return InRoot(Path(info.root["path"]), self.dir, info.release) if info is not None and info.root else None

    def tool_root(self, tool: str) -> tuple[InRoot | None, str]:
        """How `tool` runs on this machine as one of this lab's hosts (the disk baseline's fio on the OSDs' drives,
        the one-host lab's iperf3): from the release's root, as the daemons, when the root has it; else this
        machine's, with a one-line note when that is not what the lab's release would run ('' on the host's Ceph)."""
        in_root = self._in_root()
        if in_root is None or in_root.has(tool):
            return in_root, ""
        return None, f"the lab's {in_root.release} root has no {tool}: this machine's {tool} ran instead"

    def _ceph_argv(self, argv: list) -> list:
        inroot = self._in_root()
        return inroot.argv(argv) if inroot is not None else argv

    def _run(self, argv: list, timeout_s: float, label: str) -> CommandResult:
        """A Ceph command of the lab's release (mkfs, monmaptool, radosgw-admin), to its end. While it runs, its PID
        is in run/<label>.running, written by the command's own process: a start killed with SIGKILL ends its
        threads, not the mkfs they were waiting on, and the next up or down ends what such a file names (an OSD's
        mkfs left running made the next start fail with EEXIST, or outlived its down)."""
        record = self.dir / "run" / f"{label}{RUNNING}"
        try:
            return self.host.run(dm.self_recording(self._ceph_argv(argv), record), timeout_s)
        finally:
            record.unlink(missing_ok=True)

    def _end_commands_left(self) -> None:
        """End the commands a killed start left running (run/*.running), and forget them. Each ran in a session of
        its own: its process group holds what it forked too."""
        run = self.dir / "run"
        for f in (run.glob(f"*{RUNNING}") if run.is_dir() else ()):
            pid = dm.read_pid(f)
            if pid is not None and (ended := dm.kill_group(pid, self.conf)):
                log.info("lab: ended %s (%s), left running by a start that was killed", ", ".join(map(str, ended)),
                         f.name.removesuffix(RUNNING))
            f.unlink(missing_ok=True)

    def _start_daemon(self, name: str, argv: list[str], ceph: bool = True, console: Path | None = None,
                      on_host: bool = True) -> None:
        """Start a daemon in the foreground of its own session: no waiting for its start-up here.

        In a multi-host lab it runs inside its host's network namespace, under its host's name, in its groups;
        not `on_host`, a daemon's `podman run`, which puts its container there itself (containers.py). Its output
        goes to log/<name>.out, or to `console` (a host's busy loop's, in run/: log/ holds the daemons' logs
        alone)."""
        d = self._daemon(name)
        # sshd too: a session on a lab host runs the release's tools (rados, rbd, fio)
        if name.startswith("osd.") and ceph:
            info = self.info()
            if info is not None and info.osd_sockets:
                # the command line wins over ceph.conf, which goes on naming run/ (as a host's conf says nothing of a
                # container's socket)
                argv = [*argv, "--admin-socket", f"{info.osd_sockets}/$cluster-$name.asok"]
        argv = self._ceph_argv([*argv, "--conf", str(self.conf), "-f"] if ceph else list(argv))
        env: dict[str, str] | None = None
        if name == MGR and ceph:
            # the mgr first: up (2 cores) waits for it to load its Python modules (1.5-3 s of CPU) beside the OSDs'
            # mkfs and start; back to the OSDs' priority once the lab is healthy (_mgr_priority_back)
            argv = ["nice", "-n", str(MGR_START_NICE), *argv]
            if self._in_root() is None:
                env = mgr_bytecode_env()
        multi = self._multi() if on_host else None
        if multi is not None:
            host = daemon_host(multi[0], name)
            argv = netns.exec_argv(multi[1].host(host).netns, argv)
            env = {**(env or {}), "NODE_NAME": host}
            # outside the namespace's command: the process joins its groups, then enters its network
            argv = cgroups.join_argv(self._groups(name, host), argv)
        # The daemon writes its PID file first (a SIGKILL of this process right after the fork cannot leave it
        # unrecorded), and a signal is held meanwhile: one inside Popen, after its fork, loses the child's PID
        # (Popen never returns), and the stop that follows could read its PID file before it is written (CI: the
        # mgr, started as its `lab up` was SIGTERM'd, outlived it)
        with interrupts.held():
            proc = self.host.start(dm.self_recording(argv, d.pid_file), stdout_path=console or d.console,
                                   env=env)
            self._started[name] = proc
            # radosgw writes no PID file in the foreground; the others write this same PID (they are this process).
            d.pid_file.write_text(f"{proc.pid}\n")

    def _mgr_priority_back(self) -> None:
        """The mgr's processes (its session: the wrappers of a root or a host too) and each of their threads at the
        priority the other daemons have: a benchmark meets the mgr as Ceph runs it."""
        # only the mgr this object started, still running (its PID, an unreaped child, cannot be another's): never
        # a pid file's, which may name a process that is no longer the lab's
        proc = self._started.get(MGR)
        pid = proc.pid if proc is not None and proc.poll() is None else None
        for member in dm.group_members(pid) if pid is not None else ():
            try:
                tasks = os.listdir(f"/proc/{member}/task")
            except OSError:
                continue
            for tid in tasks:
                with contextlib.suppress(OSError):       # a thread that has just ended
                    os.setpriority(os.PRIO_PROCESS, int(tid), 0)

    def _groups(self, name: str, host: str) -> list[Path]:
        """The lab's groups a daemon of a multi-host lab runs in: an OSD's blkio group (its drive's throttle) and
        CPU limit's, a neighbour's quota, and its host's cpuacct group; none without the lab's drives."""
        record = self._drives or self.drives()
        if record is None:
            return []
        return (record.osd_cgroups(int(name.split(".")[1]), host) if name.startswith("osd.")
                else record.load_cgroups(host) if name.startswith("load.") else record.host_cgroups(host))

    # ---- up ----------------------------------------------------------------
    def up(self, osds: int = 3, osd_size_bytes: int = 10 * 1024**3, rgw: bool = True,
           progress: Callable[[str], None] = lambda msg: None, multi: MultiHostSpec | None = None,
           release: str | None = None, monitoring: bool = False, container_sockets: bool = False,
           deploy: containers.Deploy | None = None) -> LabInfo:
        """Start the lab: one host on loopback, or with `multi` a lab of hosts that are network namespaces; with
        `release` other than the host's own Ceph, its daemons run from that release's root (built once); with
        `monitoring` (a multi-host lab) node-exporters, the mgr prometheus module and a Prometheus server; with
        `container_sockets` (the host's own Ceph: a root's daemons see their root's /var/run) the OSDs' admin sockets
        in /var/run/ceph/<fsid>/, where cephadm puts them, and not where the lab's ceph.conf says; with `deploy`
        (up_in_containers) every daemon in a container of its release's image, in cephadm's layout."""
        if monitoring:
            self._check_monitoring(multi)
        if container_sockets and release:
            raise UserError("the OSDs' sockets in cephadm's layout need the host's own Ceph", where="--release")
        root = self._release_root(release, progress) if release and deploy is None else None
        missing = [] if root or deploy else [b for b in REQUIRED_BINARIES if self.host.which(b) is None]
        if missing:
            raise UserError(f"Ceph binaries missing: {', '.join(missing)}",
                            "run scripts/setup.sh (Debian) or install ceph-mon ceph-mgr ceph-osd radosgw ceph-common")
        if multi is not None:
            netns.check_tools()
            netns.check_shaping({"--public-net": multi.public, "--cluster-net": multi.cluster,
                                 "--client-net": multi.client})
            sshd.check_tools(self.host)
            osds = multi.osds
        if osds < 1:
            raise UserError(f"--osds must be at least 1, got {osds}", where="--osds")
        if osd_size_bytes < 2 * 1024**3:
            raise UserError(f"--osd-size must be at least 2GiB for BlueStore, got {format_size(osd_size_bytes)}",
                            where="--osd-size")
        self._clear_for_up()
        marker = labdir.claim(self.dir)
        disk = self.dir
        if deploy is not None:
            (self.dir / "run").mkdir(exist_ok=True)
            if problem := deploy.problem():
                labdir.remove(marker)
                raise UserError(problem, "apt-get install runc", where="--containers")
            disk = deploy.data_disk(multi is not None)
        room = disk_room(shutil.disk_usage(disk).free, osds, osd_size_bytes)
        if room.refusal:
            labdir.remove(marker)
            raise UserError(f"{room.refusal} in {disk}", "use --osds, --osd-size or --dir on a larger filesystem")
        if room.note():
            progress(room.note())
        lock = labdir.StartLock(marker)
        steps = _Steps()
        self._spec, self._root, self._monitoring = multi, root, monitoring
        self._full_ratio = room.full_ratio
        self._container_sockets, self._ctr = container_sockets, deploy
        try:
            info = self._create(osds, osd_size_bytes, rgw, progress, steps)
        except BaseException:
            try:
                progress("start failed; stopping what was started")
            finally:  # even when the terminal that shows progress is gone
                if deploy is not None:
                    deploy.close()
                self.stop_daemons(grace_s=0)
                self._remove_host_objects()
            raise
        finally:
            self._spec = self._net = self._drives = self._root = self._ctr = None
            self._monitoring = self._container_sockets = False
            lock.release()
        info.startup_s = time.monotonic() - steps.t0
        info.startup_steps = steps.done
        self._write_info(info)
        replace(marker, started=True).write()
        return info

    def up_in_containers(self, osds: int = 3, osd_size_bytes: int = 10 * 1024**3, release: str | None = None,
                         cpus: dict[str, float | int] | None = None, memory: dict[str, float | int] | None = None,
                         progress: Callable[[str], None] = lambda msg: None, rgw: bool = True,
                         multi: MultiHostSpec | None = None) -> LabInfo:
        """`lab up --containers`: the lab (of one host, or with `multi` of several) with each daemon in a podman
        container of the release's image (the host's own release by default), in cephadm's layout, with podman's
        per-daemon CPU and memory limits (lab/containers.py)."""
        if multi is not None and multi.cpu_limits:
            raise UserError("--cpu-limit is the lab's own group; a container's CPU limit is podman's",
                            "give --cpus osd.N=CORES", where="--cpu-limit")
        if multi is not None and multi.store.objectstore != "bluestore":
            raise UserError("a lab in containers runs BlueStore OSDs, as cephadm deploys them", "drop --objectstore",
                            where="--objectstore")
        n = multi.osds if multi is not None else osds
        names = [MON, MGR, *(f"osd.{i}" for i in range(n)), *([RGW] if rgw else [])]
        deploy = containers.Deploy.prepare(self.dir, release or self.host_release() or "pacific", cpus or {},
                                           memory or {}, names, progress)
        return self.up(n, osd_size_bytes, rgw, progress, multi, deploy=deploy)

    def _release_root(self, release: str, progress: Callable[[str], None]) -> roots.Root | None:
        """The root `release` runs from: None when it is the host's own Ceph; built now if not cached."""
        rel = roots.release(release)
        if rel.name == self.host_release():
            return None
        if rel.no_lab:
            raise UserError(f"a lab of {rel.name} is not yet supported: {rel.no_lab}",
                            "use --release reef", where="--release")
        return roots.ensure(rel.name, progress=progress)

    def host_release(self) -> str:
        """The release of the host's own Ceph packages ('' when there are none)."""
        if self.host.which("ceph-osd") is None:
            return ""
        res = self.host.run(["ceph-osd", "--version"], 30)
        return roots.release_of_version(res.stdout) if res.ok else ""

    def _clear_for_up(self) -> None:
        """Refuse a directory that is not a lab's, or whose lab runs or is being started; remove what a stopped or
        killed lab left (its daemons by PID, its host objects from its records, its own files)."""
        if labdir.is_empty(self.dir):
            return
        marker = labdir.check_removable(self.dir, inside=True)     # a user's file anywhere: nothing touched
        if labdir.starting_elsewhere(marker):
            raise UserError(f"a lab is being started in {self.dir} by another process",
                            f"wait for it, or stop it with 'cephbench lab down --dir {self.dir}'")
        if marker.started and self.is_running():
            raise UserError(f"a lab is already running in {self.dir}",
                            f"see 'cephbench lab status --dir {self.dir}', or 'cephbench lab down --dir {self.dir}'")
        # a stopped lab, or a start that was killed (its daemons may still run): start afresh
        self.stop_daemons(grace_s=0)
        self._remove_host_objects()
        labdir.remove(marker)

    def _prepare(self, osds: int, osd_size_bytes: int, rgw: bool) -> LabInfo:
        """Directories, ports, ceph.conf and every key, before any process starts."""
        d = self.dir
        if self._root is not None:
            make_mount_point(self._root.path, d, d / ROOT_RECORD)
        ctr = self._ctr
        # a lab in containers keeps its daemons' data under /var (containers.py): here only what its clients need
        for sub in (("run", "log", "keyring") if ctr else ("run", "log", "crash", "keyring", "mon", "mgr/x", "rgw",
                                                         *(f"osd/{i}" for i in range(osds)))):
            (d / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(d / "keyring", 0o700)
        fsid = str(uuid.uuid4())
        spec = self._spec
        if spec is None:
            ports, net, pool_size = LabPorts(*_free_ports(3)), LabNet(), min(3, osds)
        else:
            # Each host is a network stack of its own: Ceph's standard ports are free there.
            ports, pool_size = LabPorts(3300, 6789, 7480), min(3, spec.hosts)
            self._net = netns.create(netns.lab_id_for(self.dir), spec.hosts, spec.public, self.netns_record,
                                     spec.cluster, spec.separate_cluster, spec.clients, spec.client)
            self._drives = drives.create(
                drives.plan(self._net.lab_id, d, {i: osd_host(spec, i) for i in range(osds)}, osd_size_bytes,
                            spec.db_size_bytes, spec.store.fs, hosts=[h.name for h in self._net.hosts],
                            cpu_quota_us=spec.cpu_quotas()),
                self.drives_record)
            for t in spec.throttles:
                drives.apply_throttle(self._drives, t)
            cluster_net = self._net.network("cluster")
            net = LabNet(mon_ip=self._net.host(daemon_host(spec, MON)).address(),
                         rgw_ip=self._net.host(daemon_host(spec, RGW)).address(),
                         public_network=self._net.network("public").subnet,
                         cluster_network=cluster_net.subnet if cluster_net else None, multi_host=True)
        sections = None
        extra = ""
        if spec is not None and self._drives is not None:
            extra = drives.objectstore_conf(spec.store)
            # Pacific's OSDs take their CRUSH host from gethostname(), the machine's for every lab host
            # (NODE_NAME reaches only `ceph osd metadata`): each OSD's section names it.
            sections = {i: [f"crush location = root=default host={osd_host(spec, i)}",
                            *drives.drive_conf(self._drives, i, spec.store).splitlines()[1:]] for i in range(osds)}
        conf_text = render_conf(d, fsid, ports, pool_size, osd_size_bytes, net, extra, sections,
                                mgr_modules=("prometheus",) if self._monitoring else (), full_ratio=self._full_ratio)
        self.conf.write_text(conf_text)     # in containers: the clients' (lab env, cephbench run); the daemons' own
        names = [MON, MGR, *(f"osd.{i}" for i in range(osds)), *([RGW] if rgw else [])]
        if ctr is not None:
            hosts = {n: daemon_host(spec, n) for n in names} if spec is not None else {}
            assert self._net is not None or spec is None
            ctr.begin(fsid, conf_text, names, hosts,
                      {n: self._net.host(h).netns for n, h in hosts.items()} if self._net is not None else {},
                      {n: [str(g) for g in self._groups(n, h)] for n, h in hosts.items()})

        rel = ctr.release if ctr else roots.RELEASES.get(self._root.release) if self._root else None
        kt = rel.service_key_type if rel else KEY_AES
        admin = Entity("client.admin", new_secret(), {"mon": "allow *", "osd": "allow *", "mds": "allow *",
                                                        "mgr": "allow *"})
        mgr = Entity(MGR, new_secret(key_type=kt),
                     {"mon": "allow profile mgr", "osd": "allow *", "mds": "allow *"})
        osd_keys = [Entity(f"osd.{i}", new_secret(key_type=kt),
                           {"mon": "allow profile osd", "mgr": "allow profile osd", "osd": "allow *"})
                    for i in range(osds)]
        rgw_key = Entity(RGW, new_secret(key_type=kt), {"mon": "allow rw", "osd": "allow rwx", "mgr": "allow rw"})
        # ceph-mon --mkfs imports every entity of this keyring into its auth database, and keeps it.
        write_keyring(self._keyring("mon."), [Entity("mon.", new_secret(key_type=kt), {"mon": "allow *"}), admin, mgr,
                                              *osd_keys, *([rgw_key] if rgw else [])])
        write_keyring(self.admin_keyring, [admin])
        for k in (mgr, *osd_keys, *([rgw_key] if rgw else [])):
            write_keyring(self._keyring(k.name), [k])
        info = LabInfo(dir=str(d), fsid=fsid, osds=osds, osd_size_bytes=osd_size_bytes, rgw=rgw,
                       ports={"mon_v2": ports.mon_v2, "mon_v1": ports.mon_v1, "rgw": ports.rgw},
                       created_unix=time.time(), rgw_address=net.rgw_ip,
                       release=ctr.release.name if ctr else self._root.release if self._root else "",
                       root=self._root.record() if self._root else None)
        if spec is not None and self._net is not None:
            info.topology = topology_json(spec, self._net, rgw, self._ssh_settings_json(), self._drives)
        if ctr is not None:
            info.osd_sockets = str(ctr.sockets)
        elif self._container_sockets:
            info.osd_sockets = str(CEPHADM_RUN_DIR / fsid)
        self._write_info(info)
        if info.osd_sockets and ctr is None:
            # recorded first (lab.json), so that a start killed now leaves what `down` removes; a new fsid's name
            Path(info.osd_sockets).mkdir(mode=0o755, parents=True)
        return info

    def _keyring(self, name: str) -> Path:
        """Where the key of `name` goes ("mon.": the keyring the monitor's mkfs imports), as the daemon's conf
        says: in its data directory (a lab in containers: containers.py's), RGW's in keyring/."""
        if self._ctr is not None:
            return self._ctr.keyring(name)
        if name == "mon.":
            return self.dir / "keyring" / "mon-mkfs.keyring"
        kind, _, ident = name.partition(".")
        return (self.dir / kind / ident / "keyring" if kind in ("mgr", "osd")
                else self.dir / "keyring" / f"ceph.{name}.keyring")

    def _ssh_settings_json(self) -> dict:
        """settings.ssh for this lab: its own key and known_hosts, each host's name -> public address."""
        assert self._net is not None
        f = self.ssh_files
        return {"user": sshd.USER, "identity_file": str(f.identity), "options": sshd.client_options(f),
                "hosts": {h.name: h.address() for h in self._net.hosts}}

    def _start_sshds(self) -> None:
        """One sshd per host, listening on its public address; sessions see CEPH_CONF and the host's cgroup."""
        assert self._net is not None
        f = self.ssh_files
        sshd.make_keys(f, self.host)
        sshd.write_known_hosts(f, [h.address() for h in self._net.hosts])
        sshd.write_client_config(f, {h.name: h.address() for h in self._net.hosts})
        sshd.ensure_privsep_dir()
        for h in self._net.hosts:
            f.config(h.name).write_text(sshd.render_config(f, h.address()))
            self.host_bin(h.name).mkdir(parents=True, exist_ok=True)
            env = sshd.session_env(self.conf, self.host_bin(h.name))
            if self._drives is not None and h.name in self._drives.hosts:
                env["CEPHBENCH_CPUACCT"] = self._drives.hosts[h.name]
            # a veth reports 10 Gbit/s in sysfs whatever tc allows: the evidence reads the shaped speed here
            speeds = [f"{k.inner}={int(shape.rate_bits_per_s)}" for k in h.links
                      if (shape := self._net.link_shape(h.name, k.network)) is not None and shape.rate_bits_per_s]
            if speeds:
                env["CEPHBENCH_LINK_SPEEDS"] = ",".join(speeds)     # SetEnv splits words on spaces
            self._start_daemon(f"sshd.{h.name}", sshd.sshd_argv(f, h.name, env), ceph=False)

    @staticmethod
    def _end_sessions(record: drives.LabDrives) -> None:
        """A host that goes down ends what still runs on it: commands started over ssh on the lab's hosts (a
        watcher whose ssh client was killed, a tool left running) are in the host's cgroup, which holds nothing
        else. Its daemons are already stopped by their PIDs."""
        for group in record.hosts.values():
            for pid in cgroups.tasks(Path(group)):
                log.info("lab down: ending pid %d left on host group %s", pid, group)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _remove_host_objects(self, keep_data: bool = False) -> None:
        """What a multi-host lab made outside its directory (mounts, loop devices, cgroups, namespaces, links),
        from the records it wrote before making them. Its daemons are stopped first (cgroups empty, mounts free).
        A lab in containers: its containers, and unless `keep_data` its directories under /var (containers.py)."""
        containers.remove(self.dir, keep_data=keep_data)
        remove_mount_points(self.dir / ROOT_RECORD)
        self._remove_osd_sockets()
        record = self._drives or self.drives()
        if record is not None:
            self._end_sessions(record)
            drives.destroy(record)
        topo = self._topology()
        if topo is not None:
            netns.destroy(topo)

    def _remove_osd_sockets(self) -> None:
        """The directory of up(container_sockets=True), with the sockets its own OSDs left there (they are stopped
        by now); anything else someone put there stays, and so does the directory then."""
        info = self.info()
        where = Path(info.osd_sockets) if info is not None and info.osd_sockets else None
        if where is None or not where.is_dir():
            return
        for n in range(info.osds):
            if (p := where / f"ceph-osd.{n}.asok").is_socket():
                p.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            where.rmdir()

    def _create(self, osds: int, osd_size_bytes: int, rgw: bool, progress: Callable[[str], None],
                steps: _Steps) -> LabInfo:
        info = self._prepare(osds, osd_size_bytes, rgw)
        if self._net is not None:
            self._start_sshds()
        steps.mark("prepared")
        ctr = self._ctr
        osd_uuids = [str(uuid.uuid4()) for _ in range(osds)]
        mon_d = self._daemon(MON)
        # where the mon's mkfs finds the monmap and the keyring it imports: the lab's run/ and keyring/, or the
        # bootstrap mounted in its container
        monmap = ctr.boot_path("monmap") if ctr else str(self.dir / "run" / "monmap")
        mkfs_keyring = ctr.boot_path("mon-mkfs.keyring") if ctr else str(self._keyring("mon."))

        with ThreadPoolExecutor(max_workers=osds + 1) as pool, ExitStack() as stack:
            progress(f"creating the monitor and {osds} OSD(s)"
                     + (f" in containers of {ctr.image.ref}" if ctr else "")
                     + f" with BlueStore on {format_size(osd_size_bytes)} " + ("drives" if self._drives else "files"))
            # --no-mon-config: mkfs asks the monitor for configuration by default, and it is not up yet.
            # mkfs is mostly waiting on fsync, so the OSDs are made side by side.
            mkfs: dict[Future, int] = {
                pool.submit(self._run, self._command(f"mkfs-osd.{i}", f"osd.{i}", [
                    "ceph-osd", "-i", str(i), "--mkfs", "--no-mon-config", "--osd-uuid", osd_uuids[i], *MKFS_ARGS]),
                    dm.OVERALL_S, f"mkfs-osd.{i}"): i
                for i in range(osds)}
            ports = LabPorts(info.ports["mon_v2"], info.ports["mon_v1"], info.ports["rgw"])
            rel = ctr.release if ctr else roots.RELEASES[info.release] if info.root else None
            ciphers = rel.mon_ciphers if rel else ""
            self._check(self._run(self._command("monmaptool", MON, [
                "monmaptool", "--create", "--fsid", info.fsid, "--addv", "a", mon_addrs(self._mon_ip(), ports),
                *(["--auth-allowed-ciphers", ciphers] if ciphers else []), monmap], conf=False), dm.OVERALL_S,
                "monmaptool"), "monmaptool")
            self._check(self._run(self._command(f"mkfs-{MON}", MON, [
                "ceph-mon", "--mkfs", "-i", "a", "--monmap", monmap, "--keyring", mkfs_keyring, *MKFS_ARGS]),
                dm.OVERALL_S, f"mkfs-{MON}"), "ceph-mon --mkfs")
            if ctr:
                ctr.mon_made()
            self._start(MON, ["ceph-mon", "-i", "a"])
            # The mgr is what the lab waits for last on a busy machine: it imports its Python modules (seconds
            # of CPU) once it has reached the monitor. It retries until the monitor answers.
            self._start(MGR, ["ceph-mgr", "-i", "x"])
            mon_asok = ctr.mon_asok if ctr else mon_d.asok
            dm.wait_for(lambda: self._mon_state(mon_asok), "the monitor to form a quorum", [mon_d], self._pid,
                        progress, starting=[mon_d])
            steps.mark("mon leader")
            mon = stack.enter_context(self._mon())
            info.ceph_version = next(iter(mon.json("versions").get("overall", {})), "")
            info.release = info.release or roots.release_of_version(info.ceph_version)

            # Reef and later reserve pool names beginning with "." to Ceph, and refuse one without this flag
            # while answering 0 ("pool names beginning with . are not allowed"); Pacific does not know the flag.
            dot_ok = {"yes_i_really_mean_it": True} if info.release not in ("", "pacific") else {}

            def rgw_pool(name: str) -> None:
                mon.command("osd pool create", pool=name, **(dot_ok if name.startswith(".") else {}))
                mon.command("osd pool application enable", pool=name, app="rgw")

            # Side by side: the monitor gathers changes that arrive together into one map update.
            with ThreadPoolExecutor(max_workers=8) as commands:
                done = [commands.submit(mon.command, "osd new", uuid=u, id=i) for i, u in enumerate(osd_uuids)]
                done += [commands.submit(rgw_pool, p) for p in (RGW_POOLS if rgw else ())]
                # Device monitoring makes a pool of its own when the mgr activates (one more PG to peer at
                # the very end) to keep SMART data the lab's file-backed OSDs do not have.
                done.append(commands.submit(mon.command, "config set", who="mgr",
                                            name="mgr/devicehealth/enable_monitoring", value="false",
                                            force=True))
                # In the configuration database, not ceph.conf (which wins over it): a test can then give the
                # lab Ceph's default (false) with `ceph config set mon`, as an operator would on a real cluster.
                done.append(commands.submit(mon.command, "config set", who="mon", name="mon_allow_pool_delete",
                                            value="true"))
                if self._monitoring:
                    done += [commands.submit(mon.command, "config set", who="mgr", name=k, value=v, force=True)
                             for k, v in mon_stack.mgr_module_options(info.release).items()]
                for f in done:
                    f.result()
            steps.mark("osd ids and pools")
            for f in as_completed(mkfs):
                i = mkfs[f]
                self._check(f.result(), f"ceph-osd --mkfs osd.{i}")
                self._start(f"osd.{i}", ["ceph-osd", "-i", str(i)])
            steps.mark("osds started")

            osd_ds = [self._daemon(f"osd.{i}") for i in range(osds)]
            progress(f"waiting for {osds} OSD(s) to come up")
            dm.wait_for(lambda: self._osds_up(mon, osds), f"{osds} OSD(s) to come up", [mon_d, *osd_ds],
                        self._pid, progress, starting=osd_ds, poll_max_s=START_POLL_S)
            steps.mark("osds up")
            all_ds = [mon_d, self._daemon(MGR), *osd_ds]
            if rgw:
                # Not earlier: a read RGW sends while no OSD is up waits for the client's next objecter tick
                # (5 s) before it is sent again.
                # The user is made beside RGW's start (radosgw-admin reads and writes the pools, not RGW; the two
                # making the default zone at once is a race RGW's code settles: each reads the other's on EEXIST),
                # not after RGW answers (0.2-0.3 s more)
                progress("starting RGW (beast) and creating the S3/Swift user")
                user = pool.submit(self._create_rgw_user,
                                   ctr.rgw_admin(self) if ctr else ["radosgw-admin", "--conf", str(self.conf)])
                self._start(RGW, ["radosgw", "-n", RGW])
                rgw_d = self._daemon(RGW)
                all_ds.append(rgw_d)
                dm.wait_for(lambda: (self._rgw_answers(info.rgw_endpoint or ""), self._pgs_state(mon)), "RGW to answer HTTP", all_ds,
                            self._pid, progress, starting=[rgw_d], poll_max_s=START_POLL_S)
                steps.mark("rgw answers")
                progress("waiting for HEALTH_OK and all PGs active+clean")
            else:
                progress("waiting for HEALTH_OK and all PGs active+clean")
            dm.wait_for(lambda: self._healthy(mon, flush_osds=osds), "the cluster to become healthy", all_ds,
                        self._pid, progress, poll_max_s=START_POLL_S)
            steps.mark("healthy")
            self._aio_poll_back(mon, range(osds))
            if ctr is None:
                self._mgr_priority_back()
            if rgw:
                user.result()
                steps.mark("rgw user")
            # RGW reaches `ceph versions` through the mgr's service map, up to a mgr tick after it answers HTTP (0.6 s
            # of a 2.7 s start): its version comes from its own admin socket, and a run that records the cluster's
            # versions waits for RGW there (whole_versions)
            rgw_asok = ((ctr.sockets if ctr else self.dir / "run") / f"ceph-{RGW}.asok") if rgw else None
            dm.wait_for(lambda: self._versions(mon, info, rgw_asok), "every daemon's version", all_ds, self._pid,
                        progress)
            steps.mark("versions")
            self._start_host_loads(progress)
            if self._monitoring:
                info.monitoring = self._start_monitoring(progress, all_ds)
                steps.mark("monitoring")
            if ctr:
                ctr.finish(self)
        return info

    def _command(self, key: str, name: str, argv: list[str], conf: bool = True) -> list[str]:
        """A Ceph command of the start (`key`: mkfs-osd.0, monmaptool) as daemon `name`'s, with the lab's conf
        (`conf`), or in a container of a lab in containers, its conf the daemon's own there."""
        if self._ctr is not None:
            return self._ctr.command(self, key, name, argv, boot=name == MON)
        return [argv[0], "--conf", str(self.conf), *argv[1:]] if conf else argv

    def _start(self, name: str, command: list[str]) -> None:
        """Start a Ceph daemon of the lab: here (in its host), or its container."""
        if self._ctr is not None:
            self._ctr.start(self, name, command)
        else:
            self._start_daemon(name, command)

    def _start_host_loads(self, progress: Callable[[str], None]) -> None:
        """--host-load: each neighbour's busy loops on its host (in its cpuacct group, held to its cores by a quota of
        their own), once the cluster is whole so that they do not slow its start. Each is a process of the lab's,
        recorded by its PID file before it loops (its command line names the lab's ceph.conf, as `down` checks) and
        stopped by that PID; one left by a killed start is in its host's group, which `down` empties."""
        loads = self._spec.host_loads if self._spec is not None else ()
        for h in loads:
            progress(f"starting a neighbour burning {h.cores:g} cores on {h.host} ({h.loops} busy loop(s))")
            for name in h.names():
                # $0 is the conf: the loop's command line names it, by which `down` knows the process for the lab's
                self._start_daemon(name, ["sh", "-c", "while :; do :; done", str(self.conf)], ceph=False,
                                   console=self.dir / "run" / f"{name}.out")

    # ---- monitoring ----------------------------------------------------------
    def _check_monitoring(self, multi: MultiHostSpec | None) -> None:
        if multi is None:
            raise UserError("a lab of one host cannot have monitoring: each host's node-exporter runs on its own "
                            "address", "add --hosts 3", where="--monitoring")
        missing = [b for b in mon_stack.BINARIES if self.host.which(b) is None]
        if missing:
            raise UserError(f"{', '.join(missing)} not installed",
                            "run scripts/setup.sh, or apt-get install prometheus prometheus-node-exporter prometheus-process-exporter",
                            where="--monitoring")

    def _monitoring_plan(self) -> mon_stack.MonitoringPlan:
        assert self._net is not None and self._spec is not None
        net = self._net
        speeds = {h.name: {k.inner: shape.rate_bits_per_s for k in h.links
                           if (shape := net.link_shape(h.name, k.network)) is not None and shape.rate_bits_per_s}
                  for h in net.hosts}
        osds: dict[str, list[int]] = {}
        for i in range(self._spec.osds):
            osds.setdefault(daemon_host(self._spec, f"osd.{i}"), []).append(i)
        ports = _free_ports(2)
        return mon_stack.MonitoringPlan(
            self.dir / mon_stack.DIR, ports[0],
            {h.name: f"{h.address()}:{mon_stack.EXPORTER_PORT}" for h in net.hosts},
            f"{net.host(daemon_host(self._spec, MGR)).address()}:{mon_stack.MGR_PORT}", speeds, osds, self.conf,
            f"127.0.0.1:{ports[1]}" if mon_stack.cadvisor_binary(self.host.which) else None)

    def _start_process(self, name: str, argv: list[str], host: str | None) -> dm.Daemon:
        """A process that is not Ceph's, in a lab host's network namespace (None: this machine's), PID file in run/."""
        d = self._daemon(name)
        if host is not None:
            assert self._net is not None
            argv = netns.exec_argv(self._net.host(host).netns, argv)
        self._started[name] = proc = self.host.start(argv, stdout_path=d.console)
        d.pid_file.write_text(f"{proc.pid}\n")
        return d

    def _start_monitoring(self, progress: Callable[[str], None], ceph_ds: list[dm.Daemon]) -> dict:
        plan = self._monitoring_plan()
        progress(f"starting {len(plan.exporters)} node-exporter(s), {len(plan.osds)} process-exporter(s) and "
                 f"Prometheus at {plan.url}")
        progress(mon_stack.CEPH_EXPORTER_ABSENT)
        mon_stack.write_files(plan)
        if self._drives is not None:       # throttled before the textfile directories were made
            drives.publish_limits(self._drives)
        started = [self._start_process(mon_stack.exporter_name(h), mon_stack.exporter_argv(plan, h), h)
                   for h in sorted(plan.exporters)]
        started += [self._start_process(mon_stack.process_exporter_name(h), mon_stack.process_exporter_argv(plan, h), h)
                    for h in sorted(plan.osds)]
        started.append(self._start_process(mon_stack.PROMETHEUS, mon_stack.prometheus_argv(plan), None))
        want = len(plan.exporters) + len(plan.osds) + 1
        cadvisor = mon_stack.cadvisor_binary(self.host.which)
        if plan.cadvisor and cadvisor:
            started.append(self._start_process(mon_stack.CADVISOR, mon_stack.cadvisor_argv(plan, cadvisor), None))
            want += 1
        else:
            progress("cAdvisor is not built (make cadvisor): Prometheus has no container CPU series of the lab")

        def targets() -> tuple[bool, str]:
            try:
                status, _, body = fetch(f"{plan.url}/api/v1/targets", timeout_s=2, deadline_s=5)
                if status == 200:
                    return mon_stack.targets_state(json.loads(body), want)
            except (OSError, ValueError):
                pass
            return False, "Prometheus not answering yet"
        dm.wait_for(targets, "Prometheus to scrape every target", [*ceph_ds, *started], self._pid, progress,
                    starting=started)
        return plan.record()

    @staticmethod
    def _mon_state(asok: Path) -> tuple[bool, str]:
        try:
            state = str(asok_command(asok, "mon_status", timeout_s=2).get("state", ""))
        except (AsokError, AttributeError):
            return False, "starting"
        return state in ("leader", "peon"), state

    def _create_rgw_user(self, radosgw_admin: list[str]) -> None:
        """The lab's S3/Swift user, its keys in rgw-user.json (0600); `radosgw_admin`: the command here, or in a
        container of the release's image (containers.py). radosgw-admin makes the keys and prints them: keys given on
        its command line would be in every `ps` while it runs."""
        # One radosgw-admin (~1 s each) makes the user, its S3 key and the Swift subuser with its key.
        res = self._check(self._run([*radosgw_admin, "-n", "client.admin", "user", "create", "--uid", LAB_USER,
                                     "--display-name", "cephbench lab user", "--subuser", f"{LAB_USER}:swift",
                                     "--access", "full"], dm.OVERALL_S, "radosgw-admin"),
                          "radosgw-admin user create")
        try:
            made = user_keys(res.stdout, LAB_USER)
            if made.swift_key is None:
                raise ParseError(f"no Swift key for {LAB_USER}:swift")
        except ParseError as exc:    # no secret in the message: the output is not quoted
            raise OperationFailed(f"lab: radosgw-admin user create printed no user with an S3 and a Swift key "
                                  f"({exc}; logs in {self.dir / 'log'})") from None
        keys = {"s3_access_key": made.access_key, "s3_secret_key": made.secret_key, "swift_key": made.swift_key}
        path = self.dir / "rgw-user.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"uid": LAB_USER, "s3_access_key": keys["s3_access_key"], "s3_secret_key": keys["s3_secret_key"],
                       "swift_user": f"{LAB_USER}:swift", "swift_key": keys["swift_key"]}, f, indent=2)

    @staticmethod
    def _versions(mon: LabMon, info: LabInfo, rgw_asok: Path | None) -> tuple[bool, str]:
        """`ceph versions`, with RGW's (`rgw_asok`: the lab has one) from its admin socket while the mgr's service map
        has not brought it there yet: the same words, as the daemon makes both (`ceph --version`'s)."""
        versions = mon.json("versions")
        if rgw_asok is not None and "rgw" not in versions:
            try:
                said = asok_command(rgw_asok, "version", timeout_s=2)
                git = asok_command(rgw_asok, "git_version", timeout_s=2)
                version = (f"ceph version {said['version']} ({git['git_version']}) {said['release']} "
                           f"({said['release_type']})")
            except (AsokError, KeyError, TypeError):
                return False, f"{', '.join(sorted(versions))}; RGW's admin socket not answering yet"
            versions["rgw"] = {version: 1}
            overall = versions.setdefault("overall", {})
            overall[version] = overall.get(version, 0) + 1
        info.versions = versions
        kinds = ("mon", "mgr", "osd", *(("rgw",) if rgw_asok is not None else ()))
        return all(k in versions for k in kinds), ", ".join(sorted(versions))

    def whole_versions(self, read: Callable[[], Any], versions: Any, patience_s: float = 10.0) -> Any:
        """`ceph versions` (`versions`, as first read; `read()` reads it again) once it names every kind of daemon this
        lab runs: `up` returns before RGW reaches it through the mgr's service map (a mgr tick, up to 1 s), and the
        facts a run records must be whole. After `patience_s` (an RGW that never registers), as it is."""
        info = self.info()
        kinds = ("mon", "mgr", "osd", *(("rgw",) if info is not None and info.rgw else ()))
        deadline = time.monotonic() + patience_s
        while (isinstance(versions, dict) and "error" not in versions and not all(k in versions for k in kinds)
               and time.monotonic() < deadline):
            time.sleep(0.1)
            versions = read()
        return versions

    @staticmethod
    def _osds_up(mon: LabMon, want: int) -> tuple[bool, str]:
        up = int(mon.json("osd stat").get("num_up_osds", 0))
        return up >= want, f"{up}/{want} up"

    def _mon_ip(self) -> str:
        multi = self._multi()
        return multi[1].host(daemon_host(multi[0], MON)).address() if multi else "127.0.0.1"

    @staticmethod
    def _rgw_answers(endpoint: str) -> bool:
        try:
            return fetch(f"{endpoint}/", timeout_s=2, deadline_s=5)[0] == 200
        except OSError:
            return False

    def health(self) -> dict:
        """`ceph status` as JSON."""
        with self._mon(patience_s=30) as mon:
            return mon.json("status")

    @staticmethod
    def _healthy(mon: LabMon, flush_osds: int = 0) -> tuple[bool, str]:
        """All PGs of all pools active+clean, and no health check but the accepted ones.

        PG states reach `ceph status` through the mgr: until it is active, and has heard from the OSDs, the
        pgmap is empty and its health has no PG warnings. So the PGs to expect come from the osdmap.
        `flush_osds`: while not healthy, OSDs 0..N-1 send their PG stats to the mgr now (`flush_pg_stats`, as
        Ceph's own test harness does before it reads PG states), not at their next report (1 s): PGs clean on the
        OSDs reached `ceph status` up to 1.7 s later, two 1 s timers behind."""
        st = mon.json("status")
        pools = mon.json("osd dump").get("pools", [])
        want = sum(int(p.get("pg_num", 0)) for p in pools)
        checks = {name: c.get("summary", {}).get("message", "") for name, c in
                  st.get("health", {}).get("checks", {}).items() if name not in ACCEPTED_WARNINGS}
        mgr_up = bool(st.get("mgrmap", {}).get("available"))
        pgmap = st.get("pgmap", {})
        clean = sum(s["count"] for s in pgmap.get("pgs_by_state", []) if s["state_name"] == "active+clean")
        # a lab is up when a capacity guard can read its space: `ceph df` counts an OSD once the mgr has its report
        up = int(st.get("osdmap", {}).get("num_up_osds", 0))
        counted = mgr_up and df_capacity(mon.json("df"), up) is not None
        state = (f"{clean}/{want} PGs active+clean" + ("" if mgr_up else ", no mgr active yet")
                 + ("" if counted or not mgr_up else ", `ceph df` has not counted every OSD yet")
                 + "".join(f"; {k}: {m}" for k, m in sorted(checks.items())))
        done = mgr_up and counted and not checks and clean == want == pgmap.get("num_pgs", 0)
        if not done and mgr_up:
            for osd in range(flush_osds):
                with contextlib.suppress(OperationFailed):      # an OSD still starting: its own report comes
                    mon.osd_command(osd, "flush_pg_stats")
        return done, state

    @staticmethod
    def _pgs_state(mon: LabMon) -> str:
        pgmap = mon.json("status").get("pgmap", {})
        return ", ".join(f"{s['count']} {s['state_name']}" for s in pgmap.get("pgs_by_state", []))

    def healthy(self) -> bool:
        try:
            with self._mon(patience_s=30) as mon:
                return self._healthy(mon)[0]
        except (OperationFailed, ValueError):
            return False

    def restart_osds(self) -> None:
        """Stop and start every OSD: BlueStore's caches start cold (for cold-read benchmarks)."""
        osds = [d for d in self.daemons() if d.name.startswith("osd.") and d.running and d.pid]
        dm.stop([(d.name, d.pid) for d in osds], self.conf, grace_s=60)
        self.start_osds([d.name for d in osds])

    def start_osds(self, names: list[str]) -> None:
        """Start OSDs of this lab that are not running (e.g. after a test killed one), and wait until every OSD is
        up and the cluster healthy."""
        for name in names:
            if not containers.restart(self, name):      # a lab in containers starts the OSD's container again
                self._start_daemon(name, ["ceph-osd", "-i", name.split(".", 1)[1]])
        osds = [d for d in self.daemons() if d.name.startswith("osd.")]
        watched = [self._daemon(MON), *(self._daemon(n) for n in names)]
        with self._mon() as mon:
            dm.wait_for(lambda: self._osds_up(mon, len(osds)), "the OSDs to come back up", watched, self._pid,
                        starting=watched[1:])
            dm.wait_for(lambda: self._healthy(mon), "the cluster to become healthy after the OSD restart",
                        watched, self._pid)
            self._aio_poll_back(mon, [int(n.split(".", 1)[1]) for n in names])

    @staticmethod
    def _aio_poll_back(mon: LabMon, osds: Iterable[int]) -> None:
        """The OSDs' BlueStore aio poll from the start's (conf.AIO_POLL_START_MS) to the lab's steady AIO_POLL_MS:
        at the start's, three idle OSDs took 5.0-5.3 % of a core against 1.8-2.0 %. As `ceph tell osd.N config set`
        (the daemon's override; a restarted OSD starts again from ceph.conf and comes back here)."""
        for osd in osds:
            try:
                mon.osd_command(osd, "config set", var="bdev_aio_poll_ms", val=[str(AIO_POLL_MS)])
            except OperationFailed as e:
                log.warning("osd.%d keeps the start's BlueStore aio poll: %s", osd, e)

    # ---- down --------------------------------------------------------------
    def stop_daemons(self, grace_s: float = 10) -> list[str]:
        """Stop every daemon of this lab (by PID file, never by name; a PID is signalled only while it is still
        this lab's process): SIGTERM and up to grace_s to exit, or SIGKILL at once with grace_s=0."""
        targets = [(d.name, d.pid) for d in self.daemons() if d.running and d.pid]
        self._end_commands_left()
        dm.stop(targets, self.conf, grace_s)
        for proc in self._started.values():
            proc.poll()
        self._started.clear()
        return [name for name, _ in targets]

    def down(self, keep: bool = False) -> list[str] | None:
        """Stop the lab; None when there was no lab here. Only a directory whose marker proves it a lab is touched,
        and only what the lab made in it is removed (labdir.py)."""
        if labdir.is_empty(self.dir):
            return None
        marker = labdir.check_removable(self.dir)
        # A lab that is thrown away need not shut down cleanly: its data is deleted next, and RGW's shutdown
        # alone can take 10 s. A kept lab gets the time to stop cleanly.
        stopped = self.stop_daemons(grace_s=10 if keep else 0)
        self._remove_host_objects(keep_data=keep)
        self.left = [] if keep else labdir.remove(marker)
        return stopped

    def started(self) -> bool:
        """The lab's start finished once (a start cut short leaves a lab that is not whole)."""
        marker = labdir.read(self.dir)
        return marker is not None and marker.started
