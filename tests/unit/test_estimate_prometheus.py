"""A run that reads its evidence from Prometheus waits after each test for the scrapes that cover its last second
(issue 36 item 4: a Prometheus run from a toolbox ran 87 % past its estimate): the estimate counts that wait, by the
same rules and bounds the evidence readers wait by, for the run's scrape interval and its ceph-exporters."""

from cephbench.evidence import cephexporter, prometheus
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import (EXPORTER_STATS_PERIOD_S, EXPORTER_WAIT_MAX_S, NODE_WAIT_MAX_S,
                                  WATCH_REMOTE_S, expand, for_cluster, prometheus_test_s,
                                  validate_estimates)


def test_the_waits_are_the_evidence_readers_own():
    assert NODE_WAIT_MAX_S == prometheus.MAX_WAIT_S
    assert EXPORTER_WAIT_MAX_S == cephexporter.MAX_WAIT_S
    assert EXPORTER_STATS_PERIOD_S == cephexporter.EXPORTER_STATS_PERIOD_S


def test_a_test_waits_one_scrape_or_the_exporters_period_and_a_scrape_bounded_as_the_readers_bound_it():
    # the lab's 1 s scrapes: one scrape and 0.25 s; cephadm's 10 s: node-exporter's wait, bounded at 5 s
    assert prometheus_test_s(1.0) == 1.25
    assert prometheus_test_s(10.0) == NODE_WAIT_MAX_S + 0.25
    # a ceph-exporter's counters: its stats period and a scrape (at most 30 s)
    assert prometheus_test_s(10.0, exporter=True) == 15.0
    assert prometheus_test_s(60.0, exporter=True) == EXPORTER_WAIT_MAX_S


def test_each_test_on_the_cluster_carries_it_and_validate_counts_it_for_a_suite_that_names_prometheus():
    data = {"name": "t", "pools": {"p": {"type": "replicated", "size": 3, "pg_num": 32}},
            "workloads": [{"type": "rados_bench", "pool": "p", "modes": ["write"], "object_size": "4KiB",
                           "concurrency": 16, "duration": "6s"}]}
    plain = expand(parse_suite(data, "t")).tests
    read = for_cluster(plain, ["h1"], "here", prometheus_s=prometheus_test_s(10.0))
    assert read[0].est_duration_s - for_cluster(plain, ["h1"], "here")[0].est_duration_s == prometheus_test_s(10.0)
    # a toolbox: ssh reaches none of the OSD hosts, which are not watched
    assert for_cluster(plain, ["h1"], "here", watched=[])[0].est_duration_s == \
        for_cluster(plain, ["h1"], "here")[0].est_duration_s - WATCH_REMOTE_S
    with_prom = expand(parse_suite({**data, "settings": {"prometheus": "http://prom:9090"}}, "t"))
    without = expand(parse_suite(data, "t"))
    for (_, a), (_, b) in zip(validate_estimates(with_prom), validate_estimates(without)):
        assert round(a.expected_s - b.expected_s, 6) == round(prometheus_test_s(), 6)
