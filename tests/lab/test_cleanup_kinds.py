"""A killed run's `cephbench cleanup` of what the kinds of test made (issue 37): an RBD kind's images, RGW's run user
and the buckets loadgen makes with keys the user gave are each declared once by their kind (kinds/kind.py
ResourceType), and cleanup removes them by the remover that declaration names, after the proof it says; an entry
naming the user's image or RGW user is refused in one line, and theirs stays."""

import json
import subprocess
from pathlib import Path

from labcli import run_cli, tool_processes, write_suite
from test_cleanup_safety import _forged_run, _kill_9_when
from test_signals import snapshot

RBD = """
name: killrbd
settings: {set_noscrub: false}
pools:
  rep: {type: replicated, size: 1, pg_num: 8}
workloads:
  - {name: bench, type: rbd_bench, pool: rep, image_size: 16MiB, io_type: [write], io_size: 4KiB, io_threads: 2,
     duration: 60s, prefill: false}
"""

RGW = """
name: killrgw
settings: {set_noscrub: false}
workloads:
  - {name: rgw, type: rgw, protocol: s3, op: [put], object_size: 4KiB, concurrency: 2, objects: 64, duration: 60s}
"""


def _kinds(left: list[dict]) -> set[str]:
    return {r["kind"] for r in left}


def _rbd(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["rbd", *args], env=env, capture_output=True, text=True, timeout=120)


def _users_image(mon_json, env, pool: str) -> None:
    mon_json("osd pool create", pool=pool, pg_num=8)
    mon_json("osd pool application enable", pool=pool, app="rbd")
    res = _rbd(env, "create", "--size", "4M", f"{pool}/userimg")
    assert res.returncode == 0, res.stderr


def _add(rundir: Path, *entries: dict) -> list[dict]:
    path = rundir / "resources.json"
    left = [*json.loads(path.read_text()), *entries]
    path.write_text(json.dumps(left))
    return left


def test_kill_9_during_rbd_bench_then_cleanup_removes_its_images_and_never_the_users(lab, mon_json, cephbench_env,
                                                                                     tmp_path):
    _users_image(mon_json, cephbench_env, "i37users")
    try:
        before = snapshot(mon_json, cephbench_env)
        rundir = tmp_path / "run"
        left = _kill_9_when(["run", write_suite(tmp_path, RBD), "--out", rundir], cephbench_env,
                            rundir / "resources.json",
                            lambda left: "rbd-image" in _kinds(left) and tool_processes(left, "rbd"))
        [image] = [r["name"] for r in left if r["kind"] == "rbd-image"]
        assert _rbd(cephbench_env, "info", image).returncode == 0        # the run's image outlives the kill
        forged = {"kind": "rbd-image", "name": "i37users/userimg"}
        _add(rundir, forged)
        res = run_cli(["cleanup", rundir], cephbench_env)
        assert res.returncode == 1, res.stdout + res.stderr
        [line] = res.stderr.splitlines()
        assert line.startswith("cephbench: refused to remove rbd-image i37users/userimg: 'userimg' is not named "
                               "cephbench-<run id>-..."), line
        assert "removed pool" in res.stdout and "removed process" in res.stdout, res.stdout
        assert json.loads((rundir / "resources.json").read_text()) == [forged]
        assert _rbd(cephbench_env, "ls", "i37users").stdout.split() == ["userimg"]
        assert snapshot(mon_json, cephbench_env) == before
    finally:
        mon_json("osd pool delete", pool="i37users", pool2="i37users", yes_i_really_really_mean_it=True)


def test_a_dead_runs_image_whose_pool_stays_is_removed_by_its_declared_remover(lab, lab_target, mon_json,
                                                                              cephbench_env, tmp_path):
    """The run's image in a pool its ledger does not list (its pool already gone from the ledger): `rbd rm`, as
    kinds/rbd_images.py's RBD_IMAGE names it; the user's image beside it is refused."""
    pool = "cephbench-abc123-g9"
    _users_image(mon_json, cephbench_env, pool)
    try:
        res = _rbd(cephbench_env, "create", "--size", "4M", f"{pool}/cephbench-abc123-g9-img0")
        assert res.returncode == 0, res.stderr
        entries = [{"kind": "rbd-image", "name": f"{pool}/userimg"},
                   {"kind": "rbd-image", "name": f"{pool}/cephbench-abc123-g9-img0"}]
        rundir = _forged_run(tmp_path, lab_target, mon_json("status")["fsid"], entries)
        res = run_cli(["cleanup", rundir], cephbench_env)
        assert res.returncode == 1, res.stdout + res.stderr
        assert f"removed rbd-image {pool}/cephbench-abc123-g9-img0" in res.stdout, res.stdout
        [line] = res.stderr.splitlines()
        assert line.startswith(f"cephbench: refused to remove rbd-image {pool}/userimg: 'userimg' is not named"), line
        assert _rbd(cephbench_env, "ls", pool).stdout.split() == ["userimg"]
        assert json.loads((rundir / "resources.json").read_text()) == entries[:1]
    finally:
        mon_json("osd pool delete", pool=pool, pool2=pool, yes_i_really_really_mean_it=True)


def test_kill_9_during_rgw_then_cleanup_removes_the_run_user_and_never_the_labs(lab, mon_json, cephbench_env,
                                                                              tmp_path):
    before = snapshot(mon_json, cephbench_env)
    assert "cephbench-lab" in before["rgw-users"]
    rundir = tmp_path / "run"
    env = {k: v for k, v in cephbench_env.items() if not k.startswith("CEPHBENCH_S3_")}
    left = _kill_9_when(["run", write_suite(tmp_path, RGW), "--out", rundir], env, rundir / "resources.json",
                        lambda left: "rgw-user" in _kinds(left) and tool_processes(left, "cephbench-loadgen"))
    [uid] = [r["name"] for r in left if r["kind"] == "rgw-user"]
    users = subprocess.run(["radosgw-admin", "user", "list"], env=env, capture_output=True, text=True, timeout=60)
    assert uid in json.loads(users.stdout)
    forged = {"kind": "rgw-user", "name": "cephbench-lab"}       # the lab's own user: not named for a run
    _add(rundir, forged)
    res = run_cli(["cleanup", rundir], env)
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"removed rgw-user {uid}" in res.stdout, res.stdout
    [line] = res.stderr.splitlines()
    assert line.startswith("cephbench: refused to remove rgw-user cephbench-lab: "), line
    assert json.loads((rundir / "resources.json").read_text()) == [forged]
    assert snapshot(mon_json, cephbench_env) == before


def test_kill_9_during_rgw_with_the_users_keys_then_cleanup_removes_the_buckets_loadgen_made(lab, mon_json,
                                                                                             cephbench_env, tmp_path):
    keys = json.loads((Path(cephbench_env["CEPH_CONF"]).parent / "rgw-user.json").read_text())
    env = {**cephbench_env, "CEPHBENCH_S3_ACCESS_KEY": keys["s3_access_key"],
           "CEPHBENCH_S3_SECRET_KEY": keys["s3_secret_key"]}
    before = snapshot(mon_json, cephbench_env)
    rundir = tmp_path / "run"
    left = _kill_9_when(["run", write_suite(tmp_path, RGW), "--out", rundir], env, rundir / "resources.json",
                        lambda left: "rgw-buckets" in _kinds(left) and tool_processes(left, "cephbench-loadgen"))
    assert "rgw-user" not in _kinds(left)
    [prefix] = [r["name"].rstrip("*") for r in left if r["kind"] == "rgw-buckets"]
    res = run_cli(["cleanup", rundir], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"removed rgw-buckets {prefix}*" in res.stdout, res.stdout
    assert json.loads((rundir / "resources.json").read_text()) == []
    after = snapshot(mon_json, cephbench_env)
    assert not [b for b in after["buckets"] if b.startswith(prefix)]
    assert after == before
