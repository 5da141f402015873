"""rados bench parser on real output: Ceph 16.2.15 (captured on the lab) and Ceph 0.48 (from the seed)."""

from pathlib import Path

import pytest

from cephbench.core.errors import ParseError
from cephbench.drivers import rados_bench as rb
from cephbench.core.merge import merge_instances
from cephbench.core.results import Latency, Measurement, Sample

FIX = Path(__file__).parent.parent / "fixtures" / "rados_bench"
MIB = 1024 * 1024


def load(name: str) -> str:
    return (FIX / name).read_text()


def test_current_write_summary_in_base_units():
    m = rb.parse(load("ceph16.2.15_write_4M.txt"), "write")
    assert m.duration_s == pytest.approx(5.14263)
    assert m.ops_total == 181
    assert m.op_size_bytes == 4194304
    # "Bandwidth (MB/sec): 140.784" is MiB/s
    assert m.bytes_per_s == pytest.approx(140.784 * MIB)
    assert m.bytes_per_s_max == pytest.approx(188 * MIB)
    assert int(m.ops_per_s) == 35 and m.ops_per_s == pytest.approx(181 / 5.14263)   # it prints int(IOPS)
    assert m.latency.mean_ns == pytest.approx(0.451145e9)
    assert m.latency.min_ns == pytest.approx(0.104058e9)
    assert m.bytes_total == 181 * 4194304


def test_per_second_lines_become_a_time_series():
    m = rb.parse(load("ceph16.2.15_write_4M.txt"), "write")
    assert [s.t_s for s in m.timeseries] == [1, 2, 3, 4, 5]
    assert m.timeseries[1].bytes_per_s == pytest.approx(124 * MIB)
    assert m.timeseries[1].ops_per_s == 31  # finished 36 - 5
    assert m.timeseries[0].lat_mean_ns == pytest.approx(0.98438e9)


def test_read_summaries():
    seq = rb.parse(load("ceph16.2.15_seq_4M.txt"), "seq")
    assert seq.ops_total == 181 and seq.bytes_per_s == pytest.approx(635.564 * MIB)
    rand = rb.parse(load("ceph16.2.15_rand_4K.txt"), "rand")
    assert int(rand.ops_per_s) == 9014 and rand.op_size_bytes == 4096
    assert rand.latency.stddev_ns is None  # reads print no latency stddev


def test_old_format_from_the_seed():
    """Ceph 0.48: 'Average Latency:' without '(s)', and no IOPS lines: IOPS comes from ops / time."""
    w = rb.parse(load("seed000_ceph0.48_write_4M_rep2.txt"), "write")
    assert w.bytes_per_s == pytest.approx(55.723 * MIB)
    assert w.latency.mean_ns == pytest.approx(1.14695e9)
    assert w.latency.stddev_ns == pytest.approx(0.510571e9)
    assert w.ops_per_s == pytest.approx(4200 / 301.488871)
    s = rb.parse(load("seed000_ceph0.48_seq_4M_rep2.txt"), "seq")
    assert s.bytes_per_s == pytest.approx(110.551 * MIB)
    assert s.latency.max_ns == pytest.approx(1.42949e9)


@pytest.mark.parametrize("text", ["", "error opening pool foo: (2) No such file or directory\n",
                                  load("ceph16.2.15_write_4M.txt").split("Total time run")[0]])
def test_no_summary_is_a_parse_error(text):
    with pytest.raises(ParseError):
        rb.parse(text, "write")


def test_periodic_header_lines_are_skipped():
    text = load("ceph16.2.15_write_4M.txt").replace(
        "    3      16",
        "2026-11-21T05:20:00.123+0000 min lat: 0.1 max lat: 1.3 avg lat: 0.4\n"
        "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)\n    3      16")
    assert len(rb.parse(text, "write").timeseries) == 5


def _m(bw_series, ops, mean_s, std_s, max_s, min_s):
    return Measurement(tool="rados bench", op="write", duration_s=len(bw_series), ops_total=ops,
                       bytes_total=ops * MIB, op_size_bytes=MIB, bytes_per_s=sum(bw_series) / len(bw_series),
                       ops_per_s=ops / len(bw_series),
                       latency=Latency(mean_ns=mean_s * 1e9, stddev_ns=std_s * 1e9, max_ns=max_s * 1e9,
                                       min_ns=min_s * 1e9),
                       timeseries=[Sample(t_s=i + 1, bytes_per_s=b, ops_per_s=b / MIB)
                                   for i, b in enumerate(bw_series)])


def test_aggregate_sums_over_the_common_interval_and_weights_latency():
    a = _m([100 * MIB, 100 * MIB, 100 * MIB], 300, 0.1, 0.01, 0.5, 0.01)
    b = _m([50 * MIB, 50 * MIB], 100, 0.3, 0.02, 0.9, 0.05)  # a straggler that ran one second less
    agg = merge_instances([a, b], latency="mean-max")
    assert agg.bytes_per_s == pytest.approx(150 * MIB)       # seconds 1-2 only, summed
    assert agg.ops_total == 400
    assert agg.latency.mean_ns == pytest.approx((0.1 * 300 + 0.3 * 100) / 400 * 1e9)
    assert agg.latency.max_ns == pytest.approx(0.9e9)
    assert agg.latency.min_ns == pytest.approx(0.01e9)
    assert len(agg.instances) == 2 and agg.instances[1].bytes_per_s == pytest.approx(50 * MIB)
    # pooled stddev includes the spread between the two means
    assert agg.latency.stddev_ns > 0.02e9


def test_aggregate_of_one_is_itself():
    a = _m([1.0, 2.0], 2, 0.1, 0.0, 0.1, 0.1)
    assert merge_instances([a], latency="mean-max") is a


def test_command_builder():
    cmd = rb.RadosBenchCommand(pool="p", mode="write", duration_s=10, concurrency=16, object_size=4096,
                               run_name="r", max_objects=100)
    argv = cmd.argv(["--conf", "c"])
    assert argv[:4] == ["rados", "--conf", "c", "-p"]
    assert "--no-cleanup" in argv and argv[argv.index("--max-objects") + 1] == "100"
    assert argv[argv.index("-b") + 1] == "4096"
    seq = rb.RadosBenchCommand(pool="p", mode="seq", duration_s=10, concurrency=16, object_size=4096, run_name="r")
    assert "-b" not in seq.argv([]) and "--no-cleanup" not in seq.argv([])
    with pytest.raises(ValueError):
        rb.RadosBenchCommand(pool="p", mode="bogus", duration_s=1, concurrency=1, object_size=1, run_name="r").argv([])


def test_live_figures_reads_the_last_second(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text(load("ceph16.2.15_write_4M.txt").split("Total time run")[0])
    bw, _ = rb.live_figures([p, tmp_path / "missing.txt"])
    assert bw == pytest.approx(188 * MIB)


def test_a_write_that_ended_within_its_first_second_has_no_per_second_figures():
    # the capacity guard's --max-objects stopped it after 184 objects in 0.996 s: no per-second line, and rados
    # bench prints Max bandwidth 0 and Min bandwidth 1.79769e+308 (DBL_MAX)
    m = rb.parse(load("ceph16.2.15_write_1M_ended_within_1s.txt"), "write")
    assert m.bytes_per_s == pytest.approx(184.698 * 2**20)
    assert m.ops_total == 184 and m.duration_s == pytest.approx(0.996222)
    assert m.bytes_per_s_min is None and m.bytes_per_s_max is None and m.ops_per_s_min is None
    assert m.timeseries == []


def test_an_interrupted_write_keeps_the_seconds_it_reported():
    # SIGINT 2.5 s into a 20 s write: rados bench dies without a summary; the figures are those of its 2 seconds
    text = (FIX / "ceph16.2.15_write_1M_sigint_at_2.5s.txt").read_text()
    with pytest.raises(ParseError):
        rb.parse(text, "write")
    m = rb.parse_interrupted(text, "write", 1024 * 1024)
    assert m.duration_s == 2 and m.ops_total == 259 and m.bytes_total == 259 * 1024 * 1024
    assert m.bytes_per_s == pytest.approx(259 * 1024 * 1024 / 2)
    assert m.latency.mean_ns == pytest.approx(0.0305187e9) and m.latency.percentiles_ns == {}
    assert [s.ops_per_s for s in m.timeseries] == [124, 135]


def test_interrupted_before_the_first_second_is_a_parse_error():
    text = (FIX / "ceph16.2.15_write_1M_sigint_at_2.5s.txt").read_text().split("    1 ")[0]
    with pytest.raises(ParseError, match="before its first per-second report"):
        rb.parse_interrupted(text, "write", 1024 * 1024)


# ---- rados bench --format json (Ceph 16.2.15, captured on the lab) --------------------------------------

def test_json_write_in_base_units_with_its_seconds():
    m = rb.parse_json(load("ceph16.2.15_json_write_4M.txt"), "write")     # "hints = 1" before the JSON
    assert m.duration_s == pytest.approx(5.821611) and m.ops_total == 79
    assert m.op_size_bytes == m.object_size_bytes == 4194304 and m.bytes_total == 79 * 4194304
    assert m.bytes_per_s == pytest.approx(54.280508 * MIB)                 # "bandwidth" is MiB/s as in the text
    assert m.bytes_per_s_max == pytest.approx(108 * MIB) and m.bytes_per_s_stddev == pytest.approx(37.373788 * MIB)
    assert int(m.ops_per_s) == 13 and m.ops_per_s_max == 27 and m.ops_per_s_min == 5
    assert m.latency.mean_ns == pytest.approx(1.121415e9) and m.latency.max_ns == pytest.approx(3.671039e9)
    assert [s.t_s for s in m.timeseries] == [1, 2, 3, 4, 5]                # second 0 is the start, not a second
    assert m.timeseries[1].ops_per_s == 27 and m.timeseries[1].bytes_per_s == pytest.approx(108 * MIB)
    assert m.timeseries[0].lat_mean_ns == pytest.approx(0.931136e9)


def test_json_stddev_iops_overflowed_by_ceph16_is_dropped():
    """Ceph 16 prints a write's stddev_iops as an overflowed integer: -1515805776, or 1076274096."""
    assert rb.parse_json(load("ceph16.2.15_json_write_4K.txt"), "write").ops_per_s_stddev is None
    assert rb.parse_json(load("ceph16.2.15_write_4K_json.txt"), "write").ops_per_s_stddev is None
    assert rb.parse_json(load("ceph16.2.15_json_rand_4M.txt"), "rand").ops_per_s_stddev == pytest.approx(21.931712)


def test_json_reads():
    seq = rb.parse_json(load("ceph16.2.15_json_seq_4K.txt"), "seq")
    assert seq.op == "seq" and seq.ops_total == 5133 and int(seq.ops_per_s) == 4317
    assert seq.bytes_per_s == pytest.approx(16.865598 * MIB) and seq.latency.stddev_ns is None
    rand = rb.parse_json(load("ceph16.2.15_json_rand_4K.txt"), "rand")
    assert rand.latency.min_ns == pytest.approx(0.000147e9) and len(rand.timeseries) == 2


def test_json_with_cleanup_lines_inside_the_document():
    """Without --no-cleanup Ceph 16 prints its clean-up lines in the middle of the per-second list."""
    text = load("ceph16.2.15_write_4K_json.txt")
    assert "}Cleaning up" in text
    m = rb.parse_json(text, "write")
    assert m.ops_total == 2373 and m.bytes_per_s == pytest.approx(3.07322 * MIB) and len(m.timeseries) == 3
    assert rb.json_concurrency(text) == 16


def test_json_concurrency_of_a_read_is_the_most_in_flight():
    assert rb.json_concurrency(load("ceph16.2.15_json_rand_4K.txt")) == 16


@pytest.mark.parametrize("text, fragment", [
    ("hints = 1\n", "no JSON document"),
    ('{"datas": []}', "no summary"),
    ('{"total_time_run":"1","bandwidth":"1","datas":[{"sec":"1","finished":"x"}]}', "datas.finished"),
    ('{"total_time_run":"1","bandwidth":"1"', "cannot be read"),
])
def test_json_refusals_name_what_is_wrong(text, fragment):
    with pytest.raises(ParseError, match=fragment):
        rb.parse_json(text, "write")
