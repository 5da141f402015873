"""RGW load from the two client hosts of the multi-host lab: one cephbench-loadgen on each, its own buckets, started
together, each client's document brought back and merged exactly; the keys nowhere in the run directory; nothing
left on the cluster or on the clients, also after Ctrl-C.

Runs on conftest's `clients_lab` (CEPHBENCH_TEST_CLIENTS_LAB=DIR reuses one).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from cephbench.suite.config import SshSettings
from cephbench.lab import Lab
from cephbench.hosts.remote import ssh_argv
from cephbench.core.results import RunDir

from labcli import CLI, run_cli, write_suite

RGW = {"type": "rgw", "protocol": "s3", "op": ["put", "get"], "object_size": "4KiB", "concurrency": 4,
       "objects": 32, "duration": "2s", "clients": "all"}


@pytest.fixture
def env(clients_lab: Lab) -> dict[str, str]:
    return {k: v for k, v in {**os.environ, **clients_lab.env()}.items()
            if not k.startswith(("CEPHBENCH_S3_", "CEPHBENCH_SWIFT_"))}


def suite(**rgw) -> str:
    return yaml.safe_dump({"name": "clients-rgw", "clients": "lab", "settings": {"set_noscrub": False},
                           "workloads": [{**RGW, **rgw}]})


def admin(lab: Lab, *args: str) -> list:
    res = subprocess.run(["radosgw-admin", "--conf", str(lab.conf), *args], capture_output=True, text=True,
                         timeout=60, env={**os.environ, **lab.env()})
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def leftovers(lab: Lab) -> tuple[list[str], list[str]]:
    """cephbench users (but the lab's own) and buckets on the lab's RGW."""
    users = [u for u in admin(lab, "user", "list") if u.startswith("cephbench-") and u != "cephbench-lab"]
    return users, [b for b in admin(lab, "bucket", "list") if b.startswith("cephbench-")]


def on_client(lab: Lab, host: str, argv: list[str]) -> subprocess.CompletedProcess:
    s = lab.info().topology["ssh"]
    ssh = SshSettings(user=s["user"], identity_file=Path(s["identity_file"]), options=s["options"], hosts=s["hosts"])
    return subprocess.run(ssh_argv(ssh.hosts[host], argv, ssh), capture_output=True, text=True, timeout=30)


def loadgen_on_clients(lab: Lab, run_id: str) -> dict[str, list[str]]:
    """The run's loadgen processes still on c1 and c2 (asked there over ssh), as `pid args` lines."""
    out = {}
    for host in ("c1", "c2"):
        res = on_client(lab, host, ["ps", "-eo", "pid,args"])
        assert res.returncode == 0, res.stderr
        # the lab's hosts may share one process table: a client's loadgen is the one on its own buckets
        out[host] = [ln.strip() for ln in res.stdout.splitlines() if ln.split()[2:3] == ["run"]
                     and "loadgen" in ln.split()[1] and f"cephbench-{run_id}-" in ln and f"-{host}-i" in ln]
    return out


def measuring(out: Path) -> bool:
    """Both clients' loadgens report their measured seconds (their buckets exist, their objects are being
    written): from the run's own logs, which their wrappers' output reaches as it is written. Not radosgw-admin:
    beside CI's load its two calls a look took so long that a one-host test saw its put's bucket only as the 30 s
    put ended (test_rgw.py)."""
    logs = [p for p in out.glob("raw/*/loadgen-put-c[12]-i0.log")]
    return len(logs) == 2 and all("progress t=2s" in p.read_text(errors="replace") for p in logs)


def wait_for_load(lab: Lab, out: Path, proc: subprocess.Popen) -> str:
    """The run's id, once loadgen runs on both clients and both measure."""
    deadline = time.monotonic() + 120
    run_id = None
    while time.monotonic() < deadline and proc.poll() is None:
        if run_id is None and (out / "run.json").exists():
            run_id = (RunDir(out).meta().get("run_ids") or [None])[0]
        if run_id and measuring(out) and all(loadgen_on_clients(lab, run_id).values()):
            return run_id
        time.sleep(0.2)
    raise AssertionError(f"no load on both clients (cephbench exit code {proc.poll()})")


def test_s3_put_then_get_from_two_clients(clients_lab, env, tmp_path):
    """With the lab user's keys given (the buckets are then swept by prefix, not purged with a run user)."""
    keys = json.loads(clients_lab.info().rgw_credentials_path.read_text())
    env = {**env, "CEPHBENCH_S3_ACCESS_KEY": keys["s3_access_key"], "CEPHBENCH_S3_SECRET_KEY": keys["s3_secret_key"]}
    out = tmp_path / "run"
    res = run_cli(["run", write_suite(tmp_path, suite()), "--lab-dir", clients_lab.dir, "--out", out], env)
    assert res.returncode == 0, res.stderr
    results = RunDir(out).results()[0]
    assert [r.test.params["phase"] for r in results] == ["put", "get"]
    for r in results:
        m = r.measurement
        assert r.error is None and m is not None, r
        # one instance per client, with its host and actual start and end
        assert sorted(i.host for i in m.instances) == ["c1", "c2"], m.instances
        for i in m.instances:
            assert i.start_unix_s and i.end_unix_s and i.end_unix_s > i.start_unix_s, i
            assert i.ops_total and i.ops_total > 0, i
        clients = m.extra["clients"]
        assert clients["hosts"] == 2 and 0 < clients["first_done_s"] <= clients["last_done_s"], clients
        assert sorted(c["host"] for c in clients["per_client"]) == ["c1", "c2"], clients
        assert clients["start_spread_s"] < 1.0, clients         # started together (prefill of 32 keys aside)
        # percentiles from the merged histograms: within the clients' own, and every op counted. A percentile is the
        # value at rank int(q n + 0.5): the union's rank can round one op past the sum of the clients' ranks, and
        # in a tail of a few ops one op is a few percent (CI: merged p99 109.97 ms, the clients' 106.9 and 108.0 ms),
        # so the upper bound is the clients' next percentile
        p99 = [i.latency.percentiles_ns["99"] for i in m.instances]
        p999 = [i.latency.percentiles_ns["99.9"] for i in m.instances]
        assert min(p99) <= m.latency.percentiles_ns["99"] <= max(p999), (p99, p999, m.latency)
        assert m.latency.max_ns == max(i.latency.max_ns for i in m.instances)
        assert m.extra["instances"] == 2
        raw = sorted(Path(p).name for p in r.raw)
        assert raw == sorted(f"loadgen-{r.test.params['phase']}-{c}-i0.{x}" for c in ("c1", "c2")
                             for x in ("json", "log")), raw
        # each client on its own buckets
        docs = [json.loads((out / p).read_text()) for p in r.raw if p.endswith(".json")]
        prefixes = {d["params"]["bucket_prefix"] for d in docs}
        assert len(prefixes) == 2 and all("-c1-" in p or "-c2-" in p for p in prefixes), prefixes
        assert all(d["cleanup"]["objects_left"] == 0 for d in docs)
    assert "--output -" in " ".join(results[0].commands)
    assert leftovers(clients_lab) == ([], [])
    assert loadgen_on_clients(clients_lab, RunDir(out).meta()["run_ids"][0]) == {"c1": [], "c2": []}
    # the keys went to the clients on `at`'s stdin: in no file of the run directory
    secrets = [keys["s3_access_key"], keys["s3_secret_key"]]
    for f in out.rglob("*"):
        if f.is_file():
            text = f.read_text(errors="replace")
            assert not [k for k in secrets if k in text], f


def test_ctrl_c_mid_run_leaves_nothing_on_the_cluster_or_the_clients(clients_lab, env, tmp_path):
    """With the run's own user (removed with --purge-data)."""
    out = tmp_path / "run"
    path = write_suite(tmp_path, suite(op=["put"], duration="30s", objects=200))
    proc = subprocess.Popen([*CLI, "run", str(path), "--lab-dir", str(clients_lab.dir), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        run_id = wait_for_load(clients_lab, out, proc)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert leftovers(clients_lab) == ([], [])
    deadline = time.monotonic() + 20                # a client's `at` stops its loadgen once its stdin ends
    while time.monotonic() < deadline and any(loadgen_on_clients(clients_lab, run_id).values()):
        time.sleep(0.5)
    assert loadgen_on_clients(clients_lab, run_id) == {"c1": [], "c2": []}


def test_a_client_whose_loadgen_is_killed_fails_the_test_naming_it(clients_lab, env, tmp_path):
    """With given keys: the killed loadgen's buckets are left to the sweep of its prefix, which removes them."""
    keys = json.loads(clients_lab.info().rgw_credentials_path.read_text())
    env = {**env, "CEPHBENCH_S3_ACCESS_KEY": keys["s3_access_key"], "CEPHBENCH_S3_SECRET_KEY": keys["s3_secret_key"]}
    out = tmp_path / "run"
    path = write_suite(tmp_path, suite(op=["put"], duration="30s", objects=200))
    proc = subprocess.Popen([*CLI, "run", str(path), "--lab-dir", str(clients_lab.dir), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        run_id = wait_for_load(clients_lab, out, proc)
        pid = loadgen_on_clients(clients_lab, run_id)["c2"][0].split()[0]
        # the run's own loadgen on c2, killed as a crash or the OOM killer would
        assert on_client(clients_lab, "c2", ["kill", "-KILL", pid]).returncode == 0
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    results = RunDir(out).results()[0]
    assert len(results) == 1 and results[0].error, (proc.returncode, stderr)
    assert results[0].error.startswith("cephbench-loadgen put failed on c2: "), results[0].error
    assert leftovers(clients_lab) == ([], [])
    assert loadgen_on_clients(clients_lab, run_id) == {"c1": [], "c2": []}
