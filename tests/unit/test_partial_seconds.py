"""Partial first and last seconds: each parser marks the intervals its tool's output says were not a whole second of
load, on real outputs (tests/fixtures/README.md), and every per-second statistic leaves them out while the stored
series keeps them."""

import json
import statistics

import pytest

from conftest import FIXTURES
from cephbench.drivers import rados_bench as rb
from cephbench.drivers.fio_run import series
from cephbench.drivers.iperf import parse_iperf_json
from cephbench.drivers.rbd_bench_tool import parse as parse_rbd
from cephbench.drivers.rgw.parse import parse as parse_loadgen, split_document
from cephbench.core.merge import merge_instances
from cephbench.core.results import Measurement, Sample, steady_state

MIB = 1024 * 1024


def loadgen(name: str) -> Measurement:
    return parse_loadgen((FIXTURES / "loadgen" / name).read_text())


def partial_seconds(m: Measurement) -> list[float]:
    return [s.t_s for s in m.timeseries if s.partial]


def test_loadgen_bins_after_the_measured_window_are_partial():
    put = loadgen("loadgen0.1_rgw16.2.15_s3_put_4K_t8.json")       # 2 s: bin 3 holds the 8 ops still in flight
    assert put.duration_s == 2 and [s.t_s for s in put.timeseries] == [1, 2, 3]
    assert partial_seconds(put) == [3] and put.timeseries[2].ops_per_s == 8
    delete = loadgen("loadgen0.1_rgw16.2.15_s3_delete_4K_t8.json")  # stopped at 1.42 s: its key space ran out
    assert delete.duration_s == pytest.approx(1.4236, abs=1e-4) and partial_seconds(delete) == [2]
    # a client host's run (the document inside `at`'s output): 3 s, and a fourth bin of what was still in flight
    doc, _ = split_document((FIXTURES / "loadgen" / "loadgen0.1_rgw16.2.15_s3_get_4K_t4_at_c1.txt").read_text())
    get = parse_loadgen(doc or "")
    assert get.duration_s == 3 and [s.t_s for s in get.timeseries] == [1, 2, 3, 4] and partial_seconds(get) == [4]


def test_iperf3_interval_cut_by_the_end_of_a_byte_limited_test_is_partial():
    m = parse_iperf_json((FIXTURES / "iperf3" / "iperf3.12_loopback_n300M_b1G.json").read_text())
    assert [round(s.t_s, 3) for s in m.timeseries] == [1.0, 2.0, 2.516]
    assert [s.partial for s in m.timeseries] == [False, False, True]
    whole = parse_iperf_json((FIXTURES / "iperf3" / "iperf3.12_loopback_2streams.json").read_text())
    assert partial_seconds(whole) == []


def test_rados_bench_seconds_after_the_requested_run_time_are_partial_and_left_out_of_its_per_second_figures():
    text = (FIXTURES / "rados_bench" / "ceph16.2.15_write_4M_t64_3s_drain.txt").read_text()
    m = rb.parse(text, "write")             # "for up to 3 seconds": seconds 4, 5 and 6 only drain the writes
    assert [s.t_s for s in m.timeseries] == [1, 2, 3, 4, 5, 6] and partial_seconds(m) == [4, 5, 6]
    # rados bench's own Max bandwidth 35.3333 and Stddev 14.4248 come from second 6, after the 3 s it was given
    assert m.bytes_per_s_max == m.bytes_per_s_min == m.bytes_per_s_stddev == 0
    assert m.ops_per_s_max == 0
    # the run's own averages are the tool's: 64 writes over 6.34 s
    assert m.bytes_per_s == pytest.approx(40.3895 * MIB) and m.duration_s == pytest.approx(6.33829)


def test_rados_bench_json_takes_the_run_time_from_seconds_to_run():
    m = rb.parse_json((FIXTURES / "rados_bench" / "ceph16.2.15_json_write_4M_t64_3s_drain.txt").read_text(), "write")
    assert [s.t_s for s in m.timeseries] == [1, 2, 3, 4] and partial_seconds(m) == [4]
    whole_bw = [0.0, 0.0, 5.333333]         # cur_bw of seconds 1 to 3 (second 4 drained 59 writes: 236 MB/s)
    assert m.bytes_per_s_max == pytest.approx(max(whole_bw) * MIB)
    assert m.bytes_per_s_stddev == pytest.approx(statistics.stdev(whole_bw) * MIB)
    assert m.ops_per_s_max == 4 and m.ops_per_s_stddev == pytest.approx(statistics.stdev([0, 0, 4]))


def test_a_rados_bench_run_without_partial_seconds_keeps_the_tools_own_figures():
    m = rb.parse((FIXTURES / "rados_bench" / "ceph16.2.15_write_4M.txt").read_text(), "write")
    assert partial_seconds(m) == [] and m.bytes_per_s_stddev == pytest.approx(67.2309 * MIB)
    # seq and rand print no run time: the driver passes the one it asked for
    rand = rb.parse((FIXTURES / "rados_bench" / "ceph16.2.15_rand_4K.txt").read_text(), "rand", requested_s=5)
    assert [s.t_s for s in rand.timeseries] == [1, 2, 3, 4] and partial_seconds(rand) == []
    assert rand.ops_per_s_stddev == pytest.approx(276.03)


def test_fio_and_rbd_bench_report_whole_seconds_only():
    logs = FIXTURES / "fio" / "fio3.33_psync_randwrite_4K_runtime2600ms_logs"
    s = series([(logs / "fio_bw.1.log").read_text()], [(logs / "fio_iops.1.log").read_text()])
    assert [x.t_s for x in s] == [1, 2] and not any(x.partial for x in s)     # 2.6 s ran, 2 windows logged
    m = parse_rbd((FIXTURES / "rbd_bench" / "ceph16.2.15_write_rand_4K_sigint.txt").read_text())
    assert [x.t_s for x in m.timeseries] == [1, 2] and partial_seconds(m) == []


def test_merged_instances_carry_the_partial_second_and_leave_it_out_of_rates_and_extremes():
    put = loadgen("loadgen0.1_rgw16.2.15_s3_put_4K_t8.json")
    merged = merge_instances([put, put.model_copy(deep=True)], latency="hdr")
    assert [(s.t_s, s.partial) for s in merged.timeseries] == [(1, False), (2, False), (3, True)]
    whole = put.timeseries[:2]
    assert merged.ops_per_s == pytest.approx(2 * statistics.mean(s.ops_per_s for s in whole))
    assert merged.bytes_per_s_min == 2 * min(s.bytes_per_s for s in whole)     # not the 8 ops of second 3


def test_a_whole_sample_is_stored_as_before_and_a_partial_one_says_so():
    m = Measurement(tool="t", op="write", duration_s=2.5,
                    timeseries=[Sample(t_s=1, ops_per_s=5), Sample(t_s=2, ops_per_s=4), Sample(t_s=3, partial=True)])
    stored = json.loads(m.model_dump_json(exclude_none=True))["timeseries"]
    assert stored == [{"t_s": 1.0, "ops_per_s": 5.0}, {"t_s": 2.0, "ops_per_s": 4.0}, {"t_s": 3.0, "partial": True}]
    back = Measurement.model_validate_json(m.model_dump_json(exclude_none=True))
    assert [s.partial for s in back.timeseries] == [False, False, True]
    assert [s.t_s for s in steady_state(back.timeseries)] == [1, 2]
