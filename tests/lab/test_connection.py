"""The one librados connection: no `ceph` process in a run, and every way of not getting in is one line, exit 2,
nothing created (no pool, no flag, no run directory)."""

import os
import stat
import subprocess
import time

import pytest

from labcli import cli_here, run_cli, write_suite

ONE_WRITE = """
name: one
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
workloads:
  - {name: w, type: rados_bench, pool: rep2, modes: [write], object_size: 64KiB, concurrency: 4, duration: 1s}
"""


def cephbench_pools(cluster) -> set[str]:
    return {p for p in cluster.pool_names() if p.startswith("cephbench-")}


@pytest.fixture
def bare_env(cephbench_env):
    """No CEPH_CONF/CEPH_KEYRING: the flags of each case are all cephbench gets."""
    return {k: v for k, v in cephbench_env.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}


def refused(res, *words: str) -> None:
    """One line on stderr, exit 2, no traceback, and the words that say why."""
    assert res.returncode == 2, res.stderr + res.stdout
    assert res.stderr.strip().count("\n") == 0 and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, res.stderr


def run_refused(tmp_path, env, *args: str):
    out = tmp_path / "run"
    res = cli_here(["run", str(write_suite(tmp_path, ONE_WRITE)), "--out", str(out), *args], env)
    assert not out.exists(), "a refused run left its directory"
    return res


@pytest.fixture(scope="module")
def shimmed_run(lab, lab_cluster, tmp_path_factory):
    """One run of ONE_WRITE with noscrub already set by the operator and a `ceph` on PATH that only records its
    calls (the run still sets and unsets nodeep-scrub): what it called, and the flags before and after it."""
    tmp = tmp_path_factory.mktemp("shimmed")
    shim = tmp / "bin"
    shim.mkdir()
    calls = tmp / "ceph-calls"
    (shim / "ceph").write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\nexit 1\n")
    (shim / "ceph").chmod(stat.S_IRWXU)
    env = {**os.environ, **lab.env(), "PATH": f"{shim}:{os.environ['PATH']}"}
    assert not {"noscrub", "nodeep-scrub"} & lab_cluster.osd_flags()
    lab_cluster.set_flag("noscrub", True)
    try:
        before = lab_cluster.osd_flags()
        res = run_cli(["run", str(write_suite(tmp, ONE_WRITE)), "--out", str(tmp / "run")], env)
        return res, calls, before, lab_cluster.osd_flags(), cephbench_pools(lab_cluster)
    finally:
        lab_cluster.set_flag("noscrub", False)


def test_a_run_starts_no_ceph_process(shimmed_run):
    """Health, facts, flags, the pool, its wait and its removal all go over librados: a `ceph` that only
    records its calls is never called (rados bench is the tool here, so `rados` runs)."""
    res, calls, before, after, pools = shimmed_run
    assert res.returncode == 0, res.stderr + res.stdout
    assert not calls.exists(), calls.read_text()
    assert pools == set() and after == before


def test_missing_conf(bare_env, tmp_path):
    refused(run_refused(tmp_path, bare_env, "--conf", str(tmp_path / "nope.conf")), "--conf", "does not exist")


def test_unreachable_monitor_within_the_connect_timeout(lab, bare_env, tmp_path):
    conf = tmp_path / "dead.conf"
    conf.write_text("[global]\nmon host = 127.0.0.1:9\n")    # a closed port
    t0 = time.monotonic()
    res = run_refused(tmp_path, bare_env, "--conf", str(conf), "--keyring", lab.env()["CEPH_KEYRING"],
                      "--connect-timeout", "2")
    refused(res, "--conf", "cannot reach", "no monitor answered in 2 s", "--connect-timeout")
    assert time.monotonic() - t0 < 15


def test_a_keyring_that_does_not_match(lab, lab_cluster, bare_env, tmp_path):
    key = subprocess.run(["ceph-authtool", "--gen-print-key"], capture_output=True, text=True, check=True).stdout
    wrong = tmp_path / "wrong.keyring"
    wrong.write_text(f"[client.admin]\n\tkey = {key.strip()}\n")
    res = run_refused(tmp_path, bare_env, "--conf", lab.env()["CEPH_CONF"], "--keyring", str(wrong))
    refused(res, "--keyring", "refused client.admin")
    assert cephbench_pools(lab_cluster) == set()


def test_a_key_that_may_not_create_pools(lab, lab_cluster, bare_env, tmp_path):
    flags = lab_cluster.osd_flags()
    ro = tmp_path / "ro.keyring"
    reply = lab_cluster.ceph_ok("auth", "get-or-create", "client.cbro", "mon", "allow r", "osd", "allow r")
    ro.write_bytes(reply.out)
    try:
        res = run_refused(tmp_path, bare_env, "--conf", lab.env()["CEPH_CONF"], "--keyring", str(ro), "--id", "cbro")
        refused(res, "--keyring", "refused", "client.cbro")
        assert cephbench_pools(lab_cluster) == set() and lab_cluster.osd_flags() == flags
    finally:
        lab_cluster.ceph_ok("auth", "del", "client.cbro")


def test_a_pool_wider_than_the_cluster(lab_cluster, cephbench_env, tmp_path):
    suite = write_suite(tmp_path, ONE_WRITE.replace("size: 2", "size: 5"))
    res = cli_here(["run", str(suite), "--out", str(tmp_path / "run")], cephbench_env)
    refused(res, "pools.rep2", "needs 5 OSDs")
    assert not (tmp_path / "run").exists() and cephbench_pools(lab_cluster) == set()


def _health(cluster) -> str:
    return cluster.ceph_json("health")["status"]


def _wait_health(cluster, want: bool, status: str = "HEALTH_ERR", limit_s: float = 30) -> None:
    deadline = time.monotonic() + limit_s
    while (_health(cluster) == status) != want:
        assert time.monotonic() < deadline, f"health never {'became' if want else 'left'} {status}"
        time.sleep(0.5)


def test_health_err_is_refused_without_force(lab_cluster, cephbench_env, tmp_path):
    # nearfull above backfillfull: OSD_OUT_OF_ORDER_FULL, a HEALTH_ERR that changes no data path
    nearfull = float(lab_cluster.ceph_json("osd", "dump")["nearfull_ratio"])
    lab_cluster.ceph_ok("osd", "set-nearfull-ratio", "0.95")
    try:
        _wait_health(lab_cluster, True)
        res = run_refused(tmp_path, cephbench_env)
        refused(res, "HEALTH_ERR", "--force")
        assert cephbench_pools(lab_cluster) == set()
        res = cli_here(["run", str(write_suite(tmp_path, ONE_WRITE)), "--force", "--dry-run"], cephbench_env)
        assert res.returncode == 0 and "health HEALTH_ERR" in res.stdout, res.stderr + res.stdout
    finally:
        lab_cluster.ceph_ok("osd", "set-nearfull-ratio", f"{nearfull:.4f}")
        _wait_health(lab_cluster, False)


def test_scrub_flags_set_together_are_restored_exactly(shimmed_run):
    """noscrub already set by the operator stays set; nodeep-scrub, set by the run, is unset again."""
    res, _, _, flags, _ = shimmed_run
    assert res.returncode == 0, res.stderr + res.stdout
    assert "noscrub" in flags and "nodeep-scrub" not in flags, flags


def test_an_existing_pool_is_never_adopted_nor_removed(lab_cluster):
    """`osd pool create` succeeds on an existing pool; the mon's answer says so, and the run refuses it."""
    from cephbench.suite.config import Settings
    from cephbench.drivers.base import RunContext
    from cephbench.core.errors import OperationFailed
    from cephbench.drivers.pools import create_pool
    from cephbench.core.resources import Ledger

    name = "cephbench-someone-elses"
    lab_cluster.ceph_ok("osd", "pool", "create", name, "8", "8", "replicated", "--size=2", "--autoscale-mode=off")
    try:
        ctx = RunContext(cluster=lab_cluster, run_id="x", rundir=None, ledger=Ledger(),
                         settings=Settings()).for_driver()
        with pytest.raises(OperationFailed, match="already exists; cephbench will not use a pool it did not create"):
            create_pool(ctx, name, {"type": "replicated", "size": 2, "pg_num": 8})
        assert ctx.ledger.pending() == [] and name in lab_cluster.pool_names()
    finally:
        lab_cluster.delete_pool(name)


def test_a_create_of_the_runs_own_pool_answered_again_is_used_and_removed(lab_cluster, caplog):
    """The monitor client sends an unanswered command again after its session is reset, and the monitors answer a
    create they have done with "already exists": for a pool named for this run that is its own create, which stays
    in the ledger and goes at the end. The first create is made here by hand, as the first send would have."""
    import secrets

    from cephbench.suite.config import Settings
    from cephbench.drivers.base import RunContext
    from cephbench.drivers.pools import create_pool
    from cephbench.core.resources import Ledger, Resource

    run_id = secrets.token_hex(3)
    ctx = RunContext(cluster=lab_cluster, run_id=run_id, rundir=None, ledger=Ledger(),
                     settings=Settings()).for_driver()
    name = ctx.name("g001")
    lab_cluster.ceph_ok("osd", "pool", "create", name, "8", "8", "replicated", "--size=2", "--autoscale-mode=off")
    try:
        with caplog.at_level("WARNING", logger="cephbench.drivers.pools"):
            assert create_pool(ctx, name, {"type": "replicated", "size": 2, "pg_num": 8}) == name
        assert f"pool {name} already exists" in caplog.text and "resent it" in caplog.text
        assert ctx.ledger.pending() == [Resource("pool", name)]
        assert ctx.ledger.release() == [] and name not in lab_cluster.pool_names()
    finally:
        if name in lab_cluster.pool_names():
            lab_cluster.delete_pool(name)
