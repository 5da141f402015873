"""A host's watch (WATCH_SH, run here by sh as it runs on a host) ends when told, with a reading of the test's last
moments, and leaves nothing behind."""

import time
from pathlib import Path

import pytest

from cephbench.evidence import watch as hostwatch
from cephbench.evidence.hostload import watch_argv
from cephbench.evidence.hoststream import parse_stream
from cephbench.hosts.local import LocalHost


def _watch(tmp_path, held=True):
    out = tmp_path / "watch.txt"
    proc = LocalHost().start(watch_argv([], ["127.0.0.1"], [], held=held), stdout_path=out, held=held)
    return hostwatch.Watcher(None, proc, out), out     # type: ignore[arg-type]


def _times(out):
    return [t for t, _ in parse_stream(out.read_text()).nets]


def _alive(pgid):
    """Whether its process group has a member still running (a killed child's zombie waits for init to reap it)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            f = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(f[2]) == pgid and f[0] != "Z":
            return True
    return False


@pytest.mark.parametrize("readings", [1, 2])
def test_a_stopped_watch_reads_the_moment_it_was_stopped_and_ends(tmp_path, readings):
    """Stopped half a second after its first or its second reading of each second: it reads once more, at the
    moment it was stopped; killed, it would have ended at its last periodic reading. The stop is timed from the
    readings themselves: beside make test's lab phase the watch's first reading came 0.3 s after it started, and
    a stop 1.5 s after the start fell before its second."""
    w, out = _watch(tmp_path)
    deadline = time.monotonic() + 10
    while len(_times(out)) < readings and time.monotonic() < deadline:
        time.sleep(0.02)
    seen = _times(out)
    assert len(seen) == readings, seen
    time.sleep(max(0.0, (seen[-1] + 500_000_000 - time.time_ns()) / 1e9))
    stopped = time.time_ns()
    hostwatch.stop([w])
    took = (time.time_ns() - stopped) / 1e9
    times = _times(out)
    assert len(times) == readings + 1, (times, stopped)
    assert abs(times[-1] - stopped) / 1e9 < 0.25, (times, stopped)
    assert w.proc.returncode == 0 and took < hostwatch.STOP_GRACE_S, (w.proc.returncode, took)
    assert not _alive(w.proc.pid)               # its reader of stdin and its sleep too


def test_a_reading_only_just_taken_is_not_taken_again(tmp_path):
    """An interval of a few milliseconds is no rate: a stop right after a reading adds none."""
    w, out = _watch(tmp_path)
    time.sleep(0.1)
    hostwatch.stop([w])
    assert len(_times(out)) == 1 and w.proc.returncode == 0


def test_a_watch_not_held_by_its_input_runs_until_killed(tmp_path):
    w, out = _watch(tmp_path, held=False)
    time.sleep(1.2)
    assert w.proc.poll() is None                # /dev/null's end does not stop it
    hostwatch.stop([w])                         # killed after the grace
    assert w.proc.returncode == -9 and not _alive(w.proc.pid)


def test_a_watch_whose_input_ends_without_the_word_runs_on(tmp_path):
    """A remote shell that gives its commands no input (an SSH server that does not forward it): the end of input
    alone does not stop the watch after one reading; it runs until stopped, then is killed after the grace."""
    out = tmp_path / "watch.txt"
    proc = LocalHost().start(watch_argv([], ["127.0.0.1"], []), stdout_path=out)     # /dev/null for its input
    deadline = time.monotonic() + 10        # a second reading: 1.3 s was too short beside make test's lab phase
    while len(_times(out)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None and len(_times(out)) >= 2
    hostwatch.stop([hostwatch.Watcher(None, proc, out)])     # type: ignore[arg-type]
    assert proc.returncode == -9 and not _alive(proc.pid)
