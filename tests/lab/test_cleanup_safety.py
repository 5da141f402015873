"""`cephbench cleanup` removes only what the run made, and only while it is still the run's (issue 24): a forged
resources.json entry naming a real pool is refused and the pool keeps its data; a scrub flag the user set again
after the run's was undone is left set; a removal the mon refuses stays listed for the next cleanup; the disk
baseline's test files of a run killed with -9 are removed."""

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cephbench.cluster.recovery import process_tag
from cephbench.core.results import RunDir
from cephbench.lab import labdir

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
                                              "target": lab_target.describe(), "started_unix": time.time(),
                                              "cluster": {"status": {"fsid": mon_json("status")["fsid"]}}})
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


@pytest.mark.parametrize("by_hand", [True, False, None], ids=["put-back-then-set", "set", "entry-edited"])
def test_an_option_the_user_set_after_the_run_died_stays_theirs(lab, mon_json, cephbench_env, tmp_path, by_hand):
    """Issue 34: the trial's user set osd_max_backfills 7 over the killed run's 2 without putting it back first, and
    cleanup removed their 7 ("previous": null): the run undoes only a value it set, still in force. And only to
    the value the configuration's history shows was there: an entry whose "previous" was edited is refused."""
    assert _option(mon_json, "osd", "osd_max_backfills") is None
    resources = tmp_path / "run" / "resources.json"
    left = _kill_9_when(["run", write_suite(tmp_path, VARIANT), "--out", tmp_path / "run"], cephbench_env,
                        resources, lambda left: {"config-option", "process"} <= {r["kind"] for r in left})
    [opt] = [r for r in left if r["kind"] == "config-option"]
    assert isinstance(opt["state"]["config_version_before"], int) and opt["state"]["set_to"] == ["2"], opt
    assert _option(mon_json, "osd", "osd_max_backfills") == "2"
    if by_hand is None:
        edited = [{**r, "name": r["name"].replace('"previous":null', '"previous":"5"')} for r in left]
        resources.write_text(json.dumps(edited))
        try:
            res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
            assert res.returncode == 1, res.stdout + res.stderr
            [line] = res.stderr.splitlines()
            assert "the entry puts back 5, and the configuration held no value before the run set it" in line, line
            assert _option(mon_json, "osd", "osd_max_backfills") == "2"
            still = json.loads(resources.read_text())       # the option, and the marker that proves it
            assert sorted(r["kind"] for r in still) == ["config-key", "config-option"], still
            resources.write_text(json.dumps(
                [{**r, "name": r["name"].replace('"previous":"5"', '"previous":null')} for r in still]))
            res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
            assert res.returncode == 0, res.stdout + res.stderr
            assert _option(mon_json, "osd", "osd_max_backfills") is None
            assert json.loads(resources.read_text()) == []
        finally:
            mon_json("config rm", who="osd", name="osd_max_backfills")
        return
    if by_hand:         # the user puts it back by hand (what cleanup would print), then sets a value of their own
        mon_json("config rm", who="osd", name="osd_max_backfills")
    mon_json("config set", who="osd", name="osd_max_backfills", value="7")
    try:
        res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "osd osd_max_backfills is 7 now, not the 2 the run set: changed since, not by this run: left as it " \
               "is" in res.stdout, res.stdout
        assert _option(mon_json, "osd", "osd_max_backfills") == "7"
        assert json.loads(resources.read_text()) == []
    finally:
        mon_json("config rm", who="osd", name="osd_max_backfills")


def _forged_run(tmp_path, lab_target, fsid: str, entries: list[dict], **meta) -> Path:
    rd = RunDir.create(tmp_path / "run", {"suite_name": "forged", "run_ids": ["abc123"],
                                          "target": lab_target.describe(), "started_unix": time.time() - 3600,
                                          "cluster": {"status": {"fsid": fsid}}, **meta})
    (rd.path / "resources.json").write_text(json.dumps(entries))
    return rd.path


def _config_version(mon_json) -> int:
    return max(int(c["version"]) for c in mon_json("config log", num=1))


def test_forged_entries_of_every_kind_are_refused_and_nothing_of_the_users_changes(lab, lab_target, mon_json,
                                                                                  cephbench_env, tmp_path):
    """Issue 34's trial, and more of its class: a hand-edited resources.json naming another lab's directory, the
    user's noout, the user's osd_recovery_sleep and a process of the user's, each with a state made to look like
    the run's, and entries copied from another run. Each is refused in one line and stays listed; the run's own
    marker on the cluster claims none of them."""
    victim = tmp_path / "victim"            # another lab's directory, as `lab up` makes it
    labdir.claim(victim)
    (victim / "ceph.conf").write_text("[global]\n")
    user = subprocess.Popen(["sleep", "300"], start_new_session=True)
    rundir = tmp_path / "run"
    mon_json("osd set", key="noout")
    mon_json("config set", who="global", name="osd_recovery_sleep", value="0.3")
    try:
        epoch, version = mon_json("osd dump")["epoch"], _config_version(mon_json)
        mon_json("config-key set", key="cephbench/runs/abc123", val=json.dumps(
            {"host": "elsewhere", "pid": 1, "started_unix": time.time() - 3600, "run_dir": str(rundir)}))
        entries = [
            {"kind": "lab-shape", "name": json.dumps({"dir": str(victim)})},
            {"kind": "osd-flags", "name": "noout"},
            {"kind": "osd-flags", "name": "noout", "state": {"run": "abc123", "osdmap_epoch_before": epoch - 1}},
            {"kind": "config-option", "name": '{"who":"global","name":"osd_recovery_sleep","previous":null}'},
            {"kind": "config-option", "name": '{"who":"global","name":"osd_recovery_sleep","previous":null}',
             "state": {"run": "abc123", "config_version_before": version - 1, "set_to": ["0.3"]}},
            {"kind": "process", "name": process_tag(user.pid)},
            {"kind": "process", "name": process_tag(user.pid),
             "state": {"run": "abc123", "cmdline": ["sleep", "300"], "by": "1:0"}},
            {"kind": "pool", "name": "cephbench-abc123-g1", "state": {"run": "ffffff"}},   # copied from run ffffff
            {"kind": "config-key", "name": "cephbench/runs/ffffff"},
            {"kind": "ssh-control", "name": str(tmp_path)},
            {"kind": "disk-file", "name": f"localhost:{victim / 'ceph.conf'}"},
        ]
        _forged_run(tmp_path, lab_target, mon_json("status")["fsid"], entries)
        res = run_cli(["cleanup", rundir], cephbench_env)
        assert res.returncode == 1, res.stdout + res.stderr
        lines = res.stderr.splitlines()
        assert len(lines) == len(entries) and all(ln.startswith("cephbench: refused to remove ") for ln in lines), \
            res.stderr
        assert json.loads((rundir / "resources.json").read_text()) == entries
        assert "noout" in mon_json("osd dump")["flags"].split(",")
        assert _option(mon_json, "global", "osd_recovery_sleep") in ("0.3", "0.300000")
        assert user.poll() is None
        assert (victim / "ceph.conf").exists() and labdir.read(victim) is not None
    finally:
        user.kill()
        mon_json("osd unset", key="noout")
        mon_json("config rm", who="global", name="osd_recovery_sleep")
        mon_json("config-key rm", key="cephbench/runs/abc123")


def test_cleanup_against_another_cluster_refuses_everything_in_one_line(lab, lab_target, mon_json, cephbench_env,
                                                                       tmp_path):
    """Issue 34's trial: lab A's run directory cleaned with -c at lab B unset B's operator-set noscrub and
    nodeep-scrub. The run directory here ran on another cluster (its fsid); the lab is B."""
    mon_json("osd set", key="noscrub")
    mon_json("osd set", key="nodeep-scrub")
    try:
        entries = [{"kind": "osd-flags", "name": "noscrub,nodeep-scrub",
                    "state": {"run": "abc123", "osdmap_epoch_before": mon_json("osd dump")["epoch"] - 2}},
                   {"kind": "config-key", "name": "cephbench/runs/abc123"}]
        rundir = _forged_run(tmp_path, lab_target, "00000000-0000-4000-8000-00000000000a", entries)
        res = run_cli(["cleanup", rundir, "-c", lab_target.conf], cephbench_env)
        assert res.returncode == 2, res.stdout + res.stderr
        [line] = res.stderr.splitlines()
        assert "the run ran on cluster 00000000-0000-4000-8000-00000000000a, and this is cluster " \
               f"{mon_json('status')['fsid']}: nothing was removed" in line, line
        assert json.loads((rundir / "resources.json").read_text()) == entries
        assert {"noscrub", "nodeep-scrub"} <= set(mon_json("osd dump")["flags"].split(","))
    finally:
        mon_json("osd unset", key="noscrub")
        mon_json("osd unset", key="nodeep-scrub")


def test_a_copy_of_a_live_run_directory_is_never_cleaned(lab, mon_json, cephbench_env, tmp_path):
    """Issue 34's trial: `cp -a runs/live runs/copy; cephbench cleanup runs/copy` killed the live run's tools and
    unset its flags. Refused by the copied lock file, without it by the lock of the run's id, and without that by the
    live run's marker; the live run then ends as it would have."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    # long enough to outlast three cleanups on a loaded machine (the SIGINT ends it sooner)
    suite = write_suite(tmp_path, VARIANT.replace("duration: 30s", "duration: 300s"))
    proc = subprocess.Popen([*CLI, "run", str(suite), "--out", str(live)], env=cephbench_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        left: list[dict] = []
        while time.monotonic() < deadline and not {"config-option", "process", "osd-flags"} <= {
                r["kind"] for r in left}:
            time.sleep(0.1)
            try:
                left = json.loads((live / "resources.json").read_text() or "[]")
            except (OSError, ValueError):
                left = []
        assert proc.poll() is None, proc.stderr.read()
        subprocess.run(["cp", "-a", str(live), str(copy)], check=True)
        left = json.loads((copy / "resources.json").read_text())     # the run may have added to it meanwhile
        tools = [r["name"] for r in left if r["kind"] == "process"]
        res = run_cli(["cleanup", copy], cephbench_env)
        assert res.returncode == 2 and "is a copy of a run directory in use" in res.stderr, res.stdout + res.stderr
        # without the copied lock file: the lock of the run's id, which the live run holds
        (copy / ".running").unlink()
        res = run_cli(["cleanup", copy], cephbench_env)
        assert res.returncode == 2, res.stdout + res.stderr
        [line] = res.stderr.splitlines()
        [run_id] = json.loads((copy / "run.json").read_text())["run_ids"]
        assert f"run {run_id} is being run right now by process {proc.pid}" in line, line
        # and without that either (its file unlinked): the run's marker names a live process of this host
        from cephbench.cluster.recovery import run_locks_dir
        (run_locks_dir() / f"{run_id}.lock").unlink()
        res = run_cli(["cleanup", copy], cephbench_env)
        assert res.returncode == 2, res.stdout + res.stderr
        [line] = res.stderr.splitlines()
        assert f"is still running (process {proc.pid}" in line, line
        alive = [t for t in tools if Path(f"/proc/{t.partition(':')[0]}").exists()]
        assert alive == tools, (tools, alive)
        assert {"noscrub", "nodeep-scrub"} <= set(mon_json("osd dump")["flags"].split(","))
        assert _option(mon_json, "osd", "osd_max_backfills") == "2"
        assert json.loads((copy / "resources.json").read_text()) == left
    finally:
        proc.send_signal(signal.SIGINT)         # the live run cleans up after itself
        _, err = proc.communicate(timeout=120)
        shutil.rmtree(copy, ignore_errors=True)
    assert proc.returncode in (0, 130), err
    assert json.loads((live / "resources.json").read_text()) == []
    assert _option(mon_json, "osd", "osd_max_backfills") is None
