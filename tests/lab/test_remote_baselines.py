"""Disk and network baselines and CPU watching on hosts reached over ssh, as on a multi-host cluster.

A real SSH server (tests/lab/sshd.py) listens on 127.0.0.1 and 127.0.0.2, two
"hosts" of this machine, and runs what it is sent here; `settings.ssh.hosts`
maps host names to those addresses, so the code paths are those of a cluster
whose hosts are other machines (or the multi-host lab's namespaces).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from cephbench.suite.config import SshSettings
from cephbench.drivers import disk_baseline
from cephbench.kinds.disk_baseline import make_tests
from cephbench.hosts.local import LocalHost
from cephbench.hosts.remote import HostRef
from cephbench.core.results import RunDir

from labcli import cli_here, run_cli, write_suite
from sshd import SshServer

MIB = 1024**2
CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def processes_with(text: str) -> list[int]:
    """PIDs whose command line mentions `text` (a run's test file name: unique to the test)."""
    out = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and text in (p / "cmdline").read_bytes().decode(errors="replace"):
                out.append(int(p.name))
        except OSError:
            pass
    return out


def one_line_exit_2(res) -> str:
    assert res.returncode == 2, res.stdout + res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    return lines[0]


def test_disk_baseline_runs_fio_on_the_remote_host_and_a_ctrl_c_leaves_nothing_there(tmp_path):
    disk, disk2 = tmp_path / "disk", tmp_path / "disk2"
    disk.mkdir()
    disk2.mkdir()
    with SshServer(tmp_path) as sshd:
        ssh = SshSettings.model_validate(sshd.ssh_settings(hosts={"node1": "127.0.0.1"}))
        ref, host = HostRef("node1", "127.0.0.1"), LocalHost()
        name = f"cephbench-t{os.getpid()}-baseline.dat"
        targets = disk_baseline.check_targets([(ref, [str(disk), str(disk2)])], 16 * MIB, False, name, host, ssh)
        assert sshd.commands and "cephbench-probe" in sshd.commands[0]      # the checks ran over ssh
        tests = make_tests([], {"size": 16 * MIB, "runtime_s": 1.0})
        rundir = RunDir.create(tmp_path / "run", {"kind": "baseline"})
        outs = list(disk_baseline.run(tests, targets, 16 * MIB, 1.0, rundir, host, lambda m: None, ssh=ssh))
        assert [(o.test.params["pattern"], o.error) for o in outs] == [("dd", None)]
        x = outs[0].measurement.extra
        assert x["paths"] == [f"node1:{disk}", f"node1:{disk2}"] and x["alone"][f"node1:{disk}"]["host"] == "node1"
        assert x["hosts"] == ["node1"] and x["alone_median_bytes_per_s"] > 0 and x["shared_device"] is True
        fio = [c for c in sshd.commands if c.startswith("sh -c 'timeout") and " fio " in c]     # fio ran there
        assert len(fio) == 3                                                 # each path alone, then both at once
        cleanup = next(c for c in sshd.commands if "cephbench-cleanup" in c)
        assert all(f"echo $! > {disk / name}.pid" in c for c in fio) and f"{disk / name}.pid" in cleanup
        assert list(disk.iterdir()) == list(disk2.iterdir()) == []          # test files and PID file removed

        # Ctrl-C while fio runs over ssh: the ssh client dies, fio does not by itself; cleanup stops it by the
        # PID it left beside the test file, and removes both
        long_tests = make_tests(["read-4MiB"], {"size": 16 * MIB, "runtime_s": 30.0})
        timer = threading.Timer(2.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                list(disk_baseline.run(long_tests, targets, 16 * MIB, 30.0, None, host, lambda m: None, ssh=ssh))
        finally:
            timer.cancel()
        assert processes_with(name) == [] and list(disk.iterdir()) == list(disk2.iterdir()) == []


@pytest.fixture
def busy_cgroup():
    """A real cpuacct cgroup holding one spinning shell (a lab host's processes, in small)."""
    if not (CPUACCT / "cpuacct.usage").exists():
        pytest.skip("the cgroup v1 cpuacct controller is not mounted here")
    cg = CPUACCT / f"cephbench-test-{os.getpid()}"
    cg.mkdir()
    spin = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        (cg / "cgroup.procs").write_text(str(spin.pid))
        yield cg
    finally:
        spin.kill()
        spin.wait()
        cg.rmdir()


def test_a_run_measures_and_watches_hosts_named_in_settings_ssh(lab_cluster, cephbench_env, tmp_path, busy_cgroup):
    osd_host = lab_cluster.ceph_json("osd", "metadata")[0]["hostname"]
    remote_dir, local_dir = tmp_path / "remote-disk", tmp_path / "local-disk"
    remote_dir.mkdir()
    local_dir.mkdir()
    with SshServer(tmp_path, addresses=("127.0.0.1", "127.0.0.2"), env={"CEPHBENCH_CPUACCT": str(busy_cgroup)}) \
            as sshd:
        suite = {
            "name": "remote-baselines",
            "settings": {"ssh": sshd.ssh_settings(hosts={osd_host: "127.0.0.1", "ha": "127.0.0.1",
                                                         "hb": "127.0.0.2"})},
            "baseline": {"disks": {"paths": {osd_host: [str(remote_dir)], "localhost": [str(local_dir)]},
                                   "size": "16MiB", "runtime": "1s", "patterns": ["dd"]},
                         "network": {"hosts": ["ha", "hb"], "streams": 1, "duration": "1s"}},
            "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 8}},
            "workloads": [{"type": "rados_bench", "pool": "rep2", "modes": ["write"], "object_size": "64KiB",
                           "concurrency": 4, "duration": "3s"}],
        }
        out = tmp_path / "run"
        res = run_cli(["run", write_suite(tmp_path, yaml.safe_dump(suite)), "--out", out], cephbench_env)
        assert res.returncode == 0, res.stderr
        results, _ = RunDir(out).results()
        by_kind = {k: [r for r in results if r.test.kind == k] for k in ("disk_baseline", "net_baseline",
                                                                         "rados_bench")}
        assert all(r.status == "ok" for r in results), [(r.test.id, r.error) for r in results]

        # the disk baseline: one path over ssh on the OSD host, one here, each figure naming its host
        dd = by_kind["disk_baseline"][0].measurement.extra
        assert sorted(dd["hosts"]) == sorted([osd_host, "localhost"])
        assert dd["alone"][f"{osd_host}:{remote_dir}"]["host"] == osd_host
        assert dd["alone"][str(local_dir)]["path"] == str(local_dir)
        assert dd["shared_device"] is True          # "two hosts", one machine (one boot id): one disk
        assert list(remote_dir.iterdir()) == [] and list(local_dir.iterdir()) == []

        # iperf3: each server on its receiving host's address, each client there connects from its own
        net = {(r.test.params["pattern"], r.test.params["sender"]): r for r in by_kind["net_baseline"]}
        assert set(net) == {("pair", "ha"), ("pair", "hb"), ("one-to-many", "ha"), ("one-to-many", "hb")}
        pair = net[("pair", "ha")].measurement.extra
        assert (pair["local"], pair["remote"]) == ("127.0.0.1", "127.0.0.2") and pair["bits_per_s"] > 0
        assert pair["loopback"] is True             # both addresses are this machine's loopback
        servers = [(a, c) for a, c in sshd.sessions if "iperf3 -s" in c]
        clients = [(a, c) for a, c in sshd.sessions if "iperf3 -c" in c]
        assert servers and all(c.endswith(f"-B {a}") for a, c in servers), servers
        assert len(clients) == 4 and all(f"-B {a}" in c and f"-c {a} " not in c for a, c in clients), clients
        assert subprocess.run(["pgrep", "-f", "iperf3 -s -p .* -B 127.0.0.2"], capture_output=True).returncode == 1

        # the OSD host's CPU came from its cgroup (one spinning shell: at most one CPU of all), not /proc/stat
        write = by_kind["rados_bench"][0]
        osd = next(h for h in write.hosts if h.role == "OSD host")
        assert osd.source == "cpuacct" and osd.iowait_mean is None, osd
        assert 0.02 < osd.cpu_busy_mean <= 1.05 / osd.cpus, osd
        assert {h.source for h in write.hosts if h.role != "OSD host"} == {"proc-stat"}


def test_remote_hosts_are_refused_in_one_line_naming_the_yaml_path(lab, cephbench_env, tmp_path):
    """An unreachable host, a host without fio or iperf3, a remote path that does not exist: exit 2 before
    anything is created (a dry run makes the same checks)."""
    bare = tmp_path / "bin"                 # a host whose PATH has a shell and coreutils but neither fio nor iperf3
    bare.mkdir()
    for tool in ("sh", "cat", "stat", "readlink", "rm", "timeout", "nproc", "sleep", "head", "date", "id", "sync"):
        (bare / tool).symlink_to(subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True,
                                                text=True).stdout.strip())
    disk = tmp_path / "d"
    disk.mkdir()

    def refusal(sshd: SshServer, baseline: dict, ssh: dict | None = None) -> str:
        suite = {"name": "refused", "settings": {"drop_caches": False, "watch_osd_hosts": False,
                                                 "ssh": ssh or sshd.ssh_settings(hosts={"node9": "127.0.0.1",
                                                                                        "ha": "127.0.0.1"})},
                 "baseline": baseline, "workloads": [{"type": "osd_bench"}]}
        return one_line_exit_2(cli_here(["run", write_suite(tmp_path, yaml.safe_dump(suite)), "--dry-run"],
                                        cephbench_env))

    with SshServer(tmp_path, env={"PATH": str(bare)}) as sshd:
        line = refusal(sshd, {"disks": {"paths": {"node9": [str(disk)]}}})
        assert "baseline.disks.paths: fio is not installed on host node9 (127.0.0.1)" in line, line
        line = refusal(sshd, {"network": {"hosts": ["ha"]}})
        assert "baseline.network.hosts: iperf3 is not installed on host ha (127.0.0.1)" in line, line
    with SshServer(tmp_path) as sshd:
        line = refusal(sshd, {"disks": {"paths": [str(disk / "nope")], "hosts": ["node9"]}})
        assert f"baseline.disks.paths: {disk / 'nope'} does not exist on host node9 (127.0.0.1)" in line, line
        wrong = sshd.ssh_settings(hosts={"node9": "127.0.0.1"}, identity_file=str(tmp_path / "known_hosts_key"))
        (tmp_path / "known_hosts_key").write_text("not a key\n")
        (tmp_path / "known_hosts_key").chmod(0o600)
        line = refusal(sshd, {"disks": {"paths": [str(disk)], "hosts": ["node9"]}}, wrong)
        assert "baseline.disks.hosts: host node9 (127.0.0.1) cannot be reached over ssh" in line, line
    assert list(disk.iterdir()) == []
