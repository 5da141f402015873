"""A lab-shape rebuild cut at each of its steps (the rebuild's down and up, the put-back's down and up) by SIGINT,
SIGTERM or kill -9: the user's lab is back, whole, after the run (or after `cephbench cleanup` of the killed run),
and the ledger is empty (issue 24: a signal 0.6 s into the shape's down took the lab from 9 daemons to 0, the
put-back failed, the ledger was empty, and only rm -rf recovered).

A one-host lab of this test's own (1 OSD, no RGW) is rebuilt to 2 OSDs and back. The signals are aimed with the run's
own notes on stderr, the moment it says it takes the lab down, or a second into a lab's start.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cephbench.lab import Lab, labdir

import labcli
from labcli import CLI, run_cli, write_suite

SUITE = """name: shape-signals
settings: {drop_caches: false}
variants:
  - {name: two, lab: {osds: 2, osd_size: 2GiB, rgw: false}}
workloads:
  - {type: osd_bench, total: 8MiB, block_size: 4MiB, repeat: 1}
"""
DOWN, UP = "lab shape: taking the lab in", "lab shape: starting the lab as"
# (note, which time it is said: 1 the rebuild, 2 the put-back, seconds after it)
STEPS = {"rebuild-down": (DOWN, 1, 0.0), "rebuild-up": (UP, 1, 1.0), "putback-down": (DOWN, 2, 0.0),
         "putback-up": (UP, 2, 1.0)}


@pytest.fixture(scope="module")
def own_lab():
    with labcli.own_lab("cb-shape-sig-", osds=1) as lb:
        yield lb


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}


def run_and_signal_at_note(args, note: str, nth: int, delay_s: float, sig: int, timeout: float = 300):
    """Start the CLI; send `sig` `delay_s` after it writes the `nth` stderr line holding `note`."""
    proc = subprocess.Popen([*CLI, *map(str, args)], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    seen, lines = 0, []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)
        if note in line:
            seen += 1
            if seen == nth:
                time.sleep(delay_s)
                proc.send_signal(sig)
                break
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, seen == nth, out, "".join(lines) + err


def assert_lab_as_the_user_had_it(lb: Lab, rundir: Path) -> None:
    info = lb.info()
    assert info is not None and info.osds == 1 and not info.rgw, info
    assert lb.started() and lb.healthy()
    assert json.loads((rundir / "resources.json").read_text()) == []
    assert labdir.shaped_by(lb.dir) is None         # the run's claim went with the lab's put-back


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("where", list(STEPS))
def test_a_signal_at_each_step_of_a_rebuild_leaves_the_users_lab(own_lab, tmp_path, where, sig):
    note, nth, delay = STEPS[where]
    rundir = tmp_path / "run"
    rc, aimed, out, err = run_and_signal_at_note(
        ["run", write_suite(tmp_path, SUITE), "--lab-dir", own_lab.dir, "--out", rundir], note, nth, delay, sig)
    assert aimed, err
    assert "Traceback" not in err, err
    assert rc in (0, 130), (rc, err)      # a signal at the put-back's last step may land once all is done
    assert "left behind" not in err and "could not remove" not in err, err
    assert_lab_as_the_user_had_it(own_lab, rundir)


@pytest.mark.parametrize("where", list(STEPS))
def test_kill_9_at_each_step_of_a_rebuild_then_cleanup_puts_the_users_lab_back(own_lab, tmp_path, where):
    note, nth, delay = STEPS[where]
    rundir = tmp_path / "run"
    rc, aimed, _, err = run_and_signal_at_note(
        ["run", write_suite(tmp_path, SUITE), "--lab-dir", own_lab.dir, "--out", rundir], note, nth, delay,
        signal.SIGKILL)
    assert aimed and rc == -9, (rc, err)
    assert any(r["kind"] == "lab-shape" for r in json.loads((rundir / "resources.json").read_text()))
    res = run_cli(["cleanup", rundir], env(), timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert_lab_as_the_user_had_it(own_lab, rundir)


def test_cleanup_after_a_down_cut_short_starts_the_users_lab_again(own_lab, tmp_path):
    """What a kill -9 in the middle of the rebuild's down leaves: some of the lab's daemons stopped (its monitor
    here), the others running. The way back must see a lab that is not whole and start it again. Before, any daemon
    still running made it the user's lab as it was: nothing was done, and the lab stayed without its monitor
    (fresh-clone run Y: cleanup said "removed lab-shape", then no monitor answered, for every later test)."""
    from cephbench.lab import daemons as dm
    from cephbench.run.shapes import build_of_lab, restore_recorded

    original = build_of_lab(own_lab)
    assert original is not None
    (mon,) = [d for d in own_lab.daemons() if d.name.startswith("mon.") and d.running]
    os.kill(mon.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while dm.process_alive(mon.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [d.name for d in own_lab.daemons() if d.running], "nothing of the lab is left running"
    restore_recorded(json.dumps({"dir": str(own_lab.dir), "original": original.to_json()}))
    assert all(d.running for d in own_lab.daemons()), own_lab.daemons()
    assert build_of_lab(own_lab) == original
    assert own_lab.started() and own_lab.healthy()
