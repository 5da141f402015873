"""The one lifecycle of a group (drivers/lifecycle.py): the order in which the core calls a kind's hooks, the cache
drops before a read, a search's steps past its stop, a kind that cannot run here, a test its preparation ends, the
group's resources undone however it ends, and the capacity guard's refusal of a round that may write. The tests are
the plan's own (a suite parsed and expanded); the context is the few calls the loop makes of a DriverContext."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from cephbench.cluster.safety import CapacityBudget
from cephbench.core.results import Measurement
from cephbench.drivers import lifecycle
from cephbench.drivers.base import Outcome
from cephbench.drivers.lifecycle import Hooks, Step, write_room
from cephbench.drivers.rounds import RoundsEnd
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import expand


def _group(**w):
    s = parse_suite({"name": "t", "pools": {"rep": {"type": "replicated"}},
                     "workloads": [{"type": "fio_rbd", "pool": "rep", "duration": "5s", **w}]}, "s")
    return expand(s).tests


class Ctx:
    """What the loop asks of a DriverContext: its events, a test's client hosts, the cache drops."""

    def __init__(self):
        self.log: list[tuple[str, str]] = []
        self.events = self
        self.dry_run = False

    def test_started(self, test):
        self.log.append(("start", test.id))

    def note(self, text):
        self.log.append(("note", text))

    def clients_of(self, test):
        return []

    def prepare_reads(self):
        self.log.append(("drop", ""))
        return ["caches dropped"]


class Recorder(Hooks[str]):
    def __init__(self, ctx, fail=(), why=None, prepared=None, boom=None):
        self.ctx, self.fail, self.why, self.prepared, self.boom = ctx, fail, why, prepared, boom
        self.steps: list[Step[str]] = []

    def unavailable(self, ctx, group):
        return self.why

    @contextmanager
    def resources(self, ctx, group):
        ctx.log.append(("make", group[0].group))
        try:
            yield "the-pool"
        finally:
            ctx.log.append(("remove", group[0].group))

    def notes(self, res):
        return [f"made {res}"]

    def prepare(self, step):
        self.ctx.log.append(("prepare", step.test.id))
        return self.prepared(step) if self.prepared else None

    def warnings(self, step):
        return ["a warning"] if step.test.params["phase"] == "randread" else []

    def one_round(self, step, n):
        self.ctx.log.append(("round", f"{step.test.id}:{n}"))
        self.steps.append(step)
        if step.test.id == self.boom:
            raise RuntimeError("the tool's host went away")
        if step.test.id in self.fail:
            return Outcome(step.test, step.started[0], 1.0, error="fio failed", notes=list(step.notes))
        m = Measurement(tool="fio", op=step.test.params["phase"], duration_s=5.0, bytes_per_s=1e6, ops_per_s=250.0)
        return Outcome(step.test, step.started[0], 5.0, measurement=m, notes=list(step.notes),
                       warnings=list(step.warnings))

    def finish(self, step, outcome):
        self.ctx.log.append(("finish", step.test.id))
        outcome.notes.append("finished")


def test_the_core_calls_the_hooks_in_order_and_drops_caches_only_before_a_read():
    group = _group(rw=["randwrite", "randread"])
    ctx = Ctx()
    hooks = Recorder(ctx)
    out = list(lifecycle.run_group(hooks, ctx, group, {t.id for t in group}))
    w, r = (t.id for t in group)
    assert ctx.log == [("make", group[0].group),
                       ("start", w), ("prepare", w), ("round", f"{w}:0"), ("finish", w),
                       ("start", r), ("prepare", r), ("drop", ""), ("round", f"{r}:0"), ("finish", r),
                       ("remove", group[0].group)]
    assert [o.test.id for o in out] == [w, r]
    assert out[0].notes == ["made the-pool", "finished"] and out[0].warnings == []
    assert out[1].notes == ["made the-pool", "caches dropped", "finished"] and out[1].warnings == ["a warning"]
    assert [s.later for s in hooks.steps] == [True, False]
    assert hooks.steps[0].name(0) == w and hooks.steps[0].name(2) == f"{w}/round2"


def test_a_kind_whose_tool_writes_what_it_reads_in_the_same_run_has_no_cache_drop_before_its_read(monkeypatch):
    # RGW's loadgen fills a get phase's key space first, in the phase's own run: a drop before it reaches nothing
    # the phase reads; the plan counts none either
    from dataclasses import replace

    from cephbench.kinds import KINDS
    from cephbench.suite.plan import _drops_before

    group = _group(rw=["randwrite", "randread"])
    monkeypatch.setitem(KINDS, "fio_rbd", replace(KINDS["fio_rbd"], prefills_in_run=True))
    ctx = Ctx()
    out = list(lifecycle.run_group(Recorder(ctx), ctx, group, {t.id for t in group}))
    assert ("drop", "") not in ctx.log and "caches dropped" not in out[1].notes
    assert not _drops_before(group[1], True)
    monkeypatch.undo()
    assert _drops_before(group[1], True)
    assert KINDS["rgw"].prefills_in_run and not KINDS["rgw"].reads_cluster


def test_only_the_tests_to_do_run_and_a_group_with_none_makes_nothing():
    group = _group(rw=["randwrite", "randread"])
    ctx = Ctx()
    out = list(lifecycle.run_group(Recorder(ctx), ctx, group, {group[1].id}))
    assert [o.test.id for o in out] == [group[1].id]
    assert ("start", group[0].id) not in ctx.log
    ctx = Ctx()
    assert list(lifecycle.run_group(Recorder(ctx), ctx, group, {"another-test"})) == [] and ctx.log == []


def test_a_search_that_stops_skips_its_later_steps_without_running_them():
    group = _group(rw=["randwrite"], iodepth={"auto": {"max": 4}})
    assert [t.params["iodepth"] for t in group] == [1, 2, 4]
    ctx = Ctx()
    hooks = Recorder(ctx, fail={group[0].id})
    out = list(lifecycle.run_group(hooks, ctx, group, {t.id for t in group}))
    assert [s.test.id for s in hooks.steps] == [group[0].id]
    assert out[0].search_stop is not None and out[0].search_stop.reason == "failed"
    assert [(o.test.id, o.skipped) for o in out[1:]] == [(group[1].id, True), (group[2].id, True)]
    assert all("search of iodepth stopped at 1" in o.error for o in out[1:])


def test_a_kind_that_cannot_run_here_skips_every_test_saying_why_and_makes_nothing():
    group = _group(rw=["randwrite", "randread"])
    ctx = Ctx()
    out = list(lifecycle.run_group(Recorder(ctx, why="krbd skipped: no rbd module"), ctx, group,
                                   {t.id for t in group}))
    assert [(o.skipped, o.error) for o in out] == [(True, "krbd skipped: no rbd module")] * 2
    assert ctx.log == [("note", "krbd skipped: no rbd module")]


def test_a_test_its_preparation_ends_is_recorded_as_it_is_without_rounds():
    group = _group(rw=["randwrite", "randread"])
    ctx = Ctx()
    ended = lambda step: Outcome(step.test, 0.0, 0.0, error="capacity guard: no room")  # noqa: E731
    hooks = Recorder(ctx, prepared=lambda s: ended(s) if s.test.params["phase"] == "randread" else None)
    out = list(lifecycle.run_group(hooks, ctx, group, {t.id for t in group}))
    assert out[1].error == "capacity guard: no room" and out[1].notes == []
    assert ("drop", "") not in ctx.log and ("round", f"{group[1].id}:0") not in ctx.log


def test_the_groups_resources_are_removed_when_a_round_raises():
    group = _group(rw=["randwrite", "randread"])
    ctx = Ctx()
    with pytest.raises(RuntimeError, match="went away"):
        list(lifecycle.run_group(Recorder(ctx, boom=group[0].id), ctx, group, {t.id for t in group}))
    assert ctx.log[-1] == ("remove", group[0].group)


class Feeding(Recorder):
    """A kind whose reads read what its write made (rados bench): the write runs again, unrecorded, while a read is
    to do; a failed write ends the group."""

    def needed(self, test, group, todo):
        return test.params["phase"] == "randwrite"

    def finish(self, step, outcome):
        super().finish(step, outcome)
        return outcome.error is not None and step.test.params["phase"] == "randwrite"


STEADY = {"max": "60s", "window": 3, "max_range": 0.5, "max_slope": 0.5}


def test_a_test_done_already_that_a_later_one_needs_runs_once_unrecorded():
    group = _group(rw=["randwrite", "randread"], steady_state=STEADY)
    w, r = (t.id for t in group)
    ctx = Ctx()
    hooks = Feeding(ctx)
    out = list(lifecycle.run_group(hooks, ctx, group, {r}))
    assert [o.test.id for o in out] == [r]
    # announced and finished, but once (not in steady rounds) and without an outcome of its own
    assert ctx.log[:5] == [("make", group[0].group), ("start", w), ("prepare", w), ("round", f"{w}:0"),
                           ("finish", w)]
    assert [(s.test.id, s.recorded) for s in hooks.steps][:2] == [(w, False), (r, True)]
    assert ("round", f"{r}:1") in ctx.log       # the recorded read runs in its rounds
    ctx = Ctx()
    out = list(lifecycle.run_group(Recorder(ctx), ctx, group, {r}))     # a kind that needs nothing of it
    assert ("start", w) not in ctx.log and [o.test.id for o in out] == [r]


def test_a_finish_that_ends_the_group_leaves_its_later_tests_without_an_outcome():
    group = _group(rw=["randwrite", "randread"])
    ctx = Ctx()
    out = list(lifecycle.run_group(Feeding(ctx, fail={group[0].id}), ctx, group, {t.id for t in group}))
    assert [(o.test.id, o.error) for o in out] == [(group[0].id, "fio failed")]
    assert ("start", group[1].id) not in ctx.log and ctx.log[-1] == ("remove", group[0].group)


def test_a_searchs_skipped_steps_come_where_they_fall_for_a_kind_that_asks_else_last():
    group = _group(rw=["randwrite", "randread"], iodepth={"auto": {"max": 4}})
    assert [(t.params["phase"], t.params["iodepth"]) for t in group] == [
        ("randwrite", 1), ("randwrite", 2), ("randwrite", 4), ("randread", 1), ("randread", 2), ("randread", 4)]
    ids = [t.id for t in group]
    ctx = Ctx()
    out = list(lifecycle.run_group(Recorder(ctx, fail={ids[0]}), ctx, group, set(ids)))
    assert [o.test.id for o in out] == [ids[0], ids[3], ids[4], ids[5], ids[1], ids[2]]

    class InPlace(Recorder):
        skips_in_place = True
    ctx = Ctx()
    out = list(lifecycle.run_group(InPlace(ctx, fail={ids[0]}), ctx, group, set(ids)))
    assert [(o.test.id, o.skipped) for o in out] == [(ids[0], False), (ids[1], True), (ids[2], True),
                                                     (ids[3], False), (ids[4], False), (ids[5], False)]
    assert ("start", ids[1]) not in ctx.log


def test_a_hook_may_stop_its_steps_search_with_a_reason():
    from cephbench.core.results import SearchStop
    group = _group(rw=["randwrite"], iodepth={"auto": {"max": 4}})
    ctx = Ctx()

    class NoRoom(Recorder):
        def one_round(self, step, n):
            if step.test.params["iodepth"] < 2:
                return super().one_round(step, n)
            why = SearchStop(reason="capacity", text="no room")
            step.searches.stop(step.test, why)
            return Outcome(step.test, step.started[0], 0.0, error="not run: no room", skipped=True, search_stop=why)
    out = list(lifecycle.run_group(NoRoom(ctx), ctx, group, {t.id for t in group}))
    assert [(o.skipped, o.search_stop and o.search_stop.reason) for o in out] == [
        (False, None), (True, "capacity"), (True, None)]
    assert out[2].error == "not run: the search of iodepth stopped at 2 (no room)"


class Guarded(Ctx):
    def __init__(self, free: int):
        super().__init__()
        self.free = free
        self.settings = SimpleNamespace(max_raw_used=0.5)
        self.reserved: list[int] = []

    def reserve_write(self, amplification, pools=()):
        budget = CapacityBudget(total_raw=100 * 2**30, used_raw=40 * 2**30, max_raw_used=0.5)
        return self.free, budget

    def reserve(self, raw_bytes):
        self.reserved.append(raw_bytes)


def _step(ctx):
    t = _group(rw=["randwrite"])[0]
    return Step(ctx, t, "p", (1000.0, 0.0), [], ["a note"], [], later=False)


def test_the_capacity_guard_refuses_a_round_that_may_write_more_than_the_room_left():
    ctx = Guarded(free=2**30)
    assert write_room(_step(ctx), 0, 3.0, 2**30, "tool", "lower it")[0] is None and ctx.reserved == []
    refused, budget = write_room(_step(ctx), 0, 3.0, 2**30 + 1, "tool", "lower it")
    assert refused is not None and budget is not None and ctx.reserved == [0]
    assert refused.error == ("capacity guard: tool may write 1.0GiB, more than the 1GiB left below 50% raw used "
                             "(40GiB of 100GiB raw used; limit 50%); lower it")
    assert refused.started_unix == 1000.0 and refused.notes == ["a note"] and refused.measurement is None
    with pytest.raises(RoundsEnd, match="capacity guard: tool may write"):     # a later round: the rounds so far
        write_room(_step(ctx), 2, 3.0, 2**31, "tool", "lower it")
    ctx.dry_run = True
    assert write_room(_step(ctx), 0, 3.0, 2**40, "tool", "lower it") == (None, None)


def test_a_rounds_end_with_no_run_to_stand_is_the_tests_error_and_the_group_goes_on():
    # a hook refusing a later round before any counted (a steady test's first round, or a kind's own RoundsEnd):
    # the refusal is that test's error, the next test still runs and the resources are removed
    group = _group(rw=["randwrite", "randread"])
    w, r = (t.id for t in group)
    ctx = Ctx()

    class Refusing(Recorder):
        def one_round(self, step, n):
            if step.test.id == w:
                raise RoundsEnd("capacity guard: fio may write 5 GiB, more than the 1 GiB left")
            return super().one_round(step, n)

    out = list(lifecycle.run_group(Refusing(ctx), ctx, group, {w, r}))
    assert [o.test.id for o in out] == [w, r]
    assert out[0].error.startswith("capacity guard: fio may write") and out[0].measurement is None
    assert out[1].error is None and ctx.log[-1] == ("remove", group[0].group)
