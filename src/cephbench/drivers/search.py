"""The searches of one group (`concurrency: auto`, core/loadsearch.py) while its driver runs them.

The plan made a test for every load a search may reach; the driver asks before each one whether its search is
still on (`over`), and hands back each step's outcome (`after`), which records its figures and, on the step where
the search stops, why. The steps past the stop are skipped results that say where the search stopped, so that
the run directory accounts for every test of the plan (a resumed run does not run them again).

A step that seems not to pay (its change from the step before fails or is within its noise) is measured again
beside the step before it, by turns (A B A B A B: the search's two runs, then loadsearch.PAIR_RERUNS of each), and
judged on the change between adjacent runs, which a drift of the machine slower than a run leaves out; at most
loadsearch.PAIR_CHECKS_MAX steps of a search so.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Iterator, Sequence

from ..core import loadsearch
from ..kinds import KINDS
from ..core.loadsearch import Change, StepFigures
from ..core.results import Measurement, SearchStop, Test
from .base import Outcome, now
from . import rounds
from .rounds import RoundsEnd, step_seconds

MIB = 1024 * 1024


def figures(load: int, m: Measurement, warmup_s: float = 1.0) -> StepFigures:
    """A step's throughput, latency and noise: the spread of its runs when it ran several (`auto: {repeats: N}`),
    else the per-second spread of its throughput past its tool's warm-up (the tool's own standard deviation where
    its series is too short), as the knee rule takes a point's (analysis/curves.py)."""
    p99 = m.latency.percentiles_ns.get("99")
    sd = m.bytes_per_s_stddev if m.bytes_per_s else m.ops_per_s_stddev
    mean = m.bytes_per_s or m.ops_per_s
    past = loadsearch.past_warmup(step_seconds(m), warmup_s)
    spread = loadsearch.repeats_noise(m.extra.get(loadsearch.STEP_RUNS_KEY) or []) or \
        (loadsearch.noise(past) if past else loadsearch.noise([], sd, mean, count=round(m.duration_s)))
    return StepFigures(load, mean, p99 if p99 is not None else m.latency.mean_ns, p99 is not None, spread)


def _key(test: Test) -> str:
    """What the steps of one search share: everything but the load they double (the phase among it)."""
    assert test.search is not None
    return json.dumps({k: v for k, v in test.params.items() if k != test.search.param}, sort_keys=True, default=str)


def load_of(test: Test) -> int:
    assert test.search is not None
    return int(test.params[test.search.param])


class Searches:
    def __init__(self) -> None:
        self._steps: dict[str, list[StepFigures]] = {}
        self._stopped: dict[str, tuple[int, SearchStop]] = {}      # search -> the load it stopped at, and why
        self._last: dict[str, Test] = {}        # search -> the test of its last step counted (ran in this run)
        self._checks: dict[str, int] = {}       # search -> its steps measured again in pairs

    def over(self, test: Test) -> str | None:
        """Why `test` does not run: its search stopped at a lower load; None: it runs (or ran)."""
        if test.search is None or (got := self._stopped.get(_key(test))) is None:
            return None
        load, why = got
        if load_of(test) <= load:
            return None
        return f"not run: the search of {test.search.param} stopped at {load} ({why.text})"

    def skipped(self, test: Test) -> Outcome:
        started, _ = now()
        return Outcome(test, started, 0.0, error=self.over(test), skipped=True)

    def stop(self, test: Test, why: SearchStop) -> None:
        """The search of `test` stops at it, which does not run (the capacity guard leaves its write no room)."""
        self._stopped.setdefault(_key(test), (load_of(test), why))

    def after(self, outcome: Outcome) -> Outcome:
        """A step's outcome, recorded; on the step where its search stops, the outcome says why. A step whose
        figure has warnings (not the cluster's capability: the knee rule leaves it out too) is no point of the
        search's curve, and the search goes on past it."""
        test = outcome.test
        if test.search is None or _key(test) in self._stopped:
            return outcome
        load = load_of(test)
        why: SearchStop | None
        if outcome.measurement is None or outcome.error:
            why = SearchStop(reason="failed", text=f"{test.search.param} {load} failed")
        else:
            key = _key(test)
            steps = self._steps.setdefault(key, [])
            if not outcome.warnings:
                kind = KINDS.get(test.kind)
                warmup = kind.warmup_s if kind is not None else 1.0
                fig = figures(load, outcome.measurement, warmup)
                prev = self._last.get(key)
                c = loadsearch.change(steps[-1], fig) if steps else None
                # not where its curve cannot bend anyway: the search's last load, fewer than MIN_POINTS in all
                # (a search of two client hosts)
                bends = len(steps) + 1 >= loadsearch.MIN_POINTS or load < test.search.max
                if c is not None and prev is not None and c.verdict != "pays" and bends \
                        and self._checks.get(key, 0) < loadsearch.PAIR_CHECKS_MAX:
                    fig = self._paired(prev, outcome, c, warmup)
                steps.append(fig)
                if prev is not None:
                    rounds.forget(prev.id)
                self._last[key] = test
            why = loadsearch.stop(steps, test.search) if steps and steps[-1].load == load else None
            if why is None and load >= test.search.max:
                why = loadsearch.at_max(test.search)
        if why is not None:
            self._stopped[_key(test)] = (load, why)
            outcome.search_stop = why
            rounds.forget(test.id)
            if (prev := self._last.pop(_key(test), None)) is not None:
                rounds.forget(prev.id)
        return outcome

    def _paired(self, prev: Test, outcome: Outcome, c: Change, warmup: float) -> StepFigures:
        """Step `outcome` (c.to), which seems not to pay, and the step before it (`prev`, c.frm) run again by turns:
        its figures with every run of the two (StepFigures.pair; its measurement's extra too, where the knee of the
        finished curve reads them), and a note of each run and the change by turns. Runs that fail or cannot start
        end the pairs; the ones so far count when they give two adjacent changes."""
        test, m = outcome.test, outcome.measurement
        assert m is not None and test.search is not None
        a, b = c.frm, c.to
        seq: list[tuple[int, float, float | None]] = [(a.load, a.throughput or 0.0, a.latency_ns),
                                                      (b.load, b.throughput or 0.0, b.latency_ns)]
        ran: list[tuple[int, Outcome]] = []
        ended = ""
        for n in range(loadsearch.PAIR_RERUNS):
            for t, load in ((prev, a.load), (test, b.load)):
                try:
                    o = rounds.rerun(t, n)
                except RoundsEnd as exc:        # the capacity guard leaves a write no room
                    o, ended = None, str(exc)
                if o is None or o.measurement is None or o.error or o.warnings:
                    ended = ended or (o.error or "; ".join(o.warnings) if o is not None else "")
                    break
                ran.append((load, o))
                f = figures(load, o.measurement, warmup)
                seq.append((load, f.throughput or 0.0, f.latency_ns))
            else:
                continue
            break
        if not ran:         # not run again (a dry run, or the step before ran in an earlier process)
            return b
        self._checks[_key(test)] = self._checks.get(_key(test), 0) + 1
        # the step's own runs again are its commands and raw output; the step before's stay under its own raw
        # directory (its result was recorded before), named here
        outcome.commands = outcome.commands + [x for load, o in ran if load == b.load for x in o.commands]
        outcome.raw = outcome.raw + [x for load, o in ran if load == b.load for x in o.raw]
        unit, scale = ("MiB/s", MIB) if m.bytes_per_s else ("ops/s", 1.0)
        runs = ", ".join(f"{load}: {v / scale:,.2f}" for load, v, _ in seq)
        theirs = ", ".join(x for load, o in ran if load == a.load for x in o.raw)
        said = (f"search step measured again by turns with {test.search.param} {a.load} after it seemed not to pay "
                f"({c.gain:+.0%} ±{c.noise:.0%} per doubling, {c.verdict}): {unit} by load, in the order run: {runs}"
                f" (the runs of {a.load} again: {theirs or 'no raw output'})")
        if ended:
            said += f"; the pairs ended after {len(ran)} runs again: {ended}"
        paired = replace(b, pair=tuple(seq))
        by_turns = loadsearch.change(a, paired)
        if by_turns is None or by_turns.paired is None:
            outcome.notes.append(said + "; too few runs to judge by turns: the step counts as it ran first")
            return b
        lat = f", latency ×{by_turns.latency_factor:.2f}" if by_turns.latency_factor is not None else ""
        outcome.notes.append(f"{said}; by turns {by_turns.gain:+.0%} ±{by_turns.noise:.0%} per doubling{lat}: "
                             f"{by_turns.verdict}")
        m.extra[loadsearch.PAIR_KEY] = [list(x) for x in seq]
        return paired

    def skipped_in(self, group: Sequence[Test], todo: set[str]) -> Iterator[Outcome]:
        """The group's steps still to do that its searches' stops left out (drivers that skip them at the start:
        base.started_tests' `skip`), each a skipped result saying where its search stopped."""
        for test in group:
            if test.id in todo and self.over(test) is not None:
                yield self.skipped(test)

    def steps_left(self, test: Test, group: Sequence[Test]) -> int:
        """The steps of `test`'s search it may still run, itself among them (1 for a test of no search)."""
        if test.search is None:
            return 1
        return sum(1 for t in group if t.search is not None and _key(t) == _key(test) and load_of(t) >= load_of(test))
