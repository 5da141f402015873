"""Client hosts of a suite on a multi-host lab with two client hosts: every bad input of issue 15 is refused in one
line, exit 2, before anything is created on the cluster; --force lets a client's clock through, recorded; and
cephbench-loadgen is copied to a client and removed again through the ledger.

Runs on conftest's `clients_lab` (CEPHBENCH_TEST_CLIENTS_LAB=DIR reuses one). Tools and clocks are faked on one client only through its own PATH
directory (`<lab>/hosts/<host>/bin`, first on its ssh sessions' PATH).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from cephbench.hosts.clients import Client, deploy_loadgen
from cephbench.drivers.rgw.binary import find_loadgen
from cephbench.hosts.local import LocalHost
from cephbench.lab import Lab
from cephbench.run.launch import with_lab_ssh
from cephbench.suite.config import Suite
from cephbench.cluster.recovery import leftovers, remove_leftovers
from cephbench.hosts.remote import host_ref
from cephbench.core.resources import Ledger
from cephbench.core.results import RunDir

from labcli import CLI, run_cli, write_suite


@pytest.fixture
def env(clients_lab: Lab) -> dict[str, str]:
    return {**os.environ, **clients_lab.env()}


@pytest.fixture
def fake(clients_lab: Lab):
    """Put an executable script on one lab host's PATH for the test's length."""
    made: list[Path] = []

    def put(host: str, tool: str, script: str) -> None:
        p = clients_lab.host_bin(host) / tool
        p.write_text("#!/bin/sh\n" + script)
        p.chmod(0o755)
        made.append(p)
    yield put
    for p in made:
        p.unlink(missing_ok=True)


def suite(clients, workloads: list[dict]) -> str:
    return yaml.safe_dump({"name": "clients", "clients": clients,
                           "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 8}},
                           "workloads": workloads})


RADOS = {"type": "rados_bench", "pool": "rep2", "modes": ["write"], "object_size": "64KiB", "concurrency": 2,
         "duration": "1s", "clients": "all"}
FIO_RBD = {"type": "fio_rbd", "pool": "rep2", "rw": ["randwrite"], "image_size": "64MiB", "duration": "1s",
           "clients": "all"}


def pools(clients_lab: Lab) -> list[str]:
    res = subprocess.run(["rados", "--conf", str(clients_lab.conf), "lspools"], capture_output=True, text=True,
                         timeout=60, check=True)
    return res.stdout.split()


def refused(res: subprocess.CompletedProcess, clients_lab: Lab, *words: str) -> str:
    """One line on stderr, exit 2, naming what it should; and no cephbench- pool on the cluster."""
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert not [p for p in pools(clients_lab) if p.startswith("cephbench-")]
    return lines[0]


def test_an_unreachable_client_is_refused(clients_lab, env, tmp_path):
    path = write_suite(tmp_path, suite(["c1", "no-such-client.invalid"], [RADOS]))
    res = run_cli(["run", path, "--lab-dir", clients_lab.dir, "--out", tmp_path / "run"], env)
    refused(res, clients_lab, "clients[1]", "no-such-client.invalid", "cannot be reached over ssh")
    assert not (tmp_path / "run").exists()


def test_a_client_without_fios_rbd_engine_is_refused(clients_lab, env, tmp_path, fake):
    fake("c2", "fio", 'case "$1" in --enghelp=rbd) echo "fio: engine rbd not loadable" >&2; exit 1;; esac\n'
                      'exec /usr/bin/fio "$@"\n')
    path = write_suite(tmp_path, suite("lab", [FIO_RBD]))
    res = run_cli(["run", path, "--lab-dir", clients_lab.dir], env)
    refused(res, clients_lab, "c2", "no rbd engine", "clients")


def test_a_clock_5s_off_is_refused_and_force_records_it(clients_lab, env, tmp_path, fake):
    fake("c1", "date", 'case "$1" in +%s%N) echo $(( $(/usr/bin/date +%s%N) + 5000000000 ));; '
                       '*) exec /usr/bin/date "$@";; esac\n')
    path = write_suite(tmp_path, suite("lab", [RADOS]))
    res = run_cli(["run", path, "--lab-dir", clients_lab.dir], env)
    line = refused(res, clients_lab, "c1", "ahead of", "--force")
    assert " 5.0" in line or " 4.9" in line, line

    out = tmp_path / "run"
    res = run_cli(["run", path, "--lab-dir", clients_lab.dir, "--out", out, "--force"], env)
    assert res.returncode == 0, res.stderr
    assert "--force: going on" in res.stderr
    recorded = RunDir(out).meta()["clients"]
    assert set(recorded) == {"c1", "c2"}
    assert abs(recorded["c1"]["clock_offset_ns"] - 5e9) < 0.1e9, recorded["c1"]
    assert abs(recorded["c2"]["clock_offset_ns"]) < 0.1e9, recorded["c2"]
    assert recorded["c1"]["versions"]["rados"].startswith("ceph version")


def test_five_clients_of_two_listed_and_the_same_host_twice(clients_lab, env, tmp_path):
    path = write_suite(tmp_path, suite(["c1", "c2"], [{**RADOS, "clients": 5}]))
    refused(run_cli(["run", path, "--lab-dir", clients_lab.dir], env), clients_lab,
            "workloads[0].clients", "5 clients", "lists 2")
    path = write_suite(tmp_path, suite(["c1", "c2", "c1"], [RADOS]))
    refused(run_cli(["run", path, "--lab-dir", clients_lab.dir], env), clients_lab,
            "clients[2]", "'c1'", "twice")
    path = write_suite(tmp_path, suite("lab", [{**RADOS, "clients": 3}]))
    refused(run_cli(["run", path, "--lab-dir", clients_lab.dir], env), clients_lab,
            "workloads[0].clients", "3 clients", "2 client hosts")


def test_loadgen_is_copied_verified_and_removed_by_a_dead_runs_cleanup(clients_lab, tmp_path):
    topo = clients_lab.info().topology
    ssh = with_lab_ssh(Suite.model_validate({"name": "x", "workloads": [{"type": "rgw"}]}), topo["ssh"]).settings.ssh
    clients = [Client(n, host_ref(n, ssh)) for n in ("c1", "c2")]
    ledger = Ledger(tmp_path / "resources.json")
    paths, facts = deploy_loadgen(LocalHost(), clients, ssh, ledger, Path(find_loadgen()), "a1b2c3")
    assert set(paths) == {"c1", "c2"} and all(f["copied"] for f in facts.values()), facts
    for c in clients:      # it runs there
        res = LocalHost().run(c.ref.argv([paths[c.name], "--version"], ssh), 30)
        assert res.ok and "cephbench-loadgen" in res.stdout, res
    assert len(leftovers(tmp_path)) == 2
    # a run that died: its resources.json alone, removed by the remover cleanup uses
    from cephbench.hosts.clients import remove_remote_file
    done, failed = remove_leftovers(tmp_path, {"remote-file": lambda r: remove_remote_file(LocalHost(), ssh, r.name)})
    assert len(done) == 2 and not failed and not leftovers(tmp_path)
    assert not Path(paths["c1"]).exists()       # the lab's hosts share this machine's files
    assert json.loads((tmp_path / "resources.json").read_text()) == []


def test_two_runs_on_one_client_do_not_pull_loadgen_from_under_each_other(clients_lab, env, tmp_path):
    """Issue 24: run A copied cephbench-loadgen to c1, run B found it there and used it, A removed it at its end,
    and B's next test failed with exit 127. B starts once A's copy is on c1, and its second test starts after A
    ended (the lab's hosts share this machine's files, as homes shared over NFS do)."""
    one = {**RADOS, "clients": 1}
    a = write_suite(tmp_path, suite(["c1"], [{**one, "duration": "8s"}]), "a.yaml")
    b = write_suite(tmp_path, suite(["c1"], [{**one, "duration": "15s"}, {**one, "name": "after", "duration": "1s"}]),
                    "b.yaml")
    run = [*CLI, "run", "--lab-dir", str(clients_lab.dir), "--out"]
    pa = subprocess.Popen([*run, str(tmp_path / "a"), str(a)], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        copy = None
        while copy is None and time.monotonic() < deadline and pa.poll() is None:
            res = tmp_path / "a" / "resources.json"
            names = [r["name"] for r in json.loads(res.read_text() or "[]")
                     if r["kind"] == "remote-file"] if res.exists() else []
            if names and Path(names[0].partition(":")[2]).exists():
                copy = Path(names[0].partition(":")[2])
            time.sleep(0.2)
        assert copy is not None, "run A never copied cephbench-loadgen to c1"
        rb = run_cli([*run[3:], tmp_path / "b", b], env)
    finally:
        out_a, err_a = pa.communicate(timeout=600)
    assert pa.returncode == 0, err_a
    assert rb.returncode == 0, rb.stderr
    results, _ = RunDir.open(tmp_path / "b").results()
    assert [r.status for r in results] == ["ok", "ok"], [(r.status, r.error) for r in results]
    copies = [RunDir(tmp_path / d).meta()["clients"]["c1"]["loadgen"]["path"] for d in ("a", "b")]
    assert copies[0] != copies[1] and not any(Path(c).exists() for c in copies), copies
    assert all(json.loads((tmp_path / d / "resources.json").read_text()) == [] for d in ("a", "b"))
