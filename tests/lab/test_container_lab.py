"""A lab whose daemons run in containers as cephadm lays them out (issue 38): `lab up --containers --release reef`
runs one podman container per daemon of Reef's image (RGW too), each with its data in /var/lib/ceph/<fsid>/<daemon>
(its conf there too: no --conf, no host ceph.conf), its socket in /var/run/ceph/<fsid>/ and its log in
/var/log/ceph/<fsid>/; `--cpus osd.1=0.3 --cpus rgw=0.5 --memory osd=2GiB` are the containers' cgroup limits.
A run from this machine reads every OSD's counters through cephadm's socket layout and each OSD's CPU through its
host PID; a run from the toolbox image mounted as `cephadm shell` mounts (the minimal conf, the key, this host's
/var/run/ceph/<fsid> as /var/run/ceph) reads them from the sockets' default path and records Reef. `lab down` removes
every container and every directory under /var it made.

With `--hosts 3` each daemon's container is in its host's network namespace, an OSD's process in its drive's blkio
group: the ground truth of issue 38 is a toolbox run (conf and key alone) on such a lab, whose verdict names the
drive `--osd-throttle` holds.

Skipped, with the reason, where podman cannot run a container."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.core.results import RunDir
from cephbench.lab import Lab, cgroups, containers, drives, image, netns, podman

from labcli import run_cli

NEEDS_ROOTS = True      # last in its session (conftest): `make roots` builds Reef's root meanwhile

SUITE = """
name: containers
pools:
  rep: {type: replicated, size: 2, pg_num: 8}
workloads:
  - name: rados
    type: rados_bench
    pool: rep
    modes: [write]
    object_size: [64KiB]
    concurrency: 4
    duration: 3s
"""


def _podman_or_skip(tmp: Path) -> str:
    exe = podman.exe()
    if exe is None:
        pytest.skip("podman is not installed (scripts/setup.sh installs podman and runc for the lab)")
    # the toolbox's image, current, before the lab starts: the lab's daemons run the same image (a rebuild while
    # they run would leave the image they use behind, untagged, until the next build)
    try:
        img = image.ensure("reef")
    except UserError as exc:
        if image.NO_RUN in exc.one_line():
            pytest.skip(exc.one_line())
        raise
    problem = podman.problem(img.ref, tmp)
    if problem:
        pytest.skip(problem)
    return exe


def _ours(exe: str, conf: Path, tmp: Path) -> list[dict]:
    res = subprocess.run([*podman.argv(exe), "ps", "--all", "--format", "json", "--filter",
                          f"label={containers.LABEL}={conf}"], capture_output=True, text=True, timeout=60,
                         env=podman.conf_env(tmp))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout or "[]")


def _down(lb: Lab, d: Path) -> subprocess.CompletedProcess:
    down = run_cli(["lab", "down", "--dir", lb.dir])
    shutil.rmtree(d, ignore_errors=True)
    return down


def _nothing_left(exe: str, lb: Lab, fsid: str, down: subprocess.CompletedProcess, tmp: Path) -> None:
    """`lab down` worked and left no container of the lab, no directory of its cluster under /var, no lab
    directory."""
    assert down.returncode == 0, down.stderr
    assert _ours(exe, lb.conf, tmp) == [], "a container of the lab was left"
    for p in containers.Layout(fsid).dirs:
        assert not p.exists(), p
    assert not lb.dir.exists()


def test_a_reef_lab_in_containers_in_cephadms_layout_with_limits_runs_suites_and_leaves_nothing(tmp_path):
    exe = _podman_or_skip(tmp_path)
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-containers-"))
    lab_dir = d / "lab"
    lb = Lab(lab_dir)
    fsid = ""
    try:
        up = run_cli(["lab", "up", "--dir", lab_dir, "--containers", "--release", "reef", "--osds", "2",
                      "--osd-size", "3GiB", "--cpus", "osd.1=0.3", "--cpus", "rgw=0.5", "--memory", "osd=2GiB"])
        assert up.returncode == 0, up.stderr[-3000:]
        print(up.stdout)
        info = lb.info()
        assert info is not None and info.release == "reef" and "ceph version 18." in info.ceph_version
        fsid = info.fsid
        layout = containers.Layout(fsid)
        # one container per daemon, named as cephadm names them, each daemon in the host's network namespace
        running = {c["Labels"]["io.cephbench.daemon"]: c for c in _ours(exe, lb.conf, tmp_path)}
        assert set(running) == {"mon.a", "mgr.x", "osd.0", "osd.1", "client.rgw.lab"}, sorted(running)
        for name, c in running.items():
            assert layout.container(name) in c["Names"], c["Names"]
        host_net = os.readlink("/proc/self/ns/net")
        for st in lb.daemons():
            assert st.running, st
        pids = {}
        for name in running:
            res = subprocess.run([*podman.argv(exe), "inspect", "--format", "{{.State.Pid}}", layout.container(name)],
                                 capture_output=True, text=True, timeout=60, env=podman.conf_env(tmp_path))
            pids[name] = int(res.stdout.strip())
            assert os.readlink(f"/proc/{pids[name]}/ns/net") == host_net, name
            cmdline = Path(f"/proc/{pids[name]}/cmdline").read_bytes().split(b"\0")
            assert b"--conf" not in cmdline, cmdline                 # the conf is where Ceph's default looks
            assert (layout.data(name) / "config").is_file()
            assert (layout.dirs[1] / f"ceph-{name}.asok").is_socket()
            assert (layout.dirs[2] / f"ceph-{name}.log").is_file()
        assert (layout.data("osd.0") / "block").is_file() and (layout.data("mon.a") / "store.db").is_dir()
        # RGW answers, with the lab's S3/Swift user made by radosgw-admin in a container
        with urllib.request.urlopen(f"{info.rgw_endpoint}/", timeout=10) as r:
            assert r.status == 200
        assert json.loads((lab_dir / "rgw-user.json").read_text())["uid"] == "cephbench-lab"
        assert (lab_dir / "rgw-user.json").stat().st_mode & 0o777 == 0o600
        # the limits, as the containers' cgroups hold them (what Rook's resources set)
        seen = {n: containers.limits_seen(lab_dir, n) for n in ("osd.0", "osd.1")}
        assert seen["osd.1"]["cfs_quota_us"] == 30000 and seen["osd.1"]["cfs_period_us"] == 100000, seen
        assert seen["osd.0"]["cfs_quota_us"] == -1, seen
        assert all(s["limit_in_bytes"] == 2 * 2**30 for s in seen.values()), seen
        assert containers.limits_seen(lab_dir, "client.rgw.lab")["cfs_quota_us"] == 50000
        assert containers.Record.load(lab_dir).limits["osd.1"]["cfs_quota_us"] == 30000

        # a run from this machine: each OSD's counters through cephadm's socket layout, its CPU by its host PID
        (tmp_path / "s.yaml").write_text(SUITE)
        res = run_cli(["run", tmp_path / "s.yaml", "--out", tmp_path / "run"], {**os.environ, **lb.env()})
        assert res.returncode == 0, res.stderr[-3000:] + res.stdout[-3000:]
        (r,) = RunDir(tmp_path / "run").results()[0]
        assert r.status == "ok" and r.evidence is not None, r.error
        assert {o.source for o in r.evidence.osds} == {"admin socket, cephadm layout"}, r.evidence.osds
        assert {c.pid for c in r.evidence.cpu if c.who.startswith("osd.")} == {pids["osd.0"], pids["osd.1"]}

        # a restart of the OSDs (cold caches, an option's variant) starts their containers again, limits and all
        lb.restart_osds()
        again = containers.limits_seen(lab_dir, "osd.1")
        assert again["pid"] != pids["osd.1"] and again["cfs_quota_us"] == 30000, again
        pids["osd.1"] = again["pid"]

        # the toolbox, as `cephadm shell` runs it: minimal conf and key, this host's sockets at /var/run/ceph
        etc = tmp_path / "etc"
        etc.mkdir()
        conf = subprocess.run(["ceph", "config", "generate-minimal-conf"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, **lb.env()})
        assert conf.returncode == 0, conf.stderr
        (etc / "ceph.conf").write_text(conf.stdout)
        shutil.copy(lb.admin_keyring, etc / "ceph.keyring")
        work = tmp_path / "work"
        work.mkdir()
        (work / "s.yaml").write_text(SUITE)
        toolbox = image.inspect(image.tag("reef"))
        assert toolbox is not None
        box = subprocess.run([*podman.argv(exe), "run", "--rm", "--name", f"cephbench-test-shell-{os.getpid()}",
                              "--net", "host", "-v", f"{etc}:/etc/ceph:ro", "-v", f"{layout.dirs[1]}:/var/run/ceph",
                              "-v", f"{work}:{image.WORKDIR}", toolbox.ref, "cephbench", "run", "s.yaml", "--out",
                              "run"], capture_output=True, text=True, timeout=900, env=podman.conf_env(tmp_path))
        assert box.returncode == 0, box.stderr[-3000:] + box.stdout[-3000:]
        meta = json.loads((work / "run" / "run.json").read_text())
        assert meta["release"] == "reef" and meta["ceph_release"]["version"].startswith("18."), meta["release"]
        (r,) = RunDir(work / "run").results()[0]
        assert r.status == "ok" and {o.source for o in r.evidence.osds} == {"admin socket, default path"}, \
            r.evidence.osds
        # the toolbox's PID namespace hides the OSDs' processes: said, not guessed
        assert any("CPU not read" in n for n in r.evidence.notes), r.evidence.notes
        # ... and the host's busy CPU time is not put on other processes: the daemons' share of it is not seen
        assert r.analysis is not None and "other processes" not in r.analysis.model_dump_json(), r.analysis
    finally:
        down = _down(lb, d)
    _nothing_left(exe, lb, fsid, down, tmp_path)


def test_a_start_killed_with_sigkill_leaves_nothing_after_down(tmp_path):
    """`lab up --containers` killed with SIGKILL once its daemons run: their `podman run` processes and containers
    outlive it (conmon keeps a container whose client is killed); `lab down` removes every one by the record written
    before they were made, and the directories under /var."""
    import signal
    import sys
    import time
    exe = _podman_or_skip(tmp_path)
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-containers-kill-"))
    lab_dir = d / "lab"
    lb = Lab(lab_dir)
    log = tmp_path / "up.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "cephbench.entry", "lab", "up", "--dir", str(lab_dir),
                                 "--containers", "--release", "reef", "--osds", "2", "--osd-size", "3GiB", "--no-rgw"],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 600
        while "OSD(s) to come up" not in log.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        # the line comes as the OSDs' containers are started, one after the other (under load, seconds apart):
        # killed once a daemon of each kind runs
        while len(_ours(exe, lb.conf, tmp_path)) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, log.read_text()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        fsid = lb.info().fsid
        assert len(_ours(exe, lb.conf, tmp_path)) >= 3, "the daemons' containers outlive the killed start"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        down = _down(lb, d)
    _nothing_left(exe, lb, fsid, down, tmp_path)


THROTTLED = 1                   # osd.1, on h2: its drive held by `lab throttle`
TRUTH_SUITE = """
name: containers-truth
pools:
  rep3: {type: replicated, size: 3, pg_num: 32}
workloads:
  - name: rados
    type: rados_bench
    pool: rep3
    modes: [write]
    object_size: [1MiB]
    concurrency: 16
    duration: 5s
"""


def _group_of(pid: int, controller: str) -> Path:
    groups = containers.cgroup_paths(Path(f"/proc/{pid}/cgroup").read_text())
    return Path("/sys/fs/cgroup") / controller / groups[controller].lstrip("/")


@pytest.mark.multihost
def test_a_toolbox_run_on_a_three_host_reef_lab_in_containers_names_the_throttled_drive(tmp_path):
    """Issue 38's ground truth. `lab up --containers --hosts 3 --release reef`: each daemon's container in its host's
    network namespace, named as its host, in cephadm's layout; each OSD on its loop device, its process in its drive's
    blkio group (`lab throttle osd.1=8MiB/s` holds it) and its host's cpuacct group; `lab status` lists the
    containers with their limits. The toolbox image, given only the minimal conf and the admin key in /etc/ceph
    and the host's network, is refused with one line while the monitors refuse pool deletion (Ceph's default), then
    runs with --allow-pool-delete: run.json records Reef and mClock, every OSD's counters are read without a socket
    or ssh, and the verdict names osd.1's drive. `lab down` leaves no container, namespace, loop device, group or
    directory."""
    exe = _podman_or_skip(tmp_path)
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-containers-mh-"))
    lab_dir = d / "lab"
    lb = Lab(lab_dir)
    fsid, topo, record = "", None, None
    try:
        up = run_cli(["lab", "up", "--dir", lab_dir, "--containers", "--hosts", "3", "--release", "reef", "--no-rgw",
                      "--osd-size", "3GiB", "--cpus", "mgr=1", "--memory", "osd=2GiB"])
        assert up.returncode == 0, up.stderr[-3000:]
        print(up.stdout)
        # once it is up: `--osd-throttle` sets the same group's limit at the start, and a start so (osd.1 at 8 MiB/s)
        # waited 46 s of its 64 s for its last OSD to come up
        throttled = run_cli(["lab", "throttle", "--dir", lab_dir, f"osd.{THROTTLED}=8MiB/s"])
        assert throttled.returncode == 0, throttled.stderr
        info = lb.info()
        assert info is not None and info.release == "reef" and info.topology is not None
        print(f"started in {info.startup_s:.1f} s: {info.startup_steps}")
        fsid, topo, record = info.fsid, netns.Topology.load(lb.netns_record), lb.drives()
        assert record is not None
        layout = containers.Layout(fsid)
        running = {c["Labels"][containers.DAEMON_LABEL] for c in _ours(exe, lb.conf, tmp_path)}
        assert running == {"mon.a", "mgr.x", "osd.0", "osd.1", "osd.2"}, running
        for name in sorted(running):
            host = f"h{int(name.split('.')[1]) + 1}" if name.startswith("osd.") else "h1"
            pid = containers.container_pid(lab_dir, name)
            assert pid, name
            # in its host's network namespace, under its host's name, in cephadm's layout, without --conf
            assert os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat(f"/run/netns/{topo.host(host).netns}").st_ino
            assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
            assert b"--conf" not in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"), name
            assert (layout.data(name) / "config").is_file() and (layout.dirs[1] / f"ceph-{name}.asok").is_socket()
            assert _group_of(pid, "cpuacct") == Path(record.hosts[host]), name
            if name.startswith("osd."):
                n = int(name.split(".")[1])
                drive = record.drive(drives.DriveRef(n))
                assert _group_of(pid, "blkio") == Path(drive.cgroup), name
                assert os.readlink(layout.data(name) / "block") == drive.device, name
        assert cgroups.limits(Path(record.drive(drives.DriveRef(THROTTLED)).cgroup)), "osd.1's drive is not throttled"
        assert containers.limits_seen(lab_dir, "mgr.x")["cfs_quota_us"] == 100000
        assert containers.limits_seen(lab_dir, "osd.0")["limit_in_bytes"] == 2 * 2**30
        env = {**os.environ, **lb.env()}
        meta = subprocess.run(["ceph", "osd", "metadata", str(THROTTLED), "-f", "json"], capture_output=True,
                              text=True, timeout=60, env=env)
        assert json.loads(meta.stdout)["hostname"] == f"h{THROTTLED + 1}", meta.stdout + meta.stderr

        # lab status: the containers, each its daemon, host, state and limits
        st = run_cli(["lab", "status", "--dir", lab_dir, "--json"])
        assert st.returncode == 0, st.stderr
        listed = {c["daemon"]: c for c in json.loads(st.stdout)["containers"]}
        assert {n: (c["host"], c["state"]) for n, c in listed.items()} == {
            "mon.a": ("h1", "running"), "mgr.x": ("h1", "running"), "osd.0": ("h1", "running"),
            "osd.1": ("h2", "running"), "osd.2": ("h3", "running")}, listed
        text = run_cli(["lab", "status", "--dir", lab_dir]).stdout
        assert f"{layout.container('mgr.x')}" in text and "cpus 1 (quota 100000/100000 us)" in text, text
        assert "memory 2GiB" in text, text

        # the monitors refuse to delete pools, as Ceph's default has it
        off = subprocess.run(["ceph", "config", "set", "mon", "mon_allow_pool_delete", "false"], capture_output=True,
                             text=True, timeout=60, env=env)
        assert off.returncode == 0, off.stderr
        etc, work = tmp_path / "etc", tmp_path / "work"
        etc.mkdir()
        work.mkdir()
        conf = subprocess.run(["ceph", "config", "generate-minimal-conf"], capture_output=True, text=True,
                              timeout=60, env=env)
        assert conf.returncode == 0, conf.stderr
        (etc / "ceph.conf").write_text(conf.stdout)
        shutil.copy(lb.admin_keyring, etc / "ceph.keyring")
        (work / "s.yaml").write_text(TRUTH_SUITE)
        toolbox = image.inspect(image.tag("reef"))
        assert toolbox is not None

        def box(*flags: str) -> subprocess.CompletedProcess:
            return subprocess.run([*podman.argv(exe), "run", "--rm", "--name", f"cephbench-test-box-{os.getpid()}",
                                   "--net", "host", "-v", f"{etc}:/etc/ceph:ro", "-v", f"{work}:{image.WORKDIR}",
                                   toolbox.ref, "cephbench", "run", "s.yaml", "--out", "run", *flags],
                                  capture_output=True, text=True, timeout=900, env=podman.conf_env(tmp_path))
        refused = box()
        assert refused.returncode == 2, refused.stderr[-3000:] + refused.stdout[-3000:]
        [line] = refused.stderr.strip().splitlines()
        assert "mon_allow_pool_delete" in line and "--allow-pool-delete" in line, line
        assert not (work / "run").exists()
        ran = box("--allow-pool-delete")
        assert ran.returncode == 0, ran.stderr[-3000:] + ran.stdout[-3000:]
        print(ran.stdout[-3000:])
        meta = json.loads((work / "run" / "run.json").read_text())
        assert meta["release"] == "reef" and meta["ceph_release"]["version"].startswith("18."), meta["release"]
        sched = meta["osd_scheduler"]
        assert set(sched) == {"osd.0", "osd.1", "osd.2"}, sched
        assert all(s["osd_op_queue"] == "mclock_scheduler" and s.get("osd_mclock_profile") for s in sched.values())
        (r,) = RunDir(work / "run").results()[0]
        assert r.status == "ok" and r.evidence is not None and r.analysis is not None, r.error
        # no socket, no ssh: every OSD's counters all the same (this lab runs no Prometheus: through `ceph tell`)
        assert {o.osd: o.source for o in r.evidence.osds} == {0: "ceph tell", 1: "ceph tell", 2: "ceph tell"}
        assert not [n for n in r.evidence.notes if "counters not read" in n], r.evidence.notes
        print(r.analysis.bottleneck, *r.analysis.evidence, sep="\n")
        assert r.analysis.bottleneck == f"drive of osd.{THROTTLED} (h{THROTTLED + 1})", \
            [r.analysis.bottleneck, *r.analysis.evidence]
        back = subprocess.run(["ceph", "config", "get", "mon", "mon_allow_pool_delete"], capture_output=True,
                              text=True, timeout=60, env=env)
        assert back.stdout.strip() == "false", back.stdout + back.stderr
    finally:
        down = _down(lb, d)
    _nothing_left(exe, lb, fsid, down, tmp_path)
    assert topo is not None and netns.leftovers(topo) == []
    assert record is not None and drives.leftovers(record) == []
