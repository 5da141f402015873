"""Issue 34: every kind of ledger entry carries a proof that the run made it, checked before `cleanup` removes or
undoes anything; an entry without its proof is refused in one line. The forgeries here are those of the fault trial
(a hand-edited resources.json and run.json) and others of the same class: edited state, another run's ids, entries
copied between run directories, a copy of a live run's directory."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cephbench.cluster import recovery
from cephbench.cluster.ceph import Cluster, Target
from cephbench.cluster.recovery import (PROOFS, RUN_ENV, Ownership, RunLock, process_resource, process_tag, remove_leftovers,
                                        save, leftovers)
from cephbench.core.errors import OperationFailed, UserError
from cephbench.core.resources import CONFIG_OPTION, KINDS, Ledger, Resource
from cephbench.core.stale import flag_history
from cephbench.kinds import LEDGER_KINDS, RESOURCE_TYPES
from cephbench.drivers.base import RunContext
from cephbench.lab import labdir
from cephbench.run import launch
from cephbench.suite.config import Settings

SRC = Path(__file__).resolve().parents[2] / "src" / "cephbench"


def test_every_kind_the_ledger_knows_has_a_proof_and_a_remover():
    # the core's own kinds each a proof here; a kind's resources theirs by their declaration (kinds/kind.py)
    assert set(PROOFS) == set(KINDS), set(KINDS) ^ set(PROOFS)
    assert LEDGER_KINDS == {*KINDS, *RESOURCE_TYPES} and not set(KINDS) & set(RESOURCE_TYPES)
    assert [k for k in LEDGER_KINDS if recovery.proof_of(k) is None] == []
    ctx = RunContext(cluster=Cluster(Target(Path("/dev/null"), None, None)), run_id="recovery", rundir=None,
                     ledger=Ledger(None), settings=Settings())
    assert set(launch.removers(ctx)) == set(LEDGER_KINDS)
    # every kind the code makes entries of, by literal or by name, is one the ledger knows
    literals = {m for p in SRC.rglob("*.py") for m in re.findall(r'Resource\(\s*"([a-z-]+)"', p.read_text())}
    from cephbench.hosts.clients import REMOTE_FILE
    from cephbench.hosts.remote_dirs import REMOTE_DIR
    from cephbench.run.shapes import LAB_SHAPE
    named = {REMOTE_FILE, REMOTE_DIR, LAB_SHAPE, CONFIG_OPTION, launch.SSH_CONTROL}
    assert literals | named <= set(KINDS), (literals | named) - set(KINDS)
    # a new kind without a proof cannot enter a ledger, nor a kind's resource one not given the kinds' declarations
    for ledger, kind in ((Ledger(None, kinds=LEDGER_KINDS), "snapshot"), (Ledger(None), "rbd-image")):
        with pytest.raises(ValueError, match="not a ledger kind"):
            ledger.add(Resource(kind, "cephbench-abc123-s"), lambda: None)


def test_a_kind_without_a_proof_is_refused(monkeypatch):
    monkeypatch.delitem(PROOFS, "pool")
    why = Ownership(("abc123",)).refusal(Resource("pool", "cephbench-abc123-g1"))
    assert why and "knows no proof" in why


def test_an_entry_of_another_run_is_refused_whatever_its_name():
    # copied from run ffffff's ledger, its name edited to this run's
    r = Resource("pool", "cephbench-abc123-g1", json.dumps({"run": "ffffff"}))
    assert "made by run ffffff, not this run" in Ownership(("abc123",)).refusal(r)
    assert Ownership(("abc123",)).refusal(Resource("pool", "cephbench-abc123-g1", json.dumps({"run": "abc123"}))) \
        is None


def test_the_ledger_stamps_the_run_on_each_entry_and_records_each_value_an_option_took(tmp_path):
    ledger = Ledger(tmp_path / "resources.json", run_id="abc123")
    opt = Resource(CONFIG_OPTION, '{"who":"osd","name":"osd_max_backfills","previous":null}',
                   json.dumps({"config_version_before": 4, "set_to": ["2"]}))
    ledger.add(opt, lambda: None)
    ledger.record_value(opt, "set_to", "4")
    ledger.record_value(opt, "set_to", "2")
    [entry] = json.loads((tmp_path / "resources.json").read_text())
    assert entry["state"] == {"config_version_before": 4, "set_to": ["2", "4"], "run": "abc123"}


def test_cleanup_on_another_cluster_refuses_everything_cluster_side_in_one_line(tmp_path):
    owned = Ownership(("abc123",), str(tmp_path), {}, fsids=("aaaa-1",), cluster_fsid="bbbb-2")
    left = [Resource("osd-flags", "noscrub,nodeep-scrub"), Resource("pool", "cephbench-abc123-g1")]
    with pytest.raises(UserError) as exc:
        launch.check_cleanable(tmp_path, owned, left)
    assert "ran on cluster aaaa-1, and this is cluster bbbb-2" in exc.value.one_line()
    assert "\n" not in exc.value.one_line()
    for r in left:          # and each entry alone, were it asked
        assert "this is cluster bbbb-2" in owned.refusal(r)
    old = Ownership(("abc123",), str(tmp_path), {}, fsids=(), cluster_fsid="bbbb-2")
    assert "records no cluster fsid" in old.refusal(left[1])
    # what is not on a cluster (a tool process, a baseline's file) does not need it
    launch.check_cleanable(tmp_path, owned, [Resource("disk-file", "localhost:/o/cephbench-abc123-baseline.dat")])


def test_the_recorded_fsids_are_the_runs_cluster_and_each_lab_builds():
    meta = {"cluster": {"status": {"fsid": "f0"}}, "lab_shapes": {"a": {"cluster": {"status": {"fsid": "f1"}}},
                                                                  "b": {"cluster": {"status": {"error": "x"}}}}}
    assert launch.recorded_fsids(meta) == ("f0", "f1")
    assert launch.recorded_fsids({"cluster": {"error": "x"}, "lab_shapes": "edited"}) == ()


MARKER = {"run_dir": None, "host": "h", "pid": 1, "started_unix": 0}


def _owned(tmp_path, **marker) -> Ownership:
    return Ownership(("abc123",), str(tmp_path), {"abc123": {**MARKER, "run_dir": str(tmp_path), **marker}})


def test_a_flag_is_undone_only_when_the_runs_marker_claims_it(tmp_path):
    state = json.dumps({"run": "abc123", "osdmap_epoch_before": 40})
    ours = Resource("osd-flags", "noscrub,nodeep-scrub", state)
    assert _owned(tmp_path, scrub_flags=["noscrub", "nodeep-scrub"]).refusal(ours) is None
    assert _owned(tmp_path, scrub_letting_go=["noscrub", "nodeep-scrub"]).refusal(ours) is None
    # the trial's forgery: an entry naming the user's noout, with or without a state that looks right
    for forged in (Resource("osd-flags", "noout"), Resource("osd-flags", "noout", state),
                   Resource("osd-flags", "noscrub,noout", state)):
        why = _owned(tmp_path, scrub_flags=["noscrub", "nodeep-scrub"]).refusal(forged)
        assert why and why.startswith(f"refused to remove osd-flags {forged.name}: "), why
    # no marker on the cluster (another run's ids, a run long cleaned up), or markers that could not be read
    assert "no run marker cephbench/runs/abc123" in Ownership(("abc123",), str(tmp_path), {}).refusal(ours)
    assert "could not be read" in Ownership(("abc123",), str(tmp_path), None).refusal(ours)
    # a copy of the run directory: the marker names the original
    assert "not this directory" in Ownership(("abc123",), str(tmp_path / "copy"), {"abc123": {
        **MARKER, "run_dir": str(tmp_path), "scrub_flags": ["noscrub", "nodeep-scrub"]}}).refusal(ours)


def test_a_flag_set_in_the_epoch_the_run_says_it_saw_it_missing_is_not_the_runs():
    base = "sortbitwise,recovery_deletes"
    # the user's noout since 10; a forged entry says the run saw it missing at 12
    history = {12: base + ",noout", 13: base + ",noout", 14: base + ",noout"}
    v = flag_history(["noout"], 12, lambda e: {"epoch": 14 if e is None else e, "flags": history[14 if e is None else e]})
    assert v.ours == [] and "already set in osdmap 12" in v.doubt


def test_an_option_is_undone_only_when_the_runs_marker_claims_it(tmp_path):
    name = '{"who":"global","name":"osd_recovery_sleep","previous":null}'
    state = json.dumps({"run": "abc123", "config_version_before": 9, "set_to": ["0"]})
    assert _owned(tmp_path, options=[["global", "osd_recovery_sleep"]]).refusal(
        Resource(CONFIG_OPTION, name, state)) is None
    # the trial's forgery: the user's osd_recovery_sleep, in a ledger whose run's marker claims no such option
    for forged in (Resource(CONFIG_OPTION, name), Resource(CONFIG_OPTION, name, state)):
        why = _owned(tmp_path, options=[["osd", "osd_max_backfills"]]).refusal(forged)
        assert why and "osd_recovery_sleep" in why, why
    # an entry of an older cephbench: no value the run set
    old = json.dumps({"run": "abc123", "config_version_before": 9})
    assert "no value the run set" in _owned(tmp_path, options=[["global", "osd_recovery_sleep"]]).refusal(
        Resource(CONFIG_OPTION, name, old))
    # mon_allow_pool_delete: claimed by the marker's pool_delete
    pd = Resource(CONFIG_OPTION, '{"who":"mon","name":"mon_allow_pool_delete","previous":null}',
                  json.dumps({"run": "abc123", "config_version_before": 9, "set_to": ["true"]}))
    assert _owned(tmp_path, pool_delete={"previous": None}).refusal(pd) is None
    assert _owned(tmp_path).refusal(pd) is not None


def test_a_process_is_stopped_only_when_its_start_time_and_command_line_are_as_recorded(tmp_path):
    user = subprocess.Popen(["sleep", "31"], start_new_session=True)
    tool = subprocess.Popen(["sleep", "32"], start_new_session=True, env={**os.environ, RUN_ENV: "abc123"})
    try:
        owned = Ownership(("abc123",), str(tmp_path), started_unix=0)
        recorded = process_resource(tool.pid)
        assert json.loads(recorded.state)["cmdline"] == ["sleep", "32"]
        # recorded by this process, which still runs: the run that started it is alive
        assert "still runs" in owned.refusal(recorded)
        dead_run = Resource("process", recorded.name, json.dumps({"cmdline": ["sleep", "32"], "by": "1:0"}))
        assert owned.refusal(dead_run) is None
        # the trial's forgery: the user's process, by its PID and start time, with or without its command line
        for state in ("", json.dumps({"cmdline": ["sleep", "31"], "by": "1:0"}), json.dumps({"by": "1:0"})):
            forged = Resource("process", process_tag(user.pid), state)
            why = owned.refusal(forged)
            assert why and why.startswith(f"refused to remove process {forged.name}: "), (state, why)
        assert "carries no CEPHBENCH_RUN of this run" in owned.refusal(
            Resource("process", process_tag(user.pid), json.dumps({"cmdline": ["sleep", "31"], "by": "1:0"})))
        # the tool of another run, its entry copied here with this run's id in its state
        assert "carries no CEPHBENCH_RUN" in Ownership(("ffffff",), str(tmp_path), started_unix=0).refusal(dead_run)
        assert not recovery.stop_process_group(process_tag(user.pid) + "1")       # another start time: untouched
        # a process that started before the run did
        assert "before the run did" in Ownership(("abc123",), str(tmp_path), started_unix=time.time() + 60
                                                 ).refusal(dead_run)
        # a cephbench process that still runs as the tool's parent: a live run (a copy of its directory), however
        # its ledger entry was edited; once it died, the orphaned tool is the dead run's to stop
        script = tmp_path / "cephbench"
        script.write_text("import subprocess, time\np = subprocess.Popen(['sleep', '33'], start_new_session=True)\n"
                          "print(p.pid, flush=True)\ntime.sleep(30)\n")
        run = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, RUN_ENV: "abc123"})
        pid = int(run.stdout.readline())
        try:
            orphan = Resource("process", process_tag(pid), json.dumps({"cmdline": ["sleep", "33"], "by": "1:0"}))
            assert f"(process {run.pid}) still runs" in owned.refusal(orphan)
            run.kill()
            run.wait()
            assert owned.refusal(orphan) is None
        finally:
            run.kill()
            run.wait()
            subprocess.run(["kill", str(pid)])
    finally:
        for p in (user, tool):
            p.kill()
            p.wait()
    assert user.returncode == -9            # nothing but this test stopped the user's process


def test_a_lab_shape_is_put_back_only_in_a_lab_directory_that_holds_the_runs_claim(tmp_path):
    lab, victim = tmp_path / "lab", tmp_path / "victim"
    for d in (lab, victim):
        labdir.claim(d)
    run = tmp_path / "run"
    ours = Resource("lab-shape", json.dumps({"dir": str(lab), "original": None}))
    labdir.claim_shape(lab, "abc123", str(run), ours.name)
    owned = Ownership(("abc123",), str(run))
    assert owned.refusal(ours) is None
    # the build to put back edited in the ledger: the claim records the run's own
    edited = Resource("lab-shape", json.dumps({"dir": str(lab), "original": {"osds": 1}}))
    assert "the entry was edited" in owned.refusal(edited)
    # the trial's forgery: another lab, which the run never touched
    forged = Resource("lab-shape", json.dumps({"dir": str(victim)}))
    assert "holds no claim of this run" in owned.refusal(forged)
    # a claim of another run, or of the same run id in another directory (a copy of the run directory)
    labdir.claim_shape(victim, "ffffff", str(run), forged.name)
    assert "holds no claim of this run" in owned.refusal(forged)
    assert "shaped by the run in" in Ownership(("abc123",), str(tmp_path / "copy")).refusal(ours)
    assert "names no lab directory" in owned.refusal(Resource("lab-shape", json.dumps({"dir": "relative"})))
    # the claim survives the lab's rebuild (not one of the lab's entries) and goes with the put-back
    assert labdir.is_empty(tmp_path / "nothing") and labdir.foreign(labdir.read(lab)) == []
    labdir.remove(labdir.read(lab))
    assert labdir.is_empty(lab) and labdir.shaped_by(lab)["run"] == "abc123"
    labdir.release_shape(lab, "abc123")
    assert not lab.exists()


def test_a_live_run_is_never_cleaned_through_a_copy_of_its_directory(tmp_path):
    live = tmp_path / "live"
    live.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.path[:0] = sys.argv[2:];"
                               "from cephbench.cluster.recovery import RunLock; RunLock.take(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(30)", str(live), *sys.path],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        copy = tmp_path / "copy"
        subprocess.run(["cp", "-a", str(live), str(copy)], check=True)
        with pytest.raises(UserError, match=f"copy of a run directory in use: its lock file names process "
                                            f"{holder.pid}"):
            RunLock.take(copy)
        # its marker on the cluster names a process of this host that still runs (the lock file deleted)
        import socket
        owned = Ownership(("abc123",), str(copy), {"abc123": {"run_dir": str(live), "host": socket.gethostname(),
                                                              "pid": holder.pid, "started_unix": time.time()}})
        assert f"process {holder.pid}" in owned.alive()
        # a marker of this cephbench names the process by its start time too: no wall clock involved
        ticks = recovery.process_start_ticks(holder.pid)
        by_ticks = Ownership(("abc123",), str(copy), {"abc123": {"run_dir": str(live), "host": socket.gethostname(),
                                                                 "pid": holder.pid, "pid_started": ticks,
                                                                 "started_unix": 0}})
        assert f"process {holder.pid}" in by_ticks.alive()
        reused = Ownership(("abc123",), str(copy), {"abc123": {"host": socket.gethostname(), "pid": holder.pid,
                                                               "pid_started": ticks + 1, "started_unix": 0}})
        assert reused.alive() is None           # the PID is another process's now
        ctx = RunContext(cluster=Cluster(Target(Path("/dev/null"), None, None)), run_id="abc123", rundir=None,
                         ledger=Ledger(None), settings=Settings())
        assert json.loads(ctx.marker_value())["pid_started"] == recovery.process_start_ticks(os.getpid())
        with pytest.raises(UserError, match="is still running"):
            launch.check_cleanable(copy, owned, [])
    finally:
        holder.kill()
        holder.wait()
    RunLock.take(copy).release()            # its process is gone: a dead run's copy may be cleaned
    assert owned.alive() is None


def test_refused_entries_stay_listed_and_the_marker_stays_while_anything_failed(tmp_path):
    listed = [Resource("config-key", "cephbench/runs/abc123"), Resource("pool", "cephbench-abc123-g1"),
              Resource("osd-flags", "noout")]
    save(tmp_path, listed)
    removed = []

    def pool(r):
        raise OperationFailed("mon busy")
    done, failed = remove_leftovers(tmp_path, {"pool": pool, "config-key": lambda r: removed.append(r.name),
                                               "osd-flags": lambda r: removed.append(r.name)},
                                    passes=1, settle_s=0, owned=_owned(tmp_path, scrub_flags=["noscrub"]))
    assert removed == [] and done == []
    assert {r.kind for r, _ in failed} == {"pool", "osd-flags"}
    assert leftovers(tmp_path) == listed


def test_a_copy_of_a_live_run_directory_without_its_lock_file_is_refused_by_the_run_id(tmp_path):
    live = tmp_path / "live"
    live.mkdir()
    (live / "run.json").write_text(json.dumps({"run_ids": ["abc123"]}))
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.path[:0] = sys.argv[2:];"
                               "from cephbench.cluster.recovery import RunLock; RunLock.take(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(30)", str(live), *sys.path],
                              stdout=subprocess.PIPE, text=True)
    copy = tmp_path / "copy"
    try:
        assert holder.stdout.readline().strip() == "held"
        subprocess.run(["cp", "-a", str(live), str(copy)], check=True)
        (copy / ".running").unlink()
        with pytest.raises(UserError, match=f"run abc123 is being run right now by process {holder.pid}"):
            RunLock.take(copy)
        assert not (copy / ".running").exists()     # refused: the copy's own lock was let go again
    finally:
        holder.kill()
        holder.wait()
    RunLock.take(copy).release()


def test_a_directory_is_removed_only_where_cephbench_makes_it_and_as_it_makes_it(tmp_path):
    import tempfile
    owned = Ownership(("abc123",))
    ctl = Path(tempfile.mkdtemp(prefix="cephbench-ssh-"))
    try:
        assert owned.refusal(Resource("ssh-control", str(ctl))) is None
        (ctl / "thesis.tex").write_text("mine")         # a user's file in it: not ssh's sockets
        assert "holds more than ssh's sockets" in owned.refusal(Resource("ssh-control", str(ctl)))
    finally:
        (ctl / "thesis.tex").unlink()
        ctl.rmdir()
    for forged in (Resource("ssh-control", str(tmp_path / "cephbench-ssh-x")),
                   Resource("remote-dir", "h:/home/u/cephbench-abc123-thesis"),
                   Resource("remote-dir", "h:/tmp/x/cephbench-abc123-c1")):
        why = owned.refusal(forged)
        assert why and why.startswith(f"refused to remove {forged.kind} {forged.name}: "), forged
    assert owned.refusal(Resource("remote-dir", "10.0.0.2:/tmp/cephbench-abc123-c1-001")) is None


def test_an_exiting_tool_is_let_go_only_when_its_process_group_is_the_runs(tmp_path):
    """A tool's `sh -c` left a zombie by the run's kill -9 reads an empty command line (the lab's disk baseline):
    what its group still holds is what the remover signals, so that must carry the run's id."""
    def zombie_leader(env):
        # the leader exits at once and stays a zombie (this test does not wait for it); its child keeps the group
        return subprocess.Popen(["sh", "-c", "sleep 30 & exit 0"], start_new_session=True, env=env)
    ours = zombie_leader({**os.environ, RUN_ENV: "abc123"})
    theirs = zombie_leader({k: v for k, v in os.environ.items() if k != RUN_ENV})
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(
                (recovery._stat(p.pid) or ["?"])[0] == "Z" for p in (ours, theirs)):
            time.sleep(0.02)
        owned = Ownership(("abc123",), str(tmp_path), started_unix=0)
        state = json.dumps({"cmdline": ["sh", "-c", "sleep 30 & exit 0"], "by": "1:0"})
        assert owned.refusal(Resource("process", process_tag(ours.pid), state)) is None
        why = owned.refusal(Resource("process", process_tag(theirs.pid), state))
        assert why and "holds processes not started by this run" in why
    finally:
        for p in (ours, theirs):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
