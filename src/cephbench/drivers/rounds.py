"""Steady state for every kind that runs for a duration: the one loop that runs a test's phase in rounds of its
duration until steady (core/steady.py: SNIA's criteria over the last `window` rounds) or until steady_state.max, and
makes the rounds one Outcome: the window's figure (steady.combine), what the watches saw over the same rounds
(evidence/rounds.combine), every round's commands and raw output, and a note that says whether it got steady.

A driver hands `in_rounds` its test and how to run one round (`one_round(n)`: n is 0 without steady_state, else
1, 2, ...; a round keeps its raw output apart, e.g. under a `-round<n>` name). A round that fails ends the test
with its error; a round the capacity guard stopped is the last one; a round may raise RoundsEnd when it cannot
start (the rounds so far are the figure)."""

from __future__ import annotations

import statistics
import time
from typing import Callable

from ..core import loadsearch
from ..evidence.rounds import combine as combine_seen
from ..kinds import KINDS
from ..core.results import Measurement, Test, steady_state
from ..core.steady import combine, verdict
from .base import Outcome

MIB = 1024 * 1024


class RoundsEnd(Exception):
    """A round cannot start (e.g. the capacity guard leaves no room): the rounds so far are the measurement; the
    message goes into its notes."""


def round_suffix(n: int) -> str:
    """What a round adds to the names of its raw output: nothing without steady_state (n = 0)."""
    return f"-round{n}" if n else ""


def stalled(test: Test, m: Measurement | None) -> str | None:
    """What stalled in a search step's per-second series (loadsearch.stalls: seconds past the tool's warm-up far
    below the step's own median), said for its note; None when nothing did or the step is no search's."""
    if test.search is None or m is None:
        return None
    seconds = step_seconds(m)
    kind = KINDS.get(test.kind)
    warmup = kind.warmup_s if kind is not None else 1.0
    low = loadsearch.stalls(seconds, warmup)
    if not low:
        return None
    past = loadsearch.past_warmup(seconds, warmup)
    unit, scale = ("MiB/s", MIB) if m.bytes_per_s else ("ops/s", 1.0)
    shown = ", ".join(f"{seconds[i] / scale:,.2f}" for i in low)
    return (f"second{'s' if len(low) > 1 else ''} {', '.join(str(i + 1) for i in low)} of its "
            f"{len(seconds)} fell to {shown} {unit} against the step's median second past its warm-up of "
            f"{statistics.median(past) / scale:,.2f}")


def _unstalled(test: Test, one_round: Callable[[int], Outcome | None]) -> Outcome | None:
    """A search step, run again while its per-second series shows a stall (at most loadsearch.STALL_RERUNS more
    times, each run's raw output kept apart under -round<n>): a stall is a pause of the cluster or the machine, not
    what the load gives, and a step averaged over it would stop the search at a knee that is not there."""
    out = one_round(0)
    said: list[str] = []
    ran: list[Outcome] = [] if out is None else [out]      # every run in order: the one that counts lists them all
    for n in range(1, loadsearch.STALL_RERUNS + 1):
        if out is None or out.measurement is None or out.error or (why := stalled(test, out.measurement)) is None:
            break
        said.append(f"run {n} stalled ({why})")
        try:
            again = one_round(n)
        except RoundsEnd as exc:          # the capacity guard leaves the run again no room: the stalled run stands
            out.notes.append(f"a search step was not run again after a stall: {exc}")
            break
        if again is None:
            return None
        ran.append(again)
        if again.measurement is None or again.error:        # the stalled run stands, with the retry's error said
            out.notes.append(f"a search step run again after a stall failed: {again.error}")
            break
        out = again
    if out is None or not said:
        return out
    last = stalled(test, out.measurement)
    counted = (f"it stalled in each of its {len(said) + 1} runs, and counts as the last ran ({last})" if last
               else f"the figure is run {len(said) + 1}'s, which did not stall")
    out.notes.append("search step run again after a stall: " + "; ".join(said) + f"; {counted}")
    out.commands = [c for o in ran for c in o.commands]
    out.raw = [r for o in ran for r in o.raw]
    return out


def _repeated(test: Test, one_round: Callable[[int], Outcome | None], repeats: int) -> Outcome | None:
    """A search step run `repeats` times (`auto: {repeats: N}`), each run's raw output apart under -round<n> and each
    run again while it stalls (_unstalled): the figure is the median run's (the lower middle of an even count, a real run as a repeat's median is), each run's
    throughput kept in its measurement's extra (loadsearch.STEP_RUNS_KEY) for the step's noise, their spread."""
    runs: list[Outcome] = []
    ended = ""
    for n in range(repeats):
        # each run is run again while it stalls, its reruns numbered after it (-round<n·(STALL_RERUNS+1)+k>)
        try:
            out = _unstalled(test, lambda k, n=n: one_round(n * (loadsearch.STALL_RERUNS + 1) + k))
        except RoundsEnd as exc:          # the capacity guard leaves a later run no room: the runs so far stand
            if not runs:
                raise
            ended = f"; run {len(runs) + 1} was not made: {exc}"
            break
        if out is None:
            return None
        if out.measurement is None or out.error:
            if not runs:
                return out
            ended = f"; run {len(runs) + 1} failed"
            break
        runs.append(out)
    key = "bytes_per_s" if runs[0].measurement and runs[0].measurement.bytes_per_s else "ops_per_s"
    figure = lambda o: float(getattr(o.measurement, key) or 0.0)  # noqa: E731
    ranked = sorted(runs, key=figure)
    mid = ranked[(len(ranked) - 1) // 2]
    assert mid.measurement is not None
    mid.measurement.extra[loadsearch.STEP_RUNS_KEY] = [figure(o) for o in runs]
    unit, scale = ("MiB/s", MIB) if key == "bytes_per_s" else ("ops/s", 1.0)
    mid.notes.append(f"search step run {len(runs)} times ({', '.join(f'{figure(o) / scale:,.1f}' for o in runs)} "
                     f"{unit}): the figure is the median run's, the step's noise their spread" + ended)
    mid.commands = [c for o in runs for c in o.commands]
    mid.raw = [r for o in runs for r in o.raw]
    return mid


def step_seconds(m: Measurement) -> list[float]:
    """A step's whole seconds, in its throughput's unit (bytes/s where it counts bytes, else ops/s)."""
    key = "bytes_per_s" if m.bytes_per_s else "ops_per_s"
    return [float(getattr(s, key) or 0.0) for s in steady_state(m.timeseries)]


# a search step's one_round, by test id, while its search may still measure it again beside the next step
# (drivers/search.py: a step that seems not to pay runs again by turns with the step before it); the search forgets
# each once the step after it counted
_RUNNERS: dict[str, Callable[[int], Outcome | None]] = {}
PAIR_ROUND_FIRST = 31       # the round numbers of a step's runs again in pairs (-round31, ...): past the stall
                            # reruns' and repeats' (at most 9 x (STALL_RERUNS + 1))


def rerun(test: Test, n: int) -> Outcome | None:
    """Run search step `test` again, as the pairs' run `n` (0, 1, ...), each again while it stalls; None: its
    one_round is not known here (it ran in an earlier process: a resumed run) or a dry run."""
    one_round = _RUNNERS.get(test.id)
    if one_round is None:
        return None
    base = PAIR_ROUND_FIRST + n * (loadsearch.STALL_RERUNS + 1)
    return _unstalled(test, lambda k: one_round(base + k))


def forget(test_id: str) -> None:
    _RUNNERS.pop(test_id, None)


def in_rounds(test: Test, one_round: Callable[[int], Outcome | None]) -> Outcome | None:
    """The test's Outcome: one run without steady_state (a search step: again while it stalls), else its rounds
    until steady or max. None in a dry run."""
    steady = test.params.get("steady_state")
    if not steady and test.search is not None:
        _RUNNERS[test.id] = one_round
    if not steady:
        if test.search is not None and test.search.repeats > 1:
            return _repeated(test, one_round, test.search.repeats)
        return _unstalled(test, one_round) if test.search is not None else one_round(0)
    rounds: list[Measurement] = []
    starts: list[float] = []
    outcomes: list[Outcome] = []
    commands: list[str] = []
    raw: list[str] = []
    ended: list[str] = []
    reached_after: float | None = None
    t0 = time.monotonic()
    while True:
        start = time.monotonic() - t0
        try:
            out = one_round(len(rounds) + 1)
        except RoundsEnd as exc:
            if not rounds:
                raise
            ended.append(f"{exc}: steady-state rounds stopped after {len(rounds)}")
            break
        if out is None:
            return None
        commands += out.commands
        raw += out.raw
        if out.measurement is None or out.error:    # the test ends with its error
            out.commands, out.raw = commands, raw
            return out
        rounds.append(out.measurement)
        starts.append(start)
        outcomes.append(out)
        elapsed = time.monotonic() - t0
        if verdict([m.bytes_per_s or 0.0 for m in rounds], steady["window"], steady["max_range"],
                   steady["max_slope"]).steady:
            reached_after = elapsed
            break
        stopped = out.seen is not None and out.seen.cluster.stopped_for_capacity
        if stopped or elapsed + elapsed / len(rounds) > steady["max"]:     # a round costs what they did so far
            break
    last = outcomes[-1]
    m = combine(rounds, starts, steady, reached_after is not None, reached_after)
    window = steady["window"]
    seens = [o.seen for o in outcomes[-window:]]
    seen = combine_seen([s for s in seens if s is not None], starts[-window:]) \
        if all(s is not None for s in seens) else last.seen
    each = f"{len(rounds)} rounds of {test.params['duration_s']:g} s"
    note = (f"steady state reached after {reached_after:.0f} s ({each}); the figure is the last {window} rounds"
            if reached_after is not None else
            f"steady state NOT reached in {steady['max']:g} s ({each}); the figure is the last "
            f"{min(window, len(rounds))} rounds")
    return Outcome(last.test, outcomes[0].started_unix, last.duration_s, measurement=m, commands=commands,
                   raw=raw, notes=last.notes + ended + [note], warnings=last.warnings, seen=seen)
