"""The lab cluster itself, through the CLI a user types."""

import json
import subprocess


from cephbench.lab.lab import _pid_alive

from labcli import CLI


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
    res = cli("lab", "up", "--dir", str(lab.dir))
    assert res.returncode == 2
    assert "already running" in res.stderr and "Traceback" not in res.stderr


def test_bad_lab_input(tmp_path):
    res = cli("lab", "up", "--dir", str(tmp_path / "l"), "--osd-size", "4X")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "--osd-size" in res.stderr
    res = cli("lab", "up", "--dir", str(tmp_path / "l"), "--osd-size", "100000GiB")
    assert res.returncode == 2 and "not enough free disk" in res.stderr and "needed" in res.stderr
    assert not (tmp_path / "l").exists()
    res = cli("lab", "down", "--dir", str(tmp_path / "none"))
    assert res.returncode == 0 and "nothing to do" in res.stdout
    res = cli("lab", "status", "--dir", str(tmp_path / "none"))
    assert res.returncode == 2 and "no lab" in res.stderr


def test_missing_ceph_binaries_name_setup(tmp_path):
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    res = subprocess.run([*CLI, "lab", "up", "--dir", str(tmp_path / "l")], capture_output=True, text=True,
                         env=env, timeout=60)
    assert res.returncode == 2 and "scripts/setup.sh" in res.stderr


def test_second_lab_side_by_side_then_down_leaves_no_process(lab, tmp_path):
    """A 1-OSD lab beside the session's lab: free ports, its own PIDs, all gone after down."""
    d = tmp_path / "lab2"
    res = cli("lab", "up", "--dir", str(d), "--osds", "1", "--osd-size", "3GiB", "--no-rgw", timeout=240)
    assert res.returncode == 0, res.stderr
    st = json.loads(cli("lab", "status", "--dir", str(d), "--json").stdout)
    pids = [x["pid"] for x in st["daemons"]]
    assert len(pids) == 3 and st["health"] == "HEALTH_OK"
    res = cli("lab", "down", "--dir", str(d))
    assert res.returncode == 0 and not d.exists()
    for pid in pids:  # gone, or a zombie waiting for init to reap it
        assert not _pid_alive(pid), f"pid {pid} still runs after lab down"
    # the session's lab is untouched
    assert json.loads(cli("lab", "status", "--dir", str(lab.dir), "--json").stdout)["health"] == "HEALTH_OK"
