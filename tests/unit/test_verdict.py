import time

from cephbench.report.verdict import slow_osds, verdict
from cephbench.results import Analysis, Measurement, Result, Test


def res(i, kind, phase, bw, eff=None, bottleneck=None, extra=None):
    t = Test(id=f"{i:03d}-t", index=i, workload="w", kind=kind, group="g", params={"phase": phase})
    m = Measurement(tool="x", op=phase, duration_s=1, bytes_per_s=bw, extra=extra or {})
    a = Analysis(efficiency=eff, bottleneck=bottleneck, reason="because") if eff is not None else None
    return Result(test=t, status="ok", started_unix=time.time(), duration_s=1, measurement=m, analysis=a)


def test_verdict_takes_the_best_result_per_level_and_direction():
    rs = [res(1, "rados_bench", "write", 10.0, 0.2, "disks"), res(2, "rados_bench", "write", 50.0, 0.5, "disks"),
          res(3, "rados_bench", "seq", 80.0, 0.9, "client network"), res(4, "fio_rbd", "randwrite", 5.0),
          res(5, "osd_bench", "write", 100.0, extra={"slow_osds": ["osd.2"]})]
    lines = verdict(rs)
    assert [(v.level, v.direction, v.test_id) for v in lines] == [
        ("RADOS", "write", "002-t"), ("RADOS", "read", "003-t"), ("RBD", "write", "004-t")]
    assert "50% of its ceiling; bottleneck: disks" in lines[0].text()
    assert "no ceiling" in lines[2].text()
    assert slow_osds(rs) == ["osd.2"]
