"""A search step that seems not to pay, measured again by turns with the step before it (core/loadsearch.py paired,
drivers/search.py): the rule on its own, then on real rados bench runs of the one-host lab (Ceph 16.2.15) taken by
bench knee_noise's cpu case, whose machine's spare CPU drifted between the runs."""

import math
from dataclasses import replace
from pathlib import Path

import pytest

from cephbench.analysis.curves import curves, knee, steps
from cephbench.core import loadsearch
from cephbench.core.loadsearch import StepFigures, change, judge, paired, pairs_extra_s, repeats_noise
from cephbench.core.results import Result, Search, Test
from cephbench.drivers.base import Outcome
from cephbench.drivers.rados_bench import parse
from cephbench.drivers.rounds import in_rounds, round_suffix
from cephbench.drivers.search import Searches, figures


def drifting(a: float, b: float, loads: tuple[int, int], per_run: float, runs: int = 6):
    """Runs of two loads by turns whose true figures are a and b, on a machine whose speed changes by `per_run`
    from one run to the next (the latency as Little's law makes it for a closed loop: load over throughput)."""
    out = []
    for k in range(runs):
        load, v = (loads[0], a) if k % 2 == 0 else (loads[1], b)
        t = v * per_run ** k
        out.append((load, t, load / t * 1e9))
    return tuple(out)


def test_by_turns_a_slow_drift_is_left_out_where_one_run_each_took_it_for_a_knee():
    seq = drifting(100.0, 125.0, (4, 8), 0.8)       # +25 % per doubling, the machine 20 % slower each run
    a = StepFigures(4, seq[0][1], seq[0][2], False)
    once = change(a, StepFigures(8, seq[1][1], seq[1][2], False))
    assert once.gain == pytest.approx(0.0) and once.verdict == "fails"     # -0 %, the mean latency x2.0 (+drift)
    both = change(a, StepFigures(8, seq[1][1], seq[1][2], False, pair=seq))
    assert both.paired is not None and both.paired.runs == 6
    # five adjacent changes, three A->B (+25 % x 0.8) and two B->A (+25 % / 0.8): what is left of the drift is a
    # fifth of one run's
    assert both.gain == pytest.approx(1.25 * 0.8 ** 0.2 - 1, rel=1e-6)
    assert both.verdict == "pays" and both.latency_factor < loadsearch.LATENCY_GROWTH_MAX


def test_by_turns_without_drift_the_noise_is_the_floor_and_a_flat_step_fails():
    seq = drifting(100.0, 101.0, (1, 2), 1.0)
    p = paired(seq, 1, 2)
    assert p.log_ratio == pytest.approx(math.log(1.01)) and p.log_noise == pytest.approx(math.log1p(0.04))
    c = change(StepFigures(1, 100.0, None, False), StepFigures(2, 101.0, None, False, pair=seq))
    assert c.verdict == "fails" and c.noise == pytest.approx(0.04)


def test_too_few_runs_by_turns_leave_the_step_to_its_own_figures():
    seq = drifting(100.0, 90.0, (2, 4), 1.0, runs=2)      # one adjacent change: no spread to read
    assert paired(seq, 2, 4) is None
    c = change(StepFigures(2, 100.0, None, False), StepFigures(4, 90.0, None, False, pair=seq))
    assert c.paired is None and c.gain == pytest.approx(-0.1)


def test_the_latency_bound_is_held_to_the_noise_of_runs_by_turns_only():
    assert judge(0.0, 2.1, 0.3) == "fails"          # a single pair of steps: the bound as it is
    assert judge(0.0, 2.1, 0.3, latency_noise=0.1) == "unclear"
    assert judge(0.0, 2.5, 0.3, latency_noise=0.1) == "fails"


def test_what_runs_by_turns_add_to_a_search_s_estimate():
    expected, worst = pairs_extra_s([10.0, 10.0, 12.0, 20.0])
    # adjacent pairs 20, 22, 32 s; PAIR_RERUNS (2) runs of each step of a pair
    assert expected == pytest.approx(2 * (20 + 22 + 32) / 3) and worst == pytest.approx(2 * (32 + 22 + 20))
    assert pairs_extra_s([10.0]) == (0.0, 0.0)
    assert loadsearch.pair_runs_max(9) == loadsearch.PAIR_CHECKS_MAX * 2 * loadsearch.PAIR_RERUNS
    assert loadsearch.pair_runs_max(2) == 2 * loadsearch.PAIR_RERUNS


FIXTURES = Path(__file__).parent.parent / "fixtures"


def search_tests(max_load: int) -> list[Test]:
    search = Search(param="concurrency", max=max_load)
    return [Test(id=f"00{i}-w-t{load}", index=i, group="g", workload="w", kind="rados_bench",
                 params={"phase": "write", "concurrency": load, "duration_s": 5.0}, search=search)
            for i, load in enumerate(loadsearch.loads(max_load), 1)]


def replay(outputs: dict[tuple[int, int], str], calls: list[tuple[int, int]]):
    """Each step's one_round as a driver gives it to in_rounds: run n of load L is the real output outputs[L, n]."""
    def one_round_of(test: Test):
        def one_round(n: int) -> Outcome:
            load = test.params["concurrency"]
            calls.append((load, n))
            return Outcome(test, 1.0, 5.0, measurement=parse(outputs[load, n], "write"), commands=[f"t{load} {n}"],
                           raw=[f"raw/{test.id}/rados-bench-write{round_suffix(n)}-i0.txt"])
        return one_round
    return one_round_of


def test_a_step_that_seems_not_to_pay_runs_again_by_turns_with_the_one_before():
    """Ceph 16.2.15's rados bench, the same 4 KiB write output for every run (a step that does not pay at all): the
    search runs 2 and 4 in flight again by turns, judges the step on them, and keeps its own runs alone."""
    text = (FIXTURES / "rados_bench" / "ceph16.2.15_write_4K.txt").read_text()
    calls: list[tuple[int, int]] = []
    one_round_of = replay({(load, n): text for load in (1, 2, 4, 8) for n in (0, 31, 34)}, calls)
    searches = Searches()
    outs = [searches.after(in_rounds(t, one_round_of(t))) for t in search_tests(8)[:3]]
    # 1 -> 2: not paid, but two loads cannot bend: 1 and 2 by turns (the curve's first step); 2 -> 4 likewise
    assert calls == [(1, 0), (2, 0), (1, 31), (2, 31), (1, 34), (2, 34), (4, 0), (2, 31), (4, 31), (2, 34), (4, 34)]
    last = outs[-1]
    assert last.measurement.extra[loadsearch.PAIR_KEY] == [[load, pytest.approx(2.87572 * 2**20, rel=1e-4),
                                                            pytest.approx(21723100.0)] for load in (2, 4) * 3]
    assert last.commands == ["t4 0", "t4 31", "t4 34"]
    assert last.raw == [f"raw/003-w-t4/rados-bench-write{s}-i0.txt" for s in ("", "-round31", "-round34")]
    (note,) = [n for n in last.notes if n.startswith("search step measured again by turns with concurrency 2")]
    assert "2: 2.88, 4: 2.88, 2: 2.88, 4: 2.88, 2: 2.88, 4: 2.88" in note and "raw/002-w-t2/" in note
    assert note.endswith("by turns +0% ±4% per doubling, latency ×1.00: fails")
    assert last.search_stop is not None and last.search_stop.reason == "throughput"
    assert "over 6 runs of 2 and 4 by turns" in last.search_stop.text
    # the curve of the steps judges the step as the search did
    results = [Result(test=o.test, status="ok", started_unix=1.0, duration_s=5.0, measurement=o.measurement)
               for o in outs]
    (c,) = curves(results)
    assert [s.by_turns for s in steps(c)] == [6, 6] and knee(c).state == "knee" and knee(c).point.load == 1


@pytest.mark.parametrize("run, once_gain, turns_gain", [
    # B1 4.69 -> 5.11 MiB/s, then the machine slowed by a quarter: A2 3.54, B2 4.02, A3 3.77, B3 4.30
    ("run2", 0.09, 0.17),
    # 6.03 and 6.11, then the third pair a quarter slower: 4.26, 4.60
    ("run5", 0.01, 0.14),
])
def test_real_runs_by_turns_of_a_drifting_machine_pay_where_one_run_each_could_not_tell(run, once_gain, turns_gain):
    """bench knee_noise's cpu case (the one-host lab's 4 KiB writes beside a CPU burner, 2026-12-06): 32 and 64 in
    flight, each run's rados bench output as cephbench kept it (raw/<test>/rados-bench-write[-round31|34]-i0.txt)."""
    d = FIXTURES / "search_pairs" / f"ceph16.2.15_onehost_write_4K_t32_t64_{run}"
    ms = {(load, s): parse((d / f"t{load}{s}.txt").read_text(), "write")
          for load in (32, 64) for s in ("", "-round31", "-round34")}
    seq = tuple((load, ms[load, s].bytes_per_s, ms[load, s].latency.mean_ns)
                for s in ("", "-round31", "-round34") for load in (32, 64))
    a, b = (figures(load, ms[load, ""]) for load in (32, 64))
    once = change(a, b)
    assert once.gain == pytest.approx(once_gain, abs=0.005) and once.verdict == "unclear"
    both = change(a, replace(b, pair=seq))
    assert both.gain == pytest.approx(turns_gain, abs=0.005) and both.verdict == "pays"
    # the same runs taken as each load's repeats (their spread the step's noise, as `auto: {repeats: 3}` takes it)
    # carry the drift as noise: wider than by turns
    assert both.noise < max(repeats_noise([s[1] for s in seq if s[0] == 32]),
                            repeats_noise([s[1] for s in seq if s[0] == 64]))
