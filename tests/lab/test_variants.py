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

from cephbench.results import RunDir

from labcli import CLI, cli_here, run_cli, write_suite
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
        if resources.exists() and any(r["kind"] == "process" for r in json.loads(resources.read_text() or "[]")):
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
