"""A search of client hosts (`clients: auto`, issue 29 item 3): the plan of its steps (1, 2, 4, ... up to the hosts
the suite lists, the lab's once the run knows them, or a max), the worst case validate and the estimate give, and
bad input refused in one line at its YAML path."""

from __future__ import annotations

import json

import pytest

from cephbench.analysis.curves import curves
from cephbench.core.errors import UserError
from cephbench.core.loadsearch import DEFAULT_MAX, StepFigures, loads, stop
from cephbench.core.results import Measurement, Latency, Result, Search
from cephbench.suite.clients import resolve_clients
from cephbench.suite.config import Settings, parse_suite
from cephbench.suite.plan import expand, waits_for_client_hosts


def suite(hosts, variants=None, **workload):
    data = {"name": "t", "clients": hosts,
            "workloads": [{"type": "rados_bench", "modes": ["write", "rand"], "object_size": "4KiB",
                           "concurrency": 4, "duration": "2s", **workload}]}
    if variants is not None:
        data["variants"] = variants
    return parse_suite(data, "s.yaml")


def test_clients_auto_doubles_the_hosts_up_to_every_one_the_suite_lists_in_one_group():
    plan = expand(suite(["a", "b", "c", "d", "e"], clients="auto"))
    assert len({t.group for t in plan.tests}) == 1         # one pool, one write the reads read
    assert [(t.params["phase"], t.params["clients"]) for t in plan.tests] == \
        [(p, n) for p in ("write", "rand") for n in (1, 2, 4, 5)]      # the last step: every host
    assert {t.search for t in plan.tests} == {Search(param="clients", max=5)}
    assert plan.tests[2].id == "003-rados_bench-write-4KiB-t4-clients-4"
    assert all(t.params["concurrency"] == 4 for t in plan.tests)
    # a step is the test of a fixed client count: it compares with a sweep's test of the same count
    # (a step runs 5 s at least: its tool's warm-up, 3 whole seconds and one its end may cut)
    fixed = expand(suite(["a", "b", "c", "d", "e"], modes=["write"], clients=[4], duration="5s")).tests[0]
    assert plan.tests[2].match_key() == fixed.match_key()


def test_a_max_of_clients_is_any_count_and_the_steps_end_at_it():
    plan = expand(suite(["a", "b", "c"], modes=["write"], clients={"auto": {"max": 3, "latency_max": "20ms"}}))
    assert [t.params["clients"] for t in plan.tests] == [1, 2, 3] == loads(3)
    assert plan.tests[0].search == Search(param="clients", max=3, latency_max_s=0.02)
    assert [t.params["clients"] for t in expand(suite(["a", "b", "c"], modes=["write"],
                                                      clients={"auto": {"max": 2}})).tests] == [1, 2]


def test_the_labs_client_hosts_plan_the_worst_case_until_the_run_knows_them():
    s = suite("lab", clients="auto")
    assert waits_for_client_hosts(s)
    worst = expand(s)
    assert [t.params["clients"] for t in worst.tests][:len(loads(DEFAULT_MAX))] == loads(DEFAULT_MAX)
    ran = expand(s, client_hosts=2)         # the run, once the lab said it has two client hosts
    assert [(t.params["phase"], t.params["clients"]) for t in ran.tests] == \
        [("write", 1), ("write", 2), ("rand", 1), ("rand", 2)]
    assert ran.est_duration_s < worst.est_duration_s and ran.est_duration_s >= 4 * 2
    assert not waits_for_client_hosts(suite("lab", clients={"auto": {"max": 2}}))
    assert not waits_for_client_hosts(suite(["a", "b"], clients="auto"))


def test_a_client_search_reads_back_from_run_json_as_the_same_plan():
    s = suite("lab", clients={"auto": {"max": 2}})
    again = parse_suite(json.loads(json.dumps(s.model_dump(mode="json"))), "run.json suite")
    assert expand(again).tests == expand(s).tests
    s = suite("lab", clients="auto")
    again = parse_suite(json.loads(json.dumps(s.model_dump(mode="json"))), "run.json suite")
    assert expand(again, client_hosts=3).tests == expand(s, client_hosts=3).tests


SHAPES = [{"name": "small", "lab": {"hosts": 3, "clients": 1}}, {"name": "big", "lab": {"hosts": 3, "clients": 2}}]


@pytest.mark.parametrize("hosts, workload, variants, path, words", [
    (None, {"clients": "auto"}, None, "workloads[0].clients", "the suite lists no client hosts"),
    (["a", "b"], {"clients": {"auto": {"max": 4}}}, None, "workloads[0].clients.auto.max",
     "4 client hosts, and the suite lists 2"),
    (["a", "b"], {"clients": {"auto": {"max": 0}}}, None, "workloads[0].clients.auto.max", "below 1"),
    (["a", "b"], {"concurrency": {"auto": {"max": 8}}, "clients": "auto"}, None, "workloads[0].clients",
     "concurrency is searched already"),
    (["a", "b"], {"clients": ["auto"]}, None, "workloads[0].clients[0]", "a search of its own"),
    (["a", "b"], {"clients": {"auto": {"mx": 2}}}, None, "workloads[0].clients.auto.mx", "did you mean 'max'"),
    ("lab", {"clients": "auto"}, SHAPES, "workloads[0].clients.auto", "give the search a max"),
])
def test_bad_client_searches_are_one_line_at_their_yaml_path(hosts, workload, variants, path, words):
    with pytest.raises(UserError) as exc:
        expand(suite(hosts, variants=variants, **workload))
    assert exc.value.where == f"s.yaml: {path}" and words in exc.value.one_line()


def test_a_kind_that_searches_nothing_refuses_clients_auto_naming_those_that_search_them():
    with pytest.raises(UserError) as exc:
        parse_suite({"name": "t", "clients": ["a"], "workloads": [
            {"type": "rados_load_gen", "clients": "auto"}]}, "s.yaml")
    assert exc.value.where == "s.yaml: workloads[0].clients"
    assert "auto is a search, and rados_load_gen runs no search" in exc.value.one_line()
    assert "rgw (concurrency or clients)" in exc.value.one_line()
    assert "rbd_bench (clients)" in exc.value.one_line()
    assert "rados_bench (concurrency or clients)" in exc.value.one_line()
    assert "fio_rbd (iodepth or clients)" in exc.value.one_line(), exc.value.one_line()


def lab_topology(clients: int) -> dict:
    return {"hosts": [{"name": "h1", "role": "osd"}, *({"name": f"c{i}", "role": "client"}
                                                       for i in range(1, clients + 1))]}


def test_the_run_refuses_a_max_above_the_labs_client_hosts_and_a_lab_with_none():
    with pytest.raises(UserError) as exc:
        s = suite("lab", clients={"auto": {"max": 4}})
        resolve_clients(s, Settings(), lab_topology(2))
    assert exc.value.where == "workloads[0].clients.auto.max" and "the lab has 2" in exc.value.one_line()
    with pytest.raises(UserError) as exc:
        resolve_clients(suite("lab", clients="auto"), Settings(), lab_topology(0))
    assert exc.value.where == "clients" and "no client hosts" in exc.value.one_line()
    assert [c.name for c in resolve_clients(suite("lab", clients="auto"), Settings(), lab_topology(3))] == \
        ["c1", "c2", "c3"]


def test_the_stop_rule_counts_hosts_that_are_not_a_doubling():
    s = Search(param="clients", max=3)
    # 2 -> 3 hosts is log2(1.5) doublings: +12 % over it is +20 % per doubling, which pays; and 3 is the max
    steps = [StepFigures(1, 100.0, 1e6, False), StepFigures(2, 190.0, 1e6, False), StepFigures(3, 212.8, 1e6, False)]
    why = stop(steps, s)
    assert why is not None and why.reason == "max"
    flat = [*steps[:2], StepFigures(3, 191.0, 1e6, False)]
    why = stop(flat, s)
    assert why is not None and why.reason == "throughput" and "from clients 2 to 3" in why.text


def test_the_steps_of_a_client_search_make_one_curve_over_clients():
    plan = expand(suite(["a", "b", "c", "d"], modes=["write"], clients="auto"))
    results = [Result(test=t, status="ok", started_unix=0.0, duration_s=2.0, measurement=Measurement(
        tool="rados bench", op="write", duration_s=2.0, bytes_per_s=1e6 * n, ops_per_s=100.0 * n,
        latency=Latency(mean_ns=1e6))) for t, n in zip(plan.tests, (1, 2, 3, 3))]
    (c,) = curves(results)
    assert [p.load for p in c.points] == [4, 8, 16]     # operations in flight: 4 per host
    assert [p.label for p in c.points] == ["t=4 clients=1", "t=4 clients=2", "t=4 clients=4"]


def test_a_search_of_client_hosts_that_reached_them_all_says_so():
    s = Search(param="clients", max=2)
    why = stop([StepFigures(1, 100.0, 1e6, False), StepFigures(2, 150.0, 1e6, False)], s)
    assert why is not None and why.text == "reached max 2 client hosts before the knee rule stopped it"
