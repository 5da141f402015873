"""Whose the CPU was, and a daemon held by its CPU limit (issue 35), on what real runs recorded.

Fixtures (tests/fixtures/cpu_split/, README there): `cephbench run` of an 8 s-watched rados bench write, 16 in flight,
on the multi-host lab of Ceph 16.2.15 (3 hosts, each a cpuacct cgroup of the 2-CPU development VM, other sessions'
labs and tests loading it): `cpu_limit_osd2_load_h2` with `--cpu-limit osd.2=0.08 --host-load h2=1.5`, 64 KiB
objects; `load_h2_4KiB` with `--host-load h2=1.5` alone, 4 KiB objects. Before issue 35 both said `CPU`: the
machine's CPUs were 100 % busy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.analysis.cpusplit import held_daemons, not_alone, split, whose
from cephbench.analysis.rules import from_evidence
from cephbench.core.results import Result
from cephbench.evidence.hoststream import container_of, daemon_cpu, daemon_name, parse_stream

FIX = Path(__file__).parent.parent / "fixtures" / "cpu_split"


def result(name: str) -> Result:
    lines = (FIX / f"ceph16.2.15_{name}.jsonl").read_text().splitlines()
    return Result.model_validate(json.loads(lines[-1]))


def verdict(r: Result):
    return from_evidence(r, None, None)


def test_an_osd_held_by_its_cpu_limit_is_named_with_its_limit_not_the_machines_cpu():
    r = result("cpu_limit_osd2_load_h2")
    v = verdict(r)
    assert v.bottleneck == "CPU limit of osd.2 (h3)"
    assert v.lines[0].startswith("osd.2 (h3, PID 6973, cgroup /cephbench-0aa505/osd.2): held by its CPU limit, "
                                 "0.08 cores, throttled in 79% of periods (54 of 68, 2.4 s throttled)")
    assert "throttled in 79% of its CFS periods" in v.sentence
    # whatever limited it, the machine's other processes are said: 1.72 of its 2 cores
    assert v.sentence.endswith("the cluster was not measured alone: other processes used 1.72 of vm's 2 cores (86% "
                               "of its CPU time, 0.31 of them on h2)"), v.sentence
    # its peers had no limit: not held, whatever the machine's CPUs did
    assert [h.daemon.who for h in held_daemons(r.hosts)] == ["osd.2"]


def test_a_limit_the_daemon_was_not_held_by_is_not_named():
    r = result("cpu_limit_osd2_load_h2")
    h3 = next(h for h in r.hosts if h.host == "h3")
    osd2 = h3.processes[0]
    osd2.throttled_periods = osd2.periods // 10        # throttled in a tenth of its periods: it mostly ran
    assert held_daemons(r.hosts) == []
    assert not verdict(r).bottleneck.startswith("CPU limit")


def test_busy_cpus_are_named_with_whose_they_were_and_a_neighbour_as_other_processes():
    r = result("load_h2_4KiB")
    v = verdict(r)
    assert v.bottleneck == "CPU (other processes on vm)"
    assert "the cluster was not measured alone: other processes used 1.13 of vm's 2 cores (56% of its CPU time, " \
           "0.26 of them on h2)" in v.sentence
    [line] = [ln for ln in v.lines if ln.startswith("CPU of vm by consumer")]
    assert "Ceph daemons 0.80 cores (osd.0 on h1 0.30, osd.2 on h3 0.26, osd.1 on h2 0.23" in line
    assert "(of them on h1 0.01; h2 0.26; h3 0.01)" in line


def test_the_split_adds_up_and_the_neighbour_is_on_its_own_host():
    r = result("load_h2_4KiB")
    vm = next(h for h in r.hosts if h.host == "vm")
    s = split(vm, r.hosts, r.evidence.cpu)
    assert s.daemons_s + s.tools_s + s.others_s == pytest.approx(s.busy_s, rel=0.01)
    by_host = {h.host: split(h, r.hosts, r.evidence.cpu) for h in r.hosts if h.host != "vm"}
    # h2 holds the neighbour; h1 and h3 only their daemons and cephbench's own readers
    assert by_host["h2"].cores(by_host["h2"].others_s) > 10 * by_host["h1"].cores(by_host["h1"].others_s)
    assert by_host["h2"].cores(by_host["h2"].others_s) > 10 * by_host["h3"].cores(by_host["h3"].others_s)


def test_a_host_whose_cpu_time_was_not_recorded_still_says_whose_is_unknown():
    r = result("load_h2_4KiB")
    vm = next(h for h in r.hosts if h.host == "vm")
    vm.cpu_s = None
    bottleneck, sentence, line = whose(vm, r.hosts, r.evidence.cpu)
    assert (bottleneck, line) == ("CPU", None) and "whose CPU time it was: not measured" in sentence


def test_the_watch_stream_gives_each_daemon_its_cgroup_limit_and_throttling():
    stream = parse_stream((FIX / "ceph16.2.15_h3_watch_cpu_limit.txt").read_text())
    assert stream.boot == "aa50ef82-9695-4c5d-96e4-69c7741913b5"
    [osd2] = daemon_cpu("h3", stream, "/proc/PID/stat over ssh")
    assert (osd2.who, osd2.pid, osd2.cgroup, osd2.limit_cores) == ("osd.2", 6973, "/cephbench-0aa505/osd.2", 0.08)
    assert osd2.periods and osd2.throttled_periods / osd2.periods > 0.5 and osd2.throttled_s > 1
    assert osd2.cpu_s / osd2.wall_s < 0.08 * 1.05       # held to its quota


@pytest.mark.parametrize("cmdline, name", [
    ("ceph-osd -i 2 --conf /lab/ceph.conf -f", "osd.2"),
    ("/usr/bin/ceph-osd -n osd.7 -f --setuser ceph --setgroup ceph --default-log-to-file=false", "osd.7"),
    ("/usr/bin/ceph-osd --foreground --id 3 --fsid 1b0c", "osd.3"),
    ("ceph-mon -i a --conf /lab/ceph.conf -f", "mon.a"),
    ("radosgw -n client.rgw.lab --conf /lab/ceph.conf -f", "client.rgw.lab"),
    ("ceph-mgr", "ceph-mgr"),
])
def test_a_daemon_is_named_from_its_command_line(cmdline, name):
    assert daemon_name(cmdline) == name


@pytest.mark.parametrize("path, cid", [
    ("/machine.slice/libpod-3f2a9c1d0e4b5a6978c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3.scope", "3f2a9c1d0e4b"),
    ("/docker/3f2a9c1d0e4b5a6978c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3", "3f2a9c1d0e4b"),
    ("/kubepods/burstable/pod1234-5678/3f2a9c1d0e4b5a6978c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3",
     "3f2a9c1d0e4b"),
    ("/cephbench-0aa505/osd.2", None), ("/", None),
])
def test_a_container_is_read_from_its_cgroup_path(path, cid):
    assert container_of(path) == cid


def test_busy_cpus_beside_another_cause_are_named_with_whose_they_were():
    r = result("load_h2_4KiB")
    r.test = r.test.with_params({**r.test.params, "concurrency": 1})   # the same evidence as one op in flight:
    # latency, the CPUs said beside
    v = verdict(r)
    assert v.bottleneck == "latency (1 op in flight)"
    # where the other processes ran, as a verdict of CPU alone names it (the neighbour's host)
    assert ("the CPUs of vm were 100% busy (most of it other processes, 1.13 of 2 cores; other processes 1.13, 0.26 of "
            "them on h2: the cluster was not measured alone), which lengthens it") in v.sentence
    assert any(ln.startswith("CPU of vm by consumer") for ln in v.lines)
    # a daemon throttled in too few CFS periods to count is not held
    r = result("cpu_limit_osd2_load_h2")
    osd2 = next(p for h in r.hosts for p in h.processes if p.who == "osd.2")
    osd2.periods, osd2.throttled_periods = 8, 8
    assert held_daemons(r.hosts) == []


def test_this_machines_daemons_are_the_runs_clusters_alone():
    """The one-host lab (`lab up --osds 3`, /tmp/ik35/one) on the development VM, where four other sessions' labs
    ran too: this machine's watch listed 24 Ceph daemons; the run keeps the 6 started with its cluster's conf, and
    the others' CPU is other processes."""
    from cephbench.evidence.hoststream import of_conf
    stream = parse_stream((FIX / "ceph16.2.15_onehost_vm_watch.txt").read_text())
    assert len(stream.daemons) == 24
    ours = [p.who for p in daemon_cpu("vm", stream, "/proc/PID/stat here")
            if of_conf(stream.daemons[p.pid], "/tmp/ik35/one/ceph.conf")]
    assert sorted(ours) == ["client.rgw.lab", "mgr.x", "mon.a", "osd.0", "osd.1", "osd.2"]
    assert of_conf("/usr/bin/ceph-osd -f --cluster ceph --id 3 --setuser ceph", None)        # Ceph's default conf
    assert of_conf("/usr/bin/ceph-osd -f --id 3", "/etc/ceph/ceph.conf")
    assert not of_conf("/usr/bin/ceph-osd -f --id 3", "/tmp/lab/ceph.conf")
    r = result("onehost_4KiB")
    [vm] = r.hosts
    assert sorted(p.who for p in vm.processes) == ["client.rgw.lab", "mgr.x", "mon.a", "osd.0", "osd.1", "osd.2"]
    s = split(vm, r.hosts, r.evidence.cpu)
    assert {d.who for d in s.daemons} >= {"mon.a", "mgr.x"} and len(s.daemons) == 6     # its OSDs once


def test_rounds_of_a_window_keep_whose_the_cpu_was():
    """A steady-state window's rounds as one (evidence/rounds.py): the host's CPU-seconds and each daemon's CPU,
    periods and throttling summed, so the split and the held limit read as each round's."""
    from cephbench.evidence.rounds import _hosts
    r = result("cpu_limit_osd2_load_h2")
    one = held_daemons(r.hosts)[0]
    both = _hosts([r.hosts, [h.model_copy(deep=True) for h in r.hosts]])
    [twice] = held_daemons(both)
    assert twice.share == pytest.approx(one.share) and twice.daemon.periods == 2 * one.daemon.periods
    vm = next(h for h in both if h.host == "vm")
    assert split(vm, both, r.evidence.cpu).cores(vm.cpu_s) == pytest.approx(
        split(r.hosts[0], r.hosts, r.evidence.cpu).cores(r.hosts[0].cpu_s))


def test_a_watch_that_sees_no_daemon_on_an_osd_host_does_not_call_their_cpu_other_processes():
    """The toolbox image run in a PID namespace of its own (podman without --pid host, a Rook toolbox pod) reads the
    host's CPUs but none of the Ceph daemons' processes: their CPU time is not split, nor called other processes'
    (before: "the cluster was not measured alone: other processes used 0.71 of vm's 2 cores")."""
    r = Result.model_validate(json.loads((FIX / "ceph18.2.7_toolbox_in_container.jsonl").read_text()
                                         .splitlines()[-1]))
    (host,) = r.hosts
    assert host.role == "client and OSD host" and not host.processes
    s = split(host, r.hosts, r.evidence.cpu)
    assert s is not None and s.daemons_unseen
    bottleneck, sentence, line = whose(host, r.hosts, r.evidence.cpu)
    assert bottleneck == "CPU" and "whose CPU time it was: not measured: no Ceph daemon's process was seen on vm" \
        in sentence and "--pid host" in sentence
    assert line is not None and "the rest 0.71 not split" in line and "other processes" not in line
    assert not_alone(r.hosts, r.evidence.cpu) == []
    # a client host that runs no daemon keeps its split: its other processes are another tenant's
    client = host.model_copy(update={"role": "client"})
    assert not split(client, [client], r.evidence.cpu).daemons_unseen
