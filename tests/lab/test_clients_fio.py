"""fio (librbd and librados) from the two client hosts of a multi-host lab: one fio per client, started together,
each client kept as an instance with its host and times, percentiles from the merged json+ bins; every client has
images of its own, and after the run (and after a Ctrl-C mid-run) nothing is left: no image, no pool, no work
directory on a client, no fio on c1 or c2.

Runs on conftest's `clients_lab` (CEPHBENCH_TEST_CLIENTS_LAB=DIR reuses one).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

import pytest
import yaml

from cephbench.hosts.fanout import ready_line, tool_pid
from cephbench.lab import Lab
from cephbench.hosts.remote import HostRef
from cephbench.core.results import RunDir

from labcli import CLI, run_cli, write_suite
from test_fanout import alive_on, lab_ssh, on

PCT = {"50", "90", "99", "99.9", "99.99"}
RBD = {"type": "fio_rbd", "pool": "rep2", "rw": ["randwrite", "randread"], "block_size": "4KiB", "iodepth": 4,
       "image_size": "32MiB", "duration": "2s", "clients": "all"}
RADOS = {"type": "fio_rados", "pool": "rep2", "rw": ["write", "read"], "block_size": "64KiB", "iodepth": 4,
         "duration": "2s", "clients": "all"}


@pytest.fixture
def env(clients_lab: Lab) -> dict[str, str]:
    return {**os.environ, **clients_lab.env()}


def suite(*workloads: dict) -> str:
    return yaml.safe_dump({"name": "clients-fio", "clients": "lab",
                           "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 8}},
                           "workloads": list(workloads)})


def rados(lab: Lab, *args: str) -> list[str]:
    res = subprocess.run(["rados", "--conf", str(lab.conf), *args], capture_output=True, text=True, timeout=60)
    return res.stdout.split() if res.returncode == 0 else []


def our_pools(lab: Lab) -> list[str]:
    return [p for p in rados(lab, "lspools") if p.startswith("cephbench-")]


def images(lab: Lab, pool: str) -> list[str]:
    res = subprocess.run(["rbd", "--conf", str(lab.conf), "ls", pool], capture_output=True, text=True, timeout=60)
    return res.stdout.split() if res.returncode == 0 else []


def work_dirs(lab: Lab, run_id: str) -> dict[str, list[str]]:
    """cephbench work directories of this run on each client host, asked over ssh."""
    ssh = lab_ssh(lab)
    out = {}
    for c in ("c1", "c2"):
        res = on(HostRef(c, ssh.hosts[c]), ssh, f"ls -d /tmp/cephbench-{run_id}-* 2>/dev/null; true")
        out[c] = res.stdout.split()
    return out


def _watch_tools(out, stop: threading.Event, seen: dict[tuple[str, str], float]) -> None:
    """Each client's fio of each test, by the PID its wrapper printed into raw/<test>/<client>/fio-stdout.txt: its
    utime + stime + cutime + cstime (/proc/PID/stat) every 20 ms until it is gone; the last reading is kept."""
    hz = os.sysconf("SC_CLK_TCK")
    pids: dict[tuple[str, str], int] = {}
    while not stop.is_set():
        for f in out.glob("raw/*/c*/fio-stdout.txt"):
            key = (f.parent.parent.name, f.parent.name)
            if key not in pids and (pid := tool_pid(f.read_text(errors="replace"))) is not None:
                pids[key] = pid
        for key, pid in pids.items():
            try:
                fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
            except OSError:
                continue
            if fields[0] != "Z":
                seen[key] = sum(int(x) for x in fields[11:15]) / hz
        time.sleep(0.02)


def test_fio_rbd_and_rados_from_two_clients(clients_lab, env, tmp_path):
    out = tmp_path / "run"
    watched: dict[tuple[str, str], float] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_tools, args=(out, stop, watched), daemon=True)
    watcher.start()
    try:
        res = run_cli(["run", str(write_suite(tmp_path, suite(RBD, RADOS))), "--out", str(out)], env)
    finally:
        stop.set()
        watcher.join()
    assert res.returncode == 0, res.stderr + res.stdout
    results = {r.test.id: r for r in RunDir.open(out).results()[0]}
    assert len(results) == 4
    for r in results.values():
        assert r.status == "ok", (r.test.id, r.error)
        m = r.measurement
        assert m.tool == ("fio rbd" if r.test.kind == "fio_rbd" else "fio rados")
        # each client an instance with its host and its actual start and end; merged percentiles from the bins
        assert [i.host for i in m.instances] == ["c1", "c2"]
        for i in m.instances:
            assert i.start_unix_s and i.end_unix_s and i.end_unix_s - i.start_unix_s > 1.5
            assert set(i.latency.percentiles_ns) == PCT and i.ops_total > 0
        assert set(m.latency.percentiles_ns) == PCT
        assert m.ops_total == sum(i.ops_total for i in m.instances)
        assert m.extra["clients"]["hosts"] == 2 and m.extra["clat_bins"]
        assert m.latency.percentiles_ns["50"] <= m.latency.percentiles_ns["99.9"]
        # the fio outputs came back from each client into raw/<test>/<client>/
        for c in ("c1", "c2"):
            assert (out / "raw" / r.test.id / c / "fio.json").is_file()
            assert list((out / "raw" / r.test.id / c).glob("fio_bw.*.log"))
        assert all((out / p).is_file() for p in r.raw)
        if r.test.kind == "fio_rbd":        # an image of each client's own
            assert m.extra["images"] == 2 and [i.extra["images"] for i in m.instances] == [1, 1]
            assert m.extra["prefilled"] is True
        # the client's CPU per op: both fio processes' CPU as their wrappers measured it when each ended (rusage),
        # against what their /proc/PID/stat said here until they were gone (the client hosts are namespaces of this
        # machine), which misses at most the last 20 ms and the exit. fio's own usr_cpu + sys_cpu is a small part:
        # librbd's and librados' threads do the work, and fio counts its job's thread alone
        (client,) = [c for c in r.evidence.cpu if c.who == "client"]
        seen = sum(v for (test, _), v in watched.items() if test == r.test.id)
        print(f"{r.test.id}: the clients' tools {client.cpu_s:.3f} CPU-s ({seen:.3f} seen in /proc), "
              f"{client.cpu_ms_per_op:.3f} CPU-ms per op")
        assert client.host == "c1, c2" and client.source == "the tools' rusage on their client hosts", client
        assert len([k for k in watched if k[0] == r.test.id]) == 2, watched
        assert client.ops and seen - 0.02 <= client.cpu_s <= 1.2 * seen + 0.3, (client, seen)
        assert not any("client's CPU per op" in n for n in r.evidence.notes), r.evidence.notes
    run_id = json.loads((out / "run.json").read_text())["run_ids"][0]
    assert our_pools(clients_lab) == []
    assert work_dirs(clients_lab, run_id) == {"c1": [], "c2": []}
    assert json.loads((out / "resources.json").read_text()) == []


def test_ctrl_c_mid_fio_leaves_nothing_on_the_cluster_or_the_clients(clients_lab, env, tmp_path):
    slow = {**RBD, "rw": ["randwrite"], "duration": "30s"}
    out = tmp_path / "run"
    proc = subprocess.Popen([*CLI, "run", str(write_suite(tmp_path, suite(slow))), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    outs = [out / "raw" / "001-fio_rbd-randwrite-4KiB-qd4" / c / "fio-stdout.txt" for c in ("c1", "c2")]
    seen: list[str] = []
    deadline = time.monotonic() + 120
    pids: list[tuple[int, int | None]] = []
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            for pool in our_pools(clients_lab):
                seen = sorted(set(seen) | set(images(clients_lab, pool)))
            texts = [p.read_text(errors="replace") if p.exists() else "" for p in outs]
            if all(tool_pid(t) for t in texts):
                pids = [(ready_line(t)[0], tool_pid(t)) for t in texts]
                break
            time.sleep(0.3)
        assert pids, (proc.poll(), [p.exists() for p in outs])
        assert any("-c1-img0" in s for s in seen) and any("-c2-img0" in s for s in seen), seen
        run_id = json.loads((out / "run.json").read_text())["run_ids"][0]
        assert all(work_dirs(clients_lab, run_id).values())      # fio writes into them now
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "left behind" not in stderr and "could not remove" not in stderr, stderr
    assert our_pools(clients_lab) == []
    assert work_dirs(clients_lab, run_id) == {"c1": [], "c2": []}
    assert json.loads((out / "resources.json").read_text()) == []
    ssh = lab_ssh(clients_lab)
    deadline = time.monotonic() + 15     # the wrappers saw their stdin end: SIGINT, then SIGKILL after the grace
    left = {}
    while time.monotonic() < deadline:
        left = {c: alive_on(HostRef(c, ssh.hosts[c]), ssh, [w, t]) for c, (w, t) in zip(("c1", "c2"), pids)}
        if not any(left.values()):
            break
        time.sleep(0.3)
    assert not any(left.values()), left


def test_a_client_whose_fio_fails_fails_the_test_named(clients_lab, env, tmp_path):
    """fio on c2 is a wrapper that passes preflight's checks and then fails: the test fails naming c2 and its
    error line; nothing is left."""
    fake = clients_lab.host_bin("c2") / "fio"
    real = subprocess.run(["sh", "-c", "command -v fio"], capture_output=True, text=True, check=True).stdout.strip()
    fake.write_text(f'#!/bin/sh\ncase "$*" in *--enghelp*|*--version*) exec {real} "$@";; esac\n'
                    'echo "fio: broken on purpose" >&2\nexit 1\n')
    fake.chmod(0o755)
    try:
        out = tmp_path / "run"
        res = run_cli(["run", str(write_suite(tmp_path, suite({**RBD, "rw": ["randwrite"]}))), "--out", str(out)],
                      env)
    finally:
        fake.unlink()
    assert "Traceback" not in res.stderr, res.stderr
    (r,) = RunDir.open(out).results()[0]
    assert r.status == "failed" and "c2: " in r.error and "broken on purpose" in r.error, r.error
    assert our_pools(clients_lab) == []
    run_id = json.loads((out / "run.json").read_text())["run_ids"][0]
    assert work_dirs(clients_lab, run_id) == {"c1": [], "c2": []}
    assert json.loads((out / "resources.json").read_text()) == []
