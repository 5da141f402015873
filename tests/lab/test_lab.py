"""The lab cluster itself, through the CLI a user types."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path


from cephbench.lab.conf import AIO_POLL_MS, AIO_POLL_START_MS
from cephbench.lab.daemons import process_alive as _pid_alive
from cephbench.lab.lab import mgr_bytecode_env

from labcli import CLI, cli_here


def cli(*args, env=None, timeout=120):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_status_json_lists_running_daemons_and_health(lab):
    res = cli("lab", "status", "--dir", str(lab.dir), "--json")
    assert res.returncode == 0, res.stderr
    st = json.loads(res.stdout)
    names = {d["name"] for d in st["daemons"] if d["running"]}
    assert {"mon.a", "mgr.x", "osd.0", "osd.1", "osd.2", "client.rgw.lab"} <= names
    assert st["health"] == "HEALTH_OK"
    assert st["osds_up"] == 3 and st["rgw_endpoint"].startswith("http://127.0.0.1:")


def test_env_lines_make_ceph_work(lab):
    res = cli("lab", "env", "--dir", str(lab.dir))
    assert res.returncode == 0
    env = dict(line.removeprefix("export ").split("=", 1) for line in res.stdout.splitlines())
    ceph = subprocess.run(["ceph", "health"], capture_output=True, text=True, env=env | {"PATH": "/usr/bin:/bin"},
                          timeout=60)
    assert ceph.stdout.startswith("HEALTH_OK"), ceph.stderr


def test_rgw_user_keys_are_private(lab):
    creds = lab.dir / "rgw-user.json"
    assert creds.stat().st_mode & 0o077 == 0
    data = json.loads(creds.read_text())
    assert data["s3_access_key"] and data["swift_user"].endswith(":swift")


def test_up_on_a_running_lab_says_so(lab):
    res = cli_here(["lab", "up", "--dir", str(lab.dir)])
    assert res.returncode == 2
    assert "already running" in res.stderr and "Traceback" not in res.stderr


def osd_aio_poll_ms(lab, osd):
    """What OSD `osd` runs with, from its own admin socket."""
    res = subprocess.run(["ceph", "--conf", str(lab.conf), "daemon", f"osd.{osd}", "config", "get",
                          "bdev_aio_poll_ms"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return int(json.loads(res.stdout)["bdev_aio_poll_ms"])


def test_osds_start_with_the_quick_aio_poll_and_run_with_the_steady_one(lab):
    """ceph.conf starts the OSDs with a short BlueStore aio poll (each device close waits for it), and the lab
    puts every OSD back to the steady one once healthy, after a restart too."""
    assert f"bdev aio poll ms = {AIO_POLL_START_MS}\n" in lab.conf.read_text()
    assert [osd_aio_poll_ms(lab, i) for i in range(3)] == [AIO_POLL_MS] * 3
    lab.restart_osds()
    assert [osd_aio_poll_ms(lab, i) for i in range(3)] == [AIO_POLL_MS] * 3


def test_the_mgr_keeps_its_modules_bytecode_in_the_users_cache(lab):
    """The mgr of a lab on the host's Ceph compiles its modules once, into the user's cache, not at each start
    (Debian ships them as source alone, where only root may write): its environment names the cache, with no
    caller's PYTHONDONTWRITEBYTECODE, and the cache holds mgr_module.py's bytecode."""
    pid = int((lab.dir / "run" / "mgr.x.pid").read_text())
    env = dict(kv.split("=", 1) for kv in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in kv)
    assert env.get("PYTHONPYCACHEPREFIX") == mgr_bytecode_env()["PYTHONPYCACHEPREFIX"]
    cache = Path(env["PYTHONPYCACHEPREFIX"])
    assert not env.get("PYTHONDONTWRITEBYTECODE")
    assert list((cache / "usr/share/ceph/mgr").glob("mgr_module.cpython-*.pyc"))      # a prefix has no __pycache__


def test_bad_lab_input(tmp_path):
    res = cli_here(["lab", "up", "--dir", str(tmp_path / "l"), "--osd-size", "4X"])
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "--osd-size" in res.stderr
    res = cli_here(["lab", "up", "--dir", str(tmp_path / "l"), "--osd-size", "100000GiB"])
    assert res.returncode == 2 and "not enough free disk" in res.stderr and "needed" in res.stderr
    assert not (tmp_path / "l").exists()
    res = cli_here(["lab", "down", "--dir", str(tmp_path / "none")])
    assert res.returncode == 0 and "nothing to do" in res.stdout
    res = cli_here(["lab", "status", "--dir", str(tmp_path / "none")])
    assert res.returncode == 2 and "no lab" in res.stderr


def test_missing_ceph_binaries_name_setup(tmp_path):
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    res = subprocess.run([*CLI, "lab", "up", "--dir", str(tmp_path / "l")], capture_output=True, text=True,
                         env=env, timeout=60)
    assert res.returncode == 2 and "scripts/setup.sh" in res.stderr


def test_second_lab_side_by_side_then_down_leaves_no_process(lab, tmp_path):
    """A 1-OSD lab beside the session's lab: free ports, its own PIDs, all gone after down.

    Started from a shell that still has an older lab's environment: CEPH_KEYRING overrides ceph.conf and
    once made the new monitor start without keys ("timed out after 60 s waiting for the monitor")."""
    d = tmp_path / "lab2"
    stale = {"CEPH_KEYRING": str(tmp_path / "gone" / "keyring" / "ceph.client.admin.keyring"),
             "CEPH_CONF": str(tmp_path / "gone" / "ceph.conf"), "CEPH_ARGS": "--id nosuch"}
    res = cli("lab", "up", "--dir", str(d), "--osds", "1", "--osd-size", "3GiB", "--no-rgw",
              env={**os.environ, **stale}, timeout=240)
    assert res.returncode == 0, res.stderr
    st = json.loads(cli("lab", "status", "--dir", str(d), "--json").stdout)
    pids = [x["pid"] for x in st["daemons"]]
    assert len(pids) == 3 and st["health"] == "HEALTH_OK"
    res = cli("lab", "down", "--dir", str(d))
    assert res.returncode == 0 and not d.exists()
    for pid in pids:  # gone, or a zombie waiting for init to reap it
        assert not _pid_alive(pid), f"pid {pid} still runs after lab down"
    assert _lab_processes(d) == []  # nor any daemon that wrote no PID file
    # the session's lab is untouched
    assert json.loads(cli("lab", "status", "--dir", str(lab.dir), "--json").stdout)["health"] == "HEALTH_OK"


def _lab_processes(d: Path) -> list[int]:
    """PIDs of processes started with this lab directory's ceph.conf (zombies excluded)."""
    conf = os.fsencode(str(d / "ceph.conf"))
    pids = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if conf in (p / "cmdline").read_bytes().split(b"\0") and _pid_alive(int(p.name)):
                    pids.append(int(p.name))
            except OSError:
                pass
    return pids


def _described(pids: list[int]) -> list[str]:
    """Each PID with its command line and state, for an assertion's message."""
    out = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[:2]
        except OSError as exc:
            cmd, state = str(exc), []
        out.append(f"{pid} {state} {cmd}")
    return out


def _start_small_lab(d: Path) -> subprocess.Popen:
    return subprocess.Popen([*CLI, "lab", "up", "--dir", str(d), "--osds", "1", "--osd-size", "3GiB", "--no-rgw"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_file(path: Path, proc: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_a_daemon_dying_during_start_is_named_with_its_log_at_once(tmp_path):
    d = tmp_path / "lab3"
    proc = _start_small_lab(d)
    try:
        _wait_for_file(d / "run" / "osd.0.pid", proc)
        # the OSD writes the same PID file again as it starts (truncated, then written): read until it holds one
        text, deadline = "", time.monotonic() + 30
        while not text.strip():
            assert time.monotonic() < deadline, "osd.0.pid stayed empty"
            text = (d / "run" / "osd.0.pid").read_text()
        os.kill(int(text), signal.SIGKILL)      # this test's own lab's OSD, by the PID it wrote
        killed = time.monotonic()
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 1 and time.monotonic() - killed < 15, stderr
        assert "osd.0 exited while waiting for" in stderr and str(d / "log" / "ceph-osd.0.log") in stderr
        assert "Traceback" not in stderr
        assert _lab_processes(d) == []          # what had started is stopped
    finally:
        if proc.poll() is None:
            proc.kill()
        cli("lab", "down", "--dir", str(d))


def test_sigterm_during_start_leaves_no_process(tmp_path):
    d = tmp_path / "lab4"
    proc = _start_small_lab(d)
    try:
        _wait_for_file(d / "run" / "mon.a.pid", proc)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130 and "Traceback" not in stderr, stderr
        assert _lab_processes(d) == [], (_described(_lab_processes(d)), stderr)
        res = cli("lab", "down", "--dir", str(d))
        assert res.returncode == 0 and not d.exists()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_down_after_a_start_killed_during_the_osds_mkfs_stops_the_mkfs(tmp_path):
    """A start killed with SIGKILL while its threads wait on the OSDs' mkfs leaves the mkfs running (nothing of
    the start is left to end it): `lab down` stops it by the PID the start recorded, and the directory goes."""
    d = tmp_path / "lab6"
    proc = _start_small_lab(d)
    try:
        deadline = time.monotonic() + 60
        while not (mkfs := [p for p in _lab_processes(d) if b"--mkfs" in Path(f"/proc/{p}/cmdline").read_bytes()
                            and b"ceph-osd" in Path(f"/proc/{p}/cmdline").read_bytes()]):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.005)
        # past the moment between the mkfs's exec and its record (run/<pid>.running), a few instructions: a SIGKILL
        # there is not covered
        time.sleep(0.05)
        proc.kill()
        proc.wait()
        assert any(_pid_alive(p) for p in mkfs), "the mkfs should have outlived the start"
        res = cli("lab", "down", "--dir", str(d))
        assert res.returncode == 0 and not d.exists(), res.stderr
        assert _lab_processes(d) == [], _described(_lab_processes(d))
        assert not any(_pid_alive(p) for p in mkfs)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _lab_processes(d):
            os.kill(pid, signal.SIGKILL)
        cli("lab", "down", "--dir", str(d))


def test_a_lab_up_after_a_killed_start_removes_what_it_left_and_starts(tmp_path):
    """docs/lab.md: a start killed with SIGKILL leaves its daemons running and its records; the next `lab up` in that
    directory removes them (the marker proves the directory a lab's) and starts afresh. A lab that did start is
    refused, and down removes everything it made, the directory too."""
    d = tmp_path / "lab5"
    proc = _start_small_lab(d)
    try:
        _wait_for_file(d / "run" / "mon.a.pid", proc)
        proc.kill()
        proc.wait()
        orphans = _lab_processes(d)
        assert orphans, "the killed start's monitor should still run"
        res = cli("lab", "up", "--dir", str(d), "--osds", "1", "--osd-size", "3GiB", "--no-rgw", timeout=240)
        assert res.returncode == 0, res.stderr
        assert not any(_pid_alive(p) for p in orphans if p not in _lab_processes(d))
        again = cli("lab", "up", "--dir", str(d), "--osds", "1", "--no-rgw")
        assert again.returncode == 2 and "already running" in again.stderr, again.stderr
        # a client stopped by a signal (as cephbench stops its tools) leaves no admin socket in run/
        env = {**os.environ, "CEPH_CONF": str(d / "ceph.conf"),
               "CEPH_KEYRING": str(d / "keyring" / "ceph.client.admin.keyring")}
        subprocess.run(["ceph", "osd", "pool", "create", "p", "8"], env=env, capture_output=True, timeout=60)
        bench = subprocess.Popen(["rados", "-p", "p", "bench", "30", "write"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        time.sleep(3)
        bench.terminate()
        assert "Total time" not in bench.communicate(timeout=60)[0]
        assert sorted(p.name for p in (d / "run").glob("ceph-client*")) == []
        res = cli("lab", "down", "--dir", str(d))
        assert res.returncode == 0 and not d.exists(), res.stderr
        assert _lab_processes(d) == [], _described(_lab_processes(d))
    finally:
        if proc.poll() is None:
            proc.kill()
        cli("lab", "down", "--dir", str(d))
