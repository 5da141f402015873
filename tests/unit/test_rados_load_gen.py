"""rados load-gen: its parser on real output, its command line, its capacity bound, its plan (one phase, rounds) and
the refusal of a pool cephbench did not create."""

from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.core.errors import ParseError
from cephbench.drivers.rados_load_gen import LoadGenCommand, command, parse
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import expand

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "rados_load_gen"


def plan(**workload):
    return expand(parse_suite({"name": "t", "workloads": [{"type": "rados_load_gen", **workload}]}, "s.yaml")).tests


def test_a_test_is_its_kinds_one_phase_and_runs_in_rounds():
    """No phase field, but every test is `mixed`: the cluster watch's capacity stop and steady_state read it."""
    [t] = plan(duration="3s", steady_state={"max": "30s"})
    assert t.params["phase"] == "mixed" and t.params["steady_state"]["max"] == 30.0
    assert t.id == "001-rados_load_gen-t16"
    ids = [t.id for t in plan(target_throughput=["1MiB/s", "8MiB"], read_percent=[0, 100])]
    assert ids == ["001-rados_load_gen-1MiBps-read0-t16", "002-rados_load_gen-1MiBps-read100-t16",
                   "003-rados_load_gen-8MiBps-read0-t16", "004-rados_load_gen-8MiBps-read100-t16"]


def test_the_command_line_and_what_it_may_write():
    [t] = plan(target_throughput="2MiB/s", read_percent=50, concurrency=8, objects=16, max_object_size="1MiB",
               min_op_size="4KiB", max_op_size="64KiB", duration="3s")
    cmd = command(t, "cephbench-r-g001")
    assert cmd.argv(["--id", "admin"]) == [
        "rados", "--id", "admin", "-p", "cephbench-r-g001", "load-gen", "--num-objects", "16",
        "--min-object-size", "1024", "--max-object-size", "1048576", "--min-op-len", "4096", "--max-op-len", "65536",
        "--max-ops", "8", "--target-throughput", "2097152", "--read-percent", "50", "--run-length", "3"]
    # 3 s at 2 MiB/s and 8 ops of 64 KiB in flight; the objects in full would be more
    assert cmd.written_bound() == 3 * 2 * 1024**2 + 8 * 65536 + 16 * 65536
    small = LoadGenCommand("p", 60, 100 * 1024**2, 0, 16, 4, 1024, 4096, 1024, 4096)
    assert small.written_bound() == 4 * 4096 + 4 * 65536       # at most every object in full
    assert "--max-backlog" not in small.argv([])
    assert LoadGenCommand("p", 1, 1, 0, 1, 1, 1, 1, 1, 1, max_backlog=4096).argv([])[-2:] == ["--max-backlog", "4096"]


def test_an_existing_pool_is_refused_in_one_line():
    """load-gen opens the pool itself (-N does not reach its objects) and names its objects at random in the default
    namespace: in a pool that is not the run's they could not be told from the owner's. Its kind says so
    (existing_pools False), and the suite is refused where it names the pool."""
    with pytest.raises(UserError) as e:
        parse_suite({"name": "t", "pools": {"theirs": {"existing": "rbd"}},
                     "workloads": [{"type": "rados_load_gen", "pool": "theirs"}]}, "s.yaml")
    assert e.value.one_line() == ("s.yaml: workloads[0].pool: 'theirs' names an existing pool, and only rados_bench "
                                  "workloads write in one so far; give this workload a pool cephbench creates")


def test_output_without_its_run_is_refused():
    with pytest.raises(ParseError, match="run length"):
        parse("error opening pool p: (2) No such file or directory\n")
    with pytest.raises(ParseError, match="op 3 completed but only 1 operations were made"):
        parse("run length 2 seconds\nWRITE : oid=obj-a off=0 len=10\nop 3 completed, throughput=0.1MB/sec\n")


def test_a_mixed_run_counted_from_its_operation_lines():
    """3 s at 2 MiB/s, half reads, 8 in flight (the lab, 2 OSDs): load-gen idles its first second, so the window is
    2 s; every completion matched to its operation's type and length."""
    m = parse((FIX / "ceph16.2.15_mixed_2MiBps_read50_t8_3s.txt").read_text())
    assert (m.tool, m.op, m.duration_s) == ("rados load-gen", "mixed", 2.0)
    assert m.ops_total == 126 and m.extra["ops_made"] == 126
    assert (m.extra["reads"], m.extra["writes"]) == (63, 63)
    assert (m.extra["read_bytes"], m.extra["write_bytes"]) == (2067894, 2353567)
    assert m.bytes_total == 2067894 + 2353567 and m.bytes_per_s == pytest.approx(m.bytes_total / 2)
    assert m.bytes_per_s == pytest.approx(2 * 1024**2, rel=0.06)     # its target, over the window
    assert m.ops_per_s == 63.0 and m.latency.mean_ns is None and m.extra["run_length_s"] == 3
    # the idle first second and the end (after the last per-second line) are partial; the second between is whole
    assert [(s.t_s, s.ops_per_s, s.partial) for s in m.timeseries] == [(1.0, 0.0, True), (2.0, 60.0, False),
                                                                        (3.0, 66.0, True)]
    assert m.bytes_per_s_max == m.bytes_per_s_min == m.timeseries[1].bytes_per_s and m.bytes_per_s_stddev is None


def test_a_longer_run_has_its_whole_seconds_and_their_spread():
    m = parse((FIX / "ceph16.2.15_mixed_1MiBps_read50_t8_5s.txt").read_text())
    assert m.duration_s == 4.0 and m.ops_total == 113
    assert m.bytes_per_s == pytest.approx(1024**2, rel=0.05)
    whole = [s for s in m.timeseries if not s.partial]
    assert [s.t_s for s in whole] == [2.0, 3.0, 4.0] and [s.ops_per_s for s in whole] == [25.0, 32.0, 28.0]
    assert m.ops_per_s_max == 32.0 and m.ops_per_s_min == 25.0 and m.bytes_per_s_stddev > 0


def test_a_target_it_cannot_reach_is_what_it_did():
    """1 GiB/s asked with 4 operations of 1-2 MiB in flight, 80 % reads of sparse 4 MiB objects (holes: no device
    read): 349 operations in its one second of load."""
    m = parse((FIX / "ceph16.2.15_read80_1GiBps_t4_2s_held_back.txt").read_text())
    assert m.duration_s == 1.0 and m.ops_total == 349 and (m.extra["reads"], m.extra["writes"]) == (281, 68)
    assert m.bytes_per_s == 446693001 + 104464935 < 1024**3
    assert all(s.partial for s in m.timeseries) and m.bytes_per_s_max is None


@pytest.mark.parametrize("name,why", [
    ("ceph16.2.15_mixed_1MiBps_5s_sigint_at_2.5s.txt", "its run did not end"),
    # load-gen's own maximum object size, 5 GiB, is above osd_max_object_size: its first write fails (EFBIG)
    ("ceph16.2.15_default_object_size_bootstrap_failed.txt", "its run did not end"),
    ("ceph16.2.15_default_object_size_bootstrap_failed.stderr.txt", "did not start its run"),
])
def test_a_run_cut_short_or_never_started_is_refused(name, why):
    with pytest.raises(ParseError, match=why):
        parse((FIX / name).read_text())


@pytest.mark.parametrize("workload,where,says", [
    ({"duration": "1s"}, "workloads[0].duration", "sends nothing in its first second; give at least 2s"),
    ({"duration": "2.5s"}, "workloads[0].duration", "counts whole seconds"),
    ({"read_percent": 101}, "workloads[0].read_percent", "at most 100"),
    ({"target_throughput": "fast"}, "workloads[0].target_throughput", "is not a size"),
    ({"min_object_size": "2MiB", "max_object_size": "1MiB"}, "workloads[0]", "min_object_size (2097152 bytes) is "
     "above max_object_size"),
])
def test_bad_values_are_refused_with_their_yaml_path(workload, where, says):
    with pytest.raises(UserError) as e:
        plan(**workload)
    line = e.value.one_line()
    assert line.startswith(f"s.yaml: {where}: ") and says in line, line
