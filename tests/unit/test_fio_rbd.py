"""fio on RBD and RADOS: jobs per image, json+ of several images aggregated by merged bins, per-second series
from fio's logs (fixtures: fio 3.33 rbd engine against the Ceph 16.2.15 lab, 2 images, randrw 70/30)."""

import json
import shutil

import pytest

from conftest import FIXTURES
from cephbench.suite.config import parse_suite
from cephbench.core.errors import ParseError
from cephbench.drivers.fio import parse_fio_json, percentiles_from_bins
from cephbench.drivers.fio_rbd import jobs_for
from cephbench.drivers.fio_run import FioRun, fio_run, parse_log, series
from cephbench.drivers.rbd_images import Images
from cephbench.hosts.local import Spawn
from cephbench.suite.plan import expand

FIO = FIXTURES / "fio"
RW = "fio3.33_ceph16.2.15_rbd_randrw70_4K_qd8_2images"
LOGS = FIO / f"{RW}_logs"


def test_series_sums_jobs_and_directions_per_second():
    bw = [p.read_text() for p in sorted(LOGS.glob("fio_bw.*.log"))]
    iops = [p.read_text() for p in sorted(LOGS.glob("fio_iops.*.log"))]
    s = series(bw, iops)
    assert [x.t_s for x in s] == [1, 2, 3]
    # second 1: job 1 read 2884 + write 1204 KiB/s, job 2 read 2634 + write 1181 KiB/s
    assert s[0].bytes_per_s == (2884 + 1204 + 2634 + 1181) * 1024
    assert s[0].ops_per_s == 721 + 301 + 658 + 295


def test_parse_log_refuses_garbage():
    assert parse_log("1000, 5, 0, 0, 0\n\n") == [(1000, 5.0)]
    with pytest.raises(ParseError):
        parse_log("time, value, ddir\n")


def test_measurement_of_two_images_merges_bins_and_reads_the_logs(tmp_path):
    shutil.copy(FIO / f"{RW}.json", tmp_path / "fio.json")
    for p in LOGS.iterdir():
        shutil.copy(p, tmp_path / p.name)
    run = FioRun(Spawn(["fio"], tmp_path / "out.txt"), tmp_path / "fio.json", tmp_path / "fio")
    m = run.measurement("randrw", "fio rbd")
    data = json.loads((FIO / f"{RW}.json").read_text())["jobs"]
    assert len(data) == 2
    assert m.tool == "fio rbd" and m.op == "randrw" and m.op_size_bytes == 4096
    assert m.ops_per_s == pytest.approx(sum(j[d]["iops"] for j in data for d in ("read", "write")))
    assert m.bytes_per_s == sum(j[d]["bw_bytes"] for j in data for d in ("read", "write"))
    assert set(m.latency.percentiles_ns) == {"50", "90", "99", "99.9", "99.99"}
    bins: dict[int, int] = {}
    for j in data:
        for d in ("read", "write"):
            for k, v in j[d]["clat_ns"]["bins"].items():
                bins[int(k)] = bins.get(int(k), 0) + v
    assert m.latency.percentiles_ns == percentiles_from_bins(bins)
    # merged p99 is not the average of the per-job p99s
    per_job = [j["read"]["clat_ns"]["percentile"]["99.000000"] for j in data]
    assert m.latency.percentiles_ns["99"] != sum(per_job) / len(per_job)
    assert len(m.timeseries) == 3 and m.bytes_per_s_max >= m.bytes_per_s_min


def test_missing_json_is_a_parse_error(tmp_path):
    run = FioRun(Spawn(["fio"], tmp_path / "o"), tmp_path / "fio.json", tmp_path / "fio")
    with pytest.raises(ParseError, match="no JSON"):
        run.measurement("read", "fio rbd")


def _test(**w):
    s = parse_suite({"name": "t", "pools": {"rep": {"type": "replicated"}},
                     "workloads": [{"type": "fio_rbd", "pool": "rep", "duration": "5s", "ramp": "2s", **w}]}, "s")
    return expand(s).tests


def test_jobs_one_per_image_librbd_and_krbd(tmp_path):
    t = _test(rw="randrw", rwmixread=70, numjobs=2, iodepth=4)[0]
    images = Images(pool="p", data_pool="d", names=["a", "b"], size_bytes=1 << 28, pools=["p", "d"],
                    devices=["/dev/rbd0", "/dev/rbd1"])
    jobs = jobs_for(t, images, None, krbd=False)
    assert [j.options["rbdname"] for j in jobs] == ["a", "b"]
    assert all(j.engine == "rbd" and j.options["pool"] == "p" and j.options["clientname"] == "admin" for j in jobs)
    assert jobs[0].rwmixread == 70 and jobs[0].numjobs == 2 and jobs[0].time_based and jobs[0].ramp_s == 2
    k = jobs_for(t, images, "bench", krbd=True)
    assert [j.options["filename"] for j in k] == ["/dev/rbd0", "/dev/rbd1"] and k[0].engine == "libaio"
    argv = fio_run(tmp_path, jobs).spawn.argv
    assert "--output-format=json+" in argv and "--log_avg_msec=1000" in argv
    assert f"--write_bw_log={tmp_path / 'fio'}" in argv
    assert jobs_for(_test(rw="randread")[0], images, None, False)[0].rwmixread is None



# ---- fio rados ----------------------------------------------------------------------------

def test_rados_object_count_bounds_and_capacity():
    from cephbench.drivers.fio_rados import MAX_OBJECTS, object_count
    assert object_count(4 * 1024**2, 16, None) == 64            # 256 MiB of 4 MiB objects
    assert object_count(4096, 16, None) == MAX_OBJECTS == 1024
    assert object_count(64 * 1024**2, 32, None) == 32           # at least one object per I/O in flight
    assert object_count(4 * 1024**2, 16, 40 * 1024**2) == 0     # only 10 fit: fewer than iodepth
    assert object_count(4 * 1024**2, 4, 40 * 1024**2) == 10


def test_rados_jobs_write_whole_objects_and_reads_never_touch():
    from cephbench.drivers.fio_rados import job_for
    params = {"block_size": 4 * 1024**2, "iodepth": 16, "duration_s": 5.0}
    w = job_for("write", params, "pool", 64, "/etc/c.conf", None)
    assert w.engine == "rados" and w.size == 64 * 4 * 1024**2 and w.time_based
    assert w.extra == {"nrfiles": 64, "filesize": 4 * 1024**2, "touch_objects": 0}
    assert w.options == {"pool": "pool", "clientname": "admin", "conf": "/etc/c.conf"}
    r = job_for("randread", params, "pool", 64, "/etc/c.conf", "bench")
    assert r.name == w.name                                     # same objects
    assert r.extra["file_service_type"] == "random" and r.extra["touch_objects"] == 0
    assert r.options["clientname"] == "bench"


def test_rados_fixture_percentiles_come_from_one_job():
    from cephbench.drivers.fio import to_measurement
    [job] = parse_fio_json((FIO / "fio3.33_ceph16.2.15_rados_randread_4M_qd16_64objects.json").read_text())
    m = to_measurement([job], "randread", tool="fio rados")
    assert m.op_size_bytes == 4 * 1024**2 and m.ops_per_s > 0
    assert m.latency.percentiles_ns["50"] <= m.latency.percentiles_ns["99"] <= m.latency.percentiles_ns["99.9"]
    assert job.options["nrfiles"] == "64"


def test_live_figures_from_fio_status_lines(tmp_path):
    from cephbench.drivers.fio_run import eta_figures, live_figures
    fix = FIXTURES / "fio"
    bw, ops = live_figures([fix / "fio3.33_eta_randwrite_libaio_stdout.txt"])
    assert (bw, ops) == (220 * 2**20, 56300.0)                      # "[w=220MiB/s][w=56.3k IOPS]"
    bw, ops = live_figures([fix / "fio3.33_eta_randrw_libaio_stdout.txt", tmp_path / "not-yet.txt"])
    assert bw == pytest.approx((71.1 + 30.7) * 2**20) and ops == 18200 + 7849   # reads and writes summed
    assert eta_figures("Jobs: 1 (f=1)") is None                                 # starting: no figures yet
    assert eta_figures("Jobs: 1 (f=1): [R(1)][100.0%][r=1066MB/s][r=1016 IOPS][eta 00m:00s]") == (1066e6, 1016.0)
    assert live_figures([tmp_path / "not-yet.txt"]) == (None, None)
