"""Every parser of tool output, fuzzed: no input gives a traceback.

A parser either returns a result whose every figure is a finite number (and that survives the run directory's
JSON), or refuses with ParseError (the importer: UserError) in one line. A live-figure parser, which reads one
line of a running tool's output, returns figures or None and never raises. Inputs: arbitrary text and bytes, and
the real outputs in tests/fixtures and loadgen/testdata mutated (see fuzz_inputs.py).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fuzz_inputs import (TESTDATA, any_json, any_text, finite_figures, fixture_docs, fixture_texts, dump,
                         mutated_doc, mutated_json_text, mutated_text, odd_number, parses_or_refuses)
from cephbench.evidence import hostload
from cephbench.rundirs import importer
from cephbench.drivers import disk_baseline, fio, fio_run, iperf, osd_bench, rados_bench, rados_load_gen
from cephbench.drivers import rbd_bench_tool as rbd_bench
from cephbench.drivers.rgw import parse as loadgen
from cephbench.evidence import promanswer
from cephbench.core.errors import UserError
from cephbench.rundirs.history import format_time
from cephbench.core.results import Measurement


def stored_measurement(m: Measurement) -> None:
    """What a parser returns can be written to results.jsonl and read back unchanged."""
    finite_figures(m)
    assert Measurement.model_validate_json(m.model_dump_json()) == m


def live_figures_ok(figures) -> None:
    if figures is None:
        return
    assert len(figures) == 2
    for f in figures:
        assert f is None or (isinstance(f, float) and math.isfinite(f) and f >= 0), figures


def lines_of(texts: list[str]) -> list[str]:
    return [ln for t in texts for ln in t.splitlines() if ln.strip()]


# ---- rados bench ------------------------------------------------------------------------------------

RADOS = fixture_texts("rados_bench/*.txt")


@given(st.one_of(any_text(), mutated_text(RADOS)), st.sampled_from(["write", "seq", "rand"]))
@example("  1  16  20  4  1.2.3  5  0.1  0.2\nTotal time run: 1\nBandwidth (MB/sec): 1\n", "write")
@example("Total time run: 1\nBandwidth (MB/sec): 1e308\n", "write")
def test_rados_bench_parse(text, mode):
    m = parses_or_refuses(rados_bench.parse, text, mode)
    if m is not None:
        stored_measurement(m)


RADOS_JSON = fixture_texts("rados_bench/*json*.txt")


@given(st.one_of(any_text(), mutated_text(RADOS_JSON)), st.sampled_from(["write", "seq", "rand"]))
@example('hints = 1\n{"total_time_run":"1","bandwidth":"1","datas":[{"sec":"1","finished":"-1"}]}', "write")
@example('{"total_time_run":"1","bandwidth":"1","datas":[{"sec":"1","finished":"1"}x\n]}', "write")
def test_rados_bench_parse_json(text, mode):
    m = parses_or_refuses(rados_bench.parse_json, text, mode)
    if m is not None:
        stored_measurement(m)


@given(st.one_of(any_text(), mutated_text(lines_of(RADOS))))
@example("    1      16        20         4   1.2.3        16    0.1   0.2")
def test_rados_bench_live_line(line):
    live_figures_ok(rados_bench.live_line(line))


# ---- fio ---------------------------------------------------------------------------------------------

FIO_DOCS = fixture_docs("fio/*.json") + fixture_docs("fio/*note_before_json.txt")
FIO_OPS = st.sampled_from(["read", "write", "randread", "randwrite", "randrw", "rw"])


@given(st.one_of(any_text(), mutated_json_text(FIO_DOCS, ["", "note: both iodepth and numjobs set\n"]),
                 mutated_text(fixture_texts("fio/*.json"))), FIO_OPS)
def test_fio_json(text, op):
    jobs = parses_or_refuses(fio.parse_fio_json, text)
    if jobs:
        m = parses_or_refuses(fio.to_measurement, jobs, op)
        if m is not None:
            stored_measurement(m)


FIO_LOGS = fixture_texts("fio/*_logs/*.log")


@given(st.one_of(any_text(), mutated_text(FIO_LOGS)))
@example("9" * 400 + ", 5, 0, 0, 0\n")
def test_fio_logs(text):
    points = parses_or_refuses(fio_run.parse_log, text)
    if points is not None:
        finite_figures(points)
        finite_figures([s.model_dump() for s in fio_run.series([text], [text])])


@given(st.one_of(any_text(), mutated_text(lines_of(fixture_texts("fio/*_stdout.txt")))))
@example("Jobs: 1 (f=1): [w(1)][75.0%][w=1.2.3MiB/s][w=56.8k IOPS][eta 00m:01s]")
@example("Jobs: 1 (f=1): [w(1)][75.0%][w=" + "9" * 400 + "MiB/s][w=56.8k IOPS][eta 00m:01s]")
def test_fio_eta_line(line):
    live_figures_ok(fio_run.eta_figures(line))


# ---- iperf3 ------------------------------------------------------------------------------------------

IPERF_DOCS = fixture_docs("iperf3/*.json")


@given(st.one_of(any_text(), mutated_json_text(IPERF_DOCS), st.builds(dump, any_json())))
def test_iperf3_json(text):
    m = parses_or_refuses(iperf.parse_iperf_json, text)
    if m is not None:
        stored_measurement(m)


# ---- rados load-gen ----------------------------------------------------------------------------------

LOAD_GEN = fixture_texts("rados_load_gen/*.txt")


@given(st.one_of(any_text(), mutated_text(LOAD_GEN)))
@example("run length 2 seconds\nWRITE : oid=o off=0 len=99999999999999999999\nop 0 completed, throughput=1MB/sec\n"
         "waiting for all operations to complete\n")
def test_rados_load_gen_parse(text):
    m = parses_or_refuses(rados_load_gen.parse, text)
    if m is not None:
        stored_measurement(m)


# ---- rbd bench ---------------------------------------------------------------------------------------

RBD = fixture_texts("rbd_bench/*.txt")


@given(st.one_of(any_text(), mutated_text(RBD)))
@example("bench  type write io_size 4096 io_threads 16 bytes 1 pattern seq\n    0      5   1.0   4 KiB/s\n")
def test_rbd_bench_parse(text):
    m = parses_or_refuses(rbd_bench.parse, text)
    if m is not None:
        stored_measurement(m)


@given(st.one_of(any_text(), mutated_text(lines_of(RBD))), st.integers(0, 2**40))
@example("    2      5136   1.2.3   9.9 MiB/s", 4096)
def test_rbd_bench_live_line(line, io_size):
    live_figures_ok(rbd_bench.live_line(line, io_size))


# ---- ceph tell osd bench -------------------------------------------------------------------------------

OSD_DOCS = fixture_docs("osd_bench/**/*.json")


@given(st.one_of(any_text(), mutated_json_text(OSD_DOCS), st.builds(dump, any_json())))
@example('{"bytes_written": 1, "blocksize": ' + "9" * 400 + ', "elapsed_sec": 1, "bytes_per_sec": 1, "iops": 1}')
def test_osd_bench_json(text):
    m = parses_or_refuses(osd_bench.parse, text)
    if m is not None:
        stored_measurement(m)


@given(st.one_of(any_text(), mutated_text(fixture_texts("osd_bench/*err.json")),
                 st.builds("'count' values greater than {} for a block size".format, odd_number())))
@example("'count' values greater than " + "9" * 5000)
def test_osd_bench_limit(text):
    limit = osd_bench.limit_from_error(text)
    assert limit is None or (isinstance(limit, int) and limit >= 0)


# ---- cephbench-loadgen ---------------------------------------------------------------------------------

LOADGEN_DOCS = fixture_docs("loadgen/*.json") + fixture_docs("result-*.json", TESTDATA)


@given(st.one_of(any_text(), mutated_json_text(LOADGEN_DOCS), st.builds(dump, any_json())))
def test_loadgen_parse(text):
    m = parses_or_refuses(loadgen.parse, text)
    if m is not None:
        stored_measurement(m)


@given(st.lists(st.one_of(st.sampled_from(LOADGEN_DOCS), mutated_doc(LOADGEN_DOCS)), min_size=2, max_size=3))
def test_loadgen_merge(docs):
    parts = [m for d in docs if (m := parses_or_refuses(loadgen.parse, dump(d))) is not None]
    if len(parts) >= 2:
        m = parses_or_refuses(loadgen.merge, parts)
        if m is not None:
            stored_measurement(m)


@given(st.one_of(any_text(), st.builds("cephbench-loadgen: progress t={}s ops_per_s={} bytes_per_s={}".format,
                                       odd_number(), odd_number(), odd_number())))
@example("cephbench-loadgen: progress t=3s ops_per_s=1.2.3 bytes_per_s=6238208")
def test_loadgen_progress_line(line):
    live_figures_ok(loadgen.progress_figures(line))


# ---- /proc/stat --------------------------------------------------------------------------------------

PROC_STAT = fixture_texts("proc-stat/*.txt")
CPUACCT_LINES = [ln for t in fixture_texts("cpuacct/*.txt") for ln in t.splitlines()[1:]]


@given(st.one_of(any_text(), mutated_text(PROC_STAT)))
@example("cpu  1 2 3 4 5 6 7 ²\n")
def test_proc_stat(text):
    times = parses_or_refuses(hostload.parse_proc_stat, text)
    if times is not None:
        assert 0 <= times.busy <= times.total and 0 <= times.iowait <= times.total


@st.composite
def watch_streams(draw):
    """What WATCH_SH prints: nproc, then /proc/stat's first line or a cgroup's reading once a second (mutated,
    possibly cut, the two kinds mixed)."""
    firsts = [t.splitlines()[0] for t in PROC_STAT] + CPUACCT_LINES
    lines = ["2", *draw(st.lists(st.sampled_from(firsts), min_size=0, max_size=4))]
    return draw(mutated_text(["\n".join(lines) + "\n"]))


@given(st.one_of(any_text(), watch_streams()))
@example("2\ncpu  1 2 3 4 5 6 7 8\ncpu  " + "9" * 400 + " 2 3 4 5 6 7 8\n")
@example("²\ncpu  1 2 3 4 5 6 7 8\ncpu  2 2 3 4 5 6 7 8\n")
def test_proc_stat_stream(text):
    load = hostload.load_from_stream(text, "host", "OSD host")
    if load is not None:
        finite_figures(load)
        assert load.cpus >= 1


# ---- lsblk / blkid / mounts --------------------------------------------------------------------------

LSBLK_DOCS = fixture_docs("lsblk/*.json")
BLKID = fixture_texts("lsblk/*.txt") + ["DEVNAME=/dev/vdb\nPTUUID=1234\nPTTYPE=gpt\n", "DEVNAME=/dev/vdb\nTYPE=xfs\n"]


@given(st.one_of(any_text(), mutated_json_text(LSBLK_DOCS), st.builds(dump, any_json())),
       st.integers(-1, 8), st.one_of(any_text(), mutated_text(BLKID)), any_text(), any_text())
def test_lsblk_blkid(lsblk_text, blkid_rc, blkid_out, mounts, swaps):
    lsblk = parses_or_refuses(disk_baseline.parse_lsblk, lsblk_text)
    if lsblk is not None:
        problems = parses_or_refuses(disk_baseline.raw_device_problems, lsblk, blkid_rc, blkid_out, 2**30,
                                     mounts, swaps)
        assert problems is None or all(isinstance(p, str) and p for p in problems)


@given(st.one_of(any_text(), mutated_text(["sysfs /sys sysfs rw 0 0\n/dev/vda1 / ext4 rw 0 0\n"
                                           "tmpfs /tmp tmpfs rw 0 0\n/dev/vdb /mnt/with\\040space xfs rw 0 0\n"])))
def test_mounts(text):
    fstype = disk_baseline._fs_type("/tmp", text)
    assert fstype is None or isinstance(fstype, str)


@given(st.one_of(any_text(), mutated_text(fixture_texts("disk-probe/*.txt"))))
def test_disk_probe(text):
    """What the path probe printed on a host (over ssh it could be anything): facts or a ParseError."""
    probe = parses_or_refuses(disk_baseline.parse_probe, text)
    if probe is not None:
        assert all(f.free is None or f.free >= 0 for f in probe.paths)


# ---- the importer: format detection, then each driver's parser ----------------------------------------

ALL_TEXTS = RADOS + RBD + fixture_texts("fio/*.json") + fixture_texts("iperf3/*.json") + \
    fixture_texts("loadgen/*.json") + fixture_texts("osd_bench/**/*.json")


@pytest.fixture(scope="module")
def import_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz-import")


@given(data=st.one_of(st.binary(), mutated_text(ALL_TEXTS).map(str.encode),
                      mutated_json_text(FIO_DOCS + IPERF_DOCS + LOADGEN_DOCS).map(str.encode)))
def test_import_read_file(import_dir, data):
    path = import_dir / "output.txt"
    path.write_bytes(data)
    assert importer.detect(data.decode("utf-8", errors="replace")) in (
        None, "loadgen", "fio", "iperf3", "rados bench json", "osd bench", "rbd bench", "rados bench")
    parsed = parses_or_refuses(importer.read_file, path, {}, allowed=(UserError,))
    if parsed is not None:
        stored_measurement(parsed.measurement)
        assert parsed.kind and parsed.format
        # the date is one the report and the history can print (1e30 was an OverflowError there)
        assert format_time(parsed.measured_unix)[:4].isdigit(), parsed.measured_unix


# ---- Prometheus's HTTP API answers ----------------------------------------------------------------------

PROM_DOCS = fixture_docs("prometheus/prom2.42_*.json")


@given(st.one_of(any_text(), mutated_json_text(PROM_DOCS)))
@example('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"NaN"]]}]}}')
@example('{"status":"success","data":{"activeTargets":[{"labels":[],"scrapeInterval":"1s"}]}}')
def test_prometheus_answers(text):
    """An answer (or anything a proxy in the way returns) is series of finite values, or one line refusing it."""
    series = parses_or_refuses(promanswer.parse_answer, text)
    for s in series or []:
        assert all(math.isfinite(t) and math.isfinite(v) for t, v in s.values)
    intervals = parses_or_refuses(promanswer.scrape_intervals, text)
    assert all(v > 0 for v in (intervals or {}).values())
