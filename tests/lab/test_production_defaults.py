"""Production defaults (issue 28): `mon_allow_pool_delete` false, as Ceph ships it and most clusters keep it.

A run that would create pools it cannot delete is refused before anything is created, naming the two ways out:
`--allow-pool-delete` (the option set for the run through the ledger and put back exactly, on every exit path) and
a pool the user names as existing (`pools: {p: {existing: NAME}}`), which the run writes its own objects in and
leaves otherwise as it was. An error names the real cause: a pool deletion the monitors refuse is not the key's
fault. The lab keeps the option in the configuration database (lab/lab.py), so `ceph config set mon` gives it
Ceph's default here as on a real cluster."""

import json
import re
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from cephbench.core.errors import UserError

from labcli import run_cli, write_suite
from test_cleanup_safety import _kill_9_when
from test_signals import dispatched, run_and_signal_when

OPTION = "mon_allow_pool_delete"

WRITE = """
name: prod
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
workloads:
  - {name: rados, type: rados_bench, pool: rep2, modes: [write], object_size: 64KiB, concurrency: 2, duration: 1s}
"""

EXISTING = """
name: prodexisting
pools:
  mine: {existing: NAME}
workloads:
  - {name: rados, type: rados_bench, pool: mine, modes: [write, seq], object_size: 64KiB, concurrency: 2,
     duration: 1s}
"""


def _running(env, until: str | None = None, timeout: float = 30) -> str:
    """What mon.a runs with (the manager's copy of its report, a second or two behind a change); with `until`,
    once it says so or the timeout passed."""
    deadline = time.monotonic() + timeout
    while True:
        res = subprocess.run(["ceph", "config", "show", "mon.a", OPTION], env=env, capture_output=True, text=True,
                             timeout=60)
        if until is None or res.stdout.strip() == until or time.monotonic() > deadline:
            return res.stdout.strip()
        time.sleep(0.2)


def _no_override(env) -> None:
    """A value given to the running mon (`ceph tell mon.a config set`, as test_cleanup_safety.py does) wins over
    the configuration database: dropped, so that the database's value is the one in force."""
    res = subprocess.run(["ceph", "tell", "mon.a", "config", "unset", OPTION], env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr


@contextmanager
def pool_delete_off(mon_json, env):
    """Ceph's default for the option, as an operator sets it (the configuration database); the lab's true back
    after, whatever happened."""
    _no_override(env)
    mon_json("config set", who="mon", name=OPTION, value="false")
    try:
        assert _running(env, until="false") == "false"
        yield
    finally:
        mon_json("config set", who="mon", name=OPTION, value="true")


def state(mon_json) -> dict:
    """What a run may leave: pools, the configuration database, run markers, OSD flags."""
    return {"pools": sorted(mon_json("osd pool ls")), "flags": sorted(mon_json("osd dump")["flags"].split(",")),
            "config": sorted((c["section"], c["name"], c["value"]) for c in mon_json("config dump")),
            "markers": sorted(k for k in mon_json("config-key ls") or [] if k.startswith("cephbench/"))}


def test_a_refused_pool_deletion_names_mon_allow_pool_delete_not_the_key(lab, lab_cluster, mon_json, cephbench_env):
    mon_json("osd pool create", pool="i6refused", pg_num=8)
    try:
        with pool_delete_off(mon_json, cephbench_env):
            with pytest.raises(UserError) as got:
                lab_cluster.delete_pool("i6refused")
            line = got.value.one_line()
            assert OPTION in line and "--allow-pool-delete" in line, line
            assert "keyring" not in line and "key that may" not in line, line
    finally:
        mon_json("osd pool delete", pool="i6refused", pool2="i6refused", yes_i_really_really_mean_it=True)


def test_a_run_that_creates_pools_is_refused_when_pools_cannot_be_deleted(lab, mon_json, cephbench_env, tmp_path):
    with pool_delete_off(mon_json, cephbench_env):
        before = state(mon_json)
        res = run_cli(["run", write_suite(tmp_path, WRITE), "--out", tmp_path / "run"], cephbench_env)
        assert res.returncode == 2, res.stdout + res.stderr
        [line] = res.stderr.splitlines()
        assert OPTION in line and "--allow-pool-delete" in line and "existing:" in line, line
        assert state(mon_json) == before
        assert not (tmp_path / "run").exists()


def test_allow_pool_delete_sets_the_option_for_the_run_and_puts_it_back(lab, mon_json, cephbench_env, tmp_path):
    with pool_delete_off(mon_json, cephbench_env):
        before = state(mon_json)
        res = run_cli(["run", write_suite(tmp_path, WRITE), "--out", tmp_path / "run", "--allow-pool-delete"],
                      cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert state(mon_json) == before
        assert _running(cephbench_env, until="false") == "false"
        assert json.loads((tmp_path / "run" / "resources.json").read_text()) == []


def test_allow_pool_delete_on_a_cluster_without_the_entry_removes_what_it_set(lab, mon_json, cephbench_env, tmp_path):
    """No entry of the option in the database (Ceph's default, false): the run's is removed at its end."""
    _no_override(cephbench_env)
    mon_json("config rm", who="mon", name=OPTION)
    try:
        assert _running(cephbench_env, until="false") == "false"
        before = state(mon_json)
        assert not any(name == OPTION for _, name, _ in before["config"])
        res = run_cli(["run", write_suite(tmp_path, WRITE), "--out", tmp_path / "run", "--allow-pool-delete"],
                      cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert state(mon_json) == before
    finally:
        mon_json("config set", who="mon", name=OPTION, value="true")


# the option set, the pool made and deleted, the option put back (the run's second `config set`)
@pytest.mark.parametrize("prefix, nth, sig", [("config set", 1, signal.SIGTERM), ("osd pool create", 1, signal.SIGINT),
                                              ("osd pool delete", 1, signal.SIGTERM), ("config set", 2, signal.SIGINT)],
                         ids=lambda v: str(v).replace(" ", "-") if isinstance(v, str) else str(v))
def test_a_signal_with_allow_pool_delete_leaves_the_option_as_it_was(lab, mon_json, cephbench_env, tmp_path,
                                                                     prefix, nth, sig):
    with pool_delete_off(mon_json, cephbench_env):
        before = state(mon_json)
        # the mon logs no audit line for `config set`: its handle_command line
        pattern = re.compile(f"prefix=config set, name={OPTION}") if prefix == "config set" else dispatched(prefix)
        rc, aimed, out, err = run_and_signal_when(
            ["run", write_suite(tmp_path, WRITE), "--out", tmp_path / "run", "--allow-pool-delete"], cephbench_env,
            lab.dir / "log" / "ceph-mon.a.log", pattern, sig, nth)
        assert "Traceback" not in err, err
        assert aimed, f"the mon never dispatched {prefix!r} ({nth}): {err}"
        assert rc == 130, (rc, err)
        assert "left behind" not in err and "could not remove" not in err, err
        assert state(mon_json) == before


def test_a_run_killed_with_9_then_cleanup_restores_the_option_and_removes_the_pool(lab, mon_json, cephbench_env,
                                                                                   tmp_path):
    with pool_delete_off(mon_json, cephbench_env):
        before = state(mon_json)
        suite = write_suite(tmp_path, WRITE.replace("duration: 1s", "duration: 30s"))
        left = _kill_9_when(["run", suite, "--out", tmp_path / "run", "--allow-pool-delete"], cephbench_env,
                            tmp_path / "run" / "resources.json", lambda left: any(r["kind"] == "process" for r in left))
        [option] = [r for r in left if r["kind"] == "config-option"]
        assert json.loads(option["name"]) == {"who": "mon", "name": OPTION, "previous": "false"}, option
        assert _running(cephbench_env) == "true"
        res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert state(mon_json) == before
        assert _running(cephbench_env, until="false") == "false"


def test_a_resume_of_a_run_killed_with_9_looks_again_once_the_dead_part_put_the_option_back(lab, mon_json,
                                                                                            cephbench_env, tmp_path):
    """The dead part's --allow-pool-delete is in force when the resume's preflight first reads the option."""
    with pool_delete_off(mon_json, cephbench_env):
        before = state(mon_json)
        # killed once the tool's PID is in the ledger (within 50 ms), and the resume runs the whole write again: 6 s
        # is ample for the first and keeps the second short (30 s cost this test 24 CPU-seconds on 2 cores)
        suite = write_suite(tmp_path, WRITE.replace("duration: 1s", "duration: 6s"))
        _kill_9_when(["run", suite, "--out", tmp_path / "run", "--allow-pool-delete"], cephbench_env,
                     tmp_path / "run" / "resources.json", lambda left: any(r["kind"] == "process" for r in left))
        res = run_cli(["run", "--resume", tmp_path / "run"], cephbench_env)
        assert res.returncode == 2, res.stdout + res.stderr
        assert OPTION in res.stderr.splitlines()[-1] and "--allow-pool-delete" in res.stderr.splitlines()[-1], \
            res.stderr
        assert state(mon_json) == before
        res = run_cli(["run", "--resume", tmp_path / "run", "--allow-pool-delete"], cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert state(mon_json) == before
        assert json.loads((tmp_path / "run" / "resources.json").read_text()) == []


def _a_run_holds_it(mon_json, env) -> bool:
    """A run is in progress (its marker) and the monitors run with the option true."""
    marked = any(k.startswith("cephbench/runs/") for k in mon_json("config-key ls") or [])
    return marked and _running(env) == "true"


def test_two_runs_with_allow_pool_delete_share_it_and_the_last_one_puts_it_back(lab, mon_json, cephbench_env,
                                                                                  tmp_path):
    """Run A sets the option for its pools; run B, started meanwhile, finds it true because of A (A's marker) and
    holds it too. A ends first and leaves it true (B's pools still need it); B's end deletes its pool and puts the
    option back. Before, B took nothing, and A's end took the option from under B's pool deletion: B's pool was
    left behind."""
    from labcli import CLI

    def start(name: str, seconds: int) -> subprocess.Popen:
        suite = write_suite(tmp_path, WRITE.replace("duration: 1s", f"duration: {seconds}s"), f"{name}.yaml")
        return subprocess.Popen([*CLI, "run", str(suite), "--out", str(tmp_path / name), "--allow-pool-delete"],
                                env=cephbench_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    with pool_delete_off(mon_json, cephbench_env):
        before = state(mon_json)
        a = start("a", 15)
        b = None
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and a.poll() is None and not _a_run_holds_it(mon_json, cephbench_env):
                time.sleep(0.2)
            assert a.poll() is None, a.communicate()
            b = start("b", 20)
            # B is past the option (its tool runs) while A still runs: at load 18 B's start took longer than A's 6 s
            # write, A put the option back before B had looked, and the test saw no overlap (fresh-clone run, 8e2c2a3)
            ledger = tmp_path / "b" / "resources.json"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and b.poll() is None and not (
                    ledger.exists() and '"process"' in ledger.read_text()):
                time.sleep(0.2)
            assert a.poll() is None, "run A ended before B's tool started: the test did not overlap them"
            out, err = a.communicate(timeout=300)
            assert a.returncode == 0, out + err
            assert b.poll() is None, "run B ended before A: the test did not overlap them"
            assert _running(cephbench_env) == "true"            # B still holds it: A's end left it
            out, err = b.communicate(timeout=300)
            assert b.returncode == 0, out + err
            assert "left behind" not in err, err
        finally:
            for p in (a, b):
                if p is not None and p.poll() is None:
                    p.send_signal(signal.SIGINT)
                    p.communicate(timeout=120)
        assert json.loads((tmp_path / "b" / "resources.json").read_text()) == []
        assert state(mon_json) == before
        assert _running(cephbench_env, until="false") == "false"


def test_allow_pool_delete_with_a_key_that_may_not_set_config_is_one_line(lab, mon_json, cephbench_env, tmp_path):
    keyring = tmp_path / "ro.keyring"
    res = subprocess.run(["ceph", "auth", "get-or-create", "client.i6ro", "mon", "allow r", "osd", "allow *",
                          "mgr", "allow r", "-o", str(keyring)], env=cephbench_env, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    try:
        with pool_delete_off(mon_json, cephbench_env):
            before = state(mon_json)
            res = run_cli(["run", write_suite(tmp_path, WRITE), "--out", tmp_path / "run", "--allow-pool-delete",
                           "--keyring", keyring, "--id", "i6ro"], cephbench_env)
            assert res.returncode == 2, res.stdout + res.stderr
            [line] = res.stderr.splitlines()
            assert "--allow-pool-delete" in line and "config set" in line and OPTION in line, line
            assert state(mon_json) == before
    finally:
        mon_json("auth rm", entity="client.i6ro")


def _objects(env, pool: str) -> list[str]:
    res = subprocess.run(["rados", "-p", pool, "ls"], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return sorted(res.stdout.split())


def _pool_facts(mon_json, pool: str) -> dict:
    [p] = [p for p in mon_json("osd pool ls", detail="detail") if p["pool_name"] == pool]
    return {k: p[k] for k in ("pg_num", "pg_placement_num", "size", "min_size", "application_metadata",
                              "crush_rule", "flags_names")}


def test_an_existing_pool_gets_the_runs_objects_and_is_left_as_it_was(lab, mon_json, cephbench_env, tmp_path):
    mon_json("osd pool create", pool="i6users", pg_num=8)
    mon_json("osd pool application enable", pool="i6users", app="rados")
    try:
        subprocess.run(["rados", "-p", "i6users", "put", "theirs", "/etc/os-release"], env=cephbench_env,
                       check=True, timeout=60)
        deadline = time.monotonic() + 60        # its creation done (the flag `creating` gone)
        while "creating" in _pool_facts(mon_json, "i6users")["flags_names"] and time.monotonic() < deadline:
            time.sleep(0.2)
        facts, objects = _pool_facts(mon_json, "i6users"), _objects(cephbench_env, "i6users")
        with pool_delete_off(mon_json, cephbench_env):
            before = state(mon_json)
            res = run_cli(["run", write_suite(tmp_path, EXISTING.replace("NAME", "i6users")), "--out",
                           tmp_path / "run"], cephbench_env)
            assert res.returncode == 0, res.stdout + res.stderr
            assert state(mon_json) == before
        assert _objects(cephbench_env, "i6users") == objects == ["theirs"]
        assert _pool_facts(mon_json, "i6users") == facts
        got = subprocess.run(["rados", "-p", "i6users", "get", "theirs", "-"], env=cephbench_env,
                             capture_output=True, text=True, timeout=60)
        assert got.stdout == Path("/etc/os-release").read_text()
        results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
        assert [r["status"] for r in results] == ["ok", "ok"], results
        assert all(" -p i6users -N cephbench-" in r["commands"][0] for r in results), results
    finally:
        mon_json("osd pool delete", pool="i6users", pool2="i6users", yes_i_really_really_mean_it=True)


def test_an_existing_pool_that_does_not_exist_is_refused_before_anything(lab, mon_json, cephbench_env, tmp_path):
    before = state(mon_json)
    res = run_cli(["run", write_suite(tmp_path, EXISTING.replace("NAME", "i6nosuchpool")), "--out",
                   tmp_path / "run"], cephbench_env)
    assert res.returncode == 2, res.stdout + res.stderr
    [line] = res.stderr.splitlines()
    assert line.startswith("cephbench: pools.mine.existing: ") and "i6nosuchpool" in line, line
    assert state(mon_json) == before


def test_an_existing_pool_after_a_kill_9_and_cleanup_keeps_only_what_was_there(lab, mon_json, cephbench_env,
                                                                                 tmp_path):
    """A write cut short leaves rados bench no record of its objects: the run's namespace holds them all."""
    mon_json("osd pool create", pool="i6users9", pg_num=8)
    try:
        subprocess.run(["rados", "-p", "i6users9", "put", "theirs", "/etc/os-release"], env=cephbench_env,
                       check=True, timeout=60)
        suite = write_suite(tmp_path, EXISTING.replace("NAME", "i6users9").replace("duration: 1s", "duration: 30s"))
        before = state(mon_json)
        writing: list[float] = []

        def written_a_while(left) -> bool:      # 3 s into the write: objects in the pool
            if not writing and any(r["kind"] == "process" for r in left):
                writing.append(time.monotonic())
            return bool(writing) and time.monotonic() - writing[0] > 3
        left = _kill_9_when(["run", suite, "--out", tmp_path / "run"], cephbench_env,
                            tmp_path / "run" / "resources.json", written_a_while)
        [ns] = [r for r in left if r["kind"] == "rados-namespace"]
        assert ns["name"].startswith("i6users9/cephbench-"), ns
        res = subprocess.run(["rados", "-p", "i6users9", "--all", "ls"], env=cephbench_env, capture_output=True,
                             text=True, timeout=60)
        assert len(res.stdout.splitlines()) > 1, res.stdout
        res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
        res = subprocess.run(["rados", "-p", "i6users9", "--all", "ls"], env=cephbench_env, capture_output=True,
                             text=True, timeout=60)
        assert res.stdout.split() == ["theirs"], res.stdout
        assert state(mon_json) == before
    finally:
        mon_json("osd pool delete", pool="i6users9", pool2="i6users9", yes_i_really_really_mean_it=True)
