"""What a dead run left: its processes (real ones, stopped by PID and start time), its run lock, its torn line."""

import json
import os
import re
import subprocess
import sys
import time

import pytest

from cephbench.core.errors import OperationFailed, UserError
from cephbench.cluster.recovery import (Ownership, Refusal, RunLock, how_to_remove, leftovers, process_start_ticks,
                                process_tag, remove_leftovers, save, stop_process_group)
from cephbench.core.stale import flag_history, option_history
from cephbench.core.resources import Resource
from cephbench.core.results import RunDir
from test_results_and_units import _result


def test_a_recorded_tool_process_is_stopped_and_a_reused_pid_is_not():
    p = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        tag = process_tag(p.pid)
        pid, ticks = tag.split(":")
        assert int(pid) == p.pid and int(ticks) == process_start_ticks(p.pid) > 0
        # the same PID with another start time is someone else's process: left alone
        assert stop_process_group(f"{p.pid}:{int(ticks) + 1}") is False
        assert p.poll() is None
        assert stop_process_group(tag) is True
        assert p.wait(timeout=5) == -15
        assert stop_process_group(tag) is False      # gone: nothing to do
    finally:
        if p.poll() is None:
            p.kill()


def test_a_live_run_holds_its_directory(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.path[:0] = sys.argv[2:];"
                               "from cephbench.cluster.recovery import RunLock; RunLock.take(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(30)", str(tmp_path), *sys.path], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(UserError, match=f"being run right now by process {holder.pid}"):
            RunLock.take(tmp_path)
    finally:
        holder.kill()
        holder.wait()
    lock = RunLock.take(tmp_path)       # the kernel dropped the dead holder's lock
    lock.release()


def test_a_torn_last_line_is_set_aside_not_appended_to(tmp_path):
    rd = RunDir.create(tmp_path / "run", {"suite_name": "x"})
    rd.append(_result(1))
    whole = rd.results_jsonl.read_text()
    with open(rd.results_jsonl, "a") as f:
        f.write(whole[: len(whole) // 2])           # kill -9 in the middle of the second line
    results, bad = rd.results()
    assert [r.test.id for r in results] == ["001-x"] and len(bad) == 1
    rd.append(_result(2))
    results, bad = rd.results()
    assert [r.test.id for r in results] == ["001-x", "002-x"] and bad == []
    assert rd.torn_jsonl.read_text() == whole[: len(whole) // 2] + "\n"
    assert rd.set_aside_torn_tail() is None


def test_leftovers_are_removed_in_a_safe_order_and_failures_stay_listed(tmp_path):
    listed = [Resource("osd-flags", "noscrub,nodeep-scrub"), Resource("ec-profile", "cephbench-1-g1-ec"),
              Resource("pool", "cephbench-1-g1-i0"), Resource("process", "999999:1"),
              Resource("config-key", "cephbench/runs/1")]
    (tmp_path / "resources.json").write_text(json.dumps([{"kind": r.kind, "name": r.name} for r in listed]))
    order = []

    def fails(r):
        order.append(r.kind)
        raise UserError("the mon said no")
    table = {k: (lambda r: order.append(r.kind)) for k in ("osd-flags", "pool", "process", "config-key")} | {
        "ec-profile": fails}
    done, failed = remove_leftovers(tmp_path, table, passes=2, settle_s=0)
    # tools first, flags last; a failure makes a second pass over everything (a pool may land after removal)
    assert order == ["process", "pool", "ec-profile", "osd-flags"] * 2
    assert [r.kind for r in done] == ["process", "pool", "osd-flags"]
    assert [(r.kind, why) for r, why in failed] == [("ec-profile", "the mon said no")]
    # never emptied blindly; the run marker stays while anything else does (the next cleanup checks names by it)
    assert leftovers(tmp_path) == [Resource("ec-profile", "cephbench-1-g1-ec"),
                                   Resource("config-key", "cephbench/runs/1")]
    assert how_to_remove(failed[0][0]) == "ceph osd erasure-code-profile rm cephbench-1-g1-ec"
    assert how_to_remove(Resource("osd-flags", "noscrub,nodeep-scrub")) == \
        "ceph osd unset noscrub; ceph osd unset nodeep-scrub"
    (tmp_path / "resources.json").write_text("[{\"kind\": ")
    with pytest.raises(UserError, match="cannot be read"):
        leftovers(tmp_path)


@pytest.mark.parametrize("text, says", [
    ("nope", "cannot be read"),
    ('""', "holds a JSON str, not a list"),
    ('{"kind": "pool", "name": "x"}', "holds a JSON dict, not a list"),
    ("[1]", "entry 1 is a JSON int, not an object"),
    ('[{"kind": "pool"}]', "entry 1 has no 'name'"),
    ('[{"name": "x"}]', "entry 1 has no 'kind'"),
    ('[{"kind": "pool", "name": ["x"]}]', "entry 1: 'name' is [\"x\"], not a name"),
    ('[{"kind": 1, "name": "x"}]', "entry 1: 'kind' is 1, not a name"),
    ('[{"kind": "pool", "name": "a"}, {"kind": "config-option", "name": "zz"}]', "entry 2: config-option 'zz' is "
                                                                                  "not a record cephbench wrote"),
    ('[{"kind": "lab-shape", "name": "{}"}]', "entry 1: lab-shape '{}' is not a record cephbench wrote"),
])
def test_a_malformed_resources_json_is_one_line_and_exit_2(tmp_path, text, says):
    from clirun import cephbench
    rd = RunDir.create(tmp_path / "run", {"suite_name": "x", "run_ids": ["abc123"],
                                          "target": {"conf": str(tmp_path / "ceph.conf")}})
    (rd.path / "resources.json").write_text(text)
    with pytest.raises(UserError, match="resources.json " + re.escape(says)):
        leftovers(rd.path)
    res = cephbench("cleanup", rd.path)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1 and says in res.stderr, res.stderr


def test_only_what_carries_the_runs_name_and_marker_is_removed(tmp_path):
    here = str(tmp_path)
    owned = Ownership(("abc123", "def456"), here,
                      {"abc123": {"run_dir": here}, "def456": {"run_dir": "/elsewhere/run"}},
                      image_of={"/dev/rbd0": "cephbench-abc123-g1-img0", "/dev/rbd1": "userimg"}.get)
    ours = [Resource("pool", "cephbench-abc123-g001"), Resource("ec-profile", "cephbench-abc123-g001-ec"),
            Resource("rbd-image", "cephbench-abc123-g1/cephbench-abc123-g1-img0"),
            Resource("rbd-mapping", "/dev/rbd0"), Resource("rgw-user", "cephbench-abc123-rgw"),
            Resource("config-key", "cephbench/runs/abc123"),
            Resource("disk-file", "localhost:/o/cephbench-abc123-baseline.dat"),
            Resource("remote-dir", "10.0.0.2:/tmp/cephbench-abc123-c1-001"),
            Resource("remote-file", "10.0.0.2:/root/.cache/cephbench/bin/cephbench-abc123-loadgen-0123abcd"),
            Resource("ssh-control", "/tmp/cephbench-ssh-x1y2")]
    assert [owned.refusal(r) for r in ours] == [None] * len(ours)
    theirs = [Resource("pool", "hbvictim"), Resource("pool", "cephbench-999999-g001"),
              Resource("rbd-image", "rbd/userimg"), Resource("rbd-mapping", "/dev/rbd1"),
              Resource("config-key", "cephbench/runs/999999"), Resource("config-key", "mgr/dashboard/key"),
              Resource("disk-file", "localhost:/home/u/thesis.tex"), Resource("remote-dir", "h:/tmp/cephbench-zz"),
              Resource("remote-file", "h:/home/u/.bashrc"), Resource("ssh-control", "/home/u"),
              Resource("remote-file", "h:/root/.cache/cephbench/bin/cephbench-loadgen-0123abcd"),   # shared
              Resource("pool", "cephbench-def456-g001")]       # its marker names another run directory
    for r in theirs:
        assert (owned.refusal(r) or "").startswith(f"refused to remove {r.kind} {r.name}: "), r
    assert "says run def456 is /elsewhere/run" in owned.refusal(theirs[-1])
    # a process that started before the run did is not its tool (test_recovery_proofs.py: the other proofs)
    p = subprocess.Popen(["sleep", "30"], start_new_session=True, env={**os.environ, "CEPHBENCH_RUN": "abc123"})
    try:
        tool = Resource("process", process_tag(p.pid), json.dumps({"cmdline": ["sleep", "30"], "by": "1:0"}))
        assert Ownership(("abc123",), started_unix=time.time() + 3600).refusal(tool) is not None
        assert Ownership(("abc123",), started_unix=0).refusal(tool) is None
    finally:
        p.kill()
        p.wait()


def test_a_forged_entry_is_refused_and_stays_listed_while_the_runs_own_go(tmp_path):
    listed = [Resource("pool", "cephbench-abc123-g1"), Resource("pool", "hbvictim")]
    save(tmp_path, listed)
    removed = []
    done, failed = remove_leftovers(tmp_path, {"pool": lambda r: removed.append(r.name)}, passes=3, settle_s=0,
                                    owned=Ownership(("abc123",)))
    assert removed == ["cephbench-abc123-g1"] and done == listed[:1]
    assert [(r.name, isinstance(why, Refusal)) for r, why in failed] == [("hbvictim", True)]
    assert leftovers(tmp_path) == [Resource("pool", "hbvictim")]


def _dumps(history: dict[int, str]):
    last = max(history)

    def dump(epoch):
        if epoch is not None and epoch not in history:
            raise OperationFailed(f"osdmap {epoch} not found (trimmed)")
        e = last if epoch is None else epoch
        return {"epoch": e, "flags": history[e]}
    return dump


def test_a_flag_is_the_runs_only_if_it_stayed_set_since_the_run_set_it():
    base = "sortbitwise,recovery_deletes,purged_snapdirs,pglog_hardlimit"
    # the run saw them missing at 10, set them at 11; pools came and went
    ran = {10: base, 11: base + ",noscrub,nodeep-scrub", 12: base + ",noscrub,nodeep-scrub",
           13: base + ",noscrub,nodeep-scrub"}
    v = flag_history(["noscrub", "nodeep-scrub"], 10, _dumps(ran))
    assert v.ours == ["noscrub", "nodeep-scrub"] and not v.others and v.doubt is None
    # a person unset both by hand (14, 15), then set noscrub again (16): it is theirs now
    later = {**ran, 14: base + ",nodeep-scrub", 15: base, 16: base + ",noscrub"}
    v = flag_history(["noscrub", "nodeep-scrub"], 10, _dumps(later))
    assert v.ours == [] and v.gone == ["nodeep-scrub"] and v.others == {"noscrub": 14}
    # the mon no longer has the osdmaps in between: a person decides
    v = flag_history(["noscrub"], 10, _dumps({k: later[k] for k in (10, 16)}))
    assert v.ours == [] and "osdmap 11" in v.doubt
    assert "records no osdmap epoch" in flag_history(["noscrub"], 0, _dumps(later)).doubt


# `ceph config log 4 -f json` of Ceph 16.2.15 (the lab) after `config set osd osd_max_backfills 3`, `config set
# global osd_recovery_sleep 0.25` and their `config rm`: newest first, a removal has no new_value
CONFIG_LOG = [
    {"version": 6, "timestamp": "2026-11-25T19:01:48.245671+0000", "name": "",
     "changes": [{"name": "global/osd_recovery_sleep", "previous_value": "0.250000"}]},
    {"version": 5, "timestamp": "2026-11-25T19:01:47.659946+0000", "name": "",
     "changes": [{"name": "osd/osd_max_backfills", "previous_value": "3"}]},
    {"version": 4, "timestamp": "2026-11-25T19:01:47.349457+0000", "name": "",
     "changes": [{"name": "global/osd_recovery_sleep", "new_value": "0.250000"}]},
    {"version": 3, "timestamp": "2026-11-25T19:01:46.791462+0000", "name": "",
     "changes": [{"name": "osd/osd_max_backfills", "new_value": "3"}]},
]


def _log(entries):
    def read(n):
        return sorted(entries, key=lambda c: -c["version"])[:n]
    return read


def test_an_option_is_the_runs_only_if_nobody_put_it_back_since():
    # the run recorded version 2, then set osd_max_backfills (3)
    v = option_history("osd", "osd_max_backfills", None, 2, _log(CONFIG_LOG[3:]))
    assert v.ours and v.versions == [3] and v.before is None
    # over a value that was there (config log names it): what an entry's "previous" must say
    over = {"version": 3, "timestamp": "", "name": "", "changes": [{"name": "osd/osd_max_backfills",
                                                                     "previous_value": "1", "new_value": "3"}]}
    assert option_history("osd", "osd_max_backfills", "1", 2, _log([over])).before == "1"
    # ... and it was removed by hand since (5): nothing left to restore
    v = option_history("osd", "osd_max_backfills", None, 2, _log(CONFIG_LOG))
    assert not v.ours and v.doubt is None and "already put back (config version 5)" in v.note
    # ... then the user set their own value: theirs
    mine = {"version": 7, "timestamp": "", "name": "", "changes": [{"name": "osd/osd_max_backfills",
                                                                     "new_value": "7"}]}
    v = option_history("osd", "osd_max_backfills", None, 2, _log([mine, *CONFIG_LOG]))
    assert not v.ours and "changed again since, not by this run" in v.note
    assert option_history("global", "osd_recovery_sleep", None, 2, _log(CONFIG_LOG[2:])).ours
    # a history the mon no longer keeps, or an entry without a version: a person decides
    assert "no longer kept" in option_history("osd", "osd_max_backfills", None, 2, _log(CONFIG_LOG[:2])).doubt
    assert "records no config version" in option_history("osd", "osd_max_backfills", None, None, _log([])).doubt


def test_kill_9_during_a_disk_baseline_then_cleanup_leaves_no_test_file(tmp_path):
    """`cephbench baseline disk` (no cluster): its test file enters resources.json before fio writes it."""
    from clirun import cephbench
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "cephbench.cli", "baseline", "disk", str(disk), "--size", "64MiB",
                             "--runtime", "30s", "--pattern", "read-4MiB", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline, files = time.monotonic() + 60, []
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                files = [r.name.partition(":")[2] for r in leftovers(out) if r.kind == "disk-file"]
            except UserError:       # caught between its write and its rename
                files = []
            if files and all(os.path.exists(f) and os.path.exists(f + ".pid") for f in files):
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
    [file] = files
    assert os.path.dirname(file) == str(disk)
    fio = int(open(file + ".pid").read())
    res = cephbench("cleanup", out)
    assert res.returncode == 0 and "removed disk-file localhost:" in res.stdout, res.stdout + res.stderr
    assert os.listdir(disk) == [] and leftovers(out) == []
    assert process_start_ticks(fio) is None             # the orphaned fio was stopped by its PID file


def test_a_dead_runs_allow_pool_delete_is_put_back_only_once_its_pools_went(tmp_path):
    """--allow-pool-delete's option false again would make the monitors refuse the next pass's pool deletion."""
    option = Resource("config-option", '{"who":"mon","name":"mon_allow_pool_delete","previous":"false"}')
    listed = [option, Resource("pool", "cephbench-1-g1-i0")]
    (tmp_path / "resources.json").write_text(json.dumps([{"kind": r.kind, "name": r.name} for r in listed]))
    order: list[str] = []
    pool_tries = iter([False, True])

    def pool(r):
        order.append("pool")
        if not next(pool_tries):
            raise UserError("pool cephbench-1-g1-i0 is busy")
    done, failed = remove_leftovers(tmp_path, {"pool": pool, "config-option": lambda r: order.append("option")},
                                    passes=3, settle_s=0)
    assert order == ["pool", "pool", "option"]
    assert [r.kind for r in done] == ["pool", "config-option"] and failed == []
    assert leftovers(tmp_path) == []
    # a pool that cannot go at all: the option stays set and listed, saying why
    (tmp_path / "resources.json").write_text(json.dumps([{"kind": r.kind, "name": r.name} for r in listed]))
    done, failed = remove_leftovers(tmp_path, {"pool": lambda r: pool_fails(), "config-option": lambda r: None},
                                    passes=2, settle_s=0)
    assert done == [] and [r.kind for r, _ in failed] == ["pool", "config-option"]
    assert "kept until the run's pools are removed" in failed[1][1]
    assert {r.kind for r in leftovers(tmp_path)} == {"pool", "config-option"}


def pool_fails():
    raise UserError("the monitors refuse 'ceph osd pool delete': mon_allow_pool_delete is false")
