"""The multi-host lab for real: hosts that are network namespaces, each with its OSDs, CRUSH host and sshd; a client
host that runs the load tools; and nothing of it left on the machine after `lab down`, also after a start that was
killed or interrupted half-way."""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cephbench.suite.config import SshSettings
from cephbench.lab import Lab, netns
from cephbench.hosts.remote import ssh_argv

MULTI_HOST = True      # makes namespaces, bridges or loop devices: runs with the multi-host tests

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "cephbench.entry"]
LOADGEN = ROOT / "build" / "bin" / "cephbench-loadgen"
BENCH_RANGE = ipaddress.ip_network("198.18.0.0/15")


def sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout


def machine_state() -> dict[str, list[str]]:
    """What a lab could leave on the machine: namespaces, links, loop devices, mounts, cgroups of cephbench labs."""
    cgroups = sorted(str(p) for base in Path("/sys/fs/cgroup").iterdir() if base.is_dir()
                     for p in base.glob("cephbench-*") if len(p.name) == len("cephbench-") + 6)
    return {"netns": sorted(sh("ip", "netns", "list").split()),
            "links": sorted(line.split(":")[1].strip().split("@")[0]
                            for line in sh("ip", "-o", "link", "show").splitlines()),
            "loop": sorted(sh("losetup", "-a").splitlines()),
            "mounts": sorted(line for line in sh("mount").splitlines()),
            "cgroups": cgroups}


def ssh_settings(lab: Lab) -> SshSettings:
    s = lab.info().topology["ssh"]
    return SshSettings(user=s["user"], identity_file=Path(s["identity_file"]), options=s["options"],
                       hosts=s["hosts"])


def on_host(lab: Lab, host: str, command: str, timeout: float = 60) -> subprocess.CompletedProcess:
    ssh = ssh_settings(lab)
    return subprocess.run(ssh_argv(ssh.hosts[host], ["sh", "-c", command], ssh), capture_output=True, text=True,
                          timeout=timeout)


def ceph_json(lab: Lab, *args: str):
    res = subprocess.run(["ceph", *args, "--format", "json"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, **lab.env()})
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_hosts_have_their_own_address_osds_crush_host_and_sshd(multihost_lab):
    topo = multihost_lab.info().topology
    hosts = {h["name"]: h for h in topo["hosts"]}
    assert list(hosts) == ["h1", "h2", "h3", "c1"]
    assert [h["role"] for h in hosts.values()] == ["osd", "osd", "osd", "client"]
    addresses = [h["addresses"]["public"] for h in hosts.values()]
    assert len(set(addresses)) == 4 and all(ipaddress.ip_address(a) in BENCH_RANGE for a in addresses)
    assert topo["traffic"] == {"client": "public", "replication": "public"}
    assert "mon.a" in hosts["h1"]["daemons"] and "client.rgw.lab" in hosts["h3"]["daemons"]
    assert multihost_lab.info().rgw_endpoint == f"http://{hosts['h3']['addresses']['public']}:7480"

    # CRUSH: one host bucket per lab host, holding that host's OSDs; replicas go to different hosts
    tree = ceph_json(multihost_lab, "osd", "tree")
    buckets = {n["name"]: n for n in tree["nodes"] if n["type"] == "host"}
    assert sorted(buckets) == ["h1", "h2", "h3"]
    for name in buckets:
        assert sorted(buckets[name]["children"]) == hosts[name]["osds"]
    rules = ceph_json(multihost_lab, "osd", "crush", "rule", "dump")
    assert any(s.get("op", "").startswith("chooseleaf") and s.get("type") == "host" for s in rules[0]["steps"])
    # each OSD says which host it is on and listens on that host's address only
    for m in ceph_json(multihost_lab, "osd", "metadata"):
        host = hosts[m["hostname"]]
        assert m["id"] in host["osds"]
        assert host["addresses"]["public"] in m["front_addr"] and host["addresses"]["public"] in m["back_addr"]

    # every host answers over ssh, as a real cluster's host would, in its own network namespace
    for name, h in hosts.items():
        res = on_host(multihost_lab, name, "ip -4 -o addr show; echo CEPH_CONF=$CEPH_CONF; echo PATH=$PATH")
        assert res.returncode == 0, res.stderr
        assert h["addresses"]["public"] in res.stdout
        assert f"CEPH_CONF={multihost_lab.conf}" in res.stdout
        # the PATH the lab gives its sessions, not one the user's shell start-up files made (root's ~/.bashrc put
        # pyenv's shims first here: every python3 on a host was pyenv's shim, 0.3 s of CPU a start)
        assert f"PATH={multihost_lab.host_bin(name)}:/usr/local/sbin:/usr/local/bin:" in res.stdout, res.stdout
        others = [a for a in addresses if a != h["addresses"]["public"]]
        assert not any(a + "/" in res.stdout for a in others)

    # and a person reaches them by name with the config `lab env` names
    env_text = subprocess.run([*CLI, "lab", "env", "--dir", str(multihost_lab.dir)], capture_output=True, text=True,
                              timeout=60).stdout
    ssh_line = next(line for line in env_text.splitlines() if line.startswith("# hosts"))
    config = ssh_line.split("ssh -F ", 1)[1].split()[0]
    res = subprocess.run(["ssh", "-F", config, "c1", "ip -4 -o addr show pub0"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0 and hosts["c1"]["addresses"]["public"] in res.stdout, res.stderr


def test_the_client_host_runs_the_load_tools_against_the_cluster(multihost_lab):
    res = on_host(multihost_lab, "c1", f"rados --version && fio --version && {LOADGEN} version && "
                                       "ceph health && rados lspools")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "HEALTH_OK" in res.stdout and "default.rgw.buckets.data" in res.stdout
    assert "fio-3" in res.stdout


def _lab_up_cli(lab_dir: Path, *extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}
    return subprocess.Popen([*CLI, "lab", "up", "--dir", str(lab_dir), "--hosts", "2", "--clients", "1",
                             "--public-net", "100mbit", "--cluster-net", "unshaped", "--osd-size", "3GiB", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)


def _wait_for(p: subprocess.Popen, lab_dir: Path, what: str, timeout: float = 60) -> None:
    """Until the start has reached `what`: "netns" (namespaces made) or "osds" (OSD daemons started)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what == "netns" and f"cb-{netns.lab_id_for(lab_dir)}-" in sh("ip", "netns", "list"):
            return
        if what == "osds" and list((lab_dir / "run").glob("osd.*.pid")):
            return
        if p.poll() is not None:
            pytest.fail(f"the lab start ended ({p.returncode}) before {what}: {p.stdout.read()}")
        time.sleep(0.05)
    pytest.fail(f"the lab start never reached {what}")


def test_lab_down_leaves_nothing_of_a_whole_lab_nor_of_killed_or_interrupted_starts(tmp_path):
    before = machine_state()
    lab_dir = tmp_path / "lab"
    # a whole lab, with a separate cluster network
    p = _lab_up_cli(lab_dir)
    out = p.communicate(timeout=300)[0]
    assert p.returncode == 0, out
    lb = Lab(lab_dir)
    topo = lb.info().topology
    assert topo["traffic"]["replication"] == "cluster"
    assert all("cluster" in h["addresses"] for h in topo["hosts"] if h["role"] == "osd")
    assert "cluster" not in topo["hosts"][-1]["addresses"]
    for m in ceph_json(lb, "osd", "metadata"):
        assert "198.19." in m["back_addr"] and "198.18." in m["front_addr"]
    during = machine_state()
    assert during["netns"] != before["netns"]
    t0 = time.monotonic()
    res = subprocess.run([*CLI, "lab", "down", "--dir", str(lab_dir)], capture_output=True, text=True, timeout=120)
    print(f"\nlab down of a 2-host lab: {time.monotonic() - t0:.2f} s")
    assert res.returncode == 0, res.stderr
    assert machine_state() == before

    # killed (SIGKILL) while its daemons start: nothing cleans up then, and `lab down` removes it all
    p = _lab_up_cli(lab_dir)
    _wait_for(p, lab_dir, "osds")
    p.kill()
    p.wait()
    res = subprocess.run([*CLI, "lab", "down", "--dir", str(lab_dir)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert machine_state() == before

    # interrupted (SIGTERM, then Ctrl-C) right after its namespaces were made: it removes them itself
    for sig in (signal.SIGTERM, signal.SIGINT):
        p = _lab_up_cli(lab_dir)
        _wait_for(p, lab_dir, "netns")
        p.send_signal(sig)
        out = p.communicate(timeout=120)[0]
        assert p.returncode == 130, out
        assert "Traceback" not in out
        assert machine_state() == before, out
        # and a new lab starts in the same directory afterwards
    res = subprocess.run([*CLI, "lab", "down", "--dir", str(lab_dir)], capture_output=True, text=True, timeout=120)
    assert machine_state() == before


def test_a_second_lab_up_in_the_same_directory_is_refused_and_changes_nothing(multihost_lab):
    before = machine_state()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}
    res = subprocess.run([*CLI, "lab", "up", "--dir", str(multihost_lab.dir), "--hosts", "3"], capture_output=True,
                         text=True, timeout=60, env=env)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].startswith("cephbench: a lab is already running")
    assert machine_state() == before
    assert multihost_lab.healthy()
