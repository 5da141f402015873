"""A search's estimate is what it is expected to run, with its range (issue 36 item 4): a search stops where its curve
bends, which no plan knows, so the estimate counts its first loadsearch.MIN_POINTS loads, each load after them at
plan.SEARCH_GOES_ON times the chance of the one before, and says the run's least length (each search stopped after
its first loads with its pairs, or run to its max with none: plan.least_s) and its length when every one runs to its
max; validate and run print it in the same words (cli.common.estimate_text).
"""

import pytest

from cephbench.cli.common import estimate_text
from cephbench.core import loadsearch
from cephbench.report.format import seconds
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import (RUN_OVERHEAD_S, SEARCH_GOES_ON, STALL_RERUN_SHARE, estimate, expand, pairs_s,
                                  run_share, step_run_s)


def _suite(concurrency, modes=("write",)):
    return parse_suite({"name": "t", "pools": {"p": {"type": "replicated", "size": 3, "pg_num": 32}},
                        "workloads": [{"type": "rados_bench", "pool": "p", "modes": list(modes),
                                       "object_size": "4KiB", "concurrency": concurrency, "duration": "5s"}]}, "t")


def test_a_search_counts_its_first_loads_whole_and_each_later_one_at_its_chance():
    tests = expand(_suite({"auto": {"max": 64}})).tests
    assert [t.params["concurrency"] for t in tests] == [1, 2, 4, 8, 16, 32, 64]
    assert [run_share(t) for t in tests] == pytest.approx(
        [1, 1, 1, SEARCH_GOES_ON, SEARCH_GOES_ON ** 2, SEARCH_GOES_ON ** 3, SEARCH_GOES_ON ** 4])
    assert [run_share(t, 0.0) for t in tests] == [1, 1, 1, 0, 0, 0, 0]
    assert [run_share(t, 1.0) for t in tests] == [1] * 7
    e = estimate(tests)
    assert e.shortest_s < e.expected_s < e.longest_s and e.ranged
    # the longest: every step once, each with its expected reruns after a stall, and the dearest steps measured
    # again in pairs; the expected: its last step measured again so, at the chance that it stops before its max
    costs = [step_run_s(t) for t in tests]
    expected_pairs, worst_pairs = loadsearch.pairs_extra_s(costs)
    assert e.longest_s == pytest.approx(RUN_OVERHEAD_S + sum(t.est_duration_s + STALL_RERUN_SHARE * step_run_s(t)
                                                             for t in tests) + worst_pairs * (1 + STALL_RERUN_SHARE))
    assert pairs_s(tests) == pytest.approx((1 - SEARCH_GOES_ON ** 4) * expected_pairs * (1 + STALL_RERUN_SHARE))


def test_a_search_of_no_more_loads_than_it_always_runs_has_only_its_pairs_at_worst_and_a_sweep_no_range():
    # 1, 2, 4: every step runs, and the search cannot stop early; at worst it measures steps again in pairs
    e = estimate(expand(_suite({"auto": {"max": 4}})).tests)
    tests = expand(_suite({"auto": {"max": 4}})).tests
    # the shortest: every step once, none stalled (the expected counts a stall's rerun at its share)
    assert e.shortest_s == pytest.approx(e.expected_s - sum(STALL_RERUN_SHARE * step_run_s(t) for t in tests))
    assert e.shortest_s < e.expected_s < e.longest_s
    assert e.longest_s - e.expected_s == pytest.approx(
        loadsearch.pairs_extra_s([step_run_s(t) for t in tests])[1] * (1 + STALL_RERUN_SHARE))
    e = estimate(expand(_suite([1, 2, 4, 8])).tests)
    assert not e.ranged and e.shortest_s == e.expected_s == e.longest_s
    assert estimate_text(e) == f"about {seconds(e.expected_s)}"


def test_the_shortest_run_is_each_search_stopped_after_its_first_loads_with_its_pairs_or_run_to_its_max():
    # search-rados on the lab: 3 searches ran every step to their max (64, 64, 256), none measured again in pairs,
    # in 112.4 s, below the old shortest end (every search stopped after 3 loads, each with its pairs: 145.8 s)
    k = loadsearch.MIN_POINTS
    for top, every_step in ((8, True), (16, True), (64, True), (128, False), (256, False)):
        tests = expand(_suite({"auto": {"max": top}})).tests
        every = sum(t.est_duration_s for t in tests)
        early = sum(t.est_duration_s for t in tests[:k]) + loadsearch.PAIR_RERUNS * sum(
            step_run_s(t) for t in tests[k - 2:k])
        assert estimate(tests).shortest_s == pytest.approx(RUN_OVERHEAD_S + min(every, early))
        assert (every <= early) is every_step, top


def test_the_words_validate_and_run_print_say_the_range():
    tests = expand(_suite({"auto": {"max": 64}}, modes=("write", "rand"))).tests
    e = estimate(tests)
    assert estimate_text(e) == (f"about {seconds(e.expected_s)} (at least {seconds(e.shortest_s)}, "
                                f"{seconds(e.longest_s)} if every search runs to its max)")
