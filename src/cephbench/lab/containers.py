"""A lab whose daemons run in containers as cephadm lays them out (`lab up --containers`): one podman container per
daemon, in its host's network namespace, from the release's image (lab/image.py: the same image as the toolbox, as
cephadm's one image holds the daemons and `cephadm shell`'s tools).

cephadm's layout on the host: each daemon's data in /var/lib/ceph/<fsid>/<daemon>/ (its `config` and `keyring`
there too: the host has no ceph.conf of its own), mounted in its container where Ceph's defaults look
(/var/lib/ceph/osd/ceph-0, /etc/ceph/ceph.conf); the admin sockets of all of them in /var/run/ceph/<fsid>/ and their
logs in /var/log/ceph/<fsid>/, mounted as the container's /var/run/ceph and /var/log/ceph. The lab directory keeps
what a client needs (its ceph.conf, the admin keyring), lab.json and the record of this module, run/containers.json.
A multi-host lab's hosts share this machine's /var, as they share its disks: each host's daemons have their
directories there, in the one cluster directory.

The lab itself (lab.py) starts either kind of lab with the same steps; `Deploy` is what it asks of a lab in
containers: the record and the directories under /var, where each key goes, the `podman run` of each command and
daemon. Each daemon is an attached `podman run --rm` started as every lab daemon is (its PID file written by its own
process, lab.py's `_start_daemon`): its command line carries the label io.cephbench.lab=<the lab's ceph.conf>, by
which `down` knows the process for the lab's (daemons.is_lab_process). Stopping that process ends the container with
SIGTERM (podman passes it on); SIGKILL does not: `down` then removes every container the record names, by the ID
podman wrote to run/<name>.cid, or by its name, which holds the lab's fsid. The record is written before anything is
made; the directories under /var carry a marker naming the lab, and are removed only with it.

Limits: `--cpus` and `--memory` are podman's, as Rook's resource limits are Kubernetes': a cgroup CFS quota
(cpu.cfs_quota_us) and a memory limit on the container. In a multi-host lab a daemon's network is its host's
namespace (`--net ns:/run/netns/<host's>`, `--hostname` the host's name), and once its container runs, its process
joins the lab's blkio group of its OSD (the drive's throttle, `--osd-throttle` and `lab throttle`) and its host's
cpuacct group, as the lab's other daemons start in them: cgroup v1's blkio throttles hold only the group's own tasks
(a child group's writes ran at 301 MB/s under its parent's 10 MiB/s), so a container's group under the OSD's would
not be throttled. Its cpu and memory groups stay podman's, with their limits.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..core.errors import OperationFailed, UserError
from ..core.units import format_size, parse_size
from . import cgroups, daemons as dm
from . import image, podman, roots
from .multihost import MON, RGW

# lab.py calls this module (Lab.up with a Deploy, and its down): its Lab is given, never imported here
Lab = Any

log = logging.getLogger(__name__)

RECORD_NAME = "containers.json"          # in the lab's run/
LABEL = "io.cephbench.lab"               # its value: the lab's ceph.conf, the proof a process is the lab's
DAEMON_LABEL = "io.cephbench.daemon"
MARKER = ".cephbench-lab"                # in each directory made under /var: the lab directory it belongs to
LIB, RUN, LOG = Path("/var/lib/ceph"), Path("/var/run/ceph"), Path("/var/log/ceph")
NETNS_DIR = Path("/run/netns")           # where `ip netns add` names a namespace (netns.py)
MKFS_DIR = "/var/lib/ceph/bootstrap-lab"  # where the mkfs containers see the monmap and the mon's mkfs keyring
JOIN_WAIT_S = 120.0                       # how long a daemon's container may take to run before it joins its groups
# one CPU limit per daemon or daemon type: from a thousandth of a core (podman's own floor is 0.01) to 64
MIN_CPUS, MAX_CPUS = 0.01, 64.0
MIN_MEMORY = 64 * 2**20                   # below this an OSD cannot even mount BlueStore
_TARGET = re.compile(r"(mon|mgr|osd|rgw)(\.[a-z0-9]+)?$")


# ---- limits (pure) -----------------------------------------------------------------------------------------------
def parse_limits(values: tuple[str, ...] | list[str], flag: str) -> dict[str, float | int]:
    """`--cpus osd=0.5 --cpus osd.1=0.2` -> {"osd": 0.5, "osd.1": 0.2}; `--memory osd=1GiB` -> bytes. A target is
    a daemon type (mon, mgr, osd) or one daemon (osd.1); one line and exit 2 for anything else."""
    out: dict[str, float | int] = {}
    for value in (v.strip() for raw in values for v in raw.replace(",", " ").split()):
        target, sep, amount = value.partition("=")
        if not sep or not _TARGET.match(target.strip()):
            raise UserError(f"{flag} {value!r}: give DAEMON=AMOUNT, DAEMON a type (mon, mgr, osd) or one daemon "
                            "(osd.1)", "e.g. osd=0.5" if flag == "--cpus" else "e.g. osd=1GiB", where=flag)
        if flag == "--cpus":
            try:
                cores = float(amount)
            except ValueError:
                raise UserError(f"{flag} {value!r}: {amount!r} is not a number of cores", "e.g. osd=0.5",
                                where=flag) from None
            if not MIN_CPUS <= cores <= MAX_CPUS:
                raise UserError(f"{flag} {value!r}: cores from {MIN_CPUS:g} to {MAX_CPUS:g}", where=flag)
            out[target.strip()] = cores
        else:
            try:
                size = parse_size(amount)
            except ValueError as exc:
                raise UserError(f"{flag} {value!r}: {exc}", "e.g. osd=1GiB", where=flag) from None
            if size < MIN_MEMORY:
                raise UserError(f"{flag} {value!r}: at least {format_size(MIN_MEMORY)}", where=flag)
            out[target.strip()] = size
    return out


def limit_for(limits: dict[str, float | int], name: str) -> float | int | None:
    """A daemon's own limit, else its type's (RGW's name is client.rgw.lab: its type rgw, itself rgw.lab)."""
    short = _short(name)
    return limits.get(short, limits.get(short.split(".")[0]))


def _short(name: str) -> str:
    """cephadm's name of a daemon: client.rgw.lab -> rgw.lab, the others as Ceph names them."""
    return name.removeprefix("client.")


# ---- layout (pure) -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """cephadm's paths of one cluster on a host."""

    fsid: str
    lib: Path = LIB
    run: Path = RUN
    log: Path = LOG

    @property
    def dirs(self) -> tuple[Path, Path, Path]:
        """The cluster's directories under /var, each made by the lab and removed by it."""
        return self.lib / self.fsid, self.run / self.fsid, self.log / self.fsid

    def data(self, name: str) -> Path:
        return self.lib / self.fsid / _short(name)

    def container(self, name: str) -> str:
        """cephadm's name: ceph-<fsid>-osd-0, ceph-<fsid>-rgw-lab."""
        return f"ceph-{self.fsid}-{_short(name).replace('.', '-')}"

    @staticmethod
    def data_inside(name: str) -> str:
        """Where Ceph's default looks for a daemon's data in its container: osd.0 -> /var/lib/ceph/osd/ceph-0,
        client.rgw.lab -> /var/lib/ceph/radosgw/ceph-rgw.lab."""
        if name.startswith("client.rgw."):
            return f"/var/lib/ceph/radosgw/ceph-{_short(name)}"
        kind, _, ident = name.partition(".")
        return f"/var/lib/ceph/{kind}/ceph-{ident}"

    def mounts(self, name: str, config: Path | None = None) -> list[str]:
        """podman's -v values of a daemon, or of its mkfs (`config`: the conf the monitor's mkfs is given from
        elsewhere, since its data directory must be empty: a mkfs into one that is not exits 0 and makes nothing)."""
        return [f"{self.data(name)}:{self.data_inside(name)}",
                f"{config or self.data(name) / 'config'}:/etc/ceph/ceph.conf:ro",
                f"{self.run / self.fsid}:/var/run/ceph", f"{self.log / self.fsid}:/var/log/ceph"]


def daemon_conf(lab_conf: str, lab_dir: Path) -> str:
    """A daemon's ceph.conf in its container: the lab's, its run/ and log/ being the container's /var/run/ceph and
    /var/log/ceph (Ceph's defaults), and without the other lines naming the lab directory (data and keyring paths)
    or a PID file (podman knows the process), so that Ceph's defaults, which are cephadm's layout once the
    directories are mounted, apply."""
    d = str(lab_dir)
    lines = (line.replace(f"{d}/run", "/var/run/ceph").replace(f"{d}/log", "/var/log/ceph")
             for line in lab_conf.splitlines(keepends=True) if not line.startswith("pid file"))
    return "".join(line for line in lines if d not in line)


def run_argv(prefix: list[str], layout: Layout, name: str, ref: str, argv: list[str], lab_conf: Path, *,
             cidfile: Path | None = None, cpus: float | None = None, memory: int | None = None,
             extra: tuple[str, ...] = (), container: str | None = None, config: Path | None = None,
             netns: str = "", hostname: str = "") -> list[str]:
    """`podman run` of one of the lab's commands: attached, removed when it ends, in its host's network namespace
    (`netns`; this machine's when empty), labelled with the lab's conf (how `down` knows the process for the lab's),
    its limits podman's own."""
    # --workdir /: Debian's ceph-osd finds its object classes at a relative path (lib/x86_64-linux-gnu/rados-classes);
    # from the toolbox's working directory every `cls` call failed (EOPNOTSUPP: the mgr's database never opened)
    out = [*prefix, "run", "--rm", "--name", container or layout.container(name),
           "--net", f"ns:{NETNS_DIR / netns}" if netns else "host", "--workdir", "/",
           "--label", f"{LABEL}={lab_conf}", "--label", f"{DAEMON_LABEL}={name}"]
    if hostname:
        # Ceph's host name for the daemon (`ceph osd metadata`, the mgr's service map), as a host's own would be
        out += ["--hostname", hostname]
    if name.startswith("osd."):
        # as cephadm runs its OSDs: podman's seccomp profile refuses BlueStore's io_getevents (EPERM: the OSD aborts)
        out.append("--privileged")
    if cidfile is not None:
        out += ["--cidfile", str(cidfile)]
    if cpus is not None:
        out += ["--cpus", f"{cpus:g}"]
    if memory is not None:
        out += ["--memory", str(memory)]
    for m in (*layout.mounts(name, config), *extra):
        out += ["-v", m]
    return [*out, "--entrypoint", argv[0], ref, *argv[1:]]


# ---- the record --------------------------------------------------------------------------------------------------
@dataclass
class Record:
    """run/containers.json: written before anything it names is made."""

    lab_dir: str
    fsid: str
    image: str
    image_id: str
    containers: dict[str, str] = field(default_factory=dict)     # daemon (or mkfs-...) -> container name
    made_dirs: list[str] = field(default_factory=list)            # under /var, outermost first
    requested: dict[str, dict] = field(default_factory=dict)      # daemon -> {"cpus": cores, "memory": bytes}
    limits: dict[str, dict] = field(default_factory=dict)         # daemon -> what its cgroups hold (limits_seen)
    # a multi-host lab: daemon -> its host's name and network namespace, and the lab's groups it joins once it runs
    hosts: dict[str, str] = field(default_factory=dict)
    netns: dict[str, str] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)

    @staticmethod
    def path(lab_dir: Path) -> Path:
        return lab_dir / "run" / RECORD_NAME

    def write(self) -> None:
        p = self.path(Path(self.lab_dir))
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.__dict__, indent=1) + "\n")
        tmp.replace(p)

    @classmethod
    def load(cls, lab_dir: Path) -> Record | None:
        try:
            return cls(**json.loads(cls.path(lab_dir).read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def run_argv(self, lab: Lab, key: str, name: str, command: list[str], **kw: Any) -> list[str]:
        """The `podman run` of record entry `key` (a daemon, or a command of the start: mkfs-osd.0) as `name`'s: its
        container's name, ID file, host and network, by the image's ID (as cephadm pins its daemons' image: a
        rebuilt toolbox image moves the tag, not a lab)."""
        return run_argv(_podman(lab.dir), Layout(self.fsid), name, self.image_id, command, lab.conf,
                        container=self.containers[key], cidfile=cid_file(lab.dir, key),
                        netns=self.netns.get(name, ""), hostname=self.hosts.get(name, ""), **kw)


def cid_file(lab_dir: Path, name: str) -> Path:
    return lab_dir / "run" / f"{name}.cid"


# ---- a lab in containers being started ---------------------------------------------------------------------------
def check_targets(cpus: dict[str, float | int], memory: dict[str, float | int], names: list[str]) -> None:
    """A limit of one daemon (osd.4) names a daemon the lab runs."""
    for target in (*cpus, *memory):
        if "." in target and target not in map(_short, names):
            raise UserError(f"{target}: the lab has no such daemon (it runs {', '.join(map(_short, names))})",
                            where="--cpus" if target in cpus else "--memory")


@dataclass
class Deploy:
    """What the lab's start (lab.py's `Lab.up`) asks of a lab in containers, in the order it asks: the record and the
    directories under /var (`begin`), where each key goes (`keyring`), the `podman run` of each command of the start
    (`command`) and of each daemon (`start`), and what the containers hold once the lab is whole (`finish`)."""

    image: image.Image
    release: roots.Release
    cpus: dict[str, float | int]
    memory: dict[str, float | int]
    lab_dir: Path
    rec: Record | None = None
    _joins: list[Future] = field(default_factory=list)
    _pool: ThreadPoolExecutor | None = None

    @classmethod
    def prepare(cls, lab_dir: Path, release: str, cpus: dict[str, float | int], memory: dict[str, float | int],
                names: list[str], progress: Callable[[str], None]) -> Deploy:
        """Check the limits against the daemons `names`, and that podman is here; the release's image, built now
        when podman has none of today's root."""
        check_targets(cpus, memory, names)
        if podman.exe() is None:
            raise UserError("a lab in containers needs podman, which is not installed", "apt-get install podman runc",
                            where="--containers")
        rel = roots.release(release)
        return cls(image.ensure(rel.name, progress=progress, daemons_only=True), rel, cpus, memory, lab_dir)

    def problem(self) -> str:
        """'' when podman runs a container of the image here, else why not (podman.problem)."""
        return podman.problem(self.image.ref, self.lab_dir / "run")

    def data_disk(self, multi: bool) -> Path:
        """Where the OSDs' data take room: a multi-host lab's drives are in the lab directory; one host's OSDs keep
        their BlueStore files in their data directories under /var/lib."""
        return self.lab_dir if multi or not LIB.parent.exists() else LIB.parent

    @property
    def boot(self) -> Path:
        """The monmap, the keyring the monitor imports and its conf for the mkfs, in the lab's run/ (cephadm's
        bootstrap keeps them in a temporary directory), seen by the mkfs containers at MKFS_DIR."""
        return self.lab_dir / "run" / "bootstrap"

    @staticmethod
    def boot_path(name: str) -> str:
        return f"{MKFS_DIR}/{name}"

    def begin(self, fsid: str, conf_text: str, names: list[str], hosts: dict[str, str], netns: dict[str, str],
              groups: dict[str, list[str]]) -> None:
        """Record the containers, the limits, each daemon's host, namespace and groups; make the cluster's
        directories under /var; write each daemon's conf (the monitor's once its mkfs has filled its data
        directory: its mkfs is given the bootstrap's)."""
        layout = Layout(fsid)
        mkfs = [f"mkfs-{n}" for n in names if n.startswith("osd.")]
        self.rec = rec = Record(
            str(self.lab_dir), fsid, self.image.ref, self.image.id,
            containers={n: layout.container(n) for n in [*names, "monmaptool", f"mkfs-{MON}", *mkfs,
                                                           *(["radosgw-admin"] if RGW in names else [])]},
            requested={n: {"cpus": limit_for(self.cpus, n), "memory": limit_for(self.memory, n)} for n in names},
            hosts=hosts, netns=netns, groups=groups)
        _make_dirs(rec, layout, names)
        conf = daemon_conf(conf_text, self.lab_dir)
        for n in names:
            if n != MON:
                (layout.data(n) / "config").write_text(conf)
        self.boot.mkdir()
        (self.boot / "config").write_text(conf)

    def keyring(self, name: str) -> Path:
        """Where the key of `name` goes: in its data directory; the monitor's mkfs keyring ("mon.") in the
        bootstrap."""
        assert self.rec is not None
        return self.boot / "mon-mkfs.keyring" if name == "mon." else Layout(self.rec.fsid).data(name) / "keyring"

    def command(self, lab: Lab, key: str, name: str, argv: list[str], boot: bool = False) -> list[str]:
        """The `podman run` of a command of the start (`key`: mkfs-osd.0, monmaptool), as daemon `name`'s; `boot`:
        with the bootstrap mounted, and its conf (the monitor's data directory must be empty for its mkfs: a mkfs
        into one that is not exits 0 and makes nothing)."""
        assert self.rec is not None
        return self.rec.run_argv(lab, key, name, argv, extra=(f"{self.boot}:{MKFS_DIR}",) if boot else (),
                                 config=self.boot / "config" if boot else None)

    def mon_made(self) -> None:
        """The monitor's mkfs is done: its conf goes to its data directory, and the bootstrap is not needed (the
        monitor keeps its keys in its store now)."""
        assert self.rec is not None
        shutil.move(self.boot / "config", Layout(self.rec.fsid).data(MON) / "config")
        shutil.rmtree(self.boot)

    @property
    def mon_asok(self) -> Path:
        assert self.rec is not None
        return Layout(self.rec.fsid).dirs[1] / f"ceph-{MON}.asok"

    @property
    def sockets(self) -> Path:
        """The directory of every daemon's admin socket on the host (lab.json's osd_sockets)."""
        assert self.rec is not None
        return Layout(self.rec.fsid).dirs[1]

    def start(self, lab: Lab, name: str, command: list[str]) -> None:
        """Start a daemon's container; it joins its groups once it runs, meanwhile the start goes on."""
        assert self.rec is not None
        start_daemon(lab, self.rec, name, command)
        if self.rec.groups.get(name):
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cephbench-join")
            self._joins.append(self._pool.submit(join_groups, lab, self.rec, name))

    def rgw_admin(self, lab: Lab) -> list[str]:
        """radosgw-admin in a container of the image on RGW's host, as client.admin, whose keyring alone is mounted
        beside RGW's conf."""
        assert self.rec is not None
        return self.rec.run_argv(lab, "radosgw-admin", RGW, ["radosgw-admin"],
                                 extra=(f"{lab.admin_keyring}:/etc/ceph/ceph.client.admin.keyring:ro",))

    def finish(self, lab: Lab) -> None:
        """Every daemon in its groups; the limits each container's cgroups hold, recorded."""
        assert self.rec is not None
        for f in self._joins:
            f.result()
        self.close()
        rec = self.rec
        rec.limits = {n: limits_seen(lab.dir, n) for n in rec.requested
                      if any(v is not None for v in rec.requested[n].values())}
        rec.write()

    def close(self) -> None:
        """A start that failed: its joins give up as their daemons' processes are stopped."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _podman(lab_dir: Path) -> list[str]:
    """The prefix of the lab's podman commands: `env CONTAINERS_CONF=...` first (the lab's processes are started
    without extra variables), then podman's own flags (lab/podman.py)."""
    exe = podman.exe()
    assert exe is not None
    conf = podman.conf_env(lab_dir / "run")["CONTAINERS_CONF"]
    return ["env", f"CONTAINERS_CONF={conf}", *podman.argv(exe)]


def _podman_run(lab_dir: Path, argv: list[str], timeout_s: float = 60) -> subprocess.CompletedProcess:
    """A podman command of the lab's (inspect, rm, ps), to its end."""
    return subprocess.run([*_podman(lab_dir)[2:], *argv], capture_output=True, text=True, timeout=timeout_s,
                          env=podman.conf_env(lab_dir / "run"))


def _make_dirs(rec: Record, layout: Layout, names: list[str]) -> None:
    """The cluster's directories under /var, recorded first (parents the host lacks too), each with its marker."""
    wanted = [*layout.dirs, *(layout.data(n) for n in names)]
    made: list[Path] = []
    for w in wanted:
        for p in [*reversed(w.parents), w]:
            if not p.exists() and p not in made:
                made.append(p)
    rec.made_dirs = [str(p) for p in made]
    rec.write()
    for p in made:
        p.mkdir(mode=0o755)
    for top in layout.dirs:
        (top / MARKER).write_text(f"{rec.lab_dir}\n")


def start_daemon(lab: Lab, rec: Record, name: str, command: list[str]) -> None:
    """Start one daemon's container (attached: the lab's PID file names its podman process), with its limits; the
    podman process itself stays in this machine's namespaces (its container is in its host's)."""
    want = rec.requested.get(name, {})
    argv = rec.run_argv(lab, name, name, [*command, "-f"], cpus=want.get("cpus"), memory=want.get("memory"))
    lab._start_daemon(name, argv, ceph=False, on_host=False)


def join_groups(lab: Lab, rec: Record, name: str, wait_s: float = JOIN_WAIT_S) -> int:
    """Move a daemon's process, once its container runs, into the lab's groups the record gives it (its OSD's blkio
    group, its host's cpuacct group); its PID. Gives up when its podman process ends first."""
    d = lab._daemon(name)
    deadline = time.monotonic() + wait_s
    while not (pid := container_pid(lab.dir, name, rec.containers[name])):
        client = lab._pid(d)
        if client is None or not dm.process_alive(client):
            raise OperationFailed(dm.died_message(d, "its container to run"))
        if time.monotonic() > deadline:
            raise OperationFailed(f"lab: the container of {name} did not run in {wait_s:.0f} s")
        time.sleep(0.1)
    for g in rec.groups.get(name, []):
        cgroups.join(Path(g), pid)
    return pid


def container_pid(lab_dir: Path, key: str, name: str = "") -> int | None:
    """The host PID of a container's process while it runs (by the ID podman recorded, else by its name)."""
    target = _cid(lab_dir, key) or name
    if not target:
        return None
    res = _podman_run(lab_dir, ["inspect", "--format", "{{.State.Pid}}", target])
    pid = res.stdout.strip()
    return int(pid) if res.returncode == 0 and pid.isdigit() and pid != "0" else None


def restart(lab: Lab, name: str) -> bool:
    """Start again an OSD of a lab in containers whose process was stopped (Lab.start_osds: a restart for cold
    caches or an option's sake), into its groups again; False when the lab is not in containers. Its container
    went with its process (`--rm`); one left by a SIGKILL is removed first, by its recorded ID."""
    rec = Record.load(lab.dir)
    if rec is None or name not in rec.requested:
        return False
    _remove_container(lab.dir, name, rec.containers[name])
    start_daemon(lab, rec, name, ["ceph-osd", "-i", name.split(".", 1)[1]])
    if rec.groups.get(name):
        join_groups(lab, rec, name)
    return True


def status(lab_dir: Path, conf: Path) -> list[dict]:
    """The lab's daemons' containers as podman and the record see them: name, daemon, host, state (podman's, or
    'absent'), the limits asked for and those the cgroups held at the start. Empty for a lab not in containers."""
    rec = Record.load(lab_dir)
    if rec is None or podman.exe() is None:
        return []
    res = _podman_run(lab_dir, ["ps", "--all", "--format", "json", "--filter", f"label={LABEL}={conf}"])
    try:
        seen = {c.get("Labels", {}).get(DAEMON_LABEL): c for c in json.loads(res.stdout or "[]")}
    except ValueError:
        seen = {}
    out = []
    for name in rec.requested:
        c = seen.get(name) or {}
        out.append({"daemon": name, "container": rec.containers[name], "host": rec.hosts.get(name, ""),
                    "state": str(c.get("State", "absent")), "id": str(c.get("Id", ""))[:12],
                    "cpus": rec.requested[name].get("cpus"), "memory_bytes": rec.requested[name].get("memory"),
                    "cgroup": rec.limits.get(name, {})})
    return out


def _remove_container(lab_dir: Path, key: str, name: str) -> bool:
    """`podman rm --force` of one of the lab's containers, by the ID podman recorded, else by its name; whether
    there was one."""
    res = _podman_run(lab_dir, ["rm", "--force", "--ignore", "--time", "0", _cid(lab_dir, key) or name], 120)
    if res.returncode != 0:
        raise OperationFailed(f"podman did not remove the lab's container {name}: {res.stderr.strip()}")
    cid_file(lab_dir, key).unlink(missing_ok=True)
    return bool(res.stdout.strip())


def limits_seen(lab_dir: Path, name: str) -> dict:
    """The limits a daemon's container has, as its cgroup files say (cgroup v1: cpu.cfs_quota_us and
    cpu.cfs_period_us, memory.limit_in_bytes), read through the daemon's PID in its container."""
    cid = _cid(lab_dir, name)
    out: dict = {"container": cid}
    pid = container_pid(lab_dir, name) if cid else None
    if pid is None:
        return out
    out["pid"] = pid
    groups = cgroup_paths(Path(f"/proc/{pid}/cgroup").read_text())
    for controller, files in (("cpu", ("cpu.cfs_quota_us", "cpu.cfs_period_us")),
                              ("memory", ("memory.limit_in_bytes",))):
        if controller in groups:
            for f in files:
                p = Path("/sys/fs/cgroup") / controller / groups[controller].lstrip("/") / f
                try:
                    out[f.split(".", 1)[1]] = int(p.read_text().strip())
                except (OSError, ValueError):
                    pass
    return out


def cgroup_paths(text: str) -> dict[str, str]:
    """/proc/PID/cgroup (v1: `4:cpu,cpuacct:/path`) -> {controller: path}."""
    out = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for c in parts[1].split(","):
                if c:
                    out[c] = parts[2]
    return out


def _cid(lab_dir: Path, name: str) -> str:
    try:
        return cid_file(lab_dir, name).read_text().strip()
    except OSError:
        return ""


# ---- down --------------------------------------------------------------------------------------------------------
def remove(lab_dir: Path, keep_data: bool = False) -> list[str]:
    """Remove every container the record names (by the ID podman wrote, else by its name, which holds the lab's
    fsid), then, unless `keep_data`, the directories the lab made under /var (each only with its marker naming this
    lab) and the record. The containers' processes were stopped by PID first (lab.py); what is gone is skipped. The
    containers removed, by name."""
    rec = Record.load(lab_dir)
    if rec is None or podman.exe() is None:
        return []
    gone = [name for key, name in rec.containers.items() if _remove_container(lab_dir, key, name)]
    if keep_data:
        return gone
    made = [Path(p) for p in rec.made_dirs]
    for top in Layout(rec.fsid).dirs:
        try:
            ours = (top / MARKER).read_text().strip() == rec.lab_dir
        except OSError:
            ours = False
        if ours and top in made:
            shutil.rmtree(top)
    for p in reversed(made):          # parents the lab made (/var/lib/ceph on a host without Ceph), while empty
        if p.is_dir() and p not in Layout(rec.fsid).dirs:
            try:
                p.rmdir()
            except OSError:
                pass
    Record.path(lab_dir).unlink(missing_ok=True)
    return gone
