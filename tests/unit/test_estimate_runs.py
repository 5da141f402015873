"""The estimate `run` prints, held against real runs on the lab (issue 36 item 4: within 15 %). Each fixture in
tests/fixtures/estimates/*.run-timings.json is a run that benchmarks/bench_estimates.py made and kept (its suite as
run.json recorded it, the OSD hosts and this machine's name the run found, its client hosts, the cluster's raw space
and OSDs at its start, each result's start and length, whether it was skipped, ran again after a stall or was
measured again in pairs, its start and end; the about line says the cephbench and Ceph 16.2.15 that ran it): seed
suites with their lab shapes (rebuilds, throttles, FileStore, 4 client hosts, three releases whose writes the capacity
guard cut), the quick suite with its searches of fio's queue depth, searches of rados bench's concurrency whose 1 MiB
steps the capacity guard cut, `clients: auto` suites on 2 client hosts, and runs from a toolbox (no ssh) with the
lab's Prometheus. The *-3 runs (search, clients, the toolbox, seed-argonaut-bobtail-now) and the -2 runs of
seed-centerdevice-2014 and seed-homelab-2018 (2026-12-06 21:05-21:52, load average 1.7-7.6) were recorded after the
others, with the cephbench whose tests' own costs the model now counts (a drop 0.3 s here and 0.2 s over ssh, a
watch 0.15 s a host, a group of images not prefilled 1.3 s, a write's operations in flight on a shape, the Prometheus
wait whole, a release's root built in the run: roots_built). A run with searches is held to its range and to the
estimate of the course its searches took (plan.as_run_s): how far a search goes is not known before it runs."""

import json

import pytest

from conftest import FIXTURES
from cephbench.suite import plan
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import LAB_REBUILD_S, Room, as_run_s, estimate, planned_for, run_share

RUNS = sorted(p.name.removesuffix(".run-timings.json") for p in (FIXTURES / "estimates").glob("*.run-timings.json"))


def _estimated(name: str):
    rec = json.loads((FIXTURES / "estimates" / f"{name}.run-timings.json").read_text())
    suite = parse_suite(rec["suite"], name)
    ready = min(t["started_unix"] for t in rec["tests"]) - rec["started_unix"] < LAB_REBUILD_S
    room = Room(rec["raw_bytes"]["total"], rec["raw_bytes"]["used"], rec["raw_bytes"]["osds"])
    tests = planned_for(suite, rec["osd_hosts"], rec["here"], rec["clients"] or None, ready,
                        watched=None if rec.get("ssh_reached", True) else [], room=room,
                        unbuilt=frozenset(rec.get("roots_built", [])))
    # every planned test has a result (a search's skipped steps among them; a network baseline's, in parts)
    ran = {t["id"] for t in rec["tests"]}
    assert all(t.id in ran or any(r.startswith(t.id + "-") for r in ran) for t in tests), name
    return rec, tests, estimate(tests), rec["finished_unix"] - rec["started_unix"]


def _searched(name: str) -> bool:
    return any(t.search is not None for t in _estimated(name)[1])


# Runs of a suite that today's cephbench runs in much less time on the same lab, and the run of it that replaced
# them: no one estimate can hold both within 15 % (test_a_superseded_run_is_one_no_estimate_could_hold_beside_its_
# successor). seed-homelab-2018 (13:14, load not recorded) took 462 s, its -2 (21:17, load 5.8) 285 s: the reads of
# the first ran 3.8-13.4 s past their 5 s, the second's 1.0-2.8 s (their drops over ssh, watches and ends).
SUPERSEDED = {"seed-homelab-2018": "seed-homelab-2018-2"}
# Runs made before the capacity guard waited for room (e204d4d): a write with too little room was refused at once,
# where today's cephbench waits while the cluster frees the space of the groups before it and then writes; the run
# that did that work replaced each (test_a_run_made_before_the_guard_waited_refused_writes_its_successor_made).
# seed-argonaut-bobtail-now and its -2 (585 and 592 s) refused the 4 MiB writes at 32 in flight on Reef and Tentacle
# that its -4 (837 s) ran for 35 and 19 s; seed-bobtail-2012 (874 s) refused the 4 MiB write on btrfs that its -2
# (1,134 s) ran for 11 s. Held to today's model they stand at 1.24-1.30.
REFUSED_BEFORE = {"seed-argonaut-bobtail-now": "seed-argonaut-bobtail-now-4",
                  "seed-argonaut-bobtail-now-2": "seed-argonaut-bobtail-now-4",
                  "seed-bobtail-2012": "seed-bobtail-2012-2"}


@pytest.mark.parametrize("name", [n for n in RUNS if not _searched(n) and n not in {**SUPERSEDED, **REFUSED_BEFORE}])
def test_the_estimate_run_prints_is_within_15_percent_of_the_recorded_run(name):
    _, _, e, took = _estimated(name)
    assert 0.85 <= e.expected_s / took <= 1.15, (name, e, took)


@pytest.mark.parametrize("old, new", sorted(SUPERSEDED.items()))
def test_a_superseded_run_is_one_no_estimate_could_hold_beside_its_successor(old, new):
    a, b = (json.loads((FIXTURES / "estimates" / f"{n}.run-timings.json").read_text()) for n in (old, new))
    assert a["suite"] == b["suite"] and a["osd_hosts"] == b["osd_hosts"]
    took = [r["finished_unix"] - r["started_unix"] for r in (a, b)]
    assert took[0] / took[1] > 1.15 / 0.85, took


@pytest.mark.parametrize("old, new", sorted(REFUSED_BEFORE.items()))
def test_a_run_made_before_the_guard_waited_refused_writes_its_successor_made(old, new):
    (a, tests, _, _), (b, _, _, _) = _estimated(old), _estimated(new)
    assert a["suite"] == b["suite"] and a["osd_hosts"] == b["osd_hosts"]
    took = [{t["id"]: t["duration_s"] for t in r["tests"]} for r in (a, b)]
    refused = [t.id for t in tests if t.params.phase == "write" and took[0][t.id] < 1.0 <= took[1].get(t.id, 0.0)]
    assert refused, (old, new)


@pytest.mark.parametrize("name", [n for n in RUNS if _searched(n)])
def test_a_search_run_lies_in_its_range_and_the_estimate_of_its_course_is_within_15_percent(name):
    rec, tests, e, took = _estimated(name)
    assert 0.85 * e.shortest_s <= took <= e.longest_s, (name, e, took)
    course = as_run_s(tests, {t["id"] for t in rec["tests"] if not t["skipped"]},
                      {t["id"]: t["reruns"] for t in rec["tests"]}, {t["id"] for t in rec["tests"] if t["paired"]})
    assert 0.85 <= course / took <= 1.15, (name, course, took)
    # the steps that ran: at least those a search always runs (its first 3 loads), which count whole
    skipped = {t["id"] for t in rec["tests"] if t["skipped"]}
    assert all(t.id not in skipped for t in tests if t.search is not None and run_share(t) == 1.0)


def test_the_capacity_guard_cuts_the_writes_a_small_cluster_has_no_room_for(monkeypatch):
    # search-rados: each 1 MiB step stopped after 1.3-2.5 s of its 5 (its share of the room among the steps left),
    # and without the cut counted its estimate ran 1.3x past it; seed-argonaut-bobtail-now-4: its 128 KiB and 4 MiB
    # writes of 20 s stopped after 2-17 s (and two waited 12 and 24 s for the room first), within 15 % cut or not
    for name, whole_past in (("search-rados", True), ("seed-argonaut-bobtail-now-4", False)):
        rec, tests, e, took = _estimated(name)
        with monkeypatch.context() as m:
            m.setattr(plan, "capacity_cut", lambda tests, suite, room, remote=False: tests)
            whole = _estimated(name)[1]
        cut = [t for t, w in zip(tests, whole) if t.est_duration_s < w.est_duration_s]
        assert cut and all(t.params["phase"] == "write" and t.params["object_size"] >= 128 << 10 for t in cut), name
        course = [as_run_s(x, {t["id"] for t in rec["tests"] if not t["skipped"]},
                           {t["id"]: t["reruns"] for t in rec["tests"]}, set()) / took for x in (whole, tests)]
        assert 0.85 <= course[1] <= 1.15 and (course[0] > 1.15) == whole_past, (name, course)


def test_each_rgw_test_is_estimated_with_its_warm_up_prefill_and_deletions():
    # suites/rgw.yaml on the one-host lab (the rgw fixture): a get of 200 objects of 4 MiB took 33-34 s for its 20 s
    # (2 s warm-up, 9-10 s filling its key space); a put of 4 KiB objects 24-25 s; the old model's 21-25 s for every
    # one of them and 4 s a group made the run's estimate 0.79
    rec, tests, _, _ = _estimated("rgw")
    actual = {t["id"]: t["duration_s"] for t in rec["tests"]}
    ratios = {t.id: t.est_duration_s / actual[t.id] for t in tests}
    big = [r for i, r in ratios.items() if "4MiB" in i and "-get-" in i]
    assert len(big) == 4 and all(0.9 <= r <= 1.1 for r in big), big
    timed = sorted(r for i, r in ratios.items() if "swift-bench" not in i)
    assert len(timed) == 32 and 0.85 <= timed[0] and timed[-1] <= 1.15, (timed[0], timed[-1])
    # the ops-bound phases (swift-bench's preset: 1000 PUTs, 100 GETs, 1000 DELETEs) are short and less sure: each
    # took 8.2 s, 1.1-2.5 s more than its prefill, its ops at the rates seen and its deletions; within 35 %
    assert all(0.65 <= r <= 1.35 for i, r in ratios.items() if "swift-bench" in i), ratios
