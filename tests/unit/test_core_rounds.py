"""drivers/rounds.py: the one steady-state loop every kind with a duration runs in (rados bench of Ceph 16.2.15 as
each round's figure)."""

from pathlib import Path

import pytest

from cephbench.drivers.base import Outcome
from cephbench.drivers.rados_bench import parse
from cephbench.drivers.rounds import RoundsEnd, in_rounds, round_suffix
from cephbench.evidence.rounds import ClusterSeen, Seen
from cephbench.core.results import SteadyState, Test

TEXT = (Path(__file__).parent.parent / "fixtures" / "rados_bench" / "ceph16.2.15_write_4M.txt").read_text()
STEADY = {"max": 1000.0, "window": 3, "max_range": 0.2, "max_slope": 0.1}


def make_test(steady: dict | None) -> Test:
    params = {"phase": "randwrite", "duration_s": 10.0, **({"steady_state": steady} if steady else {})}
    return Test(id="t1", index=1, group="g", workload="w", kind="fio_rbd", params=params)


def rounds_of(test: Test, rates: list[float], error_at: int | None = None, seen: Seen | None = None):
    calls: list[int] = []

    def one_round(n: int) -> Outcome:
        calls.append(n)
        if n == error_at:
            return Outcome(test, 1.0, 2.0, error="boom", commands=[f"cmd{n}"], raw=[f"raw{n}"], notes=["pre"])
        m = parse(TEXT, "write").model_copy(update={"bytes_per_s": rates[(n or 1) - 1]})
        return Outcome(test, 1.0, 2.0 + n, measurement=m, commands=[f"cmd{n}"], raw=[f"raw{n}{round_suffix(n)}"],
                       notes=["pre"], seen=seen or Seen())
    return calls, one_round


def test_without_steady_state_one_run_as_before():
    test = make_test(None)
    calls, one_round = rounds_of(test, [100.0])
    out = in_rounds(test, one_round)
    assert calls == [0] and out.raw == ["raw0"] and out.notes == ["pre"]


def test_rounds_until_steady_the_figure_is_the_window():
    test = make_test(STEADY)
    calls, one_round = rounds_of(test, [50.0, 100.0, 101.0, 99.0, 500.0])
    out = in_rounds(test, one_round)
    assert calls == [1, 2, 3, 4]
    st = SteadyState.model_validate(out.measurement.extra["steady_state"])
    assert st.reached and len(st.rounds) == 4
    assert out.measurement.bytes_per_s == pytest.approx(100.0)
    assert out.raw == ["raw1-round1", "raw2-round2", "raw3-round3", "raw4-round4"] and len(out.commands) == 4
    assert out.notes[0] == "pre" and out.notes[-1].startswith("steady state reached after")
    assert out.started_unix == 1.0 and out.duration_s == 6.0 and out.seen is not None


def test_a_failed_round_ends_the_test_with_its_error_and_every_round_s_output():
    test = make_test(STEADY)
    calls, one_round = rounds_of(test, [50.0, 100.0], error_at=2)
    out = in_rounds(test, one_round)
    assert calls == [1, 2] and out.error == "boom" and out.raw == ["raw1-round1", "raw2"]


def test_rounds_that_cannot_start_end_with_the_rounds_so_far():
    test = make_test(STEADY)
    _, one_round = rounds_of(test, [50.0, 100.0, 200.0])

    def capped(n: int) -> Outcome:
        if n == 3:
            raise RoundsEnd("capacity guard: no room")
        return one_round(n)
    out = in_rounds(test, capped)
    assert "capacity guard: no room: steady-state rounds stopped after 2" in out.notes
    assert out.notes[-1].startswith("steady state NOT reached")
    with pytest.raises(RoundsEnd):      # before any round: the driver's own error, not a figure
        in_rounds(test, lambda n: (_ for _ in ()).throw(RoundsEnd("no room")))


def test_a_round_the_capacity_guard_stopped_is_the_last():
    test = make_test(STEADY)
    calls, one_round = rounds_of(test, [50.0, 100.0, 200.0], seen=Seen(cluster=ClusterSeen(stopped_for_capacity=True)))
    out = in_rounds(test, one_round)
    assert calls == [1] and out.measurement is not None


def test_a_dry_run_is_none():
    assert in_rounds(make_test(STEADY), lambda n: None) is None
