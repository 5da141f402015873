"""Steady state (SNIA: range and slope over a window of rounds): the verdict on figures, and the rounds of real
rados bench runs (Ceph 16.2.15 fixtures) added up into one measurement."""

from pathlib import Path

import pytest

from cephbench.drivers.rados_bench import parse
from cephbench.core.results import SteadyState
from cephbench.core.steady import combine, verdict

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rados_bench"
SETTINGS = {"max": 120.0, "window": 3, "max_range": 0.2, "max_slope": 0.1}


def test_fewer_rounds_than_the_window_are_not_steady():
    assert verdict([100.0, 100.0], 3, 0.2, 0.1).steady is False


def test_flat_rounds_are_steady():
    v = verdict([50.0, 100.0, 101.0, 99.0, 100.0], 3, 0.2, 0.1)     # only the window counts: not the warm-up
    assert v.steady and v.range == pytest.approx(0.02) and v.slope == pytest.approx(0.01)


def test_a_wide_range_is_not_steady():
    v = verdict([100.0, 125.0, 100.0], 3, 0.2, 0.1)
    assert not v.steady and v.range == pytest.approx(25 / 108.33, rel=1e-3) and v.slope == pytest.approx(0.0)


def test_a_trend_within_the_range_is_not_steady():
    # range 18% of the mean (within 20%) but the fitted line climbs 18% across the window (above 10%)
    v = verdict([91.0, 100.0, 109.0], 3, 0.2, 0.1)
    assert not v.steady and v.range == pytest.approx(0.18) and v.slope == pytest.approx(0.18)


def test_nothing_moved_is_not_steady():
    assert verdict([0.0, 0.0, 0.0], 3, 0.2, 0.1).steady is False


def test_the_window_rounds_are_the_measurement_and_every_round_is_recorded():
    w4k = parse((FIXTURES / "ceph16.2.15_write_4K.txt").read_text(), "write")
    w4m = parse((FIXTURES / "ceph16.2.15_write_4M.txt").read_text(), "write")
    rounds = [w4m, w4k, w4k, w4k]
    starts = [0.0, 6.0, 12.0, 18.0]
    m = combine(rounds, starts, SETTINGS, reached=True, reached_after_s=24.0)
    assert m.bytes_per_s == pytest.approx(w4k.bytes_per_s)               # the last 3 rounds, not the first
    assert m.duration_s == pytest.approx(3 * w4k.duration_s)
    assert m.ops_total == 3 * w4k.ops_total
    assert m.latency.mean_ns == pytest.approx(w4k.latency.mean_ns)
    assert len(m.timeseries) == len(w4m.timeseries) + 3 * len(w4k.timeseries)
    assert m.timeseries[len(w4m.timeseries)].t_s == pytest.approx(6.0 + w4k.timeseries[0].t_s)
    record = SteadyState.model_validate(m.extra["steady_state"])
    assert record.reached and record.reached_after_s == 24.0 and record.window == 3 and record.range == 0.0
    assert [r.start_s for r in record.rounds] == starts
    assert [r.bytes_per_s for r in record.rounds] == [x.bytes_per_s for x in rounds]
