"""Running commands on a host: the one subprocess helper of cephbench.

Every command is an argv list (never a shell string), has a timeout, and comes
back as a CommandResult that records the exact command line, so drivers can
store it next to the raw output.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..core.errors import UserError
from ..core.names import shown_argv
from ..core.userfiles import open_output, read_output

log = logging.getLogger(__name__)

# a tool's output file is a regular file or a new path (core/userfiles.py): never a FIFO or device left in its place
OUTPUT_HINT = "give the run a directory of regular files you may write"

# what tools print while they run, in the same stream as their errors
STATUS_LINE = re.compile(r"Jobs: \d|cephbench-loadgen: progress ")
# what a tool run with --hold (cephbench-loadgen run) prints, alone on a line, once set up: it waits for SIGUSR1
HELD_LINE = re.compile(r"^@cephbench held_ns=\d+\r?$", re.MULTILINE)


@dataclass(frozen=True)
class CommandResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def cmdline(self) -> str:
        return shlex.join(self.argv)

    def error_text(self) -> str:
        """The last meaningful stderr line, for one-line error messages; a tool's live status lines
        (fio's "Jobs: ...", loadgen's progress) are not messages."""
        lines = [ln.strip() for ln in (self.stderr or self.stdout).splitlines()
                 if ln.strip() and not STATUS_LINE.match(ln.strip())]
        if self.timed_out:
            return f"timed out after {self.duration_s:.0f} s"
        return lines[-1] if lines else f"exit code {self.returncode}"


@dataclass
class LocalHost:
    """The machine cephbench runs on. SSH hosts will share this interface."""

    name: str = "localhost"
    env: Mapping[str, str] = field(default_factory=dict)
    # Variables of our own environment its commands must not see (the lab's: an old lab's CEPH_KEYRING).
    unset_env: frozenset[str] = frozenset()

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        return {k: v for k, v in {**os.environ, **self.env, **(extra or {})}.items() if k not in self.unset_env}

    def run(
        self,
        argv: Sequence[str],
        timeout_s: float,
        *,
        input_text: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> CommandResult:
        argv = [str(a) for a in argv]
        full_env = self._env(env)
        log.debug("run: %s", shown_argv(argv))
        start = time.monotonic()
        try:
            # A new session so that a timeout kills the whole process group,
            # and Ctrl-C in the terminal reaches cephbench, which decides.
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=full_env,
                cwd=cwd,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise UserError(
                f"command not found: {argv[0]}",
                "run scripts/setup.sh to install what cephbench needs",
            ) from exc
        try:
            out, err = proc.communicate(input=input_text, timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            timed_out = True
        except BaseException:
            _kill_group(proc)
            proc.communicate()
            raise
        return CommandResult(argv, proc.returncode, out, err, time.monotonic() - start, timed_out)

    def start(
        self,
        argv: Sequence[str],
        *,
        stdout_path: Path,
        env: Mapping[str, str] | None = None,
        held: bool = False,
    ) -> subprocess.Popen[bytes]:
        """Start a long-running command in the background, output to a file; `held`: its standard input a pipe
        of ours, whose end tells it to finish (closing `proc.stdin`)."""
        argv = [str(a) for a in argv]
        full_env = self._env(env)
        log.debug("start: %s", shown_argv(argv))
        with open_output(stdout_path, OUTPUT_HINT) as out:
            return subprocess.Popen(
                argv, stdin=subprocess.PIPE if held else subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=full_env, start_new_session=True,
            )

    def which(self, program: str) -> str | None:
        return shutil.which(program)


STOP_GRACE_S = 5.0      # a tool asked to stop (SIGINT, as Ctrl-C would) gets this long to print its summary


def _interrupt_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# Popen's poll() and wait() take a lock of Popen's own before they ask the kernel: poll() answers "running" while the
# lock is held, wait() blocks on it for as long as it is. A run stopped by Ctrl-C hung in wait() for 12 minutes with
# its fio already exited (a zombie nobody reaped; no other thread held the lock, so it had been left held). What
# waits for a process cephbench started asks the kernel too (waitid without reaping), and reaps it itself when
# Popen cannot; a reap through Popen waits at most REAP_S for that lock.
REAP_S = 2.0


def exited(p: subprocess.Popen) -> bool:
    """Whether `p` has ended (it is then reaped): Popen's word, else the kernel's."""
    if p.poll() is not None:
        return True
    try:
        if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            return False
    except ChildProcessError:
        pass                # reaped in the meantime (by Popen, whose returncode then says so)
    reap(p)
    return True


def _peek_exit(p: subprocess.Popen) -> int | None:
    """`p`'s exit code as a shell says it (128+N for signal N) once it has ended, without reaping it; None while it
    runs."""
    try:
        info = None if p.returncode is not None else os.waitid(os.P_PID, p.pid,
                                                               os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:       # reaped in the meantime (by Popen, whose returncode then says so)
        info = None
    if p.returncode is not None:
        return p.returncode if p.returncode >= 0 else 128 - p.returncode
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else 128 + info.si_status


def reap(p: subprocess.Popen, timeout_s: float = REAP_S) -> int:
    """`p`'s exit code, once it has ended or been killed: Popen's wait for at most `timeout_s`, then the kernel's
    (a blocking waitpid: call it on a process that has ended or will, as a SIGKILLed one will)."""
    try:
        return p.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass
    try:
        _, status = os.waitpid(p.pid, 0)
    except ChildProcessError:       # Popen reaped it after all
        if p.returncode is None:
            p.returncode = 0
        return p.returncode
    p.returncode = os.waitstatus_to_exitcode(status)
    log.warning("process %s reaped without Popen: its wait lock was held for %.0f s", p.pid, timeout_s)
    return p.returncode


def stop_group(proc: subprocess.Popen) -> None:
    """End a process started with LocalHost.start, and its children, now."""
    if not exited(proc):
        _kill_group(proc)
    reap(proc)


@dataclass(frozen=True)
class Spawn:
    """One command of a batch started together, output going to a file."""

    argv: list[str]
    output: Path
    env: Mapping[str, str] | None = None


def _reaped(p: subprocess.Popen[bytes], ended: Callable[[int], None] | None) -> bool:
    """Whether the process has ended (and is now reaped), `ended(pid)` called first when it has just exited."""
    if ended is not None and p.returncode is None:
        try:
            if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                ended(p.pid)
        except ChildProcessError:
            pass
    return exited(p)


def run_together(
    spawns: Sequence[Spawn],
    timeout_s: float,
    tick: Callable[[], bool | None] | None = None,
    tick_interval_s: float = 1.0,
    started: Callable[[list[int]], None] | None = None,
    ended: Callable[[int], None] | None = None,
    hold: bool = False,
) -> list[CommandResult]:
    """Start every command at once, wait for all, call `tick` while waiting (and `started` with their PIDs, `ended`
    with each one's PID once it has exited but before it is reaped: its /proc/PID is still there).

    With `hold` every command is a tool run with --hold: once every one still running has printed its held line
    (HELD_LINE), all get SIGUSR1 at once and start measuring together (hosts/fanout.py does the same on client
    hosts); one that fails before then stops the others, which would wait for ever.

    Output goes to files so that `tick` can read progress as it is written (live
    MB/s) and large outputs never block on a pipe. A `tick` that returns True stops them: SIGINT to each process
    group (as Ctrl-C would, so that tools print their summary), SIGKILL after STOP_GRACE_S. On timeout or any
    exception (Ctrl-C included) every process group is killed before this returns.
    """
    procs: list[tuple[Spawn, subprocess.Popen[bytes], float]] = []
    try:
        for sp in spawns:
            sp.output.parent.mkdir(parents=True, exist_ok=True)
            argv = [str(a) for a in sp.argv]
            log.debug("start: %s", shown_argv(argv))
            with open_output(sp.output, OUTPUT_HINT) as out:
                try:
                    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         env={**os.environ, **(sp.env or {})}, start_new_session=True)
                except FileNotFoundError as exc:
                    raise UserError(f"command not found: {argv[0]}",
                                    "run scripts/setup.sh to install what cephbench needs") from exc
            procs.append((sp, p, time.monotonic()))
        if started:
            started([p.pid for _, p, _ in procs])     # e.g. recorded, so that a dead run's tools can be stopped
        deadline = time.monotonic() + timeout_s
        next_tick = time.monotonic() + tick_interval_s
        timed_out = stopped = False
        waiting = hold
        while not all([_reaped(p, ended) for _, p, _ in procs]):
            if waiting:
                waiting, failed = _release_held(procs)
                if failed:
                    stopped = True
                    for _, p, _ in procs:
                        if not exited(p):
                            _interrupt_group(p)
                    deadline = min(deadline, time.monotonic() + STOP_GRACE_S)
            now = time.monotonic()
            if now > deadline:
                timed_out = True
                for _, p, _ in procs:
                    if not exited(p):
                        _kill_group(p)
                break
            if tick and now >= next_tick:
                if tick() is True:        # the caller wants the tools stopped (e.g. the cluster went bad)
                    stopped = True
                    for _, p, _ in procs:
                        _interrupt_group(p)
                    deadline = min(deadline, now + STOP_GRACE_S)
                next_tick = now + tick_interval_s
            time.sleep(0.05)
        results = []
        for sp, p, started in procs:
            rc = reap(p)
            text = read_output(sp.output)
            results.append(CommandResult([str(a) for a in sp.argv], rc, text, "", time.monotonic() - started,
                                         timed_out and rc != 0 and not stopped))
        return results
    except BaseException:
        for _, p, _ in procs:
            if not exited(p):
                _kill_group(p)
                reap(p)
        raise


def _release_held(procs: Sequence[tuple[Spawn, subprocess.Popen[bytes], float]]) -> tuple[bool, bool]:
    """run_together's hold: (still waiting, one failed first). Released: SIGUSR1 to each tool still running, once
    all of those are held. The exit codes are peeked at, not reaped: run_together's `ended` reads /proc/PID first."""
    codes = [_peek_exit(p) for _, p, _ in procs]
    if any(c not in (None, 0) for c in codes):
        return False, True
    running = [(sp, p) for (sp, p, _), c in zip(procs, codes) if c is None]
    if not all(HELD_LINE.search(read_output(sp.output)) for sp, _ in running):
        return True, False
    for _, p in running:
        try:
            os.kill(p.pid, signal.SIGUSR1)
        except ProcessLookupError:
            pass
    return False, False


def local_facts() -> dict[str, object]:
    """Kernel, CPU and memory of this host, for run.json."""
    import platform

    facts: dict[str, object] = {"hostname": platform.node(), "kernel": platform.release(),
                                "machine": platform.machine(), "cpu_count": os.cpu_count(),
                                "python": platform.python_version()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                facts["memory_bytes"] = int(line.split()[1]) * 1024
                break
    except OSError:
        pass
    return facts
