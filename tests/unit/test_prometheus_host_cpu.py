"""An OSD host ssh does not reach (a toolbox) has its CPU from node-exporter and whose it was from process-exporter
(issue 35). The monitoring lab (`lab up --hosts 3 --monitoring --host-load h2=1`, Prometheus 2.42, Ceph 16.2.15) and a
toolbox run of 4 KiB writes × 16 (a copy of its conf and key, settings.prometheus): the answers to the two queries
evidence/prometheus.py asks over the test's seconds, and the run's result. The lab's hosts are network namespaces of
one 2-CPU machine, so each one's node-exporter reads the whole machine's CPU: 2 cores busy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.analysis.cpusplit import split
from cephbench.core.results import Result
from cephbench.evidence import promanswer as pa

FIX = Path(__file__).parent.parent / "fixtures" / "prometheus"
STEPS = [1796560955.0 + i for i in range(10)]


def loads():
    busy = pa.parse_answer((FIX / "prom2.42_lab3_load_h2_node_cpu_busy.json").read_text())
    cpus = pa.parse_answer((FIX / "prom2.42_lab3_load_h2_node_cpu_count.json").read_text())
    return pa.host_cpu_loads(["h1", "h2", "h3", "h4"], busy, cpus, STEPS)


def test_node_exporters_cpu_is_a_host_load_of_its_seconds():
    got = {h.host: h for h in loads()}
    assert sorted(got) == ["h1", "h2", "h3"]               # h4: no series, left out
    h1 = got["h1"]
    assert (h1.cpus, h1.source, h1.wall_s, len(h1.cpu_busy_series)) == (2, "prometheus", 10.0, 10)
    assert h1.cpu_busy_median == 1.0 and 0.95 <= h1.cpu_busy_mean <= 1.0
    assert h1.cpu_s == pytest.approx(19.9, abs=0.2)        # each step's cores, at most the host's 2


def test_a_toolbox_runs_osd_hosts_are_split_by_process_exporters_groups():
    r = Result.model_validate_json((FIX / "ceph16.2.15_lab3_load_h2_toolbox_write_4K.results.jsonl").read_text()
                                   .splitlines()[-1])
    assert [(h.host, h.source) for h in r.hosts] == [("vm", "proc-stat"), ("h1", "prometheus"), ("h2", "prometheus"),
                                                     ("h3", "prometheus")]
    h1 = next(h for h in r.hosts if h.host == "h1")
    s = split(h1, r.hosts, r.evidence.cpu)
    assert [d.who for d in s.daemons] == ["osd.0"] and s.daemons[0].source == "Prometheus (process-exporter)"
    assert s.cores(s.daemons_s) == pytest.approx(0.64 / 8.0)
