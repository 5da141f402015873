"""A lab whose daemons run in containers as cephadm lays them out (`lab up --containers`): one podman container per
daemon, in the host's network namespace, from the release's image (lab/image.py: the same image as the toolbox, as
cephadm's one image holds the daemons and `cephadm shell`'s tools).

cephadm's layout on the host: each daemon's data in /var/lib/ceph/<fsid>/<daemon>/ (its `config` and `keyring`
there too: the host has no ceph.conf of its own), mounted in its container where Ceph's defaults look
(/var/lib/ceph/osd/ceph-0, /etc/ceph/ceph.conf); the admin sockets of all of them in /var/run/ceph/<fsid>/ and their
logs in /var/log/ceph/<fsid>/, mounted as the container's /var/run/ceph and /var/log/ceph. The lab directory keeps
what a client needs (its ceph.conf, the admin keyring), lab.json and the record of this module, run/containers.json.

Each daemon is an attached `podman run --rm` started as every lab daemon is (its PID file written by its own process,
lab.py's `_start_daemon`): its command line carries the label io.cephbench.lab=<the lab's ceph.conf>, by which
`down` knows the process for the lab's (daemons.is_lab_process). Stopping that process ends the container with
SIGTERM (podman passes it on); SIGKILL does not: `down` then removes every container the record names, by the ID
podman wrote to run/<name>.cid, or by its name, which holds the lab's fsid. The record is written before anything is
made; the directories under /var/lib, /var/run and /var/log carry a marker naming the lab, and are removed only with
it. Per-daemon `--cpus` and `--memory` are podman's, as Rook's resource limits are Kubernetes': a cgroup CFS quota
(cpu.cfs_quota_us) and a memory limit on the container.

One host only for now: a monitor, a manager, the OSDs (BlueStore on a sparse file in each OSD's data directory) and
RGW (its S3/Swift user made by radosgw-admin in a container of the same image).
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import subprocess
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ..core.errors import OperationFailed, UserError
from ..core.units import format_size, parse_size
from . import daemons as dm
from . import image, labdir, podman, roots
from .asok import AsokError, asok_command
from .conf import LabNet, LabPorts, disk_room, mon_addrs, render_conf
from .keys import Entity, new_secret, write_keyring

# lab.py calls this module (Lab.up_in_containers, and its down): its Lab and LabInfo are given, never imported here
Lab = LabInfo = Any

log = logging.getLogger(__name__)

RECORD_NAME = "containers.json"          # in the lab's run/
LABEL = "io.cephbench.lab"               # its value: the lab's ceph.conf, the proof a process is the lab's
MARKER = ".cephbench-lab"                # in each directory made under /var: the lab directory it belongs to
LIB, RUN, LOG = Path("/var/lib/ceph"), Path("/var/run/ceph"), Path("/var/log/ceph")
MON, MGR, RGW = "mon.a", "mgr.x", "client.rgw.lab"
LAB_USER = "cephbench-lab"              # RGW's user, lab.py's LAB_USER (drivers find its keys in rgw-user.json)
MKFS_DIR = "/var/lib/ceph/bootstrap-lab"
# a mkfs in the foreground (it would fork a child otherwise) and without the daemon's PID file
MKFS_ARGS = ("--pid-file", "", "-f")  # where the mkfs containers see the monmap and the mon's mkfs keyring
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
             extra: tuple[str, ...] = (), container: str | None = None, config: Path | None = None) -> list[str]:
    """`podman run` of one of the lab's commands: attached, removed when it ends, in the host's network namespace,
    labelled with the lab's conf (how `down` knows the process for the lab's), its limits podman's own."""
    # --workdir /: Debian's ceph-osd finds its object classes at a relative path (lib/x86_64-linux-gnu/rados-classes);
    # from the toolbox's working directory every `cls` call failed (EOPNOTSUPP: the mgr's database never opened)
    out = [*prefix, "run", "--rm", "--name", container or layout.container(name), "--net", "host", "--workdir", "/",
           "--label", f"{LABEL}={lab_conf}", "--label", f"io.cephbench.daemon={name}"]
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


def cid_file(lab_dir: Path, name: str) -> Path:
    return lab_dir / "run" / f"{name}.cid"


# ---- up ----------------------------------------------------------------------------------------------------------
def up(lab: Lab, osds: int, osd_size_bytes: int, release: str | None, cpus: dict[str, float | int],
       memory: dict[str, float | int], progress: Callable[[str], None], new_info: Callable[..., LabInfo], steps,
       ports: list[int], rgw_pools: tuple[str, ...]) -> LabInfo:
    """Start a one-host lab of `release` (the host's own by default) whose daemons are containers, with RGW when
    `rgw_pools` names its pools. lab.py gives its record type, its step clock and three free ports
    (Lab.up_in_containers)."""
    if osds < 1:
        raise UserError(f"--osds must be at least 1, got {osds}", where="--osds")
    if osd_size_bytes < 2 * 1024**3:
        raise UserError(f"--osd-size must be at least 2GiB for BlueStore, got {format_size(osd_size_bytes)}",
                        where="--osd-size")
    names = [MON, MGR, *(f"osd.{i}" for i in range(osds)), *([RGW] if rgw_pools else [])]
    for target in (*cpus, *memory):
        if "." in target and target not in map(_short, names):
            raise UserError(f"{target}: the lab has no such daemon (it runs {', '.join(map(_short, names))})",
                            where="--cpus" if target in cpus else "--memory")
    if podman.exe() is None:
        raise UserError("a lab in containers needs podman, which is not installed", "apt-get install podman runc",
                        where="--containers")
    rel = roots.release(release or lab.host_release() or "pacific")
    img = image.ensure(rel.name, progress=progress, daemons_only=True)
    # refuses a lab that runs; removes what a stopped or killed one left, its containers too (Lab's host objects)
    lab._clear_for_up()
    marker = labdir.claim(lab.dir)
    (lab.dir / "run").mkdir(exist_ok=True)
    problem = podman.problem(img.ref, lab.dir / "run")
    room = disk_room(shutil.disk_usage(LIB.parent if LIB.parent.exists() else lab.dir).free, osds, osd_size_bytes)
    if problem or room.refusal:
        labdir.remove(marker)
        raise UserError(problem or f"{room.refusal} in {LIB}", "apt-get install runc" if problem else
                        "use --osds or --osd-size", where="--containers")
    if room.note():
        progress(room.note())
    lock = labdir.StartLock(marker)
    try:
        info = _create(lab, img, rel, osds, osd_size_bytes, room.full_ratio, cpus, memory, progress, steps,
                       new_info, LabPorts(*ports), rgw_pools)
    except BaseException:
        try:
            progress("start failed; stopping what was started")
        finally:
            lab.stop_daemons(grace_s=0)
            remove(lab.dir)
        raise
    finally:
        lock.release()
    info.startup_s = time.monotonic() - steps.t0
    info.startup_steps = steps.done
    lab._write_info(info)
    replace(marker, started=True).write()
    return info


def _podman(lab_dir: Path) -> list[str]:
    """The prefix of the lab's podman commands: `env CONTAINERS_CONF=...` first (the lab's processes are started
    without extra variables), then podman's own flags (lab/podman.py)."""
    exe = podman.exe()
    assert exe is not None
    conf = podman.conf_env(lab_dir / "run")["CONTAINERS_CONF"]
    return ["env", f"CONTAINERS_CONF={conf}", *podman.argv(exe)]


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


def _create(lab: Lab, img: image.Image, rel: roots.Release, osds: int, osd_size_bytes: int,
            full_ratio: float | None, cpus: dict[str, float | int], memory: dict[str, float | int],
            progress: Callable[[str], None], steps, new_info: Callable[..., LabInfo], ports: LabPorts,
            rgw_pools: tuple[str, ...]) -> LabInfo:
    d = lab.dir
    for sub in ("run", "log", "keyring"):
        (d / sub).mkdir(exist_ok=True)
    (d / "keyring").chmod(0o700)
    fsid = str(uuid.uuid4())
    layout = Layout(fsid)
    rgw = bool(rgw_pools)
    names = [MON, MGR, *(f"osd.{i}" for i in range(osds)), *([RGW] if rgw else [])]
    conf_text = render_conf(d, fsid, ports, min(3, osds), osd_size_bytes, LabNet(), full_ratio=full_ratio)
    lab.conf.write_text(conf_text)          # the clients' (lab env, cephbench run): the daemons have their own
    rec = Record(str(d), fsid, img.ref, img.id,
                 containers={n: layout.container(n) for n in [*names, "monmaptool", "mkfs-mon.a",
                                                                *(f"mkfs-osd.{i}" for i in range(osds)),
                                                                *(["radosgw-admin"] if rgw else [])]},
                 requested={n: {"cpus": limit_for(cpus, n), "memory": limit_for(memory, n)} for n in names})
    _make_dirs(rec, layout, names)
    for n in names[1:]:         # the monitor's once its mkfs has filled its data directory
        (layout.data(n) / "config").write_text(daemon_conf(conf_text, d))
    kt = rel.service_key_type
    admin = Entity("client.admin", new_secret(), {"mon": "allow *", "osd": "allow *", "mds": "allow *",
                                                    "mgr": "allow *"})
    mgr = Entity("mgr.x", new_secret(key_type=kt), {"mon": "allow profile mgr", "osd": "allow *", "mds": "allow *"})
    osd_keys = [Entity(f"osd.{i}", new_secret(key_type=kt),
                       {"mon": "allow profile osd", "mgr": "allow profile osd", "osd": "allow *"}) for i in range(osds)]
    rgw_key = Entity(RGW, new_secret(key_type=kt), {"mon": "allow rw", "osd": "allow rwx", "mgr": "allow rw"})
    write_keyring(lab.admin_keyring, [admin])
    write_keyring(layout.data(MGR) / "keyring", [mgr])
    if rgw:
        write_keyring(layout.data(RGW) / "keyring", [rgw_key])
    for i, k in enumerate(osd_keys):
        write_keyring(layout.data(f"osd.{i}") / "keyring", [k])
    # the monmap, the keyring the monitor imports and its conf for the mkfs, in the lab's run/ (cephadm's bootstrap
    # keeps them in a temporary directory)
    boot = d / "run" / "bootstrap"
    boot.mkdir()
    (boot / "config").write_text(daemon_conf(conf_text, d))
    write_keyring(boot / "mon-mkfs.keyring", [Entity("mon.", new_secret(key_type=kt), {"mon": "allow *"}), admin,
                                              mgr, *osd_keys, *([rgw_key] if rgw else [])])
    info = new_info(dir=str(d), fsid=fsid, osds=osds, osd_size_bytes=osd_size_bytes, rgw=rgw,
                   ports={"mon_v2": ports.mon_v2, "mon_v1": ports.mon_v1, "rgw": ports.rgw},
                   created_unix=time.time(), release=rel.name, osd_sockets=str(layout.dirs[1]))
    lab._write_info(info)
    steps.mark("prepared")

    prefix = _podman(d)

    def argv(key: str, name: str, command: list[str], **kw) -> list[str]:
        """The podman run of record entry `key` (a daemon, or a command of the start: mkfs-osd.0), as `name`'s."""
        return run_argv(prefix, layout, name, img.id, command, lab.conf, container=rec.containers[key],
                        cidfile=cid_file(d, key), **kw)

    boot_mount = (f"{boot}:{MKFS_DIR}",)
    with ThreadPoolExecutor(max_workers=osds + 1) as pool, ExitStack() as stack:
        progress(f"creating the monitor and {osds} OSD(s) in containers of {img.ref}, BlueStore on "
                 f"{format_size(osd_size_bytes)} files")
        osd_uuids = [str(uuid.uuid4()) for _ in range(osds)]
        # mkfs asks the monitor for configuration by default, and it is not up yet; the OSDs' side by side
        mkfs: dict[Future, int] = {
            pool.submit(lab._run, argv(f"mkfs-osd.{i}", f"osd.{i}", [
                "ceph-osd", "-i", str(i), "--mkfs", "--no-mon-config", "--osd-uuid", osd_uuids[i], *MKFS_ARGS]),
                dm.OVERALL_S, f"mkfs-osd.{i}"): i
            for i in range(osds)}
        ciphers = rel.mon_ciphers
        lab._check(lab._run(argv("monmaptool", MON, [
            "monmaptool", "--create", "--fsid", fsid, "--addv", "a", mon_addrs("127.0.0.1", ports),
            *(["--auth-allowed-ciphers", ciphers] if ciphers else []), f"{MKFS_DIR}/monmap"], extra=boot_mount,
            config=boot / "config"),
            dm.OVERALL_S, "monmaptool"), "monmaptool")
        lab._check(lab._run(argv("mkfs-mon.a", MON, [
            "ceph-mon", "--mkfs", "-i", "a", "--monmap", f"{MKFS_DIR}/monmap", "--keyring",
            f"{MKFS_DIR}/mon-mkfs.keyring", *MKFS_ARGS], extra=boot_mount, config=boot / "config"),
            dm.OVERALL_S, "mkfs-mon.a"), "ceph-mon --mkfs")
        shutil.move(boot / "config", layout.data(MON) / "config")
        shutil.rmtree(boot)         # the monitor keeps its keys in its store now

        def start(name: str, command: list[str]) -> None:
            start_daemon(lab, rec, name, command)
        start(MON, ["ceph-mon", "-i", "a"])
        start(MGR, ["ceph-mgr", "-i", "x"])
        mon_d = lab._daemon(MON)
        mon_asok = layout.dirs[1] / "ceph-mon.a.asok"
        dm.wait_for(lambda: _mon_state(mon_asok), "the monitor to form a quorum", [mon_d], lab._pid, progress,
                    starting=[mon_d])
        steps.mark("mon leader")
        mon = stack.enter_context(lab._mon())
        info.ceph_version = next(iter(mon.json("versions").get("overall", {})), "")
        # Reef and later reserve pool names beginning with "." to Ceph: RGW's .rgw.root needs the flag (lab.py)
        dot_ok = {"yes_i_really_mean_it": True} if rel.name != "pacific" else {}

        def rgw_pool(name: str) -> None:
            mon.command("osd pool create", pool=name, **(dot_ok if name.startswith(".") else {}))
            mon.command("osd pool application enable", pool=name, app="rgw")

        with ThreadPoolExecutor(max_workers=8) as commands:
            done = [commands.submit(mon.command, "osd new", uuid=u, id=i) for i, u in enumerate(osd_uuids)]
            done += [commands.submit(rgw_pool, p) for p in rgw_pools]
            done.append(commands.submit(mon.command, "config set", who="mgr",
                                        name="mgr/devicehealth/enable_monitoring", value="false", force=True))
            done.append(commands.submit(mon.command, "config set", who="mon", name="mon_allow_pool_delete",
                                        value="true"))
            for f in done:
                f.result()
        steps.mark("osd ids and pools")
        for f in as_completed(mkfs):
            i = mkfs[f]
            lab._check(f.result(), f"ceph-osd --mkfs osd.{i}")
            start(f"osd.{i}", ["ceph-osd", "-i", str(i)])
        steps.mark("osds started")
        osd_ds = [lab._daemon(f"osd.{i}") for i in range(osds)]
        progress(f"waiting for {osds} OSD(s) to come up")
        dm.wait_for(lambda: lab._osds_up(mon, osds), f"{osds} OSD(s) to come up", [mon_d, *osd_ds], lab._pid,
                    progress, starting=osd_ds)
        steps.mark("osds up")
        all_ds = [mon_d, lab._daemon(MGR), *osd_ds]
        if rgw:
            progress("starting RGW (beast)")
            start(RGW, ["radosgw", "-n", RGW])
            rgw_d = lab._daemon(RGW)
            all_ds.append(rgw_d)
            dm.wait_for(lambda: (lab._rgw_answers(info.rgw_endpoint or ""), lab._pgs_state(mon)),
                        "RGW to answer HTTP", all_ds, lab._pid, progress, starting=[rgw_d])
            steps.mark("rgw answers")
            progress("creating the S3/Swift user; waiting for HEALTH_OK and all PGs active+clean")
            user = pool.submit(_rgw_user, lab, argv("radosgw-admin", RGW, ["radosgw-admin"], extra=(
                f"{lab.admin_keyring}:/etc/ceph/ceph.client.admin.keyring:ro",)))
        else:
            progress("waiting for HEALTH_OK and all PGs active+clean")
        dm.wait_for(lambda: lab._healthy(mon), "the cluster to become healthy", all_ds, lab._pid, progress)
        steps.mark("healthy")
        if rgw:
            user.result()
            steps.mark("rgw user")
        dm.wait_for(lambda: lab._versions(mon, info, rgw), "every daemon's version", all_ds, lab._pid, progress)
    rec.limits = {n: limits_seen(d, n) for n in names if limit_for(cpus, n) is not None
                  or limit_for(memory, n) is not None}
    rec.write()
    return info


def _rgw_user(lab: Lab, radosgw_admin: list[str]) -> None:
    """The lab's S3/Swift user (lab.py's, its keys in rgw-user.json, 0600), made by radosgw-admin in a container of
    the release's image as client.admin, whose keyring alone is mounted beside RGW's conf."""
    access, secret = secrets.token_hex(10).upper(), secrets.token_hex(20)
    lab._check(lab._run([*radosgw_admin, "-n", "client.admin", "user", "create", "--uid", LAB_USER,
                         "--display-name", "cephbench lab user", "--access-key", access, "--secret-key", secret,
                         "--subuser", f"{LAB_USER}:swift", "--access", "full"], dm.OVERALL_S, "radosgw-admin"),
               "radosgw-admin user create")
    fd = os.open(lab.dir / "rgw-user.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"uid": LAB_USER, "s3_access_key": access, "s3_secret_key": secret,
                   "swift_user": f"{LAB_USER}:swift", "swift_key": secret}, f, indent=2)


def start_daemon(lab: Lab, rec: Record, name: str, command: list[str]) -> None:
    """Start one daemon's container (attached: the lab's PID file names its podman process), with its limits."""
    want = rec.requested.get(name, {})
    # by the image's ID, as cephadm pins its daemons' image: a rebuilt toolbox image moves the tag, not a lab
    argv = run_argv(_podman(lab.dir), Layout(rec.fsid), name, rec.image_id, [*command, "-f"], lab.conf,
                    container=rec.containers[name], cidfile=cid_file(lab.dir, name), cpus=want.get("cpus"),
                    memory=want.get("memory"))
    lab._start_daemon(name, argv, ceph=False)


def restart(lab: Lab, name: str) -> bool:
    """Start again an OSD of a lab in containers whose process was stopped (Lab.start_osds: a restart for cold
    caches or an option's sake); False when the lab is not in containers. Its container went with its process
    (`--rm`); one left by a SIGKILL is removed first, by its recorded ID."""
    rec = Record.load(lab.dir)
    if rec is None or name not in rec.requested:
        return False
    _remove_container(lab.dir, name, rec.containers[name])
    start_daemon(lab, rec, name, ["ceph-osd", "-i", name.split(".", 1)[1]])
    return True


def _remove_container(lab_dir: Path, key: str, name: str) -> bool:
    """`podman rm --force` of one of the lab's containers, by the ID podman recorded, else by its name; whether
    there was one."""
    target = _cid(lab_dir, key) or name
    res = subprocess.run([*_podman(lab_dir)[2:], "rm", "--force", "--ignore", "--time", "0", target],
                         capture_output=True, text=True, timeout=120, env=podman.conf_env(lab_dir / "run"))
    if res.returncode != 0:
        raise OperationFailed(f"podman did not remove the lab's container {name}: {res.stderr.strip()}")
    cid_file(lab_dir, key).unlink(missing_ok=True)
    return bool(res.stdout.strip())


def _mon_state(asok: Path) -> tuple[bool, str]:
    try:
        state = str(asok_command(asok, "mon_status", timeout_s=2).get("state", ""))
    except (AsokError, AttributeError):
        return False, "starting"
    return state in ("leader", "peon"), state


def limits_seen(lab_dir: Path, name: str) -> dict:
    """The limits a daemon's container has, as its cgroup files say (cgroup v1: cpu.cfs_quota_us and
    cpu.cfs_period_us, memory.limit_in_bytes), read through the daemon's PID in its container."""
    cid = _cid(lab_dir, name)
    out: dict = {"container": cid}
    if not cid:
        return out
    res = subprocess.run([*_podman(lab_dir)[2:], "inspect", "--format", "{{.State.Pid}}", cid], capture_output=True,
                         text=True, timeout=60, env=podman.conf_env(lab_dir / "run"))
    pid = res.stdout.strip()
    if res.returncode != 0 or not pid.isdigit() or pid == "0":
        return out
    out["pid"] = int(pid)
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
