"""The verdict: medians of repeats, warnings set aside, mixed and metadata operations on lines of their own."""

import time

from conftest import FIXTURES
from runfactory import fixture_measurement, scaled
from cephbench.drivers import fio
from cephbench.report.verdict import slow_osds, verdict
from cephbench.core.results import Analysis, Measurement, Result, Test


def res(i, kind, phase, m, params=None, eff=None, bottleneck=None, repeat=1, warnings=()):
    t = Test(id=f"{i:03d}-t", index=i, workload="w", kind=kind, group=f"g{i}",
             params={"phase": phase, **(params or {})}, repeat=repeat)
    a = Analysis(efficiency=eff, bottleneck=bottleneck, reason="because") if eff is not None else None
    return Result(test=t, status="ok", started_unix=time.time(), duration_s=1, measurement=m, analysis=a,
                  warnings=list(warnings))


def bw(value):
    return Measurement(tool="x", op="write", duration_s=1, bytes_per_s=value)


WRITE_4M = fixture_measurement("ceph16.2.15_write_4M.txt", "write")
SEQ_4M = fixture_measurement("ceph16.2.15_seq_4M.txt", "seq")


def fio_measurement(name, op):
    return fio.to_measurement(fio.parse_fio_json((FIXTURES / "fio" / f"{name}.json").read_text()), op)


def test_verdict_takes_the_best_configuration_per_level_and_direction():
    rs = [res(1, "rados_bench", "write", scaled(WRITE_4M, 0.2), {"object_size": 4096}, 0.2, "disks"),
          res(2, "rados_bench", "write", WRITE_4M, {"object_size": 4 << 20}, 0.5, "disks"),
          res(3, "rados_bench", "seq", SEQ_4M, {"object_size": 4 << 20}, 0.9, "client network"),
          res(4, "fio_rbd", "randwrite", bw(5.0)),
          res(5, "osd_bench", "write", Measurement(tool="x", op="write", duration_s=1, bytes_per_s=100.0,
                                                    extra={"slow_osds": ["osd.2"]}))]
    lines = verdict(rs)
    assert [(v.level, v.direction, v.test_id) for v in lines] == [
        ("RADOS", "write", "002-t"), ("RADOS", "read", "003-t"), ("RBD", "write", "004-t")]
    assert "50% of its ceiling; bottleneck: disks" in lines[0].text()
    assert "no ceiling" in lines[2].text()
    assert slow_osds(rs) == ["osd.2"]


def test_headline_is_the_median_of_repeats_not_the_luckiest():
    # four repeats of one configuration: 57.7, 61.9, 75.6 (lucky) and 59.8 MiB/s
    figures = [57.7, 61.9, 75.6, 59.8]
    rs = [res(i, "rados_bench", "write", scaled(WRITE_4M, f * 2**20 / WRITE_4M.bytes_per_s), {"object_size": 4 << 20},
              repeat=i) for i, f in enumerate(figures, 1)]
    [line] = verdict(rs)
    assert line.repeats == 4
    assert abs(line.bytes_per_s / 2**20 - 59.8) < 0.01       # the median (the lower middle: a real repeat), not 75.6
    assert line.test_id == "004-t"                                         # a real repeat stands for it (59.8)
    assert "median of 4 repeats, 57.7–75.6 MiB/s" in line.text()


def test_a_result_with_a_warning_never_heads_the_verdict():
    short_seq = scaled(SEQ_4M, 3.0)        # a seq that ran out of objects after 0.3 s: fast, and meaningless
    rs = [res(1, "rados_bench", "seq", short_seq, {"object_size": 4096},
              warnings=["seq ran out of objects after 0.3 s of the requested 2 s"]),
          res(2, "rados_bench", "seq", SEQ_4M, {"object_size": 4 << 20})]
    [line] = verdict(rs)
    assert line.test_id == "002-t" and line.set_aside == 1
    assert "1 result(s) with a warning not counted" in line.text()
    # only warned results: no headline at all
    assert verdict(rs[:1]) == []


def test_mixed_results_are_never_the_best_read_or_write():
    mixed = fio_measurement("fio3.33_ceph16.2.15_rbd_randrw70_4K_qd8_2images", "randrw")
    read = fio_measurement("fio3.33_ceph16.2.15_rbd_randread_4K_qd8_2images", "randread")
    faster_mixed = scaled(mixed, 3 * read.bytes_per_s / mixed.bytes_per_s)   # 3x the read's bandwidth
    rs = [res(1, "fio_rbd", "randrw", faster_mixed, {"block_size": 4096}),
          res(2, "fio_rbd", "randread", read, {"block_size": 4096})]
    lines = {(v.level, v.direction): v for v in verdict(rs)}
    assert lines[("RBD", "read")].test_id == "002-t"
    assert lines[("RBD", "mixed")].test_id == "001-t"
    assert "RBD mixed: best" in lines[("RBD", "mixed")].text()
    assert "the model covers plain reads and writes" in lines[("RBD", "mixed")].text()
    # rbd bench readwrite is mixed too
    rb = res(3, "rbd_bench", "readwrite", bw(1e9), {"io_size": 4096})
    assert [(v.direction) for v in verdict([rb])] == ["mixed"]


def loadgen(op):
    from cephbench.drivers.rgw.parse import parse
    return parse((FIXTURES / "loadgen" / f"loadgen0.1_rgw16.2.15_s3_{op}_4K_t8.json").read_text())


def test_rgw_metadata_ops_are_judged_in_ops_per_s_one_line_per_op():
    rs = [res(i, "rgw", op, loadgen(op), {"object_size": 4096})
          for i, op in enumerate(("put", "stat", "list", "delete", "mixed"), 1)]
    lines = verdict(rs)
    assert [(v.direction, v.op) for v in lines] == [("write", None), ("mixed", None), ("metadata", "delete"),
                                                    ("metadata", "list"), ("metadata", "stat")]
    stat = lines[-1]
    assert stat.ops_per_s == rs[1].measurement.ops_per_s > 1000
    assert stat.text().startswith(f"RGW metadata (stat): best {stat.ops_per_s:,.0f} req/s (002-t)")
    assert "MiB/s" not in stat.text()
    # stat, list and delete are never a read: the only read line would come from a get
    assert not [v for v in lines if v.direction == "read"]


def test_terminal_figures_have_units_and_no_made_up_iops():
    from cephbench.report.format import result_figures
    stat = res(1, "rgw", "stat", loadgen("stat"))
    assert " req/s" in result_figures(stat) and "MiB/s" not in result_figures(stat)
    iperf = res(2, "net_baseline", None, Measurement(tool="iperf3", op="send", duration_s=3, bytes_per_s=8.4e8,
                                                     ops_per_s=0.0))
    assert result_figures(iperf) == "801.1 MiB/s"          # iperf3 counts no ops: no "0 IOPS"
    put = res(3, "rgw", "put", loadgen("put"))
    assert " req/s, p99 " in result_figures(put) and "MiB/s" in result_figures(put)
