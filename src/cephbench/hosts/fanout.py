"""One tool on many hosts, started at one wall-clock instant: the fan-out every driver shares.

Each command runs under `cephbench-loadgen at` (loadgen/internal/at) on its host, locally or through ssh with its
stdin a pipe this process keeps open. The wrapper prints a ready line; once every wrapper is ready, each is sent
`go <instant>` in its own host's clock (this machine's instant plus the host's measured offset) and starts the tool
then, printing the actual start and end in marker lines among the tool's output. split_markers takes them out, so
the drivers' parsers read the tool's output unchanged.

Stopping goes through the same pipe: `stop` asks every wrapper to interrupt its tool (SIGINT, as Ctrl-C would, so
tools print their summary; SIGKILL after the grace). Killing a local process group closes its ssh, and a wrapper
whose stdin ends stops its tool: nothing is left running on a client this process no longer watches.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import IO, Callable, Sequence

from ..core.names import shown_argv
from ..core.settings import SshSettings
from ..core.errors import OperationFailed, UserError
from .local import (OUTPUT_HINT, STOP_GRACE_S, CommandResult, LocalHost, Spawn, exited, open_output, read_output,
                    reap)
from .remote import HostRef

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 30.0      # ssh connects, the wrapper starts: seconds at most, unless the host is unreachable
POLL_S = 0.005              # how often output files are looked at while waiting for ready lines

# the end's cpu_ns (the tool's CPU time with the children it waited for) is absent in streams of older wrappers
# held_ns: a tool run with `--hold` (cephbench-loadgen run) is set up and waits to be released
_MARKER = re.compile(r"@cephbench (?:ready pid=(?P<ready_pid>\d+) clock_ns=(?P<clock>\d+)|start_ns=(?P<start>\d+)"
                     r"|pid=(?P<pid>\d+)|end_ns=(?P<end>\d+) rc=(?P<rc>\d+)(?: cpu_ns=(?P<cpu>\d+))?"
                     r"|held_ns=(?P<held>\d+))\r?\n?$")


@dataclass(frozen=True)
class Placement:
    """One command of a batch and the host it runs on; `offset_ns` is that host's clock minus this machine's."""

    spawn: Spawn
    host: HostRef
    offset_ns: int = 0


@dataclass(frozen=True)
class TimedResult:
    """A tool's result with where and when it ran. `result.stdout` holds the tool's output without marker lines;
    start and end are on this machine's clock (None: the tool never started, or its wrapper died first)."""

    result: CommandResult
    host: str
    start_unix_s: float | None
    end_unix_s: float | None
    ready_s: float                      # from spawning the wrapper (ssh included) to its ready line
    stopped: bool = False               # stopped by this batch (a tick, or another host's failure), not failed
    go_unix_s: float | None = None      # the instant it was asked to start at (this machine's clock)
    cpu_s: float | None = None          # the tool's CPU time on its host, its waited-for children's included


def split_markers(text: str) -> tuple[str, int | None, int | None, int | None]:
    """A wrapper's output -> (the tool's own output, start_ns, end_ns, rc), the marker lines taken out.

    A marker may follow a tool's last line that had no newline: that text stays the tool's. What came before the
    wrapper's ready line is not the tool's: ssh's warnings, and whatever the host's shell start-up files print (sshd's
    `bash -c` reads ~/.bashrc; an `rm:` line of pyenv's concurrent rehash there once read as a tool's first word). A
    wrapper that never got ready keeps it all: it says why."""
    kept: list[str] = []
    start = end = rc = None
    for line in text.splitlines(keepends=True):
        i = line.find("@cephbench ")
        m = _MARKER.match(line, i) if i >= 0 else None
        if m is None:
            kept.append(line)
            continue
        if m["ready_pid"]:
            kept.clear()
            continue
        kept.append(line[:i])
        if m["start"]:
            start = int(m["start"])
        elif m["end"]:
            end, rc = int(m["end"]), int(m["rc"])
    return "".join(kept), start, end, rc


def _marker(text: str, group: str) -> re.Match[str] | None:
    for line in text.splitlines():
        i = line.find("@cephbench ")
        m = _MARKER.match(line, i) if i >= 0 else None
        if m and m[group]:
            return m
    return None


def ready_line(text: str) -> tuple[int, int] | None:
    """(the wrapper's pid on its host, that host's clock_ns) from its ready line; None before it came."""
    m = _marker(text, "ready_pid")
    return None if m is None else (int(m["ready_pid"]), int(m["clock"]))


def tool_pid(text: str) -> int | None:
    """The tool's pid (and process group) on its host, once its wrapper started it."""
    m = _marker(text, "pid")
    return None if m is None else int(m["pid"])


def tool_cpu_s(text: str) -> float | None:
    """The tool's CPU time (user + system, with the children it waited for) from its end marker; None before it
    ended, or from a wrapper that does not say."""
    m = _marker(text, "end")
    return None if m is None or m["cpu"] is None else int(m["cpu"]) / 1e9


def failure(results: Sequence[TimedResult]) -> str | None:
    """The first host that failed on its own (not stopped by the batch), as "host: how it ended: its last line"."""
    for r in results:
        if not r.result.ok and not r.stopped:
            how, line = ended(r.result.returncode), r.result.error_text()
            return f"{r.host}: {how}" if line == f"exit code {r.result.returncode}" else f"{r.host}: {how}: {line}"
    return None


def ended(rc: int) -> str:
    """An exit code as a person reads it: `at` passes a signal on as 128+N (and ssh 255 is its own failure)."""
    if rc == 255:
        return "ssh failed (exit code 255)"
    if 128 < rc < 128 + 65:
        try:
            return f"killed by {signal.Signals(rc - 128).name}"
        except ValueError:
            pass
    return f"exit code {rc}"


@dataclass
class _Wrapper:
    placement: Placement
    argv: list[str]
    proc: subprocess.Popen[bytes]
    spawned: float                                  # monotonic
    ready_s: float | None = None
    stopped: bool = False
    released: bool = False          # hold: sent its release (or it ended before it was held)

    @property
    def where(self) -> str:
        return self.placement.host.where

    def send(self, line: str) -> None:
        stdin: IO[bytes] | None = self.proc.stdin
        if stdin is None or stdin.closed:
            return
        try:
            stdin.write(line.encode() + b"\n")
            stdin.flush()
        except (BrokenPipeError, ValueError):      # it ended already: nothing to tell it
            pass

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def kill(self) -> None:
        """Now: the local group (the wrapper, or the ssh that carries it: the remote wrapper then sees its stdin
        end and stops its tool), and a local tool's own group."""
        groups = [self.proc.pid]
        if self.placement.host.address is None and not exited(self.proc):
            groups.append(tool_pid(self.text()) or self.proc.pid)
        for pgid in groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.close()
        reap(self.proc)

    def text(self) -> str:
        return read_output(self.placement.spawn.output)


def wrapper_argv(pl: Placement, ssh: SshSettings, at_path: dict[str, str], grace_s: float) -> list[str]:
    """`cephbench-loadgen at` around the spawn's command, run on its host (through ssh unless it is this one)."""
    try:
        at = at_path[pl.host.name]
    except KeyError:
        raise ValueError(f"no cephbench-loadgen path for host {pl.host.name}") from None
    argv = [at, "at", "--label", pl.host.name, "--grace", f"{grace_s:g}s", "--", *(str(a) for a in pl.spawn.argv)]
    return pl.host.argv(argv, ssh)


def _spawn(local: LocalHost, pl: Placement, ssh: SshSettings, at_path: dict[str, str],
           grace_s: float) -> _Wrapper:
    argv = wrapper_argv(pl, ssh, at_path, grace_s)
    pl.spawn.output.parent.mkdir(parents=True, exist_ok=True)
    log.debug("start on %s: %s", pl.host.where, shown_argv(argv))
    # a local tool gets its environment directly; a remote one through `env` lines on stdin, never on a
    # command line
    env = local._env(pl.spawn.env if pl.host.address is None else None)
    with open_output(pl.spawn.output, OUTPUT_HINT) as out:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)
        except FileNotFoundError as exc:
            raise UserError(f"command not found: {argv[0]}",
                            "run scripts/setup.sh to install what cephbench needs") from exc
    w = _Wrapper(pl, argv, proc, time.monotonic())
    if pl.host.address is not None:
        for k, v in (pl.spawn.env or {}).items():
            w.send(f"env {k}={v}")
    return w


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not _MARKER.match(ln.strip())]
    return lines[-1] if lines else "no output"


def _wait_ready(wrappers: list[_Wrapper], timeout_s: float) -> None:
    """Until every wrapper printed its ready line; one that ends or stays silent fails the batch, named."""
    deadline = time.monotonic() + timeout_s
    waiting = list(wrappers)
    while waiting:
        for w in list(waiting):
            text = w.text()
            if ready_line(text) is not None:
                w.ready_s = time.monotonic() - w.spawned
                waiting.remove(w)
            elif exited(w.proc):
                # read again: what it wrote between the read above and its exit is its last word (ssh's error)
                text = w.text()
                if ready_line(text) is not None:
                    continue
                raise OperationFailed(f"host {w.where}: could not start the tool (exit code {w.proc.returncode}): "
                                      f"{_last_line(text)}")
        if waiting and time.monotonic() > deadline:
            w = waiting[0]
            raise OperationFailed(f"host {w.where}: not ready after {timeout_s:.0f} s: {_last_line(w.text())}")
        if waiting:
            time.sleep(POLL_S)


def run_started_together(
    local: LocalHost,
    placements: Sequence[Placement],
    ssh: SshSettings,
    at_path: dict[str, str],
    timeout_s: float,
    tick: Callable[[], bool | None] | None = None,
    started: Callable[[list[int]], None] | None = None,
    lead_s: float = 0.2,
    tick_interval_s: float = 1.0,
    grace_s: float = STOP_GRACE_S,
    hold: bool = False,
) -> list[TimedResult]:
    """Start every placement's command at one instant `lead_s` after all are ready; wait for all.

    With `hold` every command is a tool run with `--hold` (cephbench-loadgen run): it sets up (buckets, prefill),
    prints a held marker and waits. Once all are held each is released at one instant `lead_s` later (`measure`,
    which its wrapper turns into SIGUSR1 then), so that their measured phases start together however long each
    one's setup took: a client whose prefill took 3 s longer had measured after the other had finished.

    As hosts.run_together: output goes to each spawn's file (read by `tick` while it runs); `tick` once a second,
    True stops every tool (SIGINT, SIGKILL after `grace_s`); `started` gets the local PIDs (the wrappers, or the
    ssh processes that carry them); on timeout or any exception (Ctrl-C included) every local process group is
    killed, which ends the remote wrappers' stdin and so stops their tools. A command that fails while others
    still run stops the others: one failed host fails the batch (see `failure`).
    Raises OperationFailed when a wrapper cannot get ready (naming its host and its last line)."""
    wrappers: list[_Wrapper] = []
    try:
        for pl in placements:
            wrappers.append(_spawn(local, pl, ssh, at_path, grace_s))
        if started:
            started([w.proc.pid for w in wrappers])
        _wait_ready(wrappers, min(timeout_s, READY_TIMEOUT_S))
        go_ns = time.time_ns() + int(lead_s * 1e9)
        for w in wrappers:
            w.send(f"go {go_ns + w.placement.offset_ns}")
        timed_out = _wait_all(wrappers, timeout_s, tick, tick_interval_s, grace_s,
                              release=(lambda: _release_held(wrappers, lead_s)) if hold else None)
        results = []
        for w in wrappers:
            rc = reap(w.proc)
            w.close()
            tool_text, start_ns, end_ns, _ = split_markers(w.text())
            off = w.placement.offset_ns
            res = CommandResult([str(a) for a in w.placement.spawn.argv], rc, tool_text, "",
                                time.monotonic() - w.spawned, timed_out and rc != 0 and not w.stopped)
            results.append(TimedResult(res, w.placement.host.name,
                                       None if start_ns is None else (start_ns - off) / 1e9,
                                       None if end_ns is None else (end_ns - off) / 1e9,
                                       w.ready_s or 0.0, w.stopped, go_ns / 1e9, tool_cpu_s(w.text())))
        return results
    except BaseException:
        for w in wrappers:
            if not exited(w.proc):
                w.kill()
            w.close()
        raise


def _release_held(wrappers: list[_Wrapper], lead_s: float) -> bool:
    """Once every tool still running is held, release them all at one instant; True once done. One that ended
    first (it failed: the batch stops the others) needs no release."""
    waiting = [w for w in wrappers if not w.released]
    for w in waiting:
        if exited(w.proc) or w.stopped:
            w.released = True
        elif _marker(w.text(), "held") is None:
            return False
    instant = time.time_ns() + int(lead_s * 1e9)
    for w in waiting:
        if not exited(w.proc) and not w.stopped:
            w.send(f"measure {instant + w.placement.offset_ns}")
        w.released = True
    return True


def _wait_all(wrappers: list[_Wrapper], timeout_s: float, tick: Callable[[], bool | None] | None,
              tick_interval_s: float, grace_s: float, release: Callable[[], bool] | None = None) -> bool:
    """Until every wrapper ended; True when the timeout killed them. `release`, until it says it is done, is
    called at each look (run_started_together's hold)."""
    deadline = time.monotonic() + timeout_s
    next_tick = time.monotonic() + tick_interval_s

    def stop_all(now: float) -> float:
        for w in wrappers:
            if not exited(w.proc) and not w.stopped:
                w.stopped = True
                w.send("stop")
        # the wrappers kill their tools after the grace; ours is the backstop for a host that stopped answering
        return min(deadline, now + grace_s + 5)

    while [exited(w.proc) for w in wrappers].count(False):      # ask each: a list, not a short-circuit any()
        now = time.monotonic()
        if now > deadline:
            for w in wrappers:
                if not exited(w.proc):
                    w.kill()
            return True
        if any(w.proc.returncode not in (None, 0) and not w.stopped for w in wrappers):
            deadline = stop_all(now)    # one failed: the batch has failed, the others stop now
        if tick and now >= next_tick:
            if tick() is True:
                deadline = stop_all(now)
            next_tick = now + tick_interval_s
        if release is not None and release():
            release = None
        time.sleep(0.02)
    return False
