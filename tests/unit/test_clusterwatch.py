"""The cluster during a test, from real `ceph status` output of the lab with one OSD killed (Ceph 16.2.15)."""

import json
import threading
import time

import pytest

from conftest import FIXTURES
from cephbench.evidence.clusterwatch import (INACTIVE_LIMIT_S, ClusterWatch, growth_over_window, growth_per_s, observe,
                                            silence_text)
from cephbench.core.poll import Pending, Poll

STATUS = FIXTURES / "ceph_status"


def status(name):
    return json.loads((STATUS / f"ceph16.2.15_{name}.json").read_text())


def test_observe_reads_osds_pgs_and_raw_use():
    ok = observe(status("healthy"))
    assert (ok.osds, ok.up, ok.in_, ok.degraded_pgs, ok.inactive_pgs, ok.slow_ops) == (3, 3, 3, 0, 0, False)
    assert 0 < ok.raw_used < 0.2
    bad = observe(status("osd_down_degraded_inactive"))
    assert (bad.up, bad.in_) == (2, 3)
    assert bad.degraded_pgs == 70 and bad.inactive_pgs == 5     # undersized+degraded+peered is not active
    assert bad.degraded_objects > 0


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def watch_over(sequence, monkeypatch, writing=False, max_raw_used=0.75):
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)
    feed = iter(sequence)
    w = ClusterWatch(lambda: status(next(feed)), max_raw_used, writing)
    for _ in sequence:
        w.sample()
        clock.t += 1.0
    return w


def test_an_osd_lost_mid_test_is_recorded_with_times_and_warns(monkeypatch):
    w = watch_over(["healthy", "healthy", "osd_killed_peering", "osd_down_degraded_inactive",
                    "osd_down_degraded_inactive"], monkeypatch)
    s = w.summary()
    assert s.osds_down_max == 1 and s.pgs_degraded_max == 70 and s.objects_degraded_max > 0 and s.stopped is None
    assert s.events[0] == "2 s: 1 of 3 OSD(s) down"
    # each change once, not every reading: the last two readings are the same state
    assert s.events == ["2 s: 1 of 3 OSD(s) down", "2 s: 23 PG(s) inactive", "3 s: 70 PG(s) degraded",
                        "3 s: 5 PG(s) inactive"]
    [warning] = w.warnings()
    assert warning.startswith("the cluster was degraded during this test (1 of 3 OSD(s) down")


def test_pgs_inactive_too_long_stop_the_test_with_that_cause(monkeypatch):
    seconds = int(INACTIVE_LIMIT_S) + 2
    w = watch_over(["healthy"] + ["osd_down_degraded_inactive"] * seconds, monkeypatch)
    assert w.stop_reason.startswith("5 PG(s) inactive for 15 s (2 of 3 OSDs up): I/O to them blocks")
    assert w.summary().stopped == w.stop_reason and w.stop_reason in w.warnings()


def test_the_capacity_limit_counts_the_whole_cluster_during_writes_only(monkeypatch):
    raw = observe(status("healthy")).raw_used
    w = watch_over(["healthy"], monkeypatch, writing=True, max_raw_used=raw * 0.9)
    assert w.stop_reason.startswith(f"capacity guard: the cluster reached {raw:.1%} raw used")
    assert watch_over(["healthy"], monkeypatch, writing=False, max_raw_used=raw * 0.9).stop_reason is None
    assert watch_over(["healthy"], monkeypatch, writing=True).warnings() == []


def test_a_status_that_cannot_be_read_is_counted_not_fatal():
    def fails():
        raise OSError("mon gone")
    w = ClusterWatch(fails, 0.75, False)
    w.sample()
    assert w.failures == 1 and w.summary() is None and w.warnings() == []


def test_the_capacity_guard_stops_a_second_before_the_limit_while_use_rises(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)
    base = status("healthy")
    total = base["pgmap"]["bytes_total"]

    def at(fraction):
        s = json.loads(json.dumps(base))
        s["pgmap"]["bytes_used"] = int(total * fraction)
        return s
    # 2 % a second, read every second, for longer than the rate's window (11 s: Ceph's 5 s stats period)
    feed = iter([at(0.45 + 0.02 * t) for t in range(1, 15)])
    w = ClusterWatch(lambda: next(feed), 0.745, writing=True)
    for _ in range(13):
        clock.t += 1.0
        w.sample()
    assert w.stop_reason is None                      # 71% + 2%/s < 74.5%
    clock.t += 1.0
    w.sample()                                        # 73% + 2%/s passes 74.5%: stop now, not after the limit
    assert w.stop_reason.startswith("capacity guard: the cluster reached 73.0% raw used, 2.0% a second over the "
                                    "last 11 s")


def test_one_lump_of_ceph_df_is_not_a_rate(monkeypatch):
    # issue 36: on a cluster at Ceph's default stats period `ceph df` moves in lumps; one jump (4.6% to 48%, the
    # writes before the test among it) read as "43.4% a second" stopped a write at 48% raw used. Failed before:
    # the rate was the last second's difference
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)
    lumps = [0.046, 0.48, 0.48, 0.48, 0.48, 0.48, 0.51, 0.51, 0.51, 0.51, 0.51, 0.54, 0.54]
    feed = iter([at_fraction(f) for f in lumps])
    w = ClusterWatch(lambda: next(feed), 0.90, writing=True)
    for _ in lumps:
        clock.t += 1.0
        w.sample()
    assert w.stop_reason is None
    # a rise that does fill the cluster still stops the write: a lump a period, 3% a second, near the limit
    feed = iter([at_fraction(f) for f in (0.60, 0.60, 0.60, 0.60, 0.60, 0.75, 0.75, 0.75, 0.75, 0.75, 0.90)])
    w = ClusterWatch(lambda: next(feed), 0.90, writing=True, rate_window_s=5.0)
    for i in range(10):
        clock.t += 1.0
        w.sample()
        assert w.stop_reason is None, i
    clock.t += 1.0
    w.sample()
    assert w.stop_reason is not None and "3.0% a second over the last 5 s" in w.stop_reason


def test_the_rate_spans_the_window_and_a_lump_before_it_fills_counts_over_all_of_it():
    assert growth_over_window([(1.0, 0.10), (2.0, 0.50)], 10.0) == pytest.approx(0.04)
    readings = [(float(t), 0.10 + 0.05 * (t // 5)) for t in range(1, 31)]     # 1% a second in lumps of 5 s
    assert growth_over_window(readings, 10.0) == pytest.approx(0.01, abs=0.002)
    assert growth_over_window(readings[:1], 10.0) == 0.0


def at_fraction(fraction):
    """The lab's healthy status with raw use set to `fraction` (its own capacity and layout)."""
    s = status("healthy")
    s["pgmap"]["bytes_used"] = int(s["pgmap"]["bytes_total"] * fraction)
    return s


def test_growth_after_a_pause_of_the_monitors_is_per_real_second(monkeypatch):
    # the case: 20 s between two readings was read as one second ("28.4% a second")
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)
    feed = iter([at_fraction(0.40), at_fraction(0.60)])
    w = ClusterWatch(lambda: next(feed), 0.75, writing=True)
    clock.t = 1.0
    w.sample()
    clock.t = 21.0
    w.sample()
    assert growth_per_s(0.40, 0.60, 20.0) == pytest.approx(0.01)
    assert w.stop_reason is None                      # 60% + 1%/s is far from 75%; 60% + 20% was not
    assert growth_per_s(None, 0.5, 1.0) == growth_per_s(0.5, 0.4, 1.0) == growth_per_s(0.4, 0.5, 0.0) == 0.0


def test_a_silence_of_the_monitors_is_a_warning_with_its_span(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)
    w = ClusterWatch(lambda: status("healthy"), 0.75, writing=False)
    for t in (1.0, 2.0, 3.0, 12.0, 13.0):             # nothing came back from 3 s to 12 s
        clock.t = t
        w.sample()
    clock.t = 14.0
    w.finish()
    assert w.warnings() == [silence_text(3.0, 12.0, False)]
    assert w.warnings()[0].startswith("the monitors did not answer for 9 s (from 3 s to 12 s)")
    s = w.summary()
    assert s.mon_silent_s == 9.0 and s.events == ["3 s: the monitors stopped answering for 9 s"]


def test_a_silence_until_the_end_of_the_test_counts_too(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)

    def stopped():
        raise Pending()                               # asked, never answered: a paused monitor
    w = ClusterWatch(stopped, 0.75, writing=False)
    for t in range(1, 9):
        clock.t = float(t)
        w.sample()
    w.finish()
    assert w.failures == 0 and w.stop_reason is None  # a reading in flight is no failure
    [warning] = w.warnings()
    assert warning.startswith("the monitors did not answer for 8 s (from 0 s to the end of the test (8 s))")
    assert w.summary().mon_silent_s == 8.0


def test_a_short_wait_for_an_answer_is_no_silence(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)
    w = ClusterWatch(lambda: status("healthy"), 0.75, writing=False)
    for t in (1.0, 2.0, 5.5, 6.5):
        clock.t = t
        w.sample()
    clock.t = 9.0
    w.finish()
    assert w.warnings() == [] and w.summary().mon_silent_s == 0.0


def test_a_poll_waits_briefly_and_hands_over_a_late_reading_or_its_failure_later():
    gate = threading.Event()
    calls = []

    def slow():
        calls.append(1)
        if len(calls) == 2:
            raise OSError("mon gone")
        gate.wait(5)
        return len(calls)
    p = Poll(slow, wait_s=0.1)
    started = time.monotonic()
    with pytest.raises(Pending):
        p()                                           # the first call is still waiting on the gate
    with pytest.raises(Pending):
        p()                                           # still out: no second call beside it
    assert time.monotonic() - started < 1 and len(calls) == 1
    gate.set()
    assert p() == 1 and p.answered_at is not None    # the late reading, at a later poll
    with pytest.raises(OSError, match="mon gone"):
        p()                                           # a call that comes back in time is handed over at once
    assert Poll(lambda: 7)() == 7


def test_a_bounded_write_is_judged_by_its_rise_only_once_the_cluster_is_past_its_bound(monkeypatch):
    """A rados bench write stops by itself at the objects the guard's room allowed it (a fifth of the room left
    free). Where a second of its writing is more than that fifth (a small room, a fast write), the rule "stop a
    second before the limit" stopped it near its end, before rados bench recorded what it wrote, and the reads after
    it failed (seed-bobtail-2012 on a 3 x 4 GiB lab: 3 of 48 tests, exit 1). While the cluster is within the write's
    bound its rise is the write's own and ends there; past the bound it is judged as any rise."""
    clock = Clock()
    monkeypatch.setattr("cephbench.evidence.clusterwatch.time.monotonic", clock)
    # 4 % a second towards a bound of 70.5 % under a limit of 73.5 %: at 70 % its rise passes the limit
    rising = [0.50 + 0.04 * t for t in range(1, 6)] + [0.70, 0.70]

    def run(bounded_until, fractions):
        feed = iter([at_fraction(f) for f in fractions])
        w = ClusterWatch(lambda: next(feed), 0.735, writing=True, rate_window_s=1.0, bounded_until=bounded_until)
        for _ in fractions:
            clock.t += 1.0
            w.sample()
        return w
    assert run(None, rising).stopped_for_capacity             # unbounded: 70 % + 4 %/s, stopped as before
    assert not run(0.705, rising).stopped_for_capacity        # bounded at 70.5 %: its own rise, it ends there
    # past its bound (another client writes beside it), the rise is judged again: stopped before the limit
    past = run(0.60, rising)
    assert past.stopped_for_capacity and past.stop_reason.startswith("capacity guard: the cluster reached 70.0%")
    # and a bound at or past the limit exempts nothing
    assert run(0.735, rising).stopped_for_capacity
