"""What a dead run left: its processes (real ones, stopped by PID and start time), its run lock, its torn line."""

import json
import subprocess
import sys

import pytest

from cephbench.errors import UserError
from cephbench.recovery import (RunLock, how_to_remove, leftovers, process_start_ticks, process_tag,
                                remove_leftovers, stop_process_group)
from cephbench.resources import Resource
from cephbench.results import RunDir
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
                               "from cephbench.recovery import RunLock; RunLock.take(sys.argv[1]); print('held', "
                               "flush=True); time.sleep(30)", str(tmp_path), *sys.path], stdout=subprocess.PIPE,
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
              Resource("pool", "cephbench-1-g1-i0"), Resource("process", "999999:1")]
    (tmp_path / "resources.json").write_text(json.dumps([{"kind": r.kind, "name": r.name} for r in listed]))
    order = []

    def fails(r):
        order.append(r.kind)
        raise UserError("the mon said no")
    table = {k: (lambda r: order.append(r.kind)) for k in ("osd-flags", "pool", "process")} | {"ec-profile": fails}
    done, failed = remove_leftovers(tmp_path, table, passes=2, settle_s=0)
    # tools first, flags last; a failure makes a second pass over everything (a pool may land after removal)
    assert order == ["process", "pool", "ec-profile", "osd-flags"] * 2
    assert [r.kind for r in done] == ["process", "pool", "osd-flags"]
    assert [(r.kind, why) for r, why in failed] == [("ec-profile", "the mon said no")]
    assert leftovers(tmp_path) == [Resource("ec-profile", "cephbench-1-g1-ec")]     # never emptied blindly
    assert how_to_remove(failed[0][0]) == "ceph osd erasure-code-profile rm cephbench-1-g1-ec"
    assert how_to_remove(Resource("osd-flags", "noscrub,nodeep-scrub")) == \
        "ceph osd unset noscrub; ceph osd unset nodeep-scrub"
    (tmp_path / "resources.json").write_text("[{\"kind\": ")
    with pytest.raises(UserError, match="cannot be read"):
        leftovers(tmp_path)
