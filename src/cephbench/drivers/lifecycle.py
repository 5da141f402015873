"""The one lifecycle of a group of tests, driven through a kind's hooks as fio's core drives an engine's
ioengine_ops: the core owns the order, the kind fills in what only it knows.

For a group: nothing when none of its tests is still to do; a kind that cannot run on this machine (`unavailable`:
krbd without its kernel module) says why once and skips them; its resources, made once for the group
(`resources`: a context manager, so that they are removed however the group ends). Then each test still to do, in
order, announced as it starts (a search's steps past where it stopped do not start): the resources' notes
(`notes`), what must be there first (`prepare`: objects written for a read; an Outcome it returns ends the test),
the page caches dropped and the OSDs' caches made cold before a phase that reads (`ctx.prepare_reads`, by the
phase's direction), what makes its figure untrustworthy before it runs (`warnings`: a read of images never
written), its run once or in rounds until steady (drivers/rounds.in_rounds over the kind's `one_round(step, n)`:
the command for each client, the run and the parser), what the kind adds to the test's outcome (`finish`), and the
group's searches told (drivers/search.py); last, a search's steps past its stop, each a skipped result.

The capacity guard's reservation for a round that may write is `write_room`. rados bench's group (a write whose
objects the reads read, top-ups, a search's room) still runs a loop of its own (drivers/rados_bench.py).
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Generic, Iterator, TypeVar

from ..cluster.safety import CapacityBudget
from ..core.results import Test
from ..core.units import format_size
from ..kinds import direction_of
from .base import DriverContext, Outcome, now, started_tests
from .rounds import RoundsEnd, in_rounds
from .search import Searches

R = TypeVar("R")


def reads(test: Test) -> bool:
    """Whether the test's phase reads (a read or a mix): its caches are dropped first, its data must be there."""
    return direction_of(test.kind, test.params.phase) in ("read", "mixed")


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

    def name(self, n: int) -> str:
        """Round n's raw directory (raw/<name>/): the test's own without rounds (n = 0)."""
        return f"{self.test.id}/round{n}" if n else self.test.id


class Hooks(Generic[R]):
    """What a kind's driver fills in; every hook but `one_round` has a default that does nothing."""

    def unavailable(self, ctx: DriverContext, group: list[Test]) -> str | None:
        """Why the group's tests cannot run here (each is then a skipped result saying so), or None."""
        return None

    def resources(self, ctx: DriverContext, group: list[Test]) -> AbstractContextManager[R]:
        """The group's pools, images, objects: made on entry, removed on exit, through the ledger."""
        return nullcontext()    # type: ignore[return-value]

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

    def finish(self, step: Step[R], outcome: Outcome) -> None:
        """What the kind adds to the test's outcome once its rounds are one (e.g. its step's hosts' images)."""


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
        for test, started in started_tests(ctx, group, todo, searches.over):
            i = group.index(test)
            step = Step(ctx, test, res, started, ctx.clients_of(test), hooks.notes(res), [],
                        later=any(t.id in todo for t in group[i + 1:]))
            ended = hooks.prepare(step)
            if ended is not None:
                yield ended
                continue
            if reads(test):
                step.notes += ctx.prepare_reads()
            step.warnings = hooks.warnings(step)
            outcome = in_rounds(test, lambda n, step=step: hooks.one_round(step, n))
            if outcome is None:
                continue
            hooks.finish(step, outcome)
            yield searches.after(outcome)
        yield from searches.skipped_in(group, todo)


def write_room(step: Step[Any], n: int, amplification: float, bound: int, tool: str, hint: str
               ) -> tuple[Outcome | None, CapacityBudget | None]:
    """The capacity guard before round n of a test that may write `bound` client bytes: (None, budget) when there is
    room, reserved until the driver's ctx.write_ended; else the test's error (its first round, with `hint`), or
    RoundsEnd from a later round (the rounds so far are the figure). (None, None) in a dry run."""
    ctx = step.ctx
    if ctx.dry_run:
        return None, None
    granted, budget = ctx.reserve_write(amplification)
    if bound <= granted:
        return None, budget
    ctx.reserve(0)
    msg = (f"capacity guard: {tool} may write {format_size(bound)}, more than the {format_size(granted)} left "
           f"below {ctx.settings.max_raw_used:.0%} raw used ({budget.describe()})")
    if n > 1:
        raise RoundsEnd(msg)
    return Outcome(step.test, step.started[0], time.monotonic() - step.started[1], notes=list(step.notes),
                   error=f"{msg}; {hint}"), budget
