"""run_together's hold (hosts/local.py): tools run with --hold on this machine are released together once all are
set up, and one that fails in its setup stops the others, which would wait for ever. The tools are real processes
that behave as `cephbench-loadgen run --hold` does: set up, print the held line, wait for SIGUSR1."""

from __future__ import annotations

import time

from cephbench.hosts.local import Spawn, run_together

HELD = ("sleep {setup}; echo \"@cephbench held_ns=$(date +%s%N)\" >&2; "
        "trap 'echo released_ns=$(date +%s%N); exit 0' USR1; while :; do sleep 0.005; done")


def _released_ns(text: str) -> int:
    return int(text.split("released_ns=")[1].split()[0])


def test_held_tools_are_released_together_once_the_slowest_is_set_up(tmp_path):
    t0 = time.time_ns()
    spawns = [Spawn(["sh", "-c", HELD.format(setup=s)], tmp_path / f"out{i}") for i, s in enumerate((0.05, 1.5))]
    ended: list[int] = []
    res = run_together(spawns, 30, hold=True, ended=ended.append)
    assert all(r.ok for r in res), [r.stdout for r in res]
    released = [_released_ns(r.stdout) for r in res]
    assert min(released) - t0 > 1.5e9 and max(released) - min(released) < 0.25e9, released
    assert len(ended) == 2          # each one's `ended` still came before it was reaped


def test_a_tool_that_fails_in_its_setup_stops_the_held_ones(tmp_path):
    spawns = [Spawn(["sh", "-c", HELD.format(setup=0.05)], tmp_path / "held"),
              Spawn(["sh", "-c", "sleep 0.3; echo 'prefill failed' >&2; exit 1"], tmp_path / "failed")]
    t0 = time.monotonic()
    res = run_together(spawns, 60, hold=True)
    assert time.monotonic() - t0 < 15
    # interrupted (SIGINT to its group: the shell dies of it, as loadgen would clean up and exit 130), never released
    assert res[1].returncode == 1 and res[0].returncode == -2 and "released_ns" not in res[0].stdout
