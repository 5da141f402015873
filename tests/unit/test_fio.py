"""fio layer: command builder, json+ parser, aggregation by merged latency bins (fixtures: fio 3.33)."""

import json

import pytest

from conftest import FIXTURES
from cephbench.core.errors import ParseError
from cephbench.drivers.fio import (FioJob, fio_argv, merge_clat, parse_fio_json, percentiles_from_bins,
                                   to_measurement)

FIO = FIXTURES / "fio"


def read(name: str) -> str:
    return (FIO / name).read_text()


def test_argv_puts_globals_before_the_first_job_and_units_in_base_form():
    jobs = [FioJob(name="w", rw="write", bs=4 * 1024**2, iodepth=16, runtime_s=5, time_based=True,
                   engine="rados", options={"pool": "p", "clientname": "admin"}),
            FioJob(name="r", rw="randread", bs=4096, size=1024**2, extra={"stonewall": True})]
    argv = fio_argv(jobs, {"group_reporting": 0}, "/tmp/out.json")
    assert argv[:3] == ["fio", "--output-format=json+", "--output=/tmp/out.json"]
    assert argv.index("--group_reporting=0") < argv.index("--name=w") < argv.index("--name=r")
    assert "--bs=4194304" in argv and "--runtime=5s" in argv and "--time_based=1" in argv
    assert "--pool=p" in argv and "--ioengine=rados" in argv and "--stonewall" in argv
    assert "--size=1048576" in argv and "--direct=1" in argv


def test_argv_refuses_no_jobs_and_unknown_engines():
    with pytest.raises(ValueError):
        fio_argv([], {}, "x")
    with pytest.raises(ValueError):
        FioJob(name="x", rw="read", bs=4096, engine="sync").args()  # type: ignore[arg-type]


def test_parse_single_write_job():
    [job] = parse_fio_json(read("fio3.33_libaio_write_4M_qd1.json"))
    m = to_measurement([job], "write")
    data = json.loads(read("fio3.33_libaio_write_4M_qd1.json"))["jobs"][0]["write"]
    assert m.bytes_per_s == data["bw_bytes"]
    assert m.ops_per_s == pytest.approx(data["iops"])
    assert m.op_size_bytes == 4 * 1024**2
    assert m.latency.mean_ns == pytest.approx(data["clat_ns"]["mean"])
    assert set(m.latency.percentiles_ns) == {"50", "90", "99", "99.9", "99.99"}


def test_percentiles_from_bins_match_what_fio_printed():
    for job in parse_fio_json(read("fio3.33_libaio_randread_4K_qd32_2jobs.json")):
        ours = percentiles_from_bins(job.read.clat.bins)
        for p in ("50", "90", "99", "99.9", "99.99"):
            assert ours[p] == job.read.clat.percentiles_ns[p], p


def test_two_jobs_sum_bandwidth_and_merge_bins_never_average_percentiles():
    jobs = parse_fio_json(read("fio3.33_libaio_randread_4K_qd32_2jobs.json"))
    assert len(jobs) == 2
    m = to_measurement(jobs, "randread")
    assert m.bytes_per_s == sum(j.read.bytes_per_s for j in jobs)
    assert m.ops_total == sum(j.read.total_ios for j in jobs)
    # p90 of the merged histogram lies between the two jobs' p90 and is not their mean
    a, b = (j.read.clat.percentiles_ns["90"] for j in jobs)
    assert min(a, b) <= m.latency.percentiles_ns["90"] <= max(a, b)
    assert m.latency.percentiles_ns["90"] != (a + b) / 2
    merged = {}
    for j in jobs:
        for k, v in j.read.clat.bins.items():
            merged[k] = merged.get(k, 0) + v
    assert m.latency.percentiles_ns == percentiles_from_bins(merged)
    assert m.latency.min_ns == min(j.read.clat.min_ns for j in jobs)
    assert m.latency.max_ns == max(j.read.clat.max_ns for j in jobs)
    n = sum(j.read.clat.n for j in jobs)
    assert m.latency.mean_ns == pytest.approx(sum(j.read.clat.mean_ns * j.read.clat.n for j in jobs) / n)


def test_rados_engine_output():
    [w] = parse_fio_json(read("fio3.33_ceph16.2.15_rados_write_4M_qd16.json"))
    [r] = parse_fio_json(read("fio3.33_ceph16.2.15_rados_randread_4K_qd16.json"))
    mw, mr = to_measurement([w], "write"), to_measurement([r], "randread")
    assert mw.bytes_per_s > 0 and mw.op_size_bytes == 4 * 1024**2
    assert mr.ops_per_s > 0 and mr.latency.percentiles_ns["99"] >= mr.latency.percentiles_ns["50"]


def test_lines_before_the_json_are_skipped():
    text = read("fio3.33_psync_read_1M_note_before_json.txt")
    assert text.startswith("note:")
    [job] = parse_fio_json(text)
    assert to_measurement([job], "read").bytes_per_s > 0


@pytest.mark.parametrize("text", ["", "fio: unrecognized option '--unknownopt=1'\n", "{\"jobs\": [{}]}", "{ broken"])
def test_not_fio_json_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_fio_json(text)


def test_a_job_with_an_error_is_not_a_measurement():
    data = json.loads(read("fio3.33_libaio_write_4M_qd1.json"))
    data["jobs"][0]["error"] = 5
    with pytest.raises(ParseError, match="error 5"):
        to_measurement(parse_fio_json(json.dumps(data)), "write")


def test_merge_without_bins_keeps_single_job_percentiles_only():
    [job] = parse_fio_json(read("fio3.33_libaio_write_4M_qd1.json"))
    from dataclasses import replace
    c = replace(job.write.clat, bins={})
    assert merge_clat([c]).percentiles_ns["50"] == c.percentiles_ns["50"]
    assert merge_clat([c, c]).percentiles_ns == {}
