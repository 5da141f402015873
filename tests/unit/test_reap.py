"""Waiting for a process cephbench started never hangs on Popen's own lock (hosts/local.py `exited`, `reap`).

A run stopped by Ctrl-C in CI (6a6dac7, tests/lab/test_rbd.py::test_ctrl_c_removes_images_and_pools) hung for
12 minutes in run_together's clean-up: `Popen.wait()` blocked on Popen's waitpid lock, held by nothing that would
give it back, with its fio an unreaped zombie; `poll()` said "running" all along. These tests hold that lock as it
was held (the processes are real) and check that each wait still ends, with the process's own exit code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest

from cephbench.hosts import local
from cephbench.hosts.local import Spawn, exited, reap, run_together


def held_lock(p: subprocess.Popen) -> subprocess.Popen:
    assert p._waitpid_lock.acquire(False)       # as the hung run's was: taken, and never given back
    return p


def ended(p: subprocess.Popen, within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_an_ended_process_whose_lock_is_held_is_seen_ended_and_reaped_with_its_exit_code():
    p = held_lock(subprocess.Popen(["sh", "-c", "exit 3"]))
    ended(p)
    assert p.poll() is None                     # Popen alone: still running, forever
    t0 = time.monotonic()
    assert exited(p) and p.returncode == 3
    assert time.monotonic() - t0 < local.REAP_S + 2
    with pytest.raises(ChildProcessError):      # reaped: no zombie left
        os.waitpid(p.pid, os.WNOHANG)


def test_a_running_process_is_not_ended_and_a_killed_one_is_reaped_past_a_held_lock():
    p = held_lock(subprocess.Popen(["sleep", "30"], start_new_session=True))
    assert not exited(p)
    os.killpg(p.pid, signal.SIGKILL)
    assert reap(p, timeout_s=0.2) == -signal.SIGKILL


class LockLeft(subprocess.Popen):
    """A real process whose Popen lock is held from its start."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        held_lock(self)


def test_run_together_ends_when_popen_cannot_say_its_tools_ended(tmp_path, monkeypatch):
    monkeypatch.setattr(local.subprocess, "Popen", LockLeft)
    got: list = []
    worker = threading.Thread(target=lambda: got.append(run_together(
        [Spawn(["sh", "-c", "echo done; exit 4"], tmp_path / "a"), Spawn(["true"], tmp_path / "b")], 60)),
        daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "run_together waited on Popen's lock"
    (a, b), = got
    assert (a.returncode, a.stdout.strip(), b.returncode) == (4, "done", 0)


def test_run_together_stopped_by_an_interrupt_kills_and_reaps_past_a_held_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(local.subprocess, "Popen", LockLeft)
    pids: list[int] = []

    def tick() -> bool:
        raise KeyboardInterrupt

    def call() -> None:
        with pytest.raises(KeyboardInterrupt):
            run_together([Spawn(["sleep", "30"], tmp_path / "a")], 60, tick=tick, tick_interval_s=0.1,
                         started=pids.extend)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the clean-up waited on Popen's lock"
    with pytest.raises(ChildProcessError):      # killed and reaped: nothing left
        os.waitpid(pids[0], os.WNOHANG)
