"""Every kind's parser on real output of each release's own tools (issue 27, item 2): a multi-host lab of that release
(`lab up --release R --hosts 2 --clients 1`), the load from its client host c1, whose rados, rbd, fio, iperf3 and
cephbench-loadgen run from the release's root (tests/fixtures/README.md says how each was made). Each expected figure
is the one the tool printed itself, read from the file by eye."""

from __future__ import annotations

from pathlib import Path

import pytest

from cephbench.drivers import disk_baseline, osd_bench, rados_bench, rbd_bench_tool
from cephbench.drivers.fio import parse_fio_json, to_measurement
from cephbench.drivers.iperf import parse_iperf_json
from cephbench.drivers.rgw.parse import parse as parse_loadgen
from cephbench.hosts.fanout import split_markers

FIX = Path(__file__).parent.parent / "fixtures" / "releases"
MiB = 2**20
RELEASES = ["reef-18.2.7", "tentacle-20.2.4"]


def text(release: str, name: str) -> str:
    """The tool's own output, without the lines cephbench's start barrier (`at`) wrapped it in."""
    return split_markers((FIX / release / name).read_text())[0]


# rados bench's summary: Bandwidth (MB/sec) (MiB), Average IOPS, Average Latency(s)
RADOS = {
    "reef-18.2.7": {"write": (194.259, 48, 0.163786), "seq": (929.76, 232, 0.0329071),
                    "rand": (1127.83, 281, 0.0278242)},
    "tentacle-20.2.4": {"write": (529.852, 132, 0.0602715), "seq": (762.026, 190, 0.0408199),
                        "rand": (889.222, 222, 0.0350979)},
}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("mode", ["write", "seq", "rand"])
def test_rados_bench_text_of_each_release(release, mode):
    mib, iops, lat = RADOS[release][mode]
    m = rados_bench.parse(text(release, f"rados-bench-{mode}-4M-t8-at-c1.txt"), mode)
    assert m.bytes_per_s == pytest.approx(mib * MiB)
    assert round(m.ops_per_s) in (iops, iops + 1)          # rados bench truncates its Average IOPS
    assert m.latency.mean_ns == pytest.approx(lat * 1e9)
    assert m.op_size_bytes == 4 * MiB and m.timeseries


# rbd bench's last line: ops, ops/sec (4 KiB each, 16 MiB in all)
RBD = {"reef-18.2.7": {"write": 24975.6, "read": 9309.09}, "tentacle-20.2.4": {"write": 7420.29, "read": 5333.33}}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("io", ["write", "read"])
def test_rbd_bench_of_each_release(release, io):
    m = rbd_bench_tool.parse(text(release, f"rbd-bench-{io}-4K-t8-at-c1.txt"))
    assert m.ops_total == 4096
    assert m.ops_per_s == pytest.approx(RBD[release][io], rel=1e-4)
    assert m.bytes_per_s == pytest.approx(RBD[release][io] * 4096, rel=1e-4)


# fio's own bw_bytes, iops and clat mean of the one job
FIO = {
    "reef-18.2.7": {"rbd-randwrite-4K-qd8": ("write", 8367864, 2042.936, 3888132.5),
                    "rbd-randread-4K-qd8": ("read", 33294072, 8128.436, 967958.3),
                    "rados-write-64K-qd8": ("write", 80988905, 1235.793, 6415597.1),
                    "rados-randread-64K-qd8": ("read", 402779474, 6145.927, 1289937.8)},
    "tentacle-20.2.4": {"rbd-randwrite-4K-qd8": ("write", 5863102, 1431.421, 5557987.8),
                        "rbd-randread-4K-qd8": ("read", 27476399, 6708.105, 1177552.3),
                        "rados-write-64K-qd8": ("write", 47870341, 730.443, 10895412.3),
                        "rados-randread-64K-qd8": ("read", 155021600, 2365.442, 3364032.6)},
}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("job", ["rbd-randwrite-4K-qd8", "rbd-randread-4K-qd8", "rados-write-64K-qd8",
                                 "rados-randread-64K-qd8"])
def test_fio_rbd_and_rados_engines_of_each_release(release, job):
    direction, bw, iops, clat = FIO[release][job]
    (j,) = parse_fio_json((FIX / release / f"fio-{job}.json").read_text())
    d = getattr(j, direction)
    assert j.error == 0
    assert d.bytes_per_s == bw and d.iops == pytest.approx(iops, abs=1e-3)
    assert d.clat is not None and d.clat.mean_ns == pytest.approx(clat, abs=0.1)
    assert d.clat.bins and "99" in d.clat.percentiles_ns      # json+: the histogram the merge needs


# the disk baseline's fio (libaio, direct) on a one-host lab's OSD directory, run from the release's root: the version
# it printed, and each pattern's fio bw_bytes, iops and clat mean, as the file holds them
# (in fixtures/fio/: a file of two patterns, which import refuses, as it refuses any fio file of two kinds of job)
DISK = {
    "reef-18.2.7": ("fio-3.39", {"dd": (1525201454, 90.909091, 10073738.0),
                                 "randread-4KiB-qd1": (68257118, 16664.335664, 46158.582939)}),
    "tentacle-20.2.4": ("fio-3.41", {"dd": (1118481066, 66.666667, 9526018.0),
                                     "randread-4KiB-qd1": (79636715, 19442.557443, 37923.636214)}),
}
DISK_FILE = {"reef-18.2.7": "fio3.39_ceph18.2.7_reef_root_libaio_disk_baseline_dd_randread_4K_qd1.json",
             "tentacle-20.2.4": "fio3.41_ceph20.2.4_tentacle_root_libaio_disk_baseline_dd_randread_4K_qd1.json"}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("pattern", ["dd", "randread-4KiB-qd1"])
def test_the_disk_baselines_fio_of_each_release(release, pattern):
    """Through the baseline's own aggregation: the result records the fio that ran, and its figures are fio's."""
    version, figures = DISK[release]
    bw, iops, clat = figures[pattern]
    jobs = parse_fio_json((FIX.parent / "fio" / DISK_FILE[release]).read_text())
    pat = disk_baseline.PATTERNS[pattern]
    target = disk_baseline.DiskTarget("/lab/osd/0", "/lab/osd/0/t.dat", False, "254:0")
    one = to_measurement([j for j in jobs if j.name == f"{pattern}@0"], pat.rw)
    m, _ = disk_baseline.pattern_measurement(pat, [target], {0: one}, {}, 16 * MiB)
    assert m.extra["version"] == version and one.extra["version"] == version
    assert m.bytes_per_s == bw and m.ops_per_s == pytest.approx(iops)
    assert m.latency.mean_ns == pytest.approx(clat) and m.op == pat.op


OSD = {"reef-18.2.7": (2447435821.738, 583.514), "tentacle-20.2.4": (2274587834.555, 542.304)}


@pytest.mark.parametrize("release", RELEASES)
def test_osd_bench_json_of_each_release(release):
    m = osd_bench.parse((FIX / release / "osd-bench-4M-osd0.json").read_text())
    bw, iops = OSD[release]
    assert m.bytes_per_s == pytest.approx(bw) and m.ops_per_s == pytest.approx(iops)
    assert m.bytes_total == 64 * MiB and m.op_size_bytes == 4 * MiB


IPERF = {"reef-18.2.7": ("iperf 3.18", 5467594690.545), "tentacle-20.2.4": ("iperf 3.22", 14173619518.453)}


@pytest.mark.parametrize("release", RELEASES)
def test_iperf3_of_each_release(release):
    raw = (FIX / release / "iperf3-h1-to-h2-P1.json").read_text()
    version, bits = IPERF[release]
    assert f'"{version}"' in raw
    m = parse_iperf_json(raw)
    assert m.bytes_per_s == pytest.approx(bits / 8) and m.extra["version"] == version


# cephbench-loadgen's totals against each release's RGW (beast)
RGW = {"reef-18.2.7": {"s3-put": (799, 399.5), "s3-get": (5580, 2790), "swift-put": (736, 368),
                       "swift-get": (5586, 2793)},
       "tentacle-20.2.4": {"s3-put": (568, 284), "s3-get": (3557, 1778.5), "swift-put": (321, 160.5),
                           "swift-get": (3804, 1902)}}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("op", ["s3-put", "s3-get", "swift-put", "swift-get"])
def test_rgw_s3_and_swift_of_each_release(release, op):
    m = parse_loadgen((FIX / release / f"loadgen-{op}-4K-t8.json").read_text())
    ops, rate = RGW[release][op]
    assert m.ops_total == ops and m.ops_per_s == pytest.approx(rate)
    assert m.bytes_per_s == pytest.approx(rate * 4096)
    assert m.extra.get("errors", 0) in (0, {}) or not any(m.extra.get("errors", {}).values())


@pytest.mark.parametrize("mode, mib, iops, lat", [("write", 17.614101, 4509, 0.001773),
                                                  ("seq", 27.091554, 6935, 0.001143)])
def test_tentacle_rados_bench_json_keeps_reefs_quirks(mode, mib, iops, lat):
    """Tentacle's own `rados bench --format json` (its root's rados, a one-OSD Tentacle lab): every number a
    string, as Reef's, and the write's stddev_iops overflowed again (1749334576 for a write of 4,509 IOPS)."""
    raw = (FIX / "tentacle-20.2.4" / f"rados-bench-json-{mode}-4K-t8.txt").read_text()
    assert '"bandwidth":"' in raw
    m = rados_bench.parse_json(raw, mode)
    assert m.bytes_per_s == pytest.approx(mib * MiB) and m.ops_per_s == pytest.approx(iops, abs=1)
    assert m.latency.mean_ns == pytest.approx(lat * 1e9)
    if mode == "write":
        assert '"stddev_iops":"1749334576"' in raw
        assert m.ops_per_s_stddev is None or m.ops_per_s_stddev < iops      # the overflow is not taken
