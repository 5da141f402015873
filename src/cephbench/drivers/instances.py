"""A test's tool instances, run here or on client hosts at one instant, then merged: the one place a driver's
load is placed. A driver says where each instance runs (`Where`: its client, None for this machine, and its
command) and how one instance's output reads; this runs them (`run_instances`: DriverContext.run_tools_seen here,
run_on_clients_seen there, started at one instant by fanout), watches them, and merges the instances' figures
(`instances_outcome`: merge.merge_instances, latency as the tool gives it). What the watches saw travels back on
the Outcome (`Outcome.seen`), never on the context.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ..evidence.rounds import Seen
from ..hosts.fanout import TimedResult, failure
from ..hosts.local import CommandResult, Spawn
from ..core.merge import merge_instances
from ..core.results import Measurement, Test
from ..core.errors import ParseError
from .base import DriverContext, Figures, Outcome, client_notes

# One instance: the client host it runs on (clients.Client; None: this machine) and its command
Where = tuple[Any, Spawn]


@dataclass(frozen=True)
class Ran:
    """What a test's instances did: each one's result in the order given, each one's host and actual start and
    end when they ran on client hosts (None here), and what was watched meanwhile."""
    results: list[CommandResult]
    timed: list[TimedResult] | None
    seen: Seen


def run_instances(ctx: DriverContext, test: Test, where: Sequence[Where], timeout_s: float,
                  live: Callable[[list[Path]], Figures] | None = None,
                  hold: Callable[[list[str]], list[str]] | None = None) -> Ran | None:
    """The instances together: on this machine when none names a client, else each on its client, started at one
    instant (fanout: ready, then go). `hold` (how a tool's argv makes it wait, set up, to be released) with more
    than one instance: they are released together once all are set up, so their measured phases start together
    however long each one's setup took. None in a dry run (their commands are in ctx.planned)."""
    held = False
    if hold is not None and len(where) > 1:
        held, where = True, [(c, replace(sp, argv=hold(list(sp.argv)))) for c, sp in where]
    if any(c is not None for c, _ in where):
        got = ctx.run_on_clients_seen(test, ctx.placements(list(where)), timeout_s, live=live, hold=held)
        if got is None:
            return None
        timed, seen = got
        return Ran([t.result for t in timed], timed, seen)
    here = ctx.run_tools_seen(test, [sp for _, sp in where], timeout_s, live=live, hold=held)
    if here is None:
        return None
    return Ran(here[0], None, here[1])


def instances_outcome(test: Test, started: tuple[float, float], ran: Ran,
                      parse: Callable[[int, CommandResult], Measurement], *, tool: str, latency: str, raw: list[str],
                      notes: list[str], warnings: Sequence[str] = (),
                      accept: Callable[[CommandResult], bool] = lambda r: r.ok) -> Outcome:
    """The Outcome of a test's instances: the first that failed (on client hosts the one fanout names: it stopped
    the others), else each one's figures (`parse(i, result)`), on client hosts with its host and actual start and
    end, merged (merge.merge_instances with `latency`; one instance is its own figure)."""
    started_unix, t0 = started
    timed = ran.timed
    commands = ([f"on {t.host}: {t.result.cmdline}" for t in timed] if timed is not None
                else [r.cmdline for r in ran.results])

    def failed(error: str) -> Outcome:
        return Outcome(test, started_unix, time.monotonic() - t0, error=error, commands=commands, raw=raw,
                       notes=notes, seen=ran.seen)

    bad = [i for i, r in enumerate(ran.results) if not accept(r)]
    if bad:
        first = ran.results[bad[0]]
        if timed is None:
            return failed(f"{tool} failed: {first.error_text()}")
        return failed(f"{tool} failed: " + (failure(timed) or f"{timed[bad[0]].host}: {first.error_text()}"))
    parts = []
    for i, r in enumerate(ran.results):
        try:
            m = parse(i, r)
        except ParseError as exc:
            return failed(f"{timed[i].host}: {exc}" if timed is not None else str(exc))
        if timed is not None:
            m.host, m.start_unix_s, m.end_unix_s = timed[i].host, timed[i].start_unix_s, timed[i].end_unix_s
        parts.append(m)
    try:
        merged = merge_instances(parts, latency=latency)
    except ParseError as exc:
        return failed(str(exc))
    return Outcome(test, started_unix, time.monotonic() - t0, measurement=merged, commands=commands, raw=raw,
                   notes=notes + client_notes(merged), warnings=list(warnings), seen=ran.seen)


def measure_instances(ctx: DriverContext, test: Test, started: tuple[float, float], where: Sequence[Where],
                      timeout_s: float, parse: Callable[[int, CommandResult], Measurement], *, tool: str,
                      latency: str, notes: list[str], warnings: Sequence[str] = (),
                      live: Callable[[list[Path]], Figures] | None = None,
                      accept: Callable[[CommandResult], bool] = lambda r: r.ok) -> Outcome | None:
    """run_instances, then instances_outcome; raw output: each instance's output file. None in a dry run."""
    ran = run_instances(ctx, test, where, timeout_s, live=live)
    if ran is None:
        return None
    raw = [str(sp.output.relative_to(ctx.rundir.path)) for _, sp in where] if ctx.rundir else []
    return instances_outcome(test, started, ran, parse, tool=tool, latency=latency, raw=raw, notes=notes,
                             warnings=warnings, accept=accept)
