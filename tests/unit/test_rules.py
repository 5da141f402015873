"""Each verdict rule on its own, on recorded evidence: the rule answers what it should, and in the registry's order
(analysis/rules.py) it is the rule that decides. The runs are tests/fixtures' (README there: Ceph 16.2.15 labs, the
tool, the lab's shape); where a rule's case was not recorded as such, the test says what it changes in a recorded
run and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.analysis import RunAnalyzer, RunFacts, client_hosts, rules
from cephbench.analysis.rules_evidence import (EvidenceFacts, at_ceiling, busy_cpu, daemon_at_cpu_limit,
                                               device_at_throttle, device_busy, evidence_missing, facts_of, latency,
                                               link_at_speed, one_op_in_flight, other_clients, queued_for_capacity,
                                               scheduler_limit, slow_osd)
from cephbench.analysis.rules_ceiling import binding_term, busy_host_cpu, small_ops
from cephbench.core.results import Result
from test_device_requests import RUNS as DBIOPS, rederived
from test_scheduler_verdict import CUSTOM, result as reef_result

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def recorded(path: str, test_id: str | None = None) -> Result:
    """The result of `test_id` in a recorded results file (None: its last)."""
    found = [Result.model_validate_json(ln) for ln in (FIX / path).read_text().splitlines() if ln.strip()]
    return next(r for r in found if r.test.id == test_id) if test_id else found[-1]


def facts(r: Result, efficiency: float | None = None, rotational: dict[int, bool] | None = None) -> EvidenceFacts:
    return facts_of(r, efficiency, None, set(client_hosts(r)), rotational)


def decides(rule, f: EvidenceFacts):
    """The rule's own answer, checked to be the registry's: no rule before it answers."""
    own = rule(f)
    first, v = rules.first_evidence_rule(f)
    assert first is rule, f"{first.__name__} decided before {rule.__name__}: {v.bottleneck}"
    assert own is not None and (own.bottleneck, own.sentence, own.lines) == (v.bottleneck, v.sentence, v.lines)
    return own


def test_device_at_throttle_names_every_wal_db_drive_at_its_throttle():
    # every WAL/DB drive throttled to 4MiB/s,150iops, the machine's CPUs 72 % busy; the device series made again from
    # the raw watch streams (requests as submitted, which the throttle counts)
    v = decides(device_at_throttle, facts(rederived(DBIOPS[0])))
    assert v.bottleneck == "WAL/DB devices h1:loop1, h2:loop3, h3:loop5"
    assert v.sentence == "measured: each carried 99% to 99% of its cgroup throttle"


def test_daemon_at_cpu_limit_names_the_osd_held_by_its_cgroup_quota():
    # osd.2 held to 0.08 cores, a neighbour burning on h2
    v = decides(daemon_at_cpu_limit, facts(recorded("cpu_split/ceph16.2.15_cpu_limit_osd2_load_h2.jsonl")))
    assert v.bottleneck == "CPU limit of osd.2 (h3)"
    assert v.lines[0].startswith("osd.2 (h3") and "held by its CPU limit, 0.08 cores" in v.lines[0]


def test_slow_osd_names_the_drive_a_throttle_held_where_no_throttle_is_seen():
    # osd.1's drive at 8 MiB/s, read from Prometheus (node-exporter has no throttles): the OSD's own commit says it
    v = decides(slow_osd, facts(recorded("prometheus/ceph16.2.15_lab3_osd1_throttled_toolbox_bare_write_1M.result.json")))
    assert v.bottleneck == "disk h2:loop1"
    assert v.lines[0].startswith("osd.1 (h2): BlueStore commit")


def test_link_at_speed_names_every_cluster_link_at_its_limit_and_one_alone():
    r = recorded("cpu_split/ceph16.2.15_cluster_net_50mbit_1MiB.jsonl")       # --cluster-net 50mbit, 1 MiB writes
    v = decides(link_at_speed, facts(r))
    assert v.bottleneck == "cluster network (h1 clu0, h2 clu0, h3 clu0)"
    assert "each carried 85% to 89% of their speed" in v.sentence
    # the same run with h2's cluster link alone read (the others not watched): that link alone
    r.evidence.links = [lk for lk in r.evidence.links if lk.network != "cluster" or lk.host == "h2"]
    v = decides(link_at_speed, facts(r))
    assert v.bottleneck == "cluster network (h2 clu0)"
    assert v.sentence == "measured: the link h2 clu0 carried 87% of its speed over the test's seconds"


def test_other_clients_names_another_clients_load_in_the_same_pool():
    v = decides(other_clients, facts(recorded("other_load_existing/ceph16.2.15_beside_other.jsonl")))
    assert v.bottleneck == "other clients' load"
    assert v.sentence.endswith("so this result is not the cluster's alone")


def test_scheduler_limit_names_mclocks_client_limit_it_reached():
    # Reef 18.2.7's `config show` under a custom profile (client res 0.1, lim 0.3) and that lab's 94 ops/s
    v = decides(scheduler_limit, facts(reef_result(94, CUSTOM), rotational={0: True}))
    assert v.bottleneck == "OSD scheduler (mClock client limit)"
    assert v.sentence.startswith("measured: osd.0 served ")


def test_scheduler_limit_names_a_limit_served_short_only_when_the_osds_queue_held_the_ops():
    # CI of 055229e: the one-OSD Reef lab beside make test's other work served 78 of the 94 ops/s the limit allows
    # (83 %), the breakdown 149.6 of 201.8 ms in the OSD's queue; the verdict said "unknown"
    from cephbench.core.results import LatencyBreakdown

    r = reef_result(78, CUSTOM)
    assert scheduler_limit(facts(r, rotational={0: True})) is None           # no breakdown: 83 % is not enough
    queued = LatencyBreakdown(client_s=0.2018, network_s=0.0013, queue_s=0.1496, commit_s=0.0528)
    v = decides(scheduler_limit, facts_of(r, None, queued, set(client_hosts(r)), {0: True}))
    assert v.bottleneck == "OSD scheduler (mClock client limit)"
    assert v.sentence == ("measured: osd.0 served 83% of the client ops its mClock client limit allows, its ops "
                          "74% of their latency in its queue")
    # a queue that held a quarter of the latency does not make 83 % a cap; nor does any queue make 60 % one
    light = queued.model_copy(update={"queue_s": 0.05})
    assert scheduler_limit(facts_of(r, None, light, set(client_hosts(r)), {0: True})) is None
    low = reef_result(56, CUSTOM)
    assert scheduler_limit(facts_of(low, None, queued, set(client_hosts(low)), {0: True})) is None


@pytest.mark.parametrize("test_id,bottleneck", [("011-rados-rand-4MiB-t16", "disk vm:vda"),
                                               ("010-rados-seq-4MiB-t16", "disk vm:vda or CPU: cannot tell")])
def test_device_busy_names_a_busy_device_or_it_beside_busy_cpus(test_id, bottleneck):
    # the one-host lab's OSDs are files on the machine's disk vda: 4 MiB reads kept it busy
    r = recorded("report/ceph16.2.15_quick_search_onehost.results.jsonl", test_id)
    v = decides(device_busy, facts(r))
    assert v.bottleneck == bottleneck
    assert ("cannot tell which" in v.sentence) == ("cannot tell" in bottleneck)


def test_one_op_in_flight_is_latency_whatever_else_is_busy():
    r = recorded("report/ceph16.2.15_quick_search_onehost.results.jsonl", "012-rbd-randwrite-4KiB-qd1")
    v = decides(one_op_in_flight, facts(r))
    assert v.bottleneck == "latency (1 op in flight)"
    assert v.sentence.startswith("measured: one op in flight, so each op's latency sets the rate")


def test_busy_cpu_names_whose_the_cpus_were_or_them_beside_a_device_near_its_limit():
    v = decides(busy_cpu, facts(recorded("cpu_split/ceph16.2.15_load_h2_4KiB.jsonl")))   # a neighbour on h2
    assert v.bottleneck == "CPU (other processes on vm)"
    assert any(ln.startswith("CPU of vm by consumer") for ln in v.lines)
    # a toolbox run (Prometheus) with a neighbour on h2: h2's drive near its limit beside the busy CPUs
    v = decides(busy_cpu, facts(recorded("prometheus/ceph16.2.15_lab3_load_h2_toolbox_write_4K.results.jsonl")))
    assert v.bottleneck == "disk h2:loop1 or CPU: cannot tell" and "cannot tell which" in v.sentence


def test_at_ceiling_and_evidence_missing_name_nothing_and_leave_the_ceiling_rules_to_decide():
    r = recorded("watch/ceph16.2.15_dbiops_client-cpu-72/results.jsonl")
    v = decides(at_ceiling, facts(r, efficiency=0.95))
    assert v.bottleneck is None and v.sentence == ""
    assert at_ceiling(facts(r, efficiency=0.85)) is None
    # the one-host lab, its CPUs under 80 % busy: its links are the machine's, whose speed the kernel does not give
    r = recorded("report/ceph16.2.15_repeated_first.results.jsonl", "001-rados-write-rep2-64KiB-t4-r1")
    v = decides(evidence_missing, facts(r))
    assert v.bottleneck is None
    assert v.lines[-1] == "not measured: link speeds (the kernel does not report them)"


def test_queued_for_capacity_names_a_throttle_near_full_while_no_cpu_was_busy():
    # the 72 % CPU run with its WAL/DB throttles read as 190 IOPS (as tests/unit/test_device_requests.py reads the
    # 99 % run): the drives carried 78 % of them, under the 90 % that names a device, with no CPU busy
    r = rederived(DBIOPS[0])
    for d in r.evidence.devices:
        if d.limit_write_iops:
            d.limit_write_iops = d.limit_read_iops = 190
    v = decides(queued_for_capacity, facts(r))
    assert v.bottleneck.startswith("WAL/DB device h")
    assert v.sentence.endswith("of its cgroup throttle and no CPU was busy: the ops queued for it")


def test_latency_is_the_last_evidence_rule_and_always_answers():
    # the same run as its watch recorded it (completed requests only: the throttles do not show)
    f = facts(recorded("watch/ceph16.2.15_dbiops_client-cpu-72/results.jsonl"))
    v = decides(latency, f)
    assert v.bottleneck == "latency (16 ops in flight)"
    assert latency(facts(recorded("cpu_split/ceph16.2.15_load_h2_4KiB.jsonl"))) is not None


# ---- the ceiling rules: the 3-host lab's quick suite (tests/fixtures/report/), its results analysed as a run, with
# the evidence left out (a result recorded without it, as an import's or an older cephbench's)

def analysed(monkeypatch, keep_hosts: bool = True) -> dict[str, tuple[str, object]]:
    """Each result's (deciding ceiling rule, analysis) of the quick_multihost3 run, without its evidence."""
    said: list[str] = []
    first = rules.first_ceiling_rule

    def spy(f):
        rule, v = first(f)
        said.append(rule.__name__)
        return rule, v
    monkeypatch.setattr(rules, "first_ceiling_rule", spy)
    prefix = "report/ceph16.2.15_quick_multihost3"
    an = RunAnalyzer.for_run(RunFacts.recorded(json.loads((FIX / f"{prefix}.run.json").read_text())), None)
    out = {}
    for line in (FIX / f"{prefix}.results.jsonl").read_text().splitlines():
        r = Result.model_validate_json(line)
        r.evidence, r.analysis = None, None
        if not keep_hosts:
            r.hosts = []
        said.clear()
        an.attach(r)
        if said:
            out[r.test.id] = (said[-1], r.analysis)
    return out


def test_busy_host_cpu_names_the_cpu_of_the_busiest_watched_host(monkeypatch):
    rule, a = analysed(monkeypatch)["007-rados-write-4KiB-t16"]       # the client host vm 99 % busy
    assert rule == busy_host_cpu.__name__ and a.bottleneck == "CPU"
    assert "CPUs of vm" in a.reason and "99% busy in a typical second of the test (measured)" in a.reason


def test_small_ops_infer_cpu_without_a_cpu_figure_and_say_unknown_with_idle_cpus(monkeypatch):
    rule, a = analysed(monkeypatch, keep_hosts=False)["007-rados-write-4KiB-t16"]
    assert rule == small_ops.__name__ and a.bottleneck == "CPU" and "inferred, not measured" in a.reason
    rule, a = analysed(monkeypatch)["015-rgw-get-4KiB-t16"]           # the RGW host h3 47 % busy
    assert rule == small_ops.__name__ and a.bottleneck == "unknown"
    assert "yet the CPUs of h3 (RGW host) were only 47% busy" in a.reason


def test_binding_term_is_the_last_ceiling_rule_the_models_smallest_term(monkeypatch):
    rule, a = analysed(monkeypatch)["016-osd-4MiB"]
    assert rule == binding_term.__name__ and a.bottleneck == "disks"
    assert a.reason.endswith("(one disk alone × 434.0 MiB/s); bottleneck: disks")
