"""The searches of one group (`concurrency: auto`, core/loadsearch.py) while its driver runs them.

The plan made a test for every load a search may reach; the driver asks before each one whether its search is
still on (`over`), and hands back each step's outcome (`after`), which records its figures and, on the step where
the search stops, why. The steps past the stop are skipped results that say where the search stopped, so that
the run directory accounts for every test of the plan (a resumed run does not run them again).
"""

from __future__ import annotations

import json
from typing import Iterator, Sequence

from ..core import loadsearch
from ..kinds import KINDS
from ..core.loadsearch import StepFigures
from ..core.results import Measurement, SearchStop, Test
from .base import Outcome, now
from .rounds import step_seconds


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
            steps = self._steps.setdefault(_key(test), [])
            if not outcome.warnings:
                kind = KINDS.get(test.kind)
                steps.append(figures(load, outcome.measurement, kind.warmup_s if kind is not None else 1.0))
            why = loadsearch.stop(steps, test.search) if steps and steps[-1].load == load else None
            if why is None and load >= test.search.max:
                why = loadsearch.at_max(test.search)
        if why is not None:
            self._stopped[_key(test)] = (load, why)
            outcome.search_stop = why
        return outcome

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
