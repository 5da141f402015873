"""CPU per operation (evidence/proccpu.py) on /proc/PID/stat lines of real lab OSDs (tests/fixtures/proc_pid_stat)."""

import json
from pathlib import Path

import pytest

from cephbench.core.errors import ParseError
from cephbench.evidence.proccpu import (HERE, PROMETHEUS, ToolCpu, client_cpu, combine, osd_cpu, parse_pid_stat,
                                        parse_reading, unread_osds, with_osd_cpu)
from cephbench.hosts.remote import HostRef
from cephbench.core.results import Evidence, OsdCounters, ProcessCpu, osds_cpu

FIX = Path(__file__).parent.parent / "fixtures" / "proc_pid_stat"
STATS = json.loads((FIX / "lab-osd-rados-write-64KiB.json").read_text())
COUNTED = json.loads((FIX / "lab-osd-rados-write-64KiB-counters.json").read_text())


def _osds() -> list[OsdCounters]:
    return [OsdCounters(**o) for o in COUNTED["osds"]]


def test_a_lab_osds_stat_line_reads_as_its_cpu_ticks():
    clk, _, line = STATS["start"]["0"].partition(" ")
    t = parse_pid_stat(line, int(clk))
    # 17645 (ceph-osd) S ... utime 37 stime 37 ... starttime 1405667
    assert (t.pid, t.ticks, t.start_ticks, t.clk_tck) == (17645, 74, 1405667, 100)
    assert t.cpu_s == pytest.approx(0.74)


def test_each_osds_cpu_per_op_is_its_cpu_time_over_the_ops_it_served():
    cpu, notes = osd_cpu({int(k): v for k, v in STATS["start"].items()}, {int(k): v for k, v in STATS["end"].items()},
                         _osds(), {0: "vm", 1: "vm", 2: "vm"}, {})
    assert notes == []
    by = {c.who: c for c in cpu}
    assert set(by) == {"osd.0", "osd.1", "osd.2"}
    for c in cpu:
        o = next(o for o in _osds() if f"osd.{o.osd}" == c.who)
        ops, nbytes = (o.op_r or 0) + (o.op_w or 0), (o.op_in_bytes or 0) + (o.op_out_bytes or 0)
        assert c.cpu_ms_per_op == pytest.approx(c.cpu_s * 1000 / ops, rel=1e-5)
        assert c.cpu_s_per_gib == pytest.approx(c.cpu_s / (nbytes / 2**30), rel=1e-5)
        assert c.source == HERE and c.host == "vm"
    # osd.0: utime+stime 74 -> 126 ticks of 1/100 s over 529 writes
    assert by["osd.0"].cpu_s == pytest.approx(0.52) and by["osd.0"].cpu_ms_per_op == pytest.approx(520 / 529)
    # what the run recorded is the same computation
    # (fields added since it was recorded, the daemon's cgroup and CPU limit, are None: the lab's OSDs had neither)
    recorded = [c for c in COUNTED["cpu"] if c["who"] != "client"]
    assert [{k: v for k, v in c.model_dump().items() if k in r} for c, r in zip(cpu, recorded)] == recorded
    assert len(cpu) == len(recorded) and all(c.limit_cores is None and c.cgroup is None for c in cpu)


def test_the_osds_together_are_all_their_cpu_over_all_their_ops():
    cpu = [ProcessCpu(**c) for c in COUNTED["cpu"]]
    total = osds_cpu(cpu)
    osds = [c for c in cpu if c.who.startswith("osd.")]
    assert total is not None and total.cpu_s == pytest.approx(sum(c.cpu_s for c in osds))
    assert total.cpu_ms_per_op == pytest.approx(sum(c.cpu_s for c in osds) * 1000 / sum(c.ops for c in osds))
    assert osds_cpu([c for c in cpu if c.who == "client"]) is None


def test_an_osd_that_restarted_or_was_not_read_gets_a_note_not_a_figure():
    start = {int(k): v for k, v in STATS["start"].items()}
    end = dict(start)
    clk, _, line = start[1].partition(" ")
    end[1] = f"{clk} {line.replace('17644 (ceph-osd)', '99999 (ceph-osd)', 1)}"     # another process
    end[2] = "!no such file"
    cpu, notes = osd_cpu(start, end, _osds(), {}, {})
    assert [c.who for c in cpu] == ["osd.0"]
    assert any("osd.1" in n and "changed" in n for n in notes) and any("osd.2" in n and "no such" in n for n in notes)


def test_osds_read_through_ceph_tell_get_their_cpu_from_another_source_and_lose_their_notes():
    """A toolbox run: osd.1 and osd.2 answered through `ceph tell` (no PID, no /proc reading). Their CPU from
    Prometheus's process-exporter counts with their counters; osd.0's /proc figure and other notes stay."""
    start = {int(k): v for k, v in STATS["start"].items()}
    end = {0: STATS["end"]["0"], 1: "!no PID: read through ceph tell", 2: "!no PID: read through ceph tell"}
    cpu, notes = osd_cpu(start, end, _osds(), {0: "h1", 1: "h2", 2: "h3"}, {})
    by_host = {HostRef("h1", "10.0.0.1"): [0], HostRef("h2", "10.0.0.2"): [1], HostRef("h3", "10.0.0.3"): [2]}
    unread = unread_osds(cpu, by_host)
    assert unread == {1: "h2", 2: "h3"} and len(notes) == 2
    cpu, notes = with_osd_cpu(cpu, notes + ["h2: not watched (ssh)"], {1: 0.8}, _osds(), unread, PROMETHEUS)
    by = {c.who: c for c in cpu}
    assert set(by) == {"osd.0", "osd.1"} and by["osd.1"].source == PROMETHEUS and by["osd.1"].host == "h2"
    o1 = next(o for o in _osds() if o.osd == 1)
    assert by["osd.1"].cpu_ms_per_op == pytest.approx(800 / (o1.op_r + o1.op_w))
    assert notes == ["osd.2 on h3: CPU not read (no PID: read through ceph tell)", "h2: not watched (ssh)"]


def test_tools_on_client_hosts_count_their_wrappers_cpu_over_the_ops_all_osds_served():
    from cephbench.evidence.proccpu import ON_CLIENTS, clients_cpu, test_cpu
    from cephbench.hosts.fanout import TimedResult
    from cephbench.hosts.local import CommandResult

    def timed(host: str, cpu: float | None) -> TimedResult:
        return TimedResult(CommandResult(["fio"], 0, "", "", 2.0), host, 1.0, 3.0, 0.1, cpu_s=cpu)
    start = {int(k): v for k, v in STATS["start"].items()}
    end = {int(k): v for k, v in STATS["end"].items()}
    by_host = {HostRef("vm", None): [0, 1, 2]}
    remote = clients_cpu([timed("c1", 0.75), timed("c2", 0.5), timed("c1", 0.25)])
    assert remote is not None and remote.cpu_s == pytest.approx(1.5) and remote.hosts == ("c1", "c2")
    cpu, notes = test_cpu(start, end, _osds(), by_host, None, "vm", remote)
    (client,) = [c for c in cpu if c.who == "client"]
    ops = sum((o.op_r or 0) + (o.op_w or 0) for o in _osds())
    assert client.source == ON_CLIENTS and client.host == "c1, c2" and notes == []
    assert client.cpu_ms_per_op == pytest.approx(1500 / ops)
    # a wrapper that did not say (killed before its tool ended): no figure, and the note says why
    assert clients_cpu([timed("c1", 0.75), timed("c2", None)]) is None
    cpu, notes = test_cpu(start, end, _osds(), by_host, None, "vm", None)
    assert [c.who for c in cpu if c.who == "client"] == [] and any("client's CPU per op" in n for n in notes)


def test_a_command_name_with_spaces_and_parentheses_still_reads():
    t = parse_pid_stat("42 (a) b (c)) R 1 42 42 0 -1 0 0 0 0 0 7 3 2 1 20 0 1 0 555 0 0", 100, children=True)
    assert (t.pid, t.ticks, t.start_ticks) == (42, 13, 555)


@pytest.mark.parametrize("text", ["", "garbage", "12 (x) S 1 2 3", "x (x) S " + "1 " * 30])
def test_a_line_that_does_not_read_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_pid_stat(text, 100)
    assert isinstance(parse_reading(f"100 {text}"), str)


def test_the_clients_cpu_counts_its_tools_children_and_divides_by_the_ops_the_osds_served():
    lines = {7: ["7 (timeout) S 1 7 7 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 900 0 0",
                 "7 (timeout) Z 1 7 7 0 -1 0 0 0 0 0 1 2 30 7 20 0 1 0 900 0 0"]}
    tools = ToolCpu(read=lambda pid: lines[pid].pop(0) if len(lines[pid]) > 1 else lines[pid][0])
    tools.started([7])
    tools.ended(7)
    c = client_cpu(tools.first, tools.last, _osds(), "vm")
    ops = sum((o.op_r or 0) + (o.op_w or 0) for o in _osds())
    assert c is not None and c.cpu_s == pytest.approx(0.38)          # (1+2+30+7) - (1+1) ticks
    assert c.cpu_ms_per_op == pytest.approx(380 / ops) and c.who == "client"


def test_rounds_add_up_cpu_ops_and_bytes():
    a = ProcessCpu.of("osd.0", 1.0, 100, 2**30, HERE, "h")
    b = ProcessCpu.of("osd.0", 3.0, 300, 2**30, HERE, "h")
    only = ProcessCpu.of("osd.1", 1.0, 10, None, HERE, "h")
    [c] = combine([[a, only], [b]])
    assert (c.cpu_s, c.ops, c.cpu_ms_per_op, c.cpu_s_per_gib) == (4.0, 400, 10.0, 2.0)


def test_an_old_result_without_cpu_still_reads():
    assert Evidence.model_validate({"osds": [], "notes": []}).cpu == []


def _result(cpu: list[dict]):
    from cephbench.core.results import Result
    r = Result.model_validate_json((FIX / "lab-rados-write-64KiB-result.json").read_text())
    r.evidence.cpu = [ProcessCpu(**c) for c in cpu]
    return r


def test_the_report_shows_cpu_per_op_beside_throughput_and_says_the_lab_shares_its_cores():
    from cephbench.report.cpu import cpu_table
    t = cpu_table([_result(COUNTED["cpu"])])
    assert t is not None and len(t.rows) == 1
    row = dict(zip(t.headers, t.rows[0]))
    assert row["MiB/s"] == "42.5" and row["client CPU-ms/op"] == "0.124" and row["OSDs CPU-ms/op"] == "1.04"
    assert row["per OSD CPU-ms/op"] == "osd.0 0.983, osd.1 0.743, osd.2 1.84"
    assert any("/proc/PID/stat here" in n for n in t.notes)
    assert any("still hold per process" in n for n in t.notes)       # client and OSDs on one host: vm


def test_no_cpu_no_table():
    from cephbench.report.cpu import cpu_table
    assert cpu_table([_result([])]) is None
    no_ops = [{**c, "ops": 0, "bytes": 0, "cpu_ms_per_op": None, "cpu_s_per_gib": None} for c in COUNTED["cpu"]]
    assert cpu_table([_result(no_ops)]) is None        # an OSD bench: the OSDs served no client op


def test_compare_shows_the_change_of_cpu_per_op_and_an_old_run_without_it_compares_as_before():
    from cephbench.analysis.compare import LoadedRun, compare_pair
    from cephbench.report.compare_render import render_text
    a = _result(COUNTED["cpu"])
    b = _result([{**c, "cpu_s": c["cpu_s"] * 2, "cpu_ms_per_op": c["cpu_ms_per_op"] * 2} for c in COUNTED["cpu"]])
    pair = compare_pair(LoadedRun(Path("a"), {}, [a], []), LoadedRun(Path("b"), {}, [b], []))
    [t] = pair.tests
    ratios = {d.metric.name: d.ratio for d in t.metrics}
    assert ratios["client_cpu_ms_per_op"] == pytest.approx(2.0)
    assert ratios["osd_cpu_ms_per_op"] == pytest.approx(2.0)
    assert ratios["osd_cpu_s_per_gib"] == pytest.approx(2.0)    # all OSDs: their CPU over their bytes, again
    text = render_text([pair])
    assert "OSDs CPU-ms/op" in text and "client CPU-ms/op" in text and "+100.0%" in text
    old = _result([])
    pair = compare_pair(LoadedRun(Path("a"), {}, [old], []), LoadedRun(Path("b"), {}, [b], []))
    assert "client_cpu_ms_per_op" not in {d.metric.name for d in pair.tests[0].metrics}


def test_the_readers_cpu_lines_go_beside_the_counters():
    from cephbench.evidence.asok import parse_lines
    got = parse_lines('osd.0 {"osd": {}}\ncpu.0 ' + STATS["start"]["0"] + "\ncpu.1 !the socket names no PID\n")
    assert got.stats == {0: STATS["start"]["0"], 1: "!the socket names no PID"} and 0 in got.dumps
    assert parse_reading(got.stats[1]) == "the socket names no PID"


def test_a_tools_cpu_is_read_after_it_exited_before_it_is_reaped(tmp_path):
    """A real process that spins ~0.3 s and exits between ticks: its last second is still counted, children too."""
    from cephbench.hosts.local import Spawn, run_together
    tools = ToolCpu()
    spin = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"
    [res] = run_together([Spawn(["sh", "-c", f"sh -c '{spin}'; true"], tmp_path / "out")], 60,
                         tick=lambda: tools.sample() and False, started=tools.then(lambda pids: None),
                         ended=tools.ended, tick_interval_s=600)
    assert res.ok
    [pid] = tools.first
    assert tools.last[pid].cpu_s - tools.first[pid].cpu_s > 0.05     # only the child spun: cutime + cstime
