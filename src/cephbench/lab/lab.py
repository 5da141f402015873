"""Create, start, inspect and stop a lab cluster.

A lab is one directory: ceph.conf, keyrings, mon/mgr/osd data, sparse files that
hold BlueStore, an RGW, logs, PID files and lab.json. Daemons daemonize
themselves and write PID files there; `down` stops exactly those PIDs.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import signal
import socket
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import OperationFailed, UserError
from ..hosts import CommandResult, LocalHost
from ..units import format_size
from .conf import LabPorts, render_conf

log = logging.getLogger(__name__)

REQUIRED_BINARIES = ("ceph", "ceph-mon", "ceph-mgr", "ceph-osd", "ceph-authtool", "monmaptool", "radosgw", "radosgw-admin", "rados")
# Health checks a healthy one-host lab may still show, and why they are harmless there.
ACCEPTED_WARNINGS = {
    "MON_DISK_LOW": "the lab shares the developer's disk; only the OSD files matter",
    "TOO_FEW_OSDS": "a lab with fewer OSDs than the default pool size is the user's choice",
    "RECENT_CRASH": "a crash report from an earlier lab in a reused directory",
    "OSDMAP_FLAGS": "noscrub/nodeep-scrub are set by cephbench while it runs",
}
LAB_USER = "cephbench-lab"


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

    @property
    def conf(self) -> Path:
        return Path(self.dir) / "ceph.conf"

    @property
    def rgw_endpoint(self) -> str | None:
        return f"http://127.0.0.1:{self.ports['rgw']}" if self.rgw else None

    @property
    def rgw_credentials_path(self) -> Path:
        return Path(self.dir) / "rgw-user.json"


@dataclass
class DaemonStatus:
    name: str
    pid: int | None
    running: bool


def default_lab_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cephbench" / "lab"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not alive for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class Lab:
    dir: Path
    host: LocalHost = field(default_factory=LocalHost)

    # ---- paths and state -------------------------------------------------
    @property
    def info_path(self) -> Path:
        return self.dir / "lab.json"

    def info(self) -> LabInfo | None:
        try:
            data = json.loads(self.info_path.read_text())
        except (OSError, ValueError):
            return None
        return LabInfo(**data)

    def _write_info(self, info: LabInfo) -> None:
        tmp = self.info_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(info), indent=2) + "\n")
        tmp.replace(self.info_path)

    def env(self) -> dict[str, str]:
        return {"CEPH_CONF": str(self.dir / "ceph.conf"),
                "CEPH_KEYRING": str(self.dir / "keyring" / "ceph.client.admin.keyring")}

    def daemons(self) -> list[DaemonStatus]:
        run = self.dir / "run"
        out = []
        if not run.is_dir():
            return out
        for pidfile in sorted(run.glob("*.pid")):
            try:
                pid = int(pidfile.read_text().strip())
            except (OSError, ValueError):
                pid = None
            out.append(DaemonStatus(pidfile.stem, pid, pid is not None and _pid_alive(pid)))
        return out

    def is_running(self) -> bool:
        return any(d.running for d in self.daemons())

    # ---- commands ----------------------------------------------------------
    def _ceph(self, *args: str, timeout_s: float = 60) -> CommandResult:
        return self.host.run(["ceph", "--conf", str(self.dir / "ceph.conf"), *args], timeout_s)

    def _check(self, res: CommandResult, what: str) -> CommandResult:
        if not res.ok:
            raise OperationFailed(f"lab: {what} failed: {res.error_text()} (logs in {self.dir / 'log'})")
        return res

    # ---- up ----------------------------------------------------------------
    def up(self, osds: int = 3, osd_size_bytes: int = 10 * 1024**3, rgw: bool = True,
           progress=lambda msg: None) -> LabInfo:
        missing = [b for b in REQUIRED_BINARIES if self.host.which(b) is None]
        if missing:
            raise UserError(f"Ceph binaries missing: {', '.join(missing)}",
                            "run scripts/setup.sh (Debian) or install ceph-mon ceph-mgr ceph-osd radosgw ceph-common")
        if osds < 1:
            raise UserError(f"--osds must be at least 1, got {osds}", where="--osds")
        if osd_size_bytes < 2 * 1024**3:
            raise UserError(f"--osd-size must be at least 2GiB for BlueStore, got {format_size(osd_size_bytes)}",
                            where="--osd-size")
        if self.is_running():
            raise UserError(f"a lab is already running in {self.dir}",
                            f"see 'cephbench lab status --dir {self.dir}', or 'cephbench lab down --dir {self.dir}'")
        if self.dir.exists() and any(self.dir.iterdir()):
            if not self.info_path.exists():
                raise UserError(f"{self.dir} exists and is not a cephbench lab directory",
                                "choose another --dir or empty it")
            shutil.rmtree(self.dir)  # a stopped lab's leftovers: start afresh
        self.dir.mkdir(parents=True, exist_ok=True)
        need = osds * osd_size_bytes
        free = shutil.disk_usage(self.dir).free
        if free < need * 1.05:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise UserError(
                f"not enough free disk for the lab: {format_size(need)} needed for {osds} OSD files of "
                f"{format_size(osd_size_bytes)}, {format_size(free)} free in {self.dir}",
                "use --osds, --osd-size or --dir on a larger filesystem")

        t0 = time.monotonic()
        try:
            info = self._create(osds, osd_size_bytes, rgw, progress)
        except BaseException:
            progress("start failed; stopping what was started")
            self.stop_daemons()
            raise
        info.startup_s = time.monotonic() - t0
        self._write_info(info)
        return info

    def _create(self, osds: int, osd_size_bytes: int, rgw: bool, progress) -> LabInfo:
        d = self.dir
        for sub in ("run", "log", "crash", "keyring", "mon", "mgr", "osd", "rgw"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(d / "keyring", 0o700)
        fsid = str(uuid.uuid4())
        ports = LabPorts(_free_port(), _free_port(), _free_port())
        conf = d / "ceph.conf"
        conf.write_text(render_conf(d, fsid, ports, min(3, osds), osd_size_bytes))
        info = LabInfo(dir=str(d), fsid=fsid, osds=osds, osd_size_bytes=osd_size_bytes, rgw=rgw,
                       ports={"mon_v2": ports.mon_v2, "mon_v1": ports.mon_v1, "rgw": ports.rgw},
                       created_unix=time.time())
        self._write_info(info)
        c = ["--conf", str(conf)]
        run = self.host.run

        progress("creating the monitor")
        # ceph-mon --mkfs wants an empty data dir and copies this keyring into it.
        mon_kr, admin_kr = d / "keyring" / "mon-mkfs.keyring", d / "keyring" / "ceph.client.admin.keyring"
        self._check(run(["ceph-authtool", "--create-keyring", mon_kr, "--gen-key", "-n", "mon.",
                         "--cap", "mon", "allow *"], 30), "mon key")
        self._check(run(["ceph-authtool", "--create-keyring", admin_kr, "--gen-key", "-n", "client.admin",
                         "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mds", "allow *",
                         "--cap", "mgr", "allow *"], 30), "admin key")
        os.chmod(admin_kr, 0o600)
        self._check(run(["ceph-authtool", mon_kr, "--import-keyring", admin_kr], 30), "keyring import")
        monmap = d / "run" / "monmap"
        self._check(run(["monmaptool", "--create", "--fsid", fsid, "--addv", "a",
                         f"[v2:127.0.0.1:{ports.mon_v2},v1:127.0.0.1:{ports.mon_v1}]", monmap], 30), "monmap")
        self._check(run(["ceph-mon", *c, "--mkfs", "-i", "a", "--monmap", monmap, "--keyring", mon_kr], 60),
                    "ceph-mon --mkfs")
        self._check(run(["ceph-mon", *c, "-i", "a"], 60), "start ceph-mon")
        self._wait(lambda: self._ceph("mon", "stat", timeout_s=10).ok, 60, "the monitor to answer")
        info.ceph_version = self._ceph("version", timeout_s=10).stdout.strip()

        progress("starting the manager")
        mgr_dir = d / "mgr" / "x"
        mgr_dir.mkdir()
        self._check(self._ceph("auth", "get-or-create", "mgr.x", "mon", "allow profile mgr", "osd", "allow *",
                               "mds", "allow *", "-o", str(mgr_dir / "keyring")), "mgr key")
        self._check(run(["ceph-mgr", *c, "-i", "x"], 60), "start ceph-mgr")

        progress(f"creating {osds} OSD(s) with BlueStore on {format_size(osd_size_bytes)} files")
        ids = []
        for _ in range(osds):
            osd_uuid = str(uuid.uuid4())
            res = self._check(self._ceph("osd", "new", osd_uuid), "ceph osd new")
            osd_id = res.stdout.strip()
            ids.append((osd_id, osd_uuid))
            od = d / "osd" / osd_id
            od.mkdir()
            self._check(self._ceph("auth", "get-or-create", f"osd.{osd_id}", "mon", "allow profile osd",
                                   "mgr", "allow profile osd", "osd", "allow *", "-o", str(od / "keyring")),
                        f"osd.{osd_id} key")

        def mkfs_and_start(item: tuple[str, str]) -> None:
            osd_id, osd_uuid = item
            self._check(run(["ceph-osd", *c, "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid], 180),
                        f"ceph-osd --mkfs osd.{osd_id}")
            self._check(run(["ceph-osd", *c, "-i", osd_id], 60), f"start osd.{osd_id}")

        # mkfs is mostly waiting on fsync: doing the OSDs side by side halves the start time.
        with ThreadPoolExecutor(max_workers=min(4, osds)) as pool:
            list(pool.map(mkfs_and_start, ids))
        self._wait(lambda: self._osds_up() >= osds, 120, f"{osds} OSD(s) to come up")

        if rgw:
            progress("starting RGW (beast) and creating the S3/Swift user")
            self._check(self._ceph("auth", "get-or-create", "client.rgw.lab", "mon", "allow rw", "osd", "allow rwx",
                                   "mgr", "allow rw", "-o", str(d / "keyring" / "ceph.client.rgw.lab.keyring")),
                        "rgw key")
            self._check(run(["radosgw", *c, "-n", "client.rgw.lab"], 60), "start radosgw")

            # RGW creates its bucket pools on the first write, and the PGs peer while that write waits:
            # the first benchmark would measure pool creation (8 PUT/s at 2 s each). Create them while
            # RGW starts.
            def bucket_pool(pool: str) -> None:
                self._check(self._ceph("osd", "pool", "create", pool), f"create {pool}")
                self._check(self._ceph("osd", "pool", "application", "enable", pool, "rgw"), f"tag {pool}")

            with ThreadPoolExecutor(max_workers=3) as pool:
                pending = [pool.submit(bucket_pool, p) for p in
                           ("default.rgw.buckets.index", "default.rgw.buckets.data", "default.rgw.buckets.non-ec")]
                self._wait(lambda: self._rgw_answers(ports.rgw), 120, "RGW to answer HTTP")
                self._create_rgw_user()
                for f in pending:
                    f.result()

        progress("waiting for HEALTH_OK and all PGs active+clean")
        self._wait(self.healthy, 180, "the cluster to become healthy")
        return info

    def _create_rgw_user(self) -> None:
        access, secret, swift_key = secrets.token_hex(10).upper(), secrets.token_hex(20), secrets.token_hex(20)
        c = ["--conf", str(self.dir / "ceph.conf")]
        self._check(self.host.run(["radosgw-admin", *c, "user", "create", "--uid", LAB_USER,
                                   "--display-name", "cephbench lab user", "--access-key", access,
                                   "--secret-key", secret], 60), "radosgw-admin user create")
        self._check(self.host.run(["radosgw-admin", *c, "subuser", "create", "--uid", LAB_USER,
                                   "--subuser", f"{LAB_USER}:swift", "--access", "full",
                                   "--key-type", "swift", "--secret-key", swift_key], 60),
                    "radosgw-admin subuser create")
        path = self.dir / "rgw-user.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"uid": LAB_USER, "s3_access_key": access, "s3_secret_key": secret,
                       "swift_user": f"{LAB_USER}:swift", "swift_key": swift_key}, f, indent=2)

    def _osds_up(self) -> int:
        res = self._ceph("osd", "stat", "-f", "json", timeout_s=10)
        if not res.ok:
            return 0
        return int(json.loads(res.stdout).get("num_up_osds", 0))

    @staticmethod
    def _rgw_answers(port: int) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def health(self) -> dict:
        res = self._ceph("status", "-f", "json", timeout_s=15)
        if not res.ok:
            raise OperationFailed(f"lab: ceph status failed: {res.error_text()}")
        return json.loads(res.stdout)

    def healthy(self) -> bool:
        try:
            st = self.health()
        except (OperationFailed, ValueError):
            return False
        checks = set(st.get("health", {}).get("checks", {}))
        if checks - set(ACCEPTED_WARNINGS):
            return False
        pgmap = st.get("pgmap", {})
        states = pgmap.get("pgs_by_state", [])
        total = pgmap.get("num_pgs", 0)
        clean = sum(s["count"] for s in states if s["state_name"] == "active+clean")
        return clean == total

    def _wait(self, cond, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        delay = 0.2
        while time.monotonic() < deadline:
            if cond():
                return
            self._raise_if_daemon_died()
            time.sleep(delay)
            delay = min(delay * 1.5, 0.3)
        raise OperationFailed(f"lab: timed out after {timeout_s:.0f} s waiting for {what} (logs in {self.dir / 'log'})")

    def _raise_if_daemon_died(self) -> None:
        dead = [d.name for d in self.daemons() if not d.running]
        if dead:
            raise OperationFailed(f"lab: daemon(s) {', '.join(dead)} exited (logs in {self.dir / 'log'})")

    def restart_osds(self) -> None:
        """Stop and start every OSD: BlueStore's caches start cold (for cold-read benchmarks)."""
        osds = [d for d in self.daemons() if d.name.startswith("osd.") and d.running and d.pid]
        for d in osds:
            os.kill(d.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_pid_alive(d.pid) for d in osds):
            time.sleep(0.05)
        conf = str(self.dir / "ceph.conf")
        for d in osds:
            self._check(self.host.run(["ceph-osd", "--conf", conf, "-i", d.name.split(".", 1)[1]], 60),
                        f"restart {d.name}")
        self._wait(lambda: self._osds_up() >= len(osds), 120, "OSDs to come back up")
        self._wait(self.healthy, 180, "the cluster to become healthy after the OSD restart")

    # ---- down --------------------------------------------------------------
    def stop_daemons(self, timeout_s: float = 10) -> list[str]:
        """SIGTERM every daemon of this lab (by PID file, never by name), then SIGKILL stragglers."""
        targets = [d for d in self.daemons() if d.running and d.pid]
        for d in targets:
            try:
                os.kill(d.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and any(_pid_alive(d.pid) for d in targets):
            time.sleep(0.05)
        for d in targets:
            if _pid_alive(d.pid):
                log.info("%s (pid %d) did not stop in %.0f s: killing", d.name, d.pid, timeout_s)
                try:
                    os.kill(d.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return [d.name for d in targets]

    def down(self, keep: bool = False) -> list[str] | None:
        """Stop the lab; None when there was no lab here."""
        if not self.dir.exists():
            return None
        if not self.info_path.exists() and not (self.dir / "run").exists():
            return None
        # A lab that is thrown away need not wait for a clean shutdown: BlueStore is
        # crash-consistent, and RGW's shutdown alone can take 10 s. A kept lab gets the time.
        stopped = self.stop_daemons(timeout_s=10 if keep else 2)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        return stopped
