"""`cephbench cleanup` removes only what the run made, and only while it is still the run's (issue 24): a forged
resources.json entry naming a real pool is refused and the pool keeps its data; a scrub flag the user set again
after the run's was undone is left set; a removal the mon refuses stays listed for the next cleanup; the disk
baseline's test files of a run killed with -9 are removed."""

import json
import subprocess
import time
from pathlib import Path

from cephbench.core.results import RunDir

from labcli import CLI, run_cli, write_suite
from test_signals import EC_WRITE, snapshot


def _kill_9_when(args, env, resources: Path, ready, timeout: float = 180) -> list[dict]:
    """Start the CLI, kill -9 it once `ready(entries)` holds for its resources.json; returns those entries."""
    proc = subprocess.Popen([*CLI, *map(str, args)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + timeout
    left: list[dict] = []
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            left = json.loads(resources.read_text() or "[]") if resources.exists() else []
        except ValueError:          # caught between its write and its rename
            left = []
        if ready(left):
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read()
    proc.kill()
    proc.wait()
    return left


def _tell_mon(env, *args: str) -> str:
    res = subprocess.run(["ceph", "tell", "mon.a", *args], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_a_forged_entry_naming_a_real_pool_is_refused_and_the_pool_keeps_its_data(lab, lab_target, mon_json,
                                                                                 cephbench_env, tmp_path):
    mon_json("osd pool create", pool="hbvictim", pg_num=8)
    try:
        subprocess.run(["rados", "-p", "hbvictim", "put", "thesis", "/etc/os-release"], env=cephbench_env,
                       check=True, timeout=60)
        rd = RunDir.create(tmp_path / "run", {"suite_name": "forged", "run_ids": ["abc123"],
                                              "target": lab_target.describe(), "started_unix": time.time()})
        (rd.path / "resources.json").write_text(json.dumps([{"kind": "pool", "name": "hbvictim"}]))
        res = run_cli(["cleanup", rd.path], cephbench_env)
        assert res.returncode == 1, res.stdout + res.stderr
        [line] = res.stderr.splitlines()
        assert line.startswith("cephbench: refused to remove pool hbvictim: 'hbvictim' is not named "
                               "cephbench-<run id>-... for this run (run ids abc123)"), line
        assert "hbvictim" in mon_json("osd pool ls")
        got = subprocess.run(["rados", "-p", "hbvictim", "get", "thesis", "-"], env=cephbench_env,
                             capture_output=True, text=True, timeout=60)
        assert got.stdout == Path("/etc/os-release").read_text()
        assert json.loads((rd.path / "resources.json").read_text()) == [{"kind": "pool", "name": "hbvictim"}]
    finally:
        mon_json("osd pool delete", pool="hbvictim", pool2="hbvictim", yes_i_really_really_mean_it=True)


def test_a_refused_removal_stays_listed_and_a_flag_set_again_by_the_user_stays_set(lab, mon_json, cephbench_env,
                                                                                   tmp_path):
    before = snapshot(mon_json, cephbench_env)
    suite = write_suite(tmp_path, EC_WRITE.replace("duration: 1s", "duration: 30s"))
    resources = tmp_path / "run" / "resources.json"
    left = _kill_9_when(["run", suite, "--out", tmp_path / "run"], cephbench_env, resources,
                        lambda left: any(r["kind"] == "process" for r in left))
    [flags] = [r for r in left if r["kind"] == "osd-flags"]
    assert flags["name"] == "noscrub,nodeep-scrub" and flags["state"]["osdmap_epoch_before"] > 0, flags
    # the user follows "by hand: ceph osd unset ...", later sets noscrub for their own reasons, and the mon
    # refuses pool deletions for a while
    mon_json("osd unset", key="noscrub")
    mon_json("osd unset", key="nodeep-scrub")
    mon_json("osd set", key="noscrub")
    allowed = json.loads(_tell_mon(cephbench_env, "config", "get", "mon_allow_pool_delete"))["mon_allow_pool_delete"]
    _tell_mon(cephbench_env, "config", "set", "mon_allow_pool_delete", "false")
    try:
        res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
        assert res.returncode == 1, res.stdout + res.stderr
        assert "could not remove pool cephbench-" in res.stderr and "Traceback" not in res.stderr, res.stderr
        assert "noscrub was unset" in res.stdout and "left set" in res.stdout, res.stdout
        still = json.loads(resources.read_text())
        assert [r["kind"] for r in still if r["kind"] in ("pool", "osd-flags")] == ["pool"], still
        assert "noscrub" in mon_json("osd dump")["flags"].split(",")
    finally:
        _tell_mon(cephbench_env, "config", "set", "mon_allow_pool_delete", allowed)
    try:
        again = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
        assert again.returncode == 0, again.stdout + again.stderr
        assert json.loads(resources.read_text()) == []
        assert "noscrub" in mon_json("osd dump")["flags"].split(",")       # the user's, still
    finally:
        mon_json("osd unset", key="noscrub")
    assert snapshot(mon_json, cephbench_env) == before


# Every OSD's test file stays until the all-at-once step ends, so the kill comes once the last path's file exists:
# 3 s steps leave it about 10 s to land in (20 s ones had the test wait 45 s for the third path)
BASELINE_ONLY = """
name: diskkill
baseline:
  disks: {paths: lab-osds, size: 128MiB, runtime: 3s, patterns: [read-4MiB]}
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
workloads:
  - {name: rados, type: rados_bench, pool: rep2, modes: [write], object_size: 64KiB, concurrency: 2, duration: 1s}
"""


def test_kill_9_during_the_disk_baseline_then_cleanup_leaves_no_test_file(lab, cephbench_env, tmp_path):
    resources = tmp_path / "run" / "resources.json"

    def writing(left) -> bool:
        files = [r["name"].partition(":")[2] for r in left if r["kind"] == "disk-file"]
        return bool(files) and all(Path(f).exists() for f in files)
    left = _kill_9_when(["run", write_suite(tmp_path, BASELINE_ONLY), "--out", tmp_path / "run"], cephbench_env,
                        resources, writing)
    files = [r["name"].partition(":")[2] for r in left if r["kind"] == "disk-file"]
    assert len(files) == len(list((Path(lab.dir) / "osd").iterdir())), left
    res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("removed disk-file") == len(files), res.stdout
    assert [f for f in files if Path(f).exists() or Path(f + ".pid").exists()] == []
    assert json.loads(resources.read_text()) == []


VARIANT = """
name: optkill
variants:
  - name: a
    options: [{who: osd, name: osd_max_backfills, value: 2}]
workloads:
  - {name: rados, type: rados_bench, modes: [write], object_size: 64KiB, concurrency: 2, duration: 30s}
"""


def _option(mon_json, who: str, name: str):
    return next((c["value"] for c in mon_json("config dump") if (c["section"], c["name"]) == (who, name)), None)


def test_an_option_the_user_set_again_after_the_runs_was_put_back_stays_theirs(lab, mon_json, cephbench_env,
                                                                                tmp_path):
    assert _option(mon_json, "osd", "osd_max_backfills") is None
    resources = tmp_path / "run" / "resources.json"
    left = _kill_9_when(["run", write_suite(tmp_path, VARIANT), "--out", tmp_path / "run"], cephbench_env,
                        resources, lambda left: {"config-option", "process"} <= {r["kind"] for r in left})
    [opt] = [r for r in left if r["kind"] == "config-option"]
    assert isinstance(opt["state"]["config_version_before"], int), opt
    assert _option(mon_json, "osd", "osd_max_backfills") == "2"
    # the user puts it back by hand (what cleanup would print), then sets a value of their own
    mon_json("config rm", who="osd", name="osd_max_backfills")
    mon_json("config set", who="osd", name="osd_max_backfills", value="7")
    try:
        res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "changed again since, not by this run: left as it is" in res.stdout, res.stdout
        assert _option(mon_json, "osd", "osd_max_backfills") == "7"
        assert json.loads(resources.read_text()) == []
    finally:
        mon_json("config rm", who="osd", name="osd_max_backfills")
