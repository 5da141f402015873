"""The OSDs' counters from Prometheus (evidence/cephexporter.py) on real answers: the mgr prometheus module's series
of Ceph 16.2.15 over a lab's 1 MiB write (tests/fixtures/README.md), read as two perf dumps whose deltas are those
`ceph tell osd.N perf dump` gave over the same write; their series matched to the cluster's hosts by instance, and
another cluster's left out and named."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cephbench.evidence import cephexporter as ce
from cephbench.evidence import promanswer as pa
from cephbench.evidence.counters import deltas
from cephbench.evidence.promanswer import Series, instance_address, parse_answer
from cephbench.evidence.source import Ask, Reach, What
from cephbench.evidence.sources import CEPH_TELL, SOURCES, chosen, window_sources

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PROM = FIX / "prometheus"
STEM = "prom2.42_lab3_osd1_throttled_write_"
START, LAST = 1795679729, 1795679755     # the write's window start; 16 s after its end (one module refresh)
MGR_SERVICES = {"prometheus": "http://198.18.0.1:9283/"}


def _series() -> list[Series]:
    out = []
    for f in sorted(PROM.glob(f"{STEM}ceph_*.json")):
        out += parse_answer(f.read_text())
    return out


def _at(series: list[Series], t: float) -> list[Series]:
    """An instant query's answer at t, from the range answers: each series' last sample at or before t."""
    return [Series(s.labels, [v for v in s.values if v[0] <= t][-1:]) for s in series if s.values[0][0] <= t]


def _metadata() -> list[dict]:
    return json.loads((PROM / "ceph16.2.15_lab3_osd1_throttled_osd_metadata.json").read_text())


def _tell(n: int, when: str) -> dict:
    return json.loads((FIX / "perf_dump" / f"ceph16.2.15_lab3_osd1_throttled_osd{n}_tell_{when}_rados_write_1M.json")
                      .read_text())


def test_the_mgr_modules_series_give_the_counts_ceph_tell_gave_over_the_same_write():
    series = _series()
    hosts = ce.host_addresses(_metadata())
    osds = {0: "h1", 1: "h2", 2: "h3"}
    m = ce.match(_at(series, START), _at(series, LAST), osds, hosts, ce.mgr_instances(MGR_SERVICES))
    assert sorted(m.dumps) == [0, 1, 2] and not m.unmatched
    assert {kind for kind, _ in m.origins.values()} == {ce.MGR}
    for n, (first, last) in m.dumps.items():
        got = deltas(first, last, n, osds[n], source=ce.source_of(*m.origins[n], osds[n]))
        told = deltas(_tell(n, "before"), _tell(n, "after"), n, osds[n])
        print(n, got.op_w, told.op_w, got.commit_latency_s, told.commit_latency_s)
        assert got.op_w == told.op_w and got.op_w and got.op_w > 0
        for field in ("op_w_latency_s", "op_w_process_latency_s", "commit_latency_s", "kv_sync_latency_s"):
            assert abs(getattr(got, field) - getattr(told, field)) < 1e-6, field
        # the module leaves out what is not of use to a dashboard (a replica's writes): missing, not zero
        assert got.subop_w is None and "osd.subop_w" in got.missing and told.subop_w
        assert got.source == "the mgr's prometheus module via Prometheus (198.18.0.1:9283)"
    # `ceph mgr services` may name the mgr's host where Prometheus has its address: the module's port still tells
    # its series from a ceph-exporter on that host (osd.0's, h1)
    unnamed = ce.match(_at(series, START), _at(series, LAST), osds, hosts,
                       ce.mgr_instances({"prometheus": "http://x:9283/"}))
    assert {kind for kind, _ in unnamed.origins.values()} == {ce.MGR} and not unnamed.unmatched
    line = ce.matched_line(m, osds, hosts)
    assert line == ("OSD counters from Prometheus: osd.0, osd.1, osd.2 from the mgr's prometheus module "
                    "(job ceph, instance 198.18.0.1:9283: h1)"), line


def test_series_of_an_instance_no_host_of_the_cluster_has_are_another_clusters_and_named():
    series = _series()
    # the same series as a second cluster's ceph-exporters would carry them: on h2 by its address, and on a host
    # this cluster does not have
    other = [Series({**s.labels, "job": "ceph-exporter", "instance": "10.9.9.9:9926"}, s.values) for s in series]
    # ceph-exporter's ceph_daemon is the socket's file name: "ceph-osd.1" in cephadm's layout (DaemonMetricCollector)
    theirs = [Series({**s.labels, "job": "ceph-exporter", "instance": "198.18.0.2:9926", "ceph_daemon": "ceph-osd.1"},
                     s.values) for s in series if s.labels["ceph_daemon"] == "osd.1"]
    everything = series + other + theirs
    hosts = ce.host_addresses(_metadata())
    osds = {0: "h1", 1: "h2", 2: "h3"}
    m = ce.match(_at(everything, START), _at(everything, LAST), osds, hosts, ce.mgr_instances(MGR_SERVICES))
    # osd.1's ceph-exporter on its own host comes before the mgr module; the others stay the module's
    assert m.origins[1] == (ce.EXPORTER, ce.Origin("ceph-exporter", "198.18.0.2:9926"))
    assert {n: k for n, (k, _) in m.origins.items()} == {0: ce.MGR, 1: ce.EXPORTER, 2: ce.MGR}
    assert m.unmatched == {ce.Origin("ceph-exporter", "10.9.9.9:9926"): [0, 1, 2]}
    line = ce.matched_line(m, osds, hosts)
    assert "osd.1 from ceph-exporter (job ceph-exporter, instance 198.18.0.2:9926: h2)" in line, line
    assert line.endswith("not matched to a host of this cluster: job ceph-exporter, instance 10.9.9.9:9926 "
                         "(osd.0, osd.1, osd.2)"), line
    # the ceph-exporter source alone (ahead of `ceph tell`) takes only osd.1
    only = ce.match(_at(everything, START), _at(everything, LAST), osds, hosts, ce.mgr_instances(MGR_SERVICES),
                    (ce.EXPORTER,))
    assert sorted(only.dumps) == [1]


def test_names_and_instances():
    assert ce.metric_name("bluestore", "txc_commit_lat") == "ceph_bluestore_txc_commit_lat"
    names = ce.metrics()
    assert names["ceph_osd_op_w_latency_sum"] == ("osd", "op_w_latency", "sum")
    assert names["ceph_bluestore_txc_commit_lat_count"] == ("bluestore", "txc_commit_lat", "count")
    assert names["ceph_osd_op_in_bytes"] == ("osd", "op_in_bytes", "")
    hosts = ce.host_addresses(_metadata())
    assert ce.host_of("h2:9926", hosts) == "h2" and ce.host_of("h2.example.com", hosts) == "h2"
    assert ce.host_of("198.18.0.3:9926", hosts) == "h3" and ce.host_of("10.0.0.1:9926", hosts) is None
    assert instance_address("[fd00::1]:9926") == "fd00::1"
    assert ce.mgr_instances({}) == {"ceph_cluster"}


class _Prom:
    """Prometheus answering from the captured range answers (its /api/v1/targets: the capture's own)."""
    shown = "http://prom:9090"

    def get(self, path: str) -> bytes:
        return (PROM / f"{STEM}targets.json").read_bytes()

    def query(self, q: str, at: float) -> list[Series]:
        return _at(_series(), at)


def test_the_sources_in_their_order_and_a_reading_of_the_window():
    toolbox = Reach(ssh=False, prometheus="http://prom:9090")
    assert [s.name for s in chosen(toolbox, What.OSD_COUNTERS)] == [
        "admin socket", "ceph-exporter", "ceph tell", "the mgr's prometheus module"]
    assert [s.name for s in window_sources(toolbox, {What.OSD_COUNTERS}, before=CEPH_TELL)] == ["ceph-exporter"]
    assert [s.name for s in chosen(Reach(ssh=True, prometheus=None), What.OSD_COUNTERS)] == ["admin socket",
                                                                                              "ceph tell"]
    assert len({s.name for s in SOURCES}) == len(SOURCES)
    ask = Ask(_Prom(), _metadata(), START, START, osds={0: "h1", 1: "h2", 2: "h3"}, mgr_services=MGR_SERVICES)
    # what ceph-exporter holds now (start == end: no wait): none here, so `ceph tell` reads them
    assert ce.CEPH_EXPORTER.read(ask).counters == {}
    # the module's lag (mgr_stats_period 1 s + its own 15 s refresh) and a scrape (1 s) after the end: LAST
    ask.config = lambda who, name: {"mgr_stats_period": "1", "mgr/prometheus/scrape_interval": "15"}.get(name)
    ask.end = LAST - 17                  # long past: no waiting
    found = ce.MGR_MODULE.read(ask)
    assert sorted(found.counters) == [0, 1, 2] and found.notes[0].startswith("OSD counters from Prometheus: ")
    none = ce.CEPH_EXPORTER.read(ask)
    assert none.counters == {} and none.notes[-1].startswith("Prometheus at http://prom:9090 has no ceph-exporter"), \
        none.notes


REEF = "prom2.42_ceph18.2.7_lab3_write_64K_"


def test_reefs_mgr_module_gives_the_counts_ceph_tell_gave_and_the_writes_rados_bench_made():
    """Reef 18.2.7's module with mgr/prometheus/exclude_perf_counters false (the lab's --monitoring): the reader's own
    query at a 4 s write's start and 3.6 s after its end (tests/fixtures/README.md)."""
    first = parse_answer((PROM / f"{REEF}counters_start.json").read_text())
    last = parse_answer((PROM / f"{REEF}counters_end.json").read_text())
    metadata = json.loads((PROM / "ceph18.2.7_lab3_osd_metadata.json").read_text())
    hosts = ce.host_addresses(metadata)
    osds = {0: "h1", 1: "h2", 2: "h3"}
    m = ce.match(first, last, osds, hosts, ce.mgr_instances({"prometheus": "http://198.18.1.1:9283/"}))
    assert ce.matched_line(m, osds, hosts) == ("OSD counters from Prometheus: osd.0, osd.1, osd.2 from the mgr's "
                                               "prometheus module (job ceph, instance 198.18.1.1:9283: h1)")
    total = 0.0
    for n, (a, b) in sorted(m.dumps.items()):
        got = deltas(a, b, n)
        told = deltas(*(json.loads((FIX / "perf_dump" / f"ceph18.2.7_lab3_osd{n}_tell_{w}_rados_write_64K.json")
                                   .read_text()) for w in ("before", "after")), n)
        for field in ("op_w", "op_in_bytes", "op_w_latency_s", "commit_latency_s", "kv_sync_latency_s",
                      "throttle_latency_s"):
            assert getattr(got, field) == getattr(told, field), (n, field)
        assert got.missing == ["osd.subop_w", "osd.subop_w_latency"]
        total += got.op_w or 0
    made = re.search(r"Total writes made:\s+(\d+)", (FIX / "perf_dump" / "ceph18.2.7_lab3_rados_write_64K_between.txt")
                     .read_text())
    # one more than rados bench counts: its run's metadata object
    assert made and total == int(made.group(1)) + 1
    # what the module serves of the counters read: every one but a replica's writes (their priority)
    served = {line.split("{")[0] for line in (PROM / "ceph18.2.7_mgr_prometheus_metrics_osd.txt").read_text()
              .splitlines() if not line.startswith("#")}
    pacifics = re.compile(r"ceph_bluestore_(commit|submit|throttle)_lat_")     # renamed txc_* since Quincy
    reef = {name for name in ce.metrics() if not pacifics.match(name)}
    assert reef - served == {"ceph_osd_subop_w", "ceph_osd_subop_w_latency_sum", "ceph_osd_subop_w_latency_count"}


def test_series_and_targets_labelled_by_address_are_the_hosts_of_that_address():
    """An operator's Prometheus labels a target `address:port` unless relabelled: node-exporter's CPU series of
    the lab (Ceph 16.2.15's hosts h1-h3, prom2.42_lab3_load_h2_*) labelled so are still each host's, and the
    targets' line says which target went to which host (the Reef lab's /api/v1/targets, whose node-exporters are
    labelled by name and whose mgr module by address)."""
    hosts = ce.host_addresses(json.loads((PROM / "ceph16.2.15_lab3_osd_metadata.json").read_text()))
    busy = parse_answer((PROM / "prom2.42_lab3_load_h2_node_cpu_busy.json").read_text())
    cpus = parse_answer((PROM / "prom2.42_lab3_load_h2_node_cpu_count.json").read_text())
    ip = {"h1": "198.18.0.1:9100", "h2": "198.18.0.2:9100", "h3": "198.18.0.3:9100"}
    by_ip = [[Series({**s.labels, "instance": ip[s.labels["instance"]]}, s.values) for s in x] for x in (busy, cpus)]
    steps = [1796560955.0 + i for i in range(10)]
    assert pa.host_cpu_loads(["h1", "h2", "h3"], *by_ip, steps) == []         # by name alone: none
    got = pa.host_cpu_loads(["h1", "h2", "h3"], *(pa.named(x, hosts) for x in by_ip), steps)
    assert got == pa.host_cpu_loads(["h1", "h2", "h3"], busy, cpus, steps) and len(got) == 3
    reef = ce.host_addresses(json.loads((PROM / "ceph18.2.7_lab3_osd_metadata.json").read_text()))
    line = pa.targets_line(pa.active_targets((PROM / f"{REEF}targets.json").read_text()), reef)
    assert line == ("Prometheus' targets matched to the Ceph hosts by name or address: h1 (ceph 198.18.1.1:9283, "
                    "node h1, process h1); h2 (node h2, process h2); h3 (node h3, process h3); not a Ceph host's: "
                    "cadvisor 127.0.0.1:55209"), line
