"""A search instead of a guess (`concurrency: auto`): the suite's field, the plan of its steps (the worst case),
bad input, and the stop decision fed with real sweeps of the one-host lab (tests/fixtures/curves/, README there:
Ceph 16.2.15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import cephbench
from cephbench.analysis.curves import curves, knee
from cephbench.suite.config import parse_suite
from cephbench.drivers.base import Outcome
from cephbench.drivers.search import Searches
from cephbench.core.errors import UserError
from cephbench.kinds import KINDS
from cephbench.core import loadsearch
from cephbench.core.loadsearch import GROWTH_MIN, LATENCY_GROWTH_MAX, StepFigures, loads, stop
from cephbench.suite.plan import STALL_RERUN_SHARE, estimate, expand, group_setup_s, pairs_s, step_run_s
from cephbench.core.results import Result, Search

FIXTURES = Path(__file__).parent.parent / "fixtures" / "curves"


def suite(**workload):
    return parse_suite({"name": "t", "workloads": [{"type": "rados_bench", "object_size": "4KiB",
                                                     "duration": "2s", **workload}]}, "s.yaml")


def test_auto_is_every_load_a_search_may_reach_each_a_test_of_one_group():
    plan = expand(suite(modes=["write", "rand"], concurrency="auto"))
    assert len({t.group for t in plan.tests}) == 1         # one pool, one write the reads read
    assert [(t.params["phase"], t.params["concurrency"]) for t in plan.tests] == \
        [("write", n) for n in loads(256)] + [("rand", n) for n in loads(256)]
    assert loads(256)[-1] == 256 and len(loads(256)) == 9
    assert {t.search for t in plan.tests} == {Search(param="concurrency", max=256)}
    assert plan.tests[3].id == "004-rados_bench-write-4KiB-t8"
    # a step of 2 s is lengthened to its tool's warm-up, 3 whole seconds past it and one its end may cut: 5 s
    assert {t.params["duration_s"] for t in plan.tests} == {loadsearch.min_step_s(1.0)} == {5.0}
    # the worst case: the estimate of a sweep of every load the search may reach
    swept = expand(suite(modes=["write", "rand"], concurrency=loads(256), duration="5s"))
    reruns = STALL_RERUN_SHARE * sum(step_run_s(t) for t in plan.tests) + pairs_s(plan.tests, 1.0)  # expected
    assert estimate(plan.tests).longest_s - reruns == pytest.approx(      # less the sweep's other groups' set-up
        swept.est_duration_s - (len(loads(256)) - 1) * group_setup_s(KINDS["rados_bench"], plan.tests[0].params))
    assert estimate(plan.tests).longest_s >= 18 * 2
    # the expected run (plan.run_share) lies between a search stopped after its first loads and one at its max
    assert estimate(plan.tests).shortest_s < plan.est_duration_s < estimate(plan.tests).longest_s


def test_a_bound_and_a_max_read_naturally():
    plan = expand(suite(modes=["write"], concurrency={"auto": {"max": 8, "latency_max": "50ms"}}))
    assert [t.params["concurrency"] for t in plan.tests] == [1, 2, 4, 8]
    assert plan.tests[0].search == Search(param="concurrency", max=8, latency_max_s=0.05)
    # the steps' parameters are those of a fixed load: a step compares with a sweep's test of the same load
    fixed = expand(suite(modes=["write"], concurrency=[8], duration="5s")).tests[0]   # a step: 5 s at least
    assert plan.tests[-1].match_key() == fixed.match_key()


@pytest.mark.parametrize("workload, path, words", [
    ({"type": "osd_bench", "concurrency": "auto"}, "workloads[0].concurrency", "osd_bench runs no search"),
    ({"type": "rados_bench", "instances": "auto"}, "workloads[0].instances",
     "searches concurrency or clients, not instances"),
    ({"type": "fio_rbd", "numjobs": "auto"}, "workloads[0].numjobs", "fio_rbd searches iodepth or clients, not numjobs"),
    ({"type": "rgw", "instances": "auto"}, "workloads[0].instances", "rgw searches concurrency or clients, not instances"),
    ({"type": "rgw", "concurrency": "auto", "rate": 100, "duration": "2s"}, "workloads[0].concurrency",
     "rate makes an open loop whose load the rate sets"),
    ({"type": "rados_bench", "concurrency": {"auto": {"latency_max": "fast"}}},
     "workloads[0].concurrency.auto.latency_max", "not a duration"),
    ({"type": "rados_bench", "concurrency": {"auto": {"max": 12}}}, "workloads[0].concurrency.auto.max",
     "power of two such as 8 or 16"),
    ({"type": "rados_bench", "concurrency": {"auto": {"max": 0}}}, "workloads[0].concurrency.auto.max", "below 1"),
    ({"type": "rados_bench", "concurrency": {"auto": {"mx": 8}}}, "workloads[0].concurrency.auto.mx",
     "did you mean 'max'"),
    ({"type": "rados_bench", "concurrency": ["auto"]}, "workloads[0].concurrency[0]", "a search of its own"),
    ({"type": "rados_bench", "concurrency": {"auto": {"max": 8192}}}, "workloads[0].concurrency.auto.max",
     "settings.max_in_flight"),
])
def test_bad_searches_are_one_line_at_their_yaml_path(workload, path, words):
    with pytest.raises(UserError) as exc:
        parse_suite({"name": "t", "workloads": [workload]}, "s.yaml")
    assert exc.value.where == f"s.yaml: {path}" and words in exc.value.one_line()


def test_fio_searches_its_iodepth():
    plan = expand(parse_suite({"name": "t", "workloads": [
        {"type": "fio_rbd", "rw": ["randwrite", "randread"], "iodepth": {"auto": {"max": 4}}, "duration": "2s"},
        {"type": "fio_rados", "rw": ["write"], "iodepth": "auto", "duration": "2s"}]}, "s.yaml"))
    rbd = [t for t in plan.tests if t.kind == "fio_rbd"]
    assert [(t.params["phase"], t.params["iodepth"]) for t in rbd] == \
        [("randwrite", 1), ("randwrite", 2), ("randwrite", 4), ("randread", 1), ("randread", 2), ("randread", 4)]
    assert len({t.group for t in rbd}) == 1 and rbd[0].search == Search(param="iodepth", max=4)
    assert [t.params["iodepth"] for t in plan.tests if t.kind == "fio_rados"] == loads(256)


def test_the_quick_suites_4kib_rbd_test_is_a_search_whose_every_step_the_estimate_counts():
    """Issue 29: the quick suite's 4 KiB RBD test searches its queue depth; validate lists every step to its max."""
    from cephbench.suite.config import load_suite
    plan = expand(load_suite(Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"))
    rbd = [t for t in plan.tests if t.kind == "fio_rbd"]
    assert {t.params["block_size"] for t in rbd} == {4096} and len({t.group for t in rbd}) == 1
    assert [(t.params["phase"], t.params["iodepth"]) for t in rbd] == \
        [(phase, n) for phase in ("randwrite", "randread") for n in loads(32)]
    assert all(t.search == Search(param="iodepth", max=32) for t in rbd)
    assert sum(t.est_duration_s for t in rbd) >= len(rbd) * rbd[0].params["duration_s"]


def test_a_search_reads_back_from_run_json_as_the_same_plan():
    """run.json keeps the suite as its JSON dump, which `run --resume` parses again: a search must read back as the
    search it was (it read back as `iodepth: {max: 32, latency_max: null}`, "must be a whole number")."""
    s = parse_suite({"name": "t", "workloads": [
        {"type": "fio_rbd", "rw": ["randwrite"], "iodepth": {"auto": {"max": 4, "latency_max": "50ms"}},
         "duration": "2s"},
        {"type": "rados_bench", "object_size": "4KiB", "concurrency": "auto", "duration": "2s"}]}, "s.yaml")
    again = parse_suite(json.loads(json.dumps(s.model_dump(mode="json"))), "run.json suite")
    assert expand(again).tests == expand(s).tests
    assert expand(again).tests[0].search == Search(param="iodepth", max=4, latency_max_s=0.05)


def test_auto_is_a_name_where_it_is_not_a_load():
    s = parse_suite({"name": "t", "pools": {"auto": {"type": "replicated", "size": 2}},
                     "workloads": [{"type": "rados_bench", "name": "auto", "pool": "auto"}]}, "s.yaml")
    assert expand(s).tests[0].params["pool"] == "auto" and expand(s).tests[0].search is None


def test_a_search_leaves_each_write_step_its_share_of_the_room():
    # the capacity guard counts the whole search: a write step may take the room left over the steps still to run
    search = Search(param="concurrency", max=8)
    plan = expand(suite(modes=["write", "rand"], concurrency={"auto": {"max": 8}}))
    searches = Searches()
    assert [searches.steps_left(t, plan.tests) for t in plan.tests] == [4, 3, 2, 1, 4, 3, 2, 1]
    assert plan.tests[0].search == search
    fixed = expand(suite(modes=["write"], concurrency=[8])).tests
    assert searches.steps_left(fixed[0], fixed) == 1


def test_a_fixed_load_keeps_its_messages():
    with pytest.raises(UserError) as exc:
        parse_suite({"name": "t", "workloads": [{"type": "rados_bench", "concurrency": 0}]}, "s.yaml")
    assert exc.value.where == "s.yaml: workloads[0].concurrency"     # no list index for a scalar


@pytest.mark.parametrize("suite_text, path", [
    ("workloads:\n  - {type: osd_bench, concurrency: auto}\n", "workloads[0].concurrency"),
    # a search of client hosts up to more than the suite lists (tests/unit/test_client_search.py)
    ("clients: [a, b]\nworkloads:\n  - {type: rados_bench, clients: {auto: {max: 3}}}\n",
     "workloads[0].clients.auto.max"),
])
def test_bad_search_refused_by_run_before_anything_is_made(tmp_path, suite_text, path):
    p = tmp_path / "s.yaml"
    p.write_text("name: t\n" + suite_text)
    res = cephbench("run", p, "--conf", tmp_path / "no.conf", "--out", tmp_path / "run")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert path in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("suite_text, words", [
    ("workloads:\n  - {type: rados_bench, modes: [write], concurrency: {auto: {max: 4}}, duration: 2s}\n",
     ["a search of concurrency from 1 to 4", "3 tests in 1 groups",
      # 3 steps of 5 s (the shortest a step may be) and 1 s of overhead, each run again twice at worst
      "a step that stalls runs again, up to 2 times (at worst 36.0 s more)"]),
    # client hosts (tests/unit/test_client_search.py): the suite's, and the lab's, which only a run learns
    ("clients: [a, b]\nworkloads:\n  - {type: rados_bench, modes: [write], duration: 2s, clients: auto}\n",
     ["a search of client hosts from 1 to 2, doubling", "2 tests in 1 groups"]),
    ("clients: lab\nworkloads:\n  - {type: rados_bench, modes: [write], duration: 2s, clients: auto}\n",
     ["a search of client hosts from 1 to every client host of the lab (planned here to 256, the worst case",
      "-clients-256 ", "9 tests in 1 groups"]),
])
def test_validate_says_what_the_estimate_counts_of_a_search(tmp_path, suite_text, words):
    p = tmp_path / "s.yaml"
    p.write_text("name: t\n" + suite_text)
    res = cephbench("validate", p)
    assert res.returncode == 0, res.stderr
    assert "the estimate counts its first 3 loads, and each one after at 0.8 times the chance" in res.stdout
    for w in words:
        assert w in res.stdout, res.stdout


# ---- the stop decision, on real sweeps: one run per load, as a search makes them --------------------------------

def sweep(name: str, kind: str, repeat: int) -> list[Result]:
    rs = [Result.model_validate(json.loads(line)) for line in (FIXTURES / name).read_text().splitlines()]
    param = "concurrency" if kind == "rados_bench" else "iodepth"
    mine = [r for r in rs if r.test.kind == kind and r.test.repeat == repeat and r.status == "ok"]
    return sorted(mine, key=lambda r: r.test.params[param])


def search_over(results: list[Result], search: Search) -> tuple[list[Outcome], Searches]:
    """The steps a search runs, fed one after the other with the sweep's results."""
    searches, ran = Searches(), []
    for r in results:
        test = r.test.model_copy(update={"search": search})
        if searches.over(test):
            continue
        ran.append(searches.after(Outcome(test, 0.0, 1.0, measurement=r.measurement)))
    return ran, searches


@pytest.mark.parametrize("name, kind, repeat, stops_at, state", [
    ("lab1-repeat3.jsonl", "rados_bench", 1, 128, "knee"),      # docs/model.md: the knee at 64 in flight
    ("lab1-repeat3.jsonl", "fio_rbd", 3, 32, "knee"),           # IOPS +17 %, but p99 ×2.93 per doubling
    # t1 -> t2 +4 %, within that step's noise (±13 %: 12 % and 18 % per-second spreads over 5 s), then +37 %: the
    # search goes on, and stops at 32, where the mean latency doubled (×2.04) for -2 %: the knee rule names 16
    ("lab1-repeat2.jsonl", "rados_bench", 1, 32, "knee"),
])
def test_the_search_stops_one_step_past_the_knee_the_knee_rule_finds(name, kind, repeat, stops_at, state):
    results = sweep(name, kind, repeat)
    param = "concurrency" if kind == "rados_bench" else "iodepth"
    ran, _ = search_over(results, Search(param=param, max=256))
    assert ran[-1].test.params[param] == stops_at
    assert [o.search_stop for o in ran[:-1]] == [None] * (len(ran) - 1)
    why = ran[-1].search_stop
    assert why is not None and why.reason == "throughput"
    assert f"{GROWTH_MIN:+.0%}" in why.text and f"×{LATENCY_GROWTH_MAX:g}" in why.text
    # the curve of the steps it ran bends where it stopped: the knee rule's point is the load before
    (c,) = curves([r for r in results if r.test.params[param] <= stops_at])
    k = knee(c)
    assert k.state == state
    if state == "knee":
        assert k.point is not None and k.point.load == stops_at // 2


def test_a_first_step_that_does_not_pay_is_not_yet_a_knee():
    # lab1-repeat2, rados t1 -> t2: +4 %, below GROWTH_MIN; two loads make no curve that can bend
    ran, _ = search_over(sweep("lab1-repeat2.jsonl", "rados_bench", 1), Search(param="concurrency", max=256))
    first = ran[1].measurement.bytes_per_s / ran[0].measurement.bytes_per_s - 1
    assert first < GROWTH_MIN and ran[1].search_stop is None and len(ran) > 2


def test_latency_bound_stops_the_search_at_the_step_that_passed_it():
    results = sweep("lab1-repeat3.jsonl", "rados_bench", 1)      # mean 7.9 ms at t4, 14.1 ms at t8
    ran, searches = search_over(results, Search(param="concurrency", max=256, latency_max_s=0.012))
    assert [o.test.params["concurrency"] for o in ran] == [1, 2, 4, 8]
    why = ran[-1].search_stop
    assert why.reason == "latency" and "mean latency 14.1 ms at concurrency 8 passed latency_max 12 ms" == why.text
    rest = results[4].test.model_copy(update={"search": ran[-1].test.search})
    assert searches.over(rest) is not None and "stopped at 8" in searches.skipped(rest).error
    assert searches.skipped(rest).skipped


def test_max_stops_a_search_that_never_bends():
    results = sweep("lab1-repeat3.jsonl", "rados_bench", 1)
    ran, _ = search_over(results, Search(param="concurrency", max=32))
    assert ran[-1].test.params["concurrency"] == 32 and ran[-1].search_stop.reason == "max"


def test_a_failed_first_step_stops_its_search_with_its_own_error():
    results = sweep("lab1-repeat3.jsonl", "rados_bench", 1)
    search = Search(param="concurrency", max=256)
    searches = Searches()
    first = results[0].test.model_copy(update={"search": search})
    out = searches.after(Outcome(first, 0.0, 1.0, error="rados bench write failed: error opening pool"))
    assert out.error.startswith("rados bench write failed") and out.search_stop.reason == "failed"
    second = results[1].test.model_copy(update={"search": search})
    assert "stopped at 1 (concurrency 1 failed)" in searches.over(second)


def test_the_steps_a_search_left_out_are_skipped_results_and_those_it_ran_are_not():
    # fio_rbd's and fio_rados' drivers leave the steps past a stop out as they go (base.started_tests' skip) and
    # then yield them skipped: the steps that ran are not among them
    results = sweep("lab1-repeat3.jsonl", "fio_rbd", 3)
    search = Search(param="iodepth", max=256)
    group = [r.test.model_copy(update={"search": search}) for r in results]
    ran, searches = search_over(results, search)
    assert [o.test.params["iodepth"] for o in ran] == [1, 2, 4, 8, 16, 32]
    skipped = list(searches.skipped_in(group, {t.id for t in group}))
    assert [o.test.params["iodepth"] for o in skipped] == [64]
    assert skipped[0].skipped and "the search of iodepth stopped at 32" in skipped[0].error


def test_a_step_with_warnings_is_no_point_of_the_search():
    results = sweep("lab1-repeat3.jsonl", "rados_bench", 1)
    search = Search(param="concurrency", max=256)
    searches = Searches()
    for r in results[:2]:
        searches.after(Outcome(r.test.model_copy(update={"search": search}), 0.0, 1.0, measurement=r.measurement))
    # a third step whose figure is not the cluster's (the capacity guard cut it): the knee rule leaves it out
    cut = results[2].model_copy(deep=True)
    cut.measurement.bytes_per_s = 1.0
    out = searches.after(Outcome(cut.test.model_copy(update={"search": search}), 0.0, 1.0,
                                 measurement=cut.measurement, warnings=["capacity guard: write stopped"]))
    assert out.search_stop is None


def test_stop_is_a_pure_function_of_the_steps():
    s = Search(param="iodepth", max=8)
    assert stop([StepFigures(1, 100.0, 1e6, True)], s) is None
    assert stop([StepFigures(1, 100.0, 1e6, True), StepFigures(2, 101.0, 1e6, True)], s) is None   # 2 loads
    steps = [StepFigures(1, 100.0, 1e6, True), StepFigures(2, 200.0, 1e6, True), StepFigures(4, 205.0, 2e6, True)]
    assert stop(steps, s).reason == "throughput" and "p99" in stop(steps, s).text
    # a step of ×4 is two doublings: +21 % over it is +10 % per doubling, which pays
    assert stop([StepFigures(1, 100.0, 1e6, False), StepFigures(2, 200.0, 1e6, False),
                 StepFigures(8, 242.1, 1e6, False)], s).reason == "max"


def test_the_report_says_where_each_search_stopped_and_lists_no_error_for_the_steps_it_left_out():
    from cephbench.report.format import messages
    from cephbench.core.results import SearchStop
    results = sweep("lab1-repeat3.jsonl", "rados_bench", 1)[:3]
    search = Search(param="concurrency", max=4, latency_max_s=0.005)
    stopped = results[1].model_copy(update={"test": results[1].test.model_copy(update={"search": search}),
                                            "search_stop": SearchStop(reason="latency", text="mean latency 7.6 ms "
                                                                      "at concurrency 2 passed latency_max 5 ms")})
    past = results[2].model_copy(update={"test": results[2].test.model_copy(update={"search": search}),
                                         "status": "skipped", "measurement": None,
                                         "error": "not run: the search of concurrency stopped at 2 (...)"})
    failed = results[0].model_copy(update={"status": "failed", "error": "rados bench write failed"})
    _, errors, notes = messages([failed, stopped, past])
    assert errors == [(failed.test.id, "rados bench write failed")]
    texts = [t for _, t in notes]
    assert "the search of concurrency stopped here: mean latency 7.6 ms at concurrency 2 passed latency_max 5 ms" \
        in texts and "not run: the search of concurrency stopped at 2 (...)" in texts


RADOS = Path(__file__).parent.parent / "fixtures" / "rados_bench"


def rados_measurement(name: str, mode: str = "write"):
    from cephbench.drivers import rados_bench
    return rados_bench.parse((RADOS / name).read_text(), mode)


def test_a_stall_is_seconds_far_below_the_steps_own_median_and_the_warm_up_is_none():
    from cephbench.drivers.rounds import step_seconds
    # a real 22 s write (Ceph 16.2.15) that wrote nothing for six seconds mid-test
    stalled = step_seconds(rados_measurement("ceph16.2.15_write_64K_22s_dated.txt"))
    assert loadsearch.stalls(stalled) == [4, 5, 6, 7, 8, 9]
    # a real 5 s write whose first second ramps up (20 MB of 124-188 in the others): the tool's warm-up, no stall
    ramp = step_seconds(rados_measurement("ceph16.2.15_write_4M.txt"))
    assert ramp[0] < loadsearch.STALL_BELOW * ramp[2] and loadsearch.stalls(ramp) == []
    # issue 36's t=2 step: 1.30, 1.34, 0.63 and 0.30 MB/s
    assert loadsearch.stalls([1.30, 1.34, 0.63, 0.30]) == [3]
    assert loadsearch.stalls([1.0, 0.1]) == []           # too few seconds to have a median
    assert loadsearch.min_step_s(1.0) == 5.0


def test_a_stalled_search_step_runs_again_before_it_counts():
    # failed before: a step ran once, its stall averaged into its figure
    from cephbench.drivers.rounds import in_rounds
    stalled = rados_measurement("ceph16.2.15_write_64K_22s_dated.txt")
    steady = rados_measurement("ceph16.2.15_write_4K.txt")
    results = sweep("lab1-repeat3.jsonl", "rados_bench", 1)
    test = results[1].test.model_copy(update={"search": Search(param="concurrency", max=8)})
    runs = []

    def one_round(n):
        runs.append(n)
        m = stalled if n == 0 else steady
        return Outcome(test, 0.0, 1.0, measurement=m, raw=[f"raw/{test.id}/run{n}.txt"], commands=[f"run {n}"])
    out = in_rounds(test, one_round)
    assert runs == [0, 1] and out.measurement is steady
    assert out.raw == [f"raw/{test.id}/run0.txt", f"raw/{test.id}/run1.txt"]
    [note] = [n for n in out.notes if n.startswith("search step run again after a stall")]
    assert "seconds 5, 6, 7, 8, 9, 10 of its 21 fell to 0.00" in note and "run 2's, which did not stall" in note
    assert "median second past its warm-up of 5.59" in note
    # a step that stalls every time counts as its last run, and says so; a test of no search runs once
    runs.clear()
    out = in_rounds(test, lambda n: (runs.append(n), Outcome(test, 0.0, 1.0, measurement=stalled))[1])
    assert runs == [0, 1, 2] and "stalled in each of its 3 runs" in out.notes[-1]
    runs.clear()
    in_rounds(results[1].test, lambda n: (runs.append(n), Outcome(results[1].test, 0.0, 1.0, measurement=stalled))[1])
    assert runs == [0]
    # a run again that fails leaves the stalled run standing, each run's output listed once

    def failing(n):
        return (Outcome(test, 0.0, 1.0, measurement=stalled, raw=["r0"], commands=["c0"]) if n == 0 else
                Outcome(test, 0.0, 1.0, error="rados bench write failed: timed out", raw=["r1"], commands=["c1"]))
    out = in_rounds(test, failing)
    assert out.measurement is stalled and out.raw == ["r0", "r1"] and out.commands == ["c0", "c1"]
    assert any("run again after a stall failed: rados bench write failed" in n for n in out.notes)


def test_a_step_stops_the_search_only_when_its_change_is_outside_its_noise():
    # issue 36: rados bench's t=2 step read 1.30, 1.34, 0.63, 0.30 MB/s (58 % standard deviation) and the next step
    # was -8 %: the search stopped with a knee at t=2, where minutes before the lab gave 1,343 objects/s at t=16.
    # Failed before: one step that did not pay stopped the search whatever its noise
    s = Search(param="concurrency", max=64)
    t2 = [1.30, 1.34, 0.63, 0.30]
    steps = [StepFigures(1, 150.0, 6e6, False, 0.03), StepFigures(2, 227.0, 8e6, False, loadsearch.noise(t2)),
             StepFigures(4, 209.0, 9e6, False, 0.04)]
    assert loadsearch.noise(t2) == pytest.approx(0.29, abs=0.01)
    assert stop(steps, s) is None
    # a second change within its noise in a row: the search stops and says the knee is not clear, with its band
    more = steps + [StepFigures(8, 215.0, 17e6, False, 0.25)]
    why = stop(more, s)
    assert why.reason == "unclear" and why.text.startswith("knee not clear: from concurrency 2 to 8")
    # a plateau measured steadily still stops it: +3 % against a noise of 2 % + 2 %
    flat = steps[:2] + [StepFigures(4, 234.0, 9e6, False, 0.02)]
    flat[1] = StepFigures(2, 227.0, 8e6, False, 0.02)
    assert stop(flat, s).reason == "throughput" and "short of it by more than its noise (±4%)" in stop(flat, s).text


def test_the_knee_rule_shows_the_band_where_its_steps_change_within_their_noise():
    from cephbench.analysis.curves import Curve, Point
    from cephbench.report.curves import knee_text

    def point(load, ops, noise, mean_ms):
        return Point(load, f"t={load}", f"00{load}-t", ops, ops * 4096, None, None, mean_ms * 1e6, "CPU",
                     noise=noise)
    # the trial's shape: t=2's seconds spread 58 % (±29 % over 4 s), then two steps within their noise
    pts = (point(1, 150, 0.03, 6.6), point(2, 227, 0.29, 8.8), point(4, 209, 0.04, 16.0), point(8, 215, 0.25, 30))
    c = Curve("k", "write 4KiB (rados)", "rados_bench", "RADOS", pts, True, False)
    k = knee(c)
    assert k.state == "unclear" and [(s.frm.load, s.to.load) for s in k.band] == [(2, 4), (4, 8)]
    text = knee_text(c, k)
    assert "knee not clear: between t=2 (2 in flight)" in text and "and t=8 (8 in flight)" in text
    # the same curve measured steadily has a knee at 2
    steady = tuple(Point(p.load, p.label, p.test_id, p.ops_per_s, p.bytes_per_s, None, None, p.mean_ns, "CPU")
                   for p in pts)
    assert knee(Curve("k", "t", "rados_bench", "RADOS", steady, True, False)).point.load == 2


def test_repeats_per_step_when_asked_run_each_step_and_its_noise_is_their_spread():
    from cephbench.drivers.rounds import in_rounds
    from cephbench.drivers.search import figures
    plan = expand(suite(modes=["write"], concurrency={"auto": {"max": 8, "repeats": 3}}))
    once = expand(suite(modes=["write"], concurrency={"auto": {"max": 8}}))
    assert plan.tests[0].search == Search(param="concurrency", max=8, repeats=3)
    assert plan.tests[1].est_duration_s == pytest.approx(3 * once.tests[1].est_duration_s)
    # three real runs of one 4 KiB write (Ceph 16.2.15): the median run stands for the step, the runs' spread is
    # its noise
    ms = [rados_measurement("ceph16.2.15_write_4K.txt"), rados_measurement("ceph16.2.15_write_4M.txt"),
          rados_measurement("ceph16.2.15_write_64K_22s_dated.txt")]
    test = plan.tests[1]
    runs = []
    out = in_rounds(test, lambda n: (runs.append(n), Outcome(test, 0.0, 1.0, measurement=ms[n // 3],
                                                             raw=[f"r{n}"]))[1])
    by = sorted(m.bytes_per_s for m in ms)
    # the third run stalls (its six seconds of nothing) and runs again twice, as any step's run: rounds 7 and 8
    assert runs == [0, 3, 6, 7, 8] and out.measurement.bytes_per_s == by[1]
    assert out.raw == ["r0", "r3", "r6", "r7", "r8"]
    assert figures(2, out.measurement).noise == pytest.approx((by[2] - by[0]) / 2 / by[1])
    assert "search step run 3 times" in out.notes[-1]
    with pytest.raises(UserError):
        parse_suite({"name": "t", "workloads": [{"type": "rados_bench", "concurrency": {"auto": {"repeats": 0}}}]},
                    "s.yaml")


def test_a_repeat_or_a_rerun_the_capacity_guard_leaves_no_room_ends_the_step_with_the_runs_so_far():
    """The guard refuses a write after the step's first run (drivers/lifecycle.write_room raises RoundsEnd for a
    later round): the runs made stand, said, and nothing escapes the step."""
    from cephbench.drivers.rounds import RoundsEnd, in_rounds
    plan = expand(suite(modes=["write"], concurrency={"auto": {"max": 8, "repeats": 3}}))
    test = plan.tests[1]
    ms = [rados_measurement("ceph16.2.15_write_4K.txt"), rados_measurement("ceph16.2.15_write_4M.txt"),
          rados_measurement("ceph16.2.15_write_64K_22s_dated.txt")]

    def guarded(first_refused: int, measurements):
        def one_round(n):
            if n >= first_refused:
                raise RoundsEnd("capacity guard: rados bench may write 1 GiB, more than the 0 B left")
            return Outcome(test, 0.0, 1.0, measurement=measurements[min(n, len(measurements) - 1)], raw=[f"r{n}"])
        return one_round

    # the second repeat (round 3) is refused: the first run is the step's figure
    out = in_rounds(test, guarded(3, ms))
    assert out.error is None and out.raw == ["r0"] and out.measurement.bytes_per_s == ms[0].bytes_per_s
    assert "run 2 was not made: capacity guard" in out.notes[-1]
    # a run that stalls and whose run again is refused stands, said (the 22 s write stalls: six seconds of nothing)
    once = expand(suite(modes=["write"], concurrency={"auto": {"max": 8}})).tests[1]
    out = in_rounds(once, guarded(1, [ms[2]]))
    assert out.error is None and out.measurement is ms[2]
    assert any("not run again after a stall: capacity guard" in n for n in out.notes)
