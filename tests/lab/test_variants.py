"""Variants on the real lab: each result records its variant and what every OSD ran with; the configuration
database afterwards is what it was before, after a clean run, SIGINT or SIGTERM mid-variant, and kill -9 followed
by `cephbench cleanup` or `--resume`; bad options are refused before anything changes.

The signals are aimed with the monitor's log, as in test_signals.py: the test follows ceph-mon.a.log and sends the
signal the moment the mon handles the command (`config set` of a variant, `config rm` of a restore, the pool of the
second variant's group)."""

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cephbench.core.results import RunDir

from labcli import CLI, cli_here, run_cli, write_suite, tool_processes
from test_signals import run_and_signal_when, snapshot

# osd_max_backfills and osd_recovery_sleep change at runtime and touch no client I/O path; `b` leaves the sleep
# alone, so going from a to b restores it (config rm) in the middle of the run
VARIANTS = """
name: var
variants:
  - name: a
    options: [{who: osd, name: osd_max_backfills, value: 2}, {who: osd, name: osd_recovery_sleep, value: 0.25}]
  - name: b
    options: [{who: osd, name: osd_max_backfills, value: 3}]
workloads:
  - {name: rados, type: rados_bench, modes: [write], object_size: 64KiB, concurrency: 4, duration: 1s}
"""


def config(mon_json) -> list:
    return sorted((c["section"], c["mask"], c["name"], c["value"]) for c in mon_json("config dump"))


def signal_at(args, env, mon_log: Path, command: str, sig: int, nth: int = 1, timeout: float = 180):
    """Start the CLI; send `sig` when the mon handles the `nth` command with this prefix (`config set` has no
    audit line, so the handler's own log line is followed)."""
    # the mon logs a command as [{prefix=config set, ...}] or as its JSON, {"prefix": "config rm", ...}
    pattern = re.compile(r'handle_command mon_command\((?:\[\{prefix=|\{"prefix": ")' + re.escape(command) + r'[",}]')
    return run_and_signal_when(args, env, mon_log, pattern, sig, nth, timeout)


def test_each_result_records_its_variant_and_the_configuration_is_put_back(lab, mon_json, cephbench_env, tmp_path):
    before = snapshot(mon_json, cephbench_env)
    suite = write_suite(tmp_path, VARIANTS)
    dry = cli_here(["run", suite, "--dry-run"], cephbench_env)
    assert dry.returncode == 0, dry.stderr
    lines = [ln.strip() for ln in dry.stdout.splitlines()]
    changes = [ln for ln in lines if ln.startswith("ceph config ")]
    assert changes == ["ceph config set osd osd_max_backfills 2", "ceph config set osd osd_recovery_sleep 0.25",
                       "ceph config rm osd osd_recovery_sleep", "ceph config set osd osd_max_backfills 3",
                       "ceph config rm osd osd_max_backfills"], dry.stdout
    assert snapshot(mon_json, cephbench_env) == before            # a dry run changes nothing

    res = run_cli(["run", suite, "--out", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    assert snapshot(mon_json, cephbench_env) == before
    results, _ = RunDir.open(tmp_path / "run").results()
    assert [(r.test.variant, r.status) for r in results] == [("a", "ok"), ("b", "ok")]
    a, b = (r.variant for r in results)
    osds = {f"osd.{i}" for i in range(3)}
    assert a.name == "a" and [(o.name, o.value, o.previous) for o in a.options] == [
        ("osd_max_backfills", "2", None), ("osd_recovery_sleep", "0.250000", None)]
    assert all(set(o.reported) == osds and set(o.reported.values()) == {o.value} for o in a.options)
    assert b.name == "b" and b.options[0].reported == {d: "3" for d in osds}
    assert json.loads((tmp_path / "run" / "resources.json").read_text()) == []


@pytest.mark.parametrize("command, nth, sig", [
    ("config set", 1, signal.SIGINT),          # variant a's first option being set
    ("config rm", 1, signal.SIGTERM),          # a's sleep restored on the way to b
], ids=lambda v: str(v).replace(" ", "-") if isinstance(v, str) else str(v))
def test_a_signal_mid_variant_leaves_the_configuration_as_it_was(lab, mon_json, cephbench_env, tmp_path,
                                                                 command, nth, sig):
    before = snapshot(mon_json, cephbench_env)
    rc, aimed, _, err = signal_at(["run", write_suite(tmp_path, VARIANTS), "--out", tmp_path / "run"],
                                  cephbench_env, lab.dir / "log" / "ceph-mon.a.log", command, sig, nth)
    assert aimed, f"the mon never handled {command!r} #{nth}: {err}"
    assert "Traceback" not in err and "could not remove" not in err, err
    assert rc == 130, (rc, err)
    assert snapshot(mon_json, cephbench_env) == before
    assert json.loads((tmp_path / "run" / "resources.json").read_text()) == []


def test_kill_9_mid_variant_then_cleanup_restores_the_configuration(lab, mon_json, cephbench_env, tmp_path):
    before = snapshot(mon_json, cephbench_env)
    suite = write_suite(tmp_path, VARIANTS.replace("duration: 1s", "duration: 30s"))
    proc = subprocess.Popen([*CLI, "run", str(suite), "--out", str(tmp_path / "run")], env=cephbench_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    resources = tmp_path / "run" / "resources.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:     # until rados bench runs under variant a
        if resources.exists() and tool_processes(json.loads(resources.read_text() or "[]")):
            break
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    left = json.loads(resources.read_text())
    assert sorted(json.loads(r["name"])["name"] for r in left if r["kind"] == "config-option") == [
        "osd_max_backfills", "osd_recovery_sleep"], left
    assert ("osd", "", "osd_max_backfills", "2") in config(mon_json)      # the variant outlived its run
    res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    assert res.stdout.count("removed config-option") == 2, res.stdout
    assert snapshot(mon_json, cephbench_env) == before
    assert json.loads(resources.read_text()) == []


def test_resume_after_kill_9_reapplies_the_variant_of_the_tests_it_runs(lab, mon_json, cephbench_env, tmp_path):
    before = snapshot(mon_json, cephbench_env)
    suite = write_suite(tmp_path, VARIANTS)
    # killed as b's group starts: a's result is in, b's is not
    rc, aimed, _, err = signal_at(["run", suite, "--out", tmp_path / "run"], cephbench_env,
                                  lab.dir / "log" / "ceph-mon.a.log", "osd pool create", signal.SIGKILL, nth=2)
    assert aimed and rc == -9, err
    assert [r.test.variant for r in RunDir.open(tmp_path / "run").results()[0]] == ["a"]
    res = run_cli(["run", "--resume", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "removed config-option" in res.stderr, res.stderr
    results, _ = RunDir.open(tmp_path / "run").results()
    assert [(r.test.variant, r.status) for r in results] == [("a", "ok"), ("b", "ok")]
    assert set(results[1].variant.options[0].reported.values()) == {"3"}
    assert snapshot(mon_json, cephbench_env) == before


@pytest.mark.parametrize("variant, where", [
    ("{name: x, options: [{who: osd, name: osd_max_backfils, value: 2}]}",
     "variants[2].options[0].name: Ceph has no option 'osd_max_backfils' (did you mean 'osd_max_backfills'?)"),
    ("{sweep: {who: osd, name: osd_op_num_shards, values: [1, 2]}}",
     "variants[2].sweep.name: osd_op_num_shards is read only when a daemon starts, and this suite does not allow "
     "restarts"),
])
def test_a_bad_option_is_refused_before_anything_changes(lab, mon_json, cephbench_env, tmp_path, variant, where):
    before = config(mon_json)
    text = VARIANTS.replace("workloads:", f"  - {variant}\nworkloads:")
    res = cli_here(["run", write_suite(tmp_path, text), "--out", tmp_path / "run"], cephbench_env)
    assert res.returncode == 2, res.stderr + res.stdout
    assert res.stderr.strip().splitlines() == [res.stderr.strip()] and where in res.stderr, res.stderr
    assert not (tmp_path / "run").exists()
    assert config(mon_json) == before


# Two runs that change one option (issue 24): run B recorded run A's value as the one to put back, A's restore
# undid B's variant in the middle of B's test, and B's restore left A's value in the configuration database.
ONE_OPTION = """
name: {name}
variants:
  - name: {name}
    options: [{{who: osd, name: osd_max_backfills, value: {value}}}]
workloads:
  - {{name: rados, type: rados_bench, modes: [write], object_size: 64KiB, concurrency: 4, duration: {duration}}}
"""


def concurrent_suite(tmp_path: Path, name: str, value: int, duration: str) -> Path:
    return write_suite(tmp_path, ONE_OPTION.format(name=name, value=value, duration=duration), f"{name}.yaml")


def ran_under_its_own_variant(out: Path, value: str) -> None:
    """Every result of the run is ok under its variant, which found the option unset and every OSD running
    with the run's value."""
    results, _ = RunDir.open(out).results()
    assert results and all(r.status == "ok" for r in results), [(r.status, r.error) for r in results]
    for r in results:
        [opt] = r.variant.options
        assert (opt.name, opt.value, opt.previous) == ("osd_max_backfills", value, None), opt
        assert set(opt.reported.values()) == {value}, opt.reported


def refused_for(res_rc: int, err: str, out: Path, other: Path) -> None:
    """One line, exit 2, naming the other run (by its run directory) and the option; no run directory left."""
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning: another cephbench run")]
    assert res_rc == 2 and len(lines) == 1, (res_rc, err)
    assert "variants[0].options[0].name: run " in lines[0] and "changes osd_max_backfills (osd)" in lines[0], lines
    assert f"cephbench cleanup {other}" in lines[0], lines
    assert not out.exists()


def test_a_run_is_refused_an_option_another_run_has_changed(lab, mon_json, cephbench_env, tmp_path):
    before = snapshot(mon_json, cephbench_env)
    a, b = tmp_path / "a", tmp_path / "b"
    mon_log = lab.dir / "log" / "ceph-mon.a.log"
    set_pattern = re.compile(r'handle_command mon_command\((?:\[\{prefix=|\{"prefix": ")config set[",}]')
    with open(mon_log, "rb") as log:
        log.seek(0, 2)
        # A holds its variant for 20 s: B's start and preflight took longer than A's 8 s test beside three other
        # shares of lab tests (fresh-clone CI at 19130c4: B found the option put back and ran)
        pa = subprocess.Popen([*CLI, "run", str(concurrent_suite(tmp_path, "a", 2, "20s")), "--out", str(a)],
                              env=cephbench_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline, buf = time.monotonic() + 180, b""
        while pa.poll() is None and time.monotonic() < deadline and not set_pattern.search(buf.decode(errors="replace")):
            buf += log.read() or b""
            time.sleep(0.01)
    assert pa.poll() is None, "run A ended before its variant was set"
    rb = run_cli(["run", concurrent_suite(tmp_path, "b", 3, "15s"), "--out", b], cephbench_env)
    _, err_a = pa.communicate(timeout=300)
    assert pa.returncode == 0, err_a
    ran_under_its_own_variant(a, "2")
    refused_for(rb.returncode, rb.stderr, b, a)
    assert snapshot(mon_json, cephbench_env) == before


def test_two_runs_started_together_with_one_option_do_not_undo_each_other(lab, mon_json, cephbench_env, tmp_path):
    before = snapshot(mon_json, cephbench_env)
    outs = {"a": (tmp_path / "a", "2"), "b": (tmp_path / "b", "3")}
    procs = {n: subprocess.Popen([*CLI, "run", str(concurrent_suite(tmp_path, n, int(v), "5s")), "--out", str(out)],
                                 env=cephbench_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n, (out, v) in outs.items()}
    ended = {n: (p.communicate(timeout=300)[1], p.returncode) for n, p in procs.items()}
    assert snapshot(mon_json, cephbench_env) == before
    refused = [n for n, (_, rc) in ended.items() if rc != 0]
    assert len(refused) == 1, ended          # both ran (over each other), or both stepped back for good
    [loser] = refused
    [winner] = set(outs) - {loser}
    ran_under_its_own_variant(outs[winner][0], outs[winner][1])
    refused_for(ended[loser][1], ended[loser][0], outs[loser][0], outs[winner][0])


def test_claims_made_at_one_instant_leave_the_option_to_exactly_one_run(lab_target, caplog):
    """The claim itself, from two runs' contexts on connections of their own, released at one instant by a barrier,
    five times: each time one run has the option and the other is refused (never both, never neither), and both
    markers are gone after."""
    import logging
    import threading
    from cephbench.cluster.ceph import Cluster
    from cephbench.suite.config import Settings
    from cephbench.drivers.base import RunContext
    from cephbench.core.errors import UserError
    from cephbench.core.resources import Ledger
    from cephbench.run.runner import mark_run
    from cephbench.core.variant_plan import OptionSpec
    from cephbench.run.options import claim_options

    caplog.set_level(logging.INFO, logger="cephbench.run.options")
    wanted = {("osd", "osd_max_backfills"): OptionSpec("osd", "osd_max_backfills", 2, "variants[0].options[0]")}
    clusters = [Cluster(lab_target), Cluster(lab_target)]
    for rnd in range(5):
        barrier = threading.Barrier(2)
        outcome: dict[str, str] = {}
        ctxs = [RunContext(cluster=c, run_id=f"c1a1m{rnd}{i}", rundir=None, ledger=Ledger(), settings=Settings())
                for i, c in enumerate(clusters)]

        def claim(ctx: RunContext) -> None:
            ctx.marker_state.options = tuple(wanted)
            barrier.wait()
            try:
                claim_options(ctx, wanted, mark_run(ctx))
                outcome[ctx.run_id] = "has it"
            except UserError as exc:
                outcome[ctx.run_id] = exc.one_line()
        threads = [threading.Thread(target=claim, args=(ctx,)) for ctx in ctxs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        for ctx in ctxs:
            assert ctx.ledger.release() == []
        assert sorted(outcome.values())[0] == "has it" and sorted(outcome.values())[1] != "has it", outcome
    assert not [k for k in clusters[0].ceph_json("config-key", "dump", "cephbench/runs/") if "c1a1m" in k]
    # the barrier makes both see each other at least once: the step back and its pause were exercised
    assert "stepping back" in caplog.text, caplog.text
