"""cAdvisor's container CPU series as a toolbox run reads them from Prometheus (evidence/cadvisor.py, issue 35): which
series are a Ceph daemon's, and each daemon's CPU, CFS limit and throttling over a test, on the real answers of the
lab's Prometheus (tests/fixtures/cadvisor/, README there: cAdvisor v0.61.0, Prometheus 2.42.0, Ceph 16.2.15), then
the verdict of that run (no ssh) naming the CPU limit from them."""

from __future__ import annotations

import json
from pathlib import Path

from cephbench.analysis.cpusplit import CADVISOR, held_daemons, split
from cephbench.analysis.rules import from_evidence
from cephbench.core.results import Result
from cephbench.evidence import cadvisor
from cephbench.evidence.promanswer import Series, osd_cpu_seconds, parse_answer

FIX = Path(__file__).parent.parent / "fixtures" / "cadvisor"
HOSTS = {0: "h1", 1: "h2", 2: "h3"}


def answer(name: str) -> list[Series]:
    return parse_answer((FIX / f"{name}.json").read_bytes())


def test_the_same_source_words_on_both_sides():
    assert CADVISOR == cadvisor.SOURCE


def test_a_series_is_a_daemons_by_rooks_cephadms_or_the_labs_labels():
    of = cadvisor.daemon_of
    # Rook (the kubelet's cAdvisor): the pod's osd container only, not its other containers nor the pod's cgroup
    assert of({"pod": "rook-ceph-osd-2-6d9f8b7c4-x2k8j", "container": "osd", "namespace": "rook-ceph"}) == "osd.2"
    assert of({"pod": "rook-ceph-osd-2-6d9f8b7c4-x2k8j", "container": "log-collector"}) is None
    assert of({"pod": "rook-ceph-osd-2-6d9f8b7c4-x2k8j", "container": ""}) is None
    assert of({"pod": "rook-ceph-osd-prepare-node1-abcde", "container": "provision"}) is None
    assert of({"ceph_daemon": "osd.11"}) == of({"daemon": "osd.11"}) == "osd.11"
    # cephadm: podman's container name (both spellings), the systemd unit's cgroup
    fsid = "3f1c6a4e-8d2b-11ef-9c41-525400ab12cd"
    assert of({"name": f"ceph-{fsid}-osd-3"}) == of({"name": f"ceph-{fsid}-osd.3"}) == "osd.3"
    assert of({"id": f"/system.slice/system-ceph\\x2d{fsid}.slice/ceph-{fsid}@osd.3.service"}) == "osd.3"
    assert of({"id": f"/system.slice/ceph-{fsid}@mon.h1.service"}) is None
    # the lab's --cpu-limit group; its host groups and the machine's root are nobody's
    assert of({"id": "/cephbench-4e99a7/osd.2"}) == "osd.2"
    assert of({"id": "/cephbench-4e99a7/h3"}) is None and of({"id": "/"}) is None
    assert of({"id": "/cephbench-4e99a7/osd.2x"}) is None


def test_the_labs_limited_osd_is_read_from_the_real_answers_with_its_usage_from_process_exporter():
    used, _ = osd_cpu_seconds(answer("lab-process-start"), answer("lab-process-end"), HOSTS)
    assert cadvisor.without_usage(answer("lab-query-end"))     # cpu and cpuacct mounted apart on the lab
    procs, notes = cadvisor.daemon_cpu(answer("lab-query-start"), answer("lab-query-end"), HOSTS, 8.0, used)
    assert list(procs) == ["h3"]
    [p] = procs["h3"]
    assert (p.who, p.host, p.cgroup, p.limit_cores, p.periods, p.throttled_periods) == \
        ("osd.2", "h3", "/cephbench-4e99a7/osd.2", 0.08, 89, 57)
    assert p.cpu_s == round(used[2], 4) and p.source == cadvisor.SOURCE and p.wall_s == 8.0
    assert p.throttled_s is not None and 5 < p.throttled_s < 6
    assert notes[0] == ('cAdvisor\'s series of osd.2 on h3: the container {id="/cephbench-4e99a7/osd.2", '
                        f'instance="127.0.0.1:49209"}} ({used[2]:.2f} CPU-s over 8.0 s by process-exporter, limit '
                        '0.08 cores, throttled in 57 of 89 periods)'), notes
    assert notes[1:] == ["cAdvisor: no container series of osd.0, osd.1 in Prometheus"]
    # without process-exporter's figure, what it used is not told (and not 0 cores used)
    procs, notes = cadvisor.daemon_cpu(answer("lab-query-start"), answer("lab-query-end"), HOSTS, 8.0)
    assert procs["h3"][0].wall_s is None and any("what it used is not told" in n for n in notes)


def test_every_containers_series_of_the_machine_gives_only_the_daemons_of_this_cluster():
    every = answer("lab-all-containers-end")
    assert len({s.labels.get("id") for s in every}) > 5        # the root, the lab's host groups, other labs
    procs, _ = cadvisor.daemon_cpu(every, every, HOSTS, 8.0, {2: 0.5})
    assert [(h, p.who, p.cgroup) for h, ps in procs.items() for p in ps] == [("h3", "osd.2", "/cephbench-4e99a7/osd.2")]
    # an osd.2 whose instance names another of the cluster's OSD hosts is another cluster's, and left out
    elsewhere = [Series({**s.labels, "instance": "h1:8080"}, s.values) for s in every]
    assert cadvisor.daemon_cpu(elsewhere, elsewhere, HOSTS, 8.0, {2: 0.5})[0] == {}


def _rook(pod: str, node: str, usage: float, periods: float, throttled: float, quota: float = 20000) -> list[Series]:
    labels = {"pod": pod, "container": "osd", "namespace": "rook-ceph", "node": node, "instance": "10.0.0.5:10250",
              "id": f"/kubepods/burstable/pod{pod[-5:]}/0a1b2c", "cpu": "total"}
    return [Series({**labels, "__name__": m}, [(0.0, v)]) for m, v in (
        (cadvisor.USAGE, usage), (cadvisor.PERIODS, periods), (cadvisor.THROTTLED, throttled),
        (cadvisor.QUOTA, quota), (cadvisor.PERIOD, 100000))]


def test_rooks_series_are_matched_by_pod_and_node_and_a_restart_is_a_note():
    start = _rook("rook-ceph-osd-1-5c9d-abcde", "node-b", 100.0, 1000, 100)
    end = _rook("rook-ceph-osd-1-5c9d-abcde", "node-b", 101.6, 1200, 280)
    procs, notes = cadvisor.daemon_cpu(start, end, {1: "node-b"}, 10.0)
    [p] = procs["node-b"]
    assert (p.cpu_s, p.limit_cores, p.periods, p.throttled_periods, p.container) == \
        (1.6, 0.2, 200, 180, "rook-ceph-osd-1-5c9d-abcde/osd")
    assert not cadvisor.without_usage(end)
    # its counters went back: restarted, its CPU not told
    procs, notes = cadvisor.daemon_cpu(end, start, {1: "node-b"}, 10.0)
    assert procs == {} and "went back" in notes[0]


def test_the_toolbox_runs_verdict_names_the_cpu_limit_from_cadvisors_series():
    r = Result.model_validate(json.loads((FIX / "ceph16.2.15_toolbox_cpu_limit_osd2.jsonl").read_text().splitlines()[0]))
    assert not r.evidence or all(h.source != "cpuacct" for h in r.hosts)       # no ssh: no watch of h1..h3
    v = from_evidence(r, None, None)
    assert v.bottleneck == "CPU limit of osd.2 (h3)"
    assert v.lines[0].startswith("osd.2 (h3, cgroup /cephbench-4e99a7/osd.2): held by its CPU limit, 0.08 cores, "
                                 "throttled in 76% of periods (57 of 75"), v.lines
    assert v.lines[0].endswith(f"; {CADVISOR}")
    assert [h.daemon.who for h in held_daemons(r.hosts)] == ["osd.2"]
    # the series taken for it are said as what was collected, not as a gap
    r.evidence.notes = [n.replace("cAdvisor: osd.2 on h3 is the", "cAdvisor's series of osd.2 on h3: the")
                        for n in r.evidence.notes]
    said = from_evidence(r, None, None).lines
    assert any(ln.startswith("cAdvisor's series of osd.2 on h3: the container {id=") for ln in said), said
    # the OSD's CPU counted once in its host's split, though process-exporter gave it too
    h3 = next(h for h in r.hosts if h.host == "h3")
    s = split(h3, r.hosts, r.evidence.cpu if r.evidence else [])
    assert s is not None and [d.who for d in s.daemons].count("osd.2") == 1
