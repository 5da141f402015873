"""RGW's ceiling: a PUT as its RADOS data write plus two bucket index writes, a GET as its data read, from the
run's own rados bench; the RGW host's link and CPU beside it. Figures of a three-host SSD cluster."""

import pytest

from cephbench.analysis import RunAnalyzer, analyse
from cephbench.analysis.model import ClusterFacts, DiskFigures
from cephbench.analysis.rgw import RadosFigure, rgw_ceiling, rgw_hosts
from cephbench.core.results import Evidence, HostLoad, Latency, LinkLoad, Measurement, Result, Test

MIB = 1024**2
CLUSTER = {"status": {"servicemap": {"services": {"rgw": {"daemons": {
    "summary": "", "rgw.a": {"metadata": {"hostname": "gw1"}}}}}}}}


def result(kind, params, bps, size, idx=1, lat_s=0.02, hosts=(), ev=None):
    m = Measurement(tool="t", op=params.get("phase") or params.get("op"), duration_s=10, bytes_per_s=bps,
                    ops_per_s=bps / size, op_size_bytes=size, latency=Latency(mean_ns=lat_s * 1e9))
    return Result(test=Test(id=f"{idx:03d}-x", index=idx, workload="w", kind=kind, group="g", params=params),
                  status="ok", started_unix=0, duration_s=10, measurement=m, hosts=list(hosts), evidence=ev)


def rados(phase, size, bps, idx=1):
    return result("rados_bench", {"phase": phase, "object_size": size, "concurrency": 16}, bps, size, idx)


def s3(op, size, bps, **kw):
    return result("rgw", {"op": op, "object_size": size, "concurrency": 32}, bps, size, idx=9, **kw)


RADOS = [rados("write", 4 * MIB, 600 * MIB, 1), rados("write", 4096, 30 * MIB, 2), rados("seq", 4 * MIB, 900 * MIB, 3)]


def test_rgw_hosts_come_from_the_service_map():
    assert rgw_hosts(CLUSTER) == {"gw1"}
    assert rgw_hosts({}) == set()


def test_a_put_is_its_data_write_plus_two_index_writes():
    c = rgw_ceiling("write", 4 * MIB, (600 * MIB, "rados bench write 4MiB of this run"),
                    (7680.0, "rados bench write 4KiB of this run"), None)
    t = 4 * MIB / (600 * MIB) + 2 / 7680
    assert c.bytes_per_s == pytest.approx(4 * MIB / t)
    assert c.bottleneck == "RADOS"


def test_small_puts_are_bound_by_the_bucket_index():
    c = rgw_ceiling("write", 4096, (30 * MIB, "x"), (7680.0, "y"), None)
    assert c.bottleneck == "RADOS (bucket index)"
    assert c.ops_per_s == pytest.approx(1 / (4096 / (30 * MIB) + 2 / 7680))


def test_rgw_put_gets_a_ceiling_and_verdict_from_the_runs_rados_bench():
    a = analyse(s3("put", 4 * MIB, 300 * MIB), None, RADOS, CLUSTER)
    assert a.ceiling_bytes_per_s == pytest.approx(4 * MIB / (4 * MIB / (600 * MIB) + 2 / 7680))
    assert 0.4 < a.efficiency < 0.6
    assert "RADOS: 4MiB at 600.0 MiB/s (rados bench write 4MiB of this run) + 2 bucket index writes" in a.reason


def test_rgw_get_reads_the_nearest_rados_read_and_the_rgw_link_binds():
    link = LinkLoad(host="gw1", iface="eth0", speed_bits_per_s=1e9, speed_source="sysfs",
                    tx_bytes_per_s=[119e6] * 8, rx_bytes_per_s=[2e6] * 8)
    gw = HostLoad(host="gw1", role="RGW host", cpus=4, cpu_busy_mean=0.3, cpu_busy_median=0.35, cpu_busy_max=0.4)
    a = analyse(s3("get", 8 * MIB, 113 * MIB, hosts=[gw], ev=Evidence(links=[link])), None, RADOS, CLUSTER)
    assert a.ceiling_bytes_per_s == pytest.approx(1e9 / 8)
    assert a.bottleneck == "public network (gw1 eth0)"
    assert any(line.startswith("link gw1 eth0 (public): send") for line in a.evidence)


def test_a_busy_rgw_host_cpu_is_named():
    gw = HostLoad(host="gw1", role="RGW host", cpus=2, cpu_busy_mean=0.9, cpu_busy_median=0.95, cpu_busy_max=1.0)
    a = analyse(s3("put", 4 * MIB, 200 * MIB, hosts=[gw]), None, RADOS, CLUSTER)
    assert a.bottleneck == "CPU"
    assert "the 2 CPUs of gw1 (RGW host) were 95% busy" in a.reason


def test_without_rados_bench_the_baselines_model_stands_in():
    facts = ClusterFacts(osds=3, osd_hosts=3, disk=DiskFigures(write_bytes_per_s=400 * MIB, write_iops=20000),
                         public_bytes_per_s=1100 * MIB, rotational=False)
    a = analyse(s3("put", 4 * MIB, 200 * MIB), facts, [], CLUSTER)
    assert a.ceiling_bytes_per_s is not None
    assert "the model's ceiling for 3 replicas from the baselines" in a.reason


def test_no_rados_bench_and_no_baseline_says_what_to_add():
    a = analyse(s3("put", 4 * MIB, 200 * MIB), None, [], {})
    assert a.bottleneck == "unknown"
    assert "add a rados bench at the object size, or a baseline section" in a.reason


def test_metadata_ops_stay_unmodelled():
    assert analyse(s3("stat", 4096, 1 * MIB), None, RADOS, CLUSTER) is None


def test_the_analyzer_remembers_rados_bench_results_for_rgw():
    an = RunAnalyzer(cluster=CLUSTER)
    for r in RADOS:
        an.attach(r)
    r = an.attach(s3("put", 4 * MIB, 300 * MIB))
    assert r.analysis is not None and r.analysis.ceiling_bytes_per_s is not None


def test_rados_figures_pick_the_nearest_size():
    from cephbench.analysis.rgw import rados_rate
    figs = [RadosFigure("write", 4 * MIB, 600 * MIB, 150, "a"), RadosFigure("write", 64 * 1024, 90 * MIB, 1440, "b")]
    assert rados_rate(figs, "write", 1 * MIB) == (600 * MIB, "a")
    assert rados_rate(figs, "read", 1 * MIB) is None
