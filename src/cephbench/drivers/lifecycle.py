"""The one lifecycle of a group of tests, driven through a kind's hooks as fio's core drives an engine's
ioengine_ops: the core owns the order, the kind fills in what only it knows.

For a group: nothing when none of its tests is still to do; a kind that cannot run on this machine (`unavailable`:
krbd without its kernel module) says why once and skips them; its resources, made once for the group
(`resources`: a context manager, so that they are removed however the group ends; its value may carry what passes
from one test to the next, e.g. what a write left for the reads). Then each test still to do, in order, and each
one not to do that a later one needs (`needed`: a write whose objects the reads read, on a resumed run), run but not
recorded, announced as it starts (a search's steps past where it stopped do not start): the resources' notes
(`notes`), what must be there first (`prepare`: objects written for a read; an Outcome it returns ends the test),
the page caches dropped and the OSDs' caches made cold before a phase that reads (`ctx.prepare_reads`, by the
phase's direction; not where the kind's tool writes what it reads in the same run, its `prefills_in_run`), what makes its figure untrustworthy before it runs (`warnings`: a read of images never
written), its run once or in rounds until steady (drivers/rounds.in_rounds over the kind's `one_round(step, n)`:
the command for each client, the run and the parser; a test run only for what it makes runs once), what the kind
adds to the test's outcome (`finish`, which may end the group: a failed write leaves its reads nothing), and the
group's searches told (drivers/search.py; a hook may stop one through `step.searches`: the capacity guard leaves a
step no room); a search's steps past its stop are each a skipped result, last or where they fall in the group
(`skips_in_place`).

The capacity guard's reservation for a round that may write is `write_room`; a kind whose write is cut to the room
(rados bench's --max-objects) reserves through ctx.reserve_write itself.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Generic, Iterator, Sequence, TypeVar

from ..cluster.safety import CapacityBudget
from ..core.results import Test
from ..core.units import format_size
from ..kinds import KINDS
from .base import DriverContext, Outcome, now
from .rounds import RoundsEnd, in_rounds
from .search import Searches

R = TypeVar("R")


def reads(test: Test) -> bool:
    """Whether the test reads what was there before it (Kind.drops_caches_before: a read or a mix, not of a kind
    whose tool writes what it reads in the same run): its caches are dropped first, its data must be there."""
    return KINDS[test.kind].drops_caches_before(test.params.phase)


@dataclass
class Step(Generic[R]):
    """One test of a group as its kind's hooks see it."""
    ctx: DriverContext
    test: Test
    res: R                          # the group's resources, as the kind's `resources` made them
    started: tuple[float, float]    # (unix, monotonic) when it was announced
    clients: list[Any]              # its client hosts (clients.Client); none: this machine
    notes: list[str]                # so far: the resources', the preparation's, the cache drops'
    warnings: list[str]
    later: bool                     # another test of the group is still to do after this one
    searches: Searches = field(default_factory=Searches)    # the group's: a hook may stop one (Searches.stop)
    recorded: bool = True           # False: run only for what later tests need (Hooks.needed); no outcome of it

    def name(self, n: int) -> str:
        """Round n's raw directory (raw/<name>/): the test's own without rounds (n = 0)."""
        return f"{self.test.id}/round{n}" if n else self.test.id


class Hooks(Generic[R]):
    """What a kind's driver fills in; every hook but `one_round` has a default that does nothing."""

    # a search's steps past its stop, each a skipped result: where they fall in the group (True), or after its
    # other tests (False)
    skips_in_place = False

    def unavailable(self, ctx: DriverContext, group: list[Test]) -> str | None:
        """Why the group's tests cannot run here (each is then a skipped result saying so), or None."""
        return None

    def resources(self, ctx: DriverContext, group: list[Test]) -> AbstractContextManager[R]:
        """The group's pools, images, objects: made on entry, removed on exit, through the ledger."""
        return nullcontext()    # type: ignore[return-value]

    def needed(self, test: Test, group: list[Test], todo: set[str]) -> bool:
        """Whether `test`, not to do (its result is there already), runs anyway, unrecorded, for what the group's
        tests still to do need of it (the objects a write leaves for the reads)."""
        return False

    def notes(self, res: R) -> list[str]:
        """What every test of the group notes about its resources (a prefill)."""
        return []

    def prepare(self, step: Step[R]) -> Outcome | None:
        """Before the test runs (and before the caches are dropped for a read): what it needs made first, noted in
        step.notes; an Outcome to end the test with instead (recorded as it is: no search counts it)."""
        return None

    def warnings(self, step: Step[R]) -> list[str]:
        """What makes the test's figure untrustworthy whatever it measures."""
        return []

    def one_round(self, step: Step[R], n: int) -> Outcome | None:
        """Run the test once (n = 0) or its round n of steady_state (drivers/rounds.py); None in a dry run."""
        raise NotImplementedError

    def finish(self, step: Step[R], outcome: Outcome) -> bool | None:
        """What the kind adds to the test's outcome once its rounds are done (e.g. its step's hosts' images); True
        ends the group after this test (what the later tests need was not made: they get no outcome)."""
        return None


def run_group(hooks: Hooks[Any], ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    """A group's tests through `hooks`: one Outcome per test in `todo` (see the module's doc for the order)."""
    if not any(t.id in todo for t in group):
        return
    why = hooks.unavailable(ctx, group)
    if why:
        ctx.events.note(why)
        for t in group:
            if t.id in todo:
                started, _ = now()
                yield Outcome(t, started, 0.0, error=why, skipped=True)
        return
    searches = Searches()       # the group's searches (concurrency, iodepth, clients: auto)
    with hooks.resources(ctx, group) as res:
        for i, test in enumerate(group):
            recorded = test.id in todo
            if not recorded and not hooks.needed(test, group, todo):
                continue
            if searches.over(test) is not None:
                if recorded and hooks.skips_in_place:
                    yield searches.skipped(test)
                continue
            started = now()
            ctx.events.test_started(test)
            step = Step(ctx, test, res, started, ctx.clients_of(test), hooks.notes(res), [],
                        later=any(t.id in todo for t in group[i + 1:]), searches=searches, recorded=recorded)
            ended = hooks.prepare(step)
            if ended is not None:
                if recorded:
                    yield ended
                continue
            if reads(test):
                step.notes += ctx.prepare_reads()
            step.warnings = hooks.warnings(step)
            try:
                outcome = in_rounds(test if recorded else without_steady(test),
                                    lambda n, step=step: hooks.one_round(step, n))
            except RoundsEnd as exc:      # a later round's refusal with no run before it to stand: the test's error
                outcome = Outcome(test, started[0], time.monotonic() - started[1], notes=list(step.notes),
                                  error=str(exc))
            if outcome is None:
                continue
            ends = hooks.finish(step, outcome)
            if recorded:
                yield searches.after(outcome)
            if ends:
                return
        if not hooks.skips_in_place:
            yield from searches.skipped_in(group, todo)


def without_steady(test: Test) -> Test:
    """A test run only for what it makes (not recorded) runs once, not in rounds."""
    return test.with_params({k: v for k, v in test.params.items() if k != "steady_state"})


def write_room(step: Step[Any], n: int, amplification: float, bound: int, tool: str, hint: str,
               pools: Sequence[str] = ()) -> tuple[Outcome | None, CapacityBudget | None]:
    """The capacity guard before round n of a test that may write `bound` client bytes (into `pools` when named):
    (None, budget) when there is room, reserved until the driver's ctx.write_ended; else the test's error (its first
    round, with `hint`), or RoundsEnd from a later round (the rounds so far are the figure). (None, None) in a dry
    run."""
    ctx = step.ctx
    if ctx.dry_run:
        return None, None
    granted, budget = ctx.reserve_write(amplification, pools=pools)
    if bound <= granted:
        return None, budget
    ctx.reserve(0)
    msg = (f"capacity guard: {tool} may write {format_size(bound)}, more than the {format_size(granted)} left "
           f"below {ctx.settings.max_raw_used:.0%} raw used ({budget.describe()})")
    if n > 1:
        raise RoundsEnd(msg)
    return Outcome(step.test, step.started[0], time.monotonic() - step.started[1], notes=list(step.notes),
                   error=f"{msg}; {hint}"), budget
