"""The lab's daemons as processes: which PIDs are really ours, how to start and stop them, and waiting that
follows what they do instead of a clock.

A wait ends when its condition holds. It fails at once when a daemon it depends on has exited, naming that
daemon's log with its last lines. While the daemons make progress (the condition reports a new state, or the
log of a daemon still starting grows) it keeps waiting, however busy the machine; only no sign of progress for
STALL_S, or a start that exceeds the last-resort bound OVERALL_S, fails, with the same kind of message. (The
logs of running mons and mgrs grow all the time with the cluster log: they are no sign of progress.)
"""

from __future__ import annotations

import logging
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..core.errors import OperationFailed

log = logging.getLogger(__name__)
EXEC_WAIT_S = 0.5       # the longest a live process's command line may read empty (its exec under way)

STALL_S = 120.0      # no new state and no log line for this long: the daemon is stuck
OVERALL_S = 900.0    # last resort, whatever the daemons seem to do
LOG_TAIL_LINES = 8
MONITORING_DIR = "monitoring"     # monitoring.DIR (which imports nothing of the lab's daemons)


@dataclass(frozen=True)
class Daemon:
    """One lab daemon: `name` as Ceph spells it (mon.a, osd.0, client.rgw.lab) and where it keeps its files."""

    name: str
    run_dir: Path
    log_dir: Path

    @property
    def pid_file(self) -> Path:
        return self.run_dir / f"{self.name}.pid"

    @property
    def asok(self) -> Path:
        return self.run_dir / f"ceph-{self.name}.asok"

    @property
    def log(self) -> Path:
        return self.log_dir / f"ceph-{self.name}.log"

    @property
    def console(self) -> Path:
        """stdout/stderr: what a daemon says before its log is open (a port in use, a bad option)."""
        return self.log_dir / f"{self.name}.out"

    def pid(self) -> int | None:
        return read_pid(self.pid_file)


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def process_alive(pid: int) -> bool:
    """Running (a zombie, exited but not yet reaped, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def group_members(pgid: int) -> list[int]:
    """The processes of process group `pgid` (a command started in a session of its own leads one: its children
    are in it, and outlive it when it is killed)."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                fields = (p / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:
                out.append(int(p.name))
    return sorted(out)


def self_recording(argv: Sequence, record: Path) -> list[str]:
    """`argv`, run by a shell that first writes its own PID (which exec keeps: the command's) to `record`. The
    process records itself: a kill of the process that starts it, however soon after the fork, cannot leave it
    running unrecorded."""
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(record), *map(str, argv)]


def kill_group(pgid: int, conf: Path) -> list[int]:
    """SIGKILL process group `pgid` at once, if a process of it is this lab's (a group's ID is not reused while a
    process is in it), and wait until it is gone (up to 30 s: a process in disk I/O dies when it ends); what it
    held, or [] when it was no group of this lab's. A group is signalled whole: a member forked after a look at
    its members would escape a kill by PIDs."""
    members = [p for p in group_members(pgid) if process_alive(p)]
    if not any(is_lab_process(p, conf) for p in members):
        return []
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return members
    deadline = time.monotonic() + 30
    while (left := [p for p in group_members(pgid) if process_alive(p)]) and time.monotonic() < deadline:
        for p in left:
            reap(p)
        time.sleep(0.01)
    if left:
        log.warning("process group %d (%s) is still exiting after SIGKILL", pgid, ", ".join(map(str, left)))
    return members


def is_lab_process(pid: int, conf: Path) -> bool:
    """`pid` runs and was started with this lab's ceph.conf. A PID file can outlive its process and the PID be
    reused by anything, another engineer's daemon included: never signal a PID without this check.

    The path is looked for anywhere in the command line, not as one argument: sshd rewrites its command line into
    one title ("sshd: /usr/sbin/sshd -D ... -o SetEnv=CEPH_CONF=<conf> [listener] ..."). Prometheus and the
    node-exporters (monitoring.py) are known by a path under the lab's monitoring directory instead."""
    if not process_alive(pid):
        return False
    cmdline = _cmdline(pid)
    # followed by the end of an argument or of a word, so /lab/ceph.conf never matches /lab/ceph.conf.old
    if re.search(re.escape(os.fsencode(str(conf))) + rb"(?:\0| |$)", cmdline) is not None:
        return True
    # the monitoring stack is not Ceph's: each of its processes names a file of the lab's monitoring directory
    return os.fsencode(str(conf.parent / MONITORING_DIR)) + b"/" in cmdline


def _cmdline(pid: int) -> bytes:
    """/proc/PID/cmdline, waited for (up to EXEC_WAIT_S) while it reads empty: a process in the middle of its exec
    has closed its close-on-exec files (so Popen has returned) before the kernel sets its new command line, and reads
    empty meanwhile (275 of 300 reads right after Popen on the development VM). Kernel threads read empty for good:
    a PID file naming one (its PID reused) costs the wait."""
    deadline = time.monotonic() + EXEC_WAIT_S
    while True:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return b""
        if cmdline or time.monotonic() >= deadline or not process_alive(pid):
            return cmdline
        time.sleep(0.002)


def reap(pid: int) -> None:
    """Collect a daemon this process started (foreground daemons are our children) so no zombie stays."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    return [ln.rstrip() for ln in text.splitlines() if ln.strip()][-lines:]


def died_message(daemon: Daemon, what: str) -> str:
    """Why a wait failed because `daemon` exited: the log that shows the cause, and its last lines."""
    sources = [p for p in (daemon.console, daemon.log) if log_tail(p)]
    if not sources:
        return f"lab: {daemon.name} exited while waiting for {what}, and wrote no log ({daemon.log})"
    parts = [f"lab: {daemon.name} exited while waiting for {what}; see {' and '.join(map(str, sources))}:"]
    for p in sources:
        parts.extend(f"  {ln}" for ln in log_tail(p))
    return "\n".join(parts)


def stuck_message(what: str, state: str, waited_s: float, daemons: Sequence[Daemon]) -> str:
    head = (f"lab: still waiting for {what} after {waited_s:.0f} s"
            + (f" (last state: {state})" if state else "")
            + "; the daemons run but show no progress")
    logs = [d for d in daemons if log_tail(d.log)]
    parts = [head + (f"; see {', '.join(str(d.log) for d in logs)}" if logs else "")]
    for d in logs[:2]:
        parts.append(f"  {d.log.name}:")
        parts.extend(f"    {ln}" for ln in log_tail(d.log, 4))
    return "\n".join(parts)


def _log_sizes(daemons: Sequence[Daemon]) -> tuple[int, ...]:
    sizes = []
    for d in daemons:
        try:
            sizes.append(d.log.stat().st_size)
        except OSError:
            sizes.append(-1)
    return tuple(sizes)


def wait_for(check: Callable[[], tuple[bool, str]], what: str, daemons: Sequence[Daemon],
             pids: Callable[[Daemon], int | None], progress: Callable[[str], None] = lambda msg: None,
             starting: Sequence[Daemon] = (), stall_s: float = STALL_S, overall_s: float = OVERALL_S,
             poll_max_s: float = 0.25) -> None:
    """Wait until `check()` returns (True, _), following the daemons it depends on.

    `check` returns (done, state): `state` is what it saw (e.g. "2/3 up"); a new state counts as progress, and
    so does a new line in the log of a daemon in `starting`. `pids(daemon)` is the daemon's PID, or None when
    it has not started (yet): a daemon whose PID is known and no longer runs fails the wait at once. `check` runs
    every 50 ms at first, then less often, up to every `poll_max_s`.
    """
    start = last_progress = time.monotonic()
    last_state, last_logs = "", _log_sizes(starting)
    next_note = start + 15.0
    delay = 0.05
    while True:
        done, state = check()
        if done:
            return
        for d in daemons:
            pid = pids(d)
            if pid is not None and not process_alive(pid):
                raise OperationFailed(died_message(d, what))
        now = time.monotonic()
        logs = _log_sizes(starting)
        if state != last_state or logs != last_logs:
            if state != last_state:
                log.debug("waiting for %s: %s at %.2f s", what, state, now - start)
            last_progress, last_state, last_logs = now, state, logs
        if now - last_progress > stall_s or now - start > overall_s:
            raise OperationFailed(stuck_message(what, state, now - start, starting or daemons))
        if now >= next_note:
            progress(f"still waiting for {what} ({now - start:.0f} s{', ' + state if state else ''})")
            next_note = now + 15.0
        time.sleep(delay)
        delay = min(delay * 1.5, poll_max_s)


def stop(pids: Sequence[tuple[str, int]], conf: Path, grace_s: float) -> None:
    """SIGTERM (or SIGKILL at once when grace_s is 0) exactly these PIDs, if they are still this lab's; SIGKILL
    what is left after grace_s; return when all are gone."""
    ours = [(name, pid) for name, pid in pids if is_lab_process(pid, conf)]
    _signal_all(ours, signal.SIGTERM if grace_s > 0 else signal.SIGKILL)
    deadline = time.monotonic() + grace_s
    while grace_s > 0 and time.monotonic() < deadline and _alive(ours):
        time.sleep(0.02)
    left = _alive(ours)
    if left and grace_s > 0:
        log.info("%s did not stop within %.1f s: killing", ", ".join(n for n, _ in left), grace_s)
        _signal_all(left, signal.SIGKILL)
    # After SIGKILL a process can still take a moment to exit (I/O in flight): wait for it to be gone, so a
    # new lab in the same directory never meets the old one's files in use.
    deadline = time.monotonic() + 30
    while _alive(ours) and time.monotonic() < deadline:
        time.sleep(0.01)
    for name, pid in _alive(ours):
        log.warning("%s (pid %d) is still exiting after SIGKILL", name, pid)


def _alive(pids: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    left = []
    for name, pid in pids:
        reap(pid)
        if process_alive(pid):
            left.append((name, pid))
    return left


def _signal_all(pids: Sequence[tuple[str, int]], sig: int) -> None:
    for _, pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
