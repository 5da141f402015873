"""import: format from the content, params inferred, labels, run directory with sources; bad input writes nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from clirun import cephbench

from conftest import FIXTURES, REPO
from cephbench.analysis.compare import compare_runs, load_run
from cephbench.core.errors import UserError
from cephbench.rundirs.importer import detect, import_files, parse_labels, read_file
from cephbench.core.results import RunDir

RB = FIXTURES / "rados_bench"
OLD_W, OLD_R = RB / "seed000_ceph0.48_write_4M_rep2.txt", RB / "seed000_ceph0.48_seq_4M_rep2.txt"
NEW_W, NEW_R = RB / "ceph16.2.15_write_4M.txt", RB / "ceph16.2.15_seq_4M.txt"


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return cephbench(*args, env=env)


def test_old_and_new_rados_bench_formats(tmp_path):
    old = read_file(OLD_W)
    assert (old.format, old.kind) == ("rados bench", "rados_bench")
    assert old.params == {"phase": "write", "object_size": 4194304}          # the seed excerpt has no header
    assert old.measurement.bytes_per_s == pytest.approx(55.723 * 2**20)
    assert old.measurement.ops_per_s == pytest.approx(4200 / 301.488871)    # old format prints no IOPS
    new = read_file(NEW_W)
    assert new.params == {"phase": "write", "object_size": 4194304, "concurrency": 16}
    assert int(new.measurement.ops_per_s) == 35 and len(new.measurement.timeseries) == 5
    r = read_file(OLD_R, {"phase": "seq", "ceph_version": "0.48"})
    assert r.params["phase"] == "seq" and r.measurement.op == "seq" and r.params["ceph_version"] == "0.48"
    assert read_file(OLD_R).params["phase"] == "read"       # seq and rand print the same summary
    assert read_file(OLD_W, {"phase": "seq"}).params["phase"] == "write"   # a phase label never renames a write


def test_import_old_and_new_versions_into_comparable_runs(tmp_path):
    rd_old, res_old = import_files([OLD_W, OLD_R], tmp_path / "old", parse_labels(["ceph_version=0.48",
                                                                                   "phase=seq"]))
    rd_new, _ = import_files([NEW_W, NEW_R], tmp_path / "new", parse_labels(["ceph_version=16.2.15", "phase=seq"]))
    meta = rd_old.meta()
    assert meta["imported"] is True and meta["schema_version"] == 1
    assert [s["sha256"] for s in meta["sources"]] == [hashlib.sha256(p.read_bytes()).hexdigest()
                                                       for p in (OLD_W, OLD_R)]
    assert meta["sources"][0]["path"] == str(OLD_W.absolute()) and meta["sources"][0]["format"] == "rados bench"
    assert meta["cluster"]["versions"]["overall"] == {"ceph version 0.48": 1}
    results, bad = RunDir.open(rd_old.path).results()
    assert not bad and [r.test.params["phase"] for r in results] == ["write", "seq"]
    assert (rd_old.path / results[0].raw[0]).read_bytes() == OLD_W.read_bytes()
    pair = compare_runs([load_run(rd_old.path), load_run(rd_new.path)], match_on=["phase", "object_size"])[0]
    write = next(t for t in pair.tests if t.test.params["phase"] == "write")
    bw = next(d for d in write.metrics if d.metric.name == "bytes_per_s")
    assert bw.delta_pct == pytest.approx((140.784 / 55.723 - 1) * 100)
    assert bw.sig.text() == "~"                             # one sample each: cannot tell


def test_every_format_is_told_from_the_content(tmp_path):
    cases = {
        FIXTURES / "fio" / "fio3.33_ceph16.2.15_rados_write_4M_qd16.json": ("fio", "fio_rados"),
        FIXTURES / "fio" / "fio3.33_psync_read_1M_note_before_json.txt": ("fio", "fio"),
        FIXTURES / "rbd_bench" / "ceph16.2.15_readwrite70_rand_4K.txt": ("rbd bench", "rbd_bench"),
        RB / "ceph16.2.15_json_write_4M.txt": ("rados bench json", "rados_bench"),
        RB / "ceph16.2.15_write_4K_json.txt": ("rados bench json", "rados_bench"),
        FIXTURES / "iperf3" / "iperf3.12_loopback_2streams.json": ("iperf3", "net_baseline"),
        REPO / "loadgen" / "testdata" / "result-rgw-16.2.15-swift-get-open.json": ("loadgen", "rgw"),
    }
    for src, want in cases.items():
        renamed = tmp_path / "output.dat"               # the name says nothing
        shutil.copyfile(src, renamed)
        p = read_file(renamed)
        assert (p.format, p.kind) == want, src
    fio = read_file(FIXTURES / "fio" / "fio3.33_ceph16.2.15_rbd_randrw70_4K_qd8_2images.json")
    assert fio.params == {"phase": "randrw", "block_size": 4096, "iodepth": 8, "jobs": 2, "rwmixread": 70}
    rbd = read_file(FIXTURES / "rbd_bench" / "ceph16.2.15_readwrite70_rand_4K.txt")
    assert rbd.params == {"phase": "randrw", "io_size": 4096, "io_threads": 16, "io_pattern": "rand",
                          "rw_mix_read": 70}
    lg = read_file(REPO / "loadgen" / "testdata" / "result-rgw-16.2.15-swift-get-open.json")
    assert lg.params["protocol"] == "swift" and lg.params["phase"] == "get" and lg.params["object_size"] == 4096
    assert read_file(FIXTURES / "iperf3" / "iperf3.12_loopback_2streams.json").params == {
        "pattern": "pair", "streams": 2, "sender": "127.0.0.1", "receivers": ["127.0.0.1"]}


@pytest.mark.parametrize("text,reason", [
    ("", "the file is empty"),
    ("hello world\n", "first line: 'hello world'"),
    ('{"blockdevices": []}', "a JSON document with keys blockdevices"),
])
def test_unknown_input(tmp_path, text, reason):
    f = tmp_path / "x.txt"
    f.write_text(text)
    assert detect(text) is None
    with pytest.raises(UserError) as exc:
        read_file(f)
    assert exc.value.one_line() == f"{f}: not a rados bench, fio, rbd bench, iperf3, loadgen or osd bench output ({reason})"


def test_truncated_inputs_are_refused(tmp_path):
    rados = NEW_W.read_text()
    (tmp_path / "rados.txt").write_text(rados[:rados.index("Total time run")])
    fio = (FIXTURES / "fio" / "fio3.33_libaio_write_4M_qd1.json").read_text()
    (tmp_path / "fio.json").write_text(fio[:len(fio) // 2])
    for name, what in (("rados.txt", "looks like rados bench but: no rados bench summary"),
                       ("fio.json", "looks like fio but: not fio JSON output")):
        with pytest.raises(UserError, match=what):
            read_file(tmp_path / name)
    with pytest.raises(UserError, match="unable to connect"):
        read_file(FIXTURES / "iperf3" / "iperf3.12_error_connection_refused.json")


def test_labels():
    assert parse_labels(["ceph_version=16.2.15", "concurrency=16", "object_size=4MiB", "duration_s=30s",
                         "x=1.5"]) == {"ceph_version": "16.2.15", "concurrency": 16, "object_size": 4194304,
                                       "duration_s": 30.0, "x": 1.5}
    with pytest.raises(UserError, match="not key=value"):
        parse_labels(["novalue"])


def test_repeats_of_one_configuration_are_numbered(tmp_path):
    rd, results = import_files([NEW_W, NEW_W, NEW_W], tmp_path / "r", {})
    assert [r.test.repeat for r in results] == [1, 2, 3]
    assert len({r.test.match_key() for r in results}) == 1 and len({r.test.id for r in results}) == 3


# ---- CLI ------------------------------------------------------------------------------------------

def test_cli_import_then_bad_file_writes_nothing(tmp_path):
    env = {"CEPHBENCH_HISTORY": str(tmp_path / "h.sqlite")}
    res = cli("import", str(OLD_W), str(NEW_W), "--out", str(tmp_path / "ok"), "--label", "site=lab", env=env)
    assert res.returncode == 0, res.stderr
    assert "imported 2 file(s)" in res.stdout and (tmp_path / "ok" / "run.json").is_file()
    assert (tmp_path / "h.sqlite").is_file()                              # catalogued on import
    bad = tmp_path / "bad.txt"
    bad.write_text("Total time run: 3\n")                               # a summary cut after its first line
    res = cli("import", str(NEW_W), str(bad), "--out", str(tmp_path / "no"), env=env)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines() == [
        f"cephbench: {bad}: not a rados bench, fio, rbd bench, iperf3, loadgen or osd bench output (looks like rados bench "
        "but: no rados bench summary in the output (last line: 'Total time run: 3'))"]
    assert not (tmp_path / "no").exists()


def test_rbd_bench_random_pattern_imports_as_randwrite_and_randread(tmp_path):
    rb = FIXTURES / "rbd_bench"
    w = read_file(rb / "ceph16.2.15_write_rand_4K.txt")     # "bench  type write ... pattern random"
    assert w.params["phase"] == "randwrite" and w.params["io_pattern"] == "rand" and w.measurement.op == "randwrite"
    assert read_file(rb / "ceph16.2.15_read_rand_4K.txt").params["phase"] == "randread"
    seq = read_file(rb / "ceph16.2.15_read_seq_4M.txt")      # "pattern sequential": rbd bench's io type, as in a suite
    assert seq.params["phase"] == "read" and seq.params["io_pattern"] == "seq"
    rd, results = import_files([rb / "ceph16.2.15_write_rand_4K.txt"], tmp_path / "imp", {})
    assert results[0].test.id == "001-rbd_bench-randwrite-4KiB-t16"
    from cephbench.kinds import direction_of
    assert direction_of("rbd_bench", "randwrite") == "write" and direction_of("rbd_bench", "randread") == "read"


def test_rados_bench_json_imports_like_its_text(tmp_path):
    """`rados bench --format json` (Ceph 16.2.15): the same params as the text output gives, figures in base units."""
    w = read_file(RB / "ceph16.2.15_json_write_4M.txt")
    assert (w.format, w.kind) == ("rados bench json", "rados_bench")
    assert w.params == {"phase": "write", "object_size": 4194304, "concurrency": 16}
    assert w.measurement.bytes_per_s == pytest.approx(54.280508 * 2**20) and len(w.measurement.timeseries) == 5
    r = read_file(RB / "ceph16.2.15_json_rand_4K.txt", {"phase": "rand"})
    assert r.params == {"phase": "rand", "object_size": 4096, "concurrency": 16} and r.measurement.op == "rand"
    assert read_file(RB / "ceph16.2.15_json_seq_4K.txt").params["phase"] == "read"   # seq or rand: not in the JSON
    res = cli("import", RB / "ceph16.2.15_json_write_4K.txt", RB / "ceph16.2.15_json_rand_4K.txt", "--label",
              "phase=rand", "--out", tmp_path / "imp", "--db", tmp_path / "h.db")
    assert res.returncode == 0, res.stderr
    results, bad = RunDir.open(tmp_path / "imp").results()
    assert not bad and [r.test.params["phase"] for r in results] == ["write", "rand"]


def test_a_broken_rados_bench_json_is_one_line(tmp_path):
    f = tmp_path / "cut.json"
    f.write_text((RB / "ceph16.2.15_json_write_4M.txt").read_text()[:400])
    res = cli("import", f, "--out", tmp_path / "imp")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "looks like rados bench json but" in res.stderr and not (tmp_path / "imp").exists()


# ---- when an imported result was measured --------------------------------------------------------

def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize("name, measured", [
    # rados bench's first dated line, 20 s into the run
    ("rados_bench/ceph16.2.15_write_64K_22s_dated.txt", _utc("2026-11-23T07:24:49.097810")),
    ("fio/fio3.33_ceph16.2.15_rados_write_4M_qd16.json", 1795238960.0),           # fio's "timestamp"
    ("iperf3/iperf3.12_loopback_1stream.json", 1795239101.0),                     # start.timestamp.timesecs
    ("loadgen/loadgen0.1_rgw16.2.15_s3_put_4K_t8.json", 1795389976.476867752),    # start_unix_ns
    ("rbd_bench/ceph16.2.15_write_rand_4K_sigint.txt", _utc("2026-11-21T05:31:53.711")),  # a Ceph log line
])
def test_the_date_in_the_output_is_when_it_was_measured(tmp_path, name, measured):
    src = tmp_path / Path(name).name
    shutil.copyfile(FIXTURES / name, src)
    os.utime(src, (T_FILE, T_FILE))                  # a copy's file time says nothing: the content wins
    p = read_file(src)
    assert (p.date_from, p.measured_unix) == ("content", pytest.approx(measured, abs=0.001))
    assert p.notes == []


T_FILE = _utc("2013-05-02T10:00:00")


def test_no_date_in_the_output_is_the_file_time_said_so_and_date_wins(tmp_path):
    src = tmp_path / "old-write.txt"
    shutil.copyfile(OLD_W, src)
    os.utime(src, (T_FILE, T_FILE))
    p = read_file(src)
    assert (p.date_from, p.measured_unix) == ("file time", T_FILE)
    assert p.notes == ["no date in the output: dated by the file's modification time"]
    rd, results = import_files([src], tmp_path / "run", {})
    assert rd.meta()["started_unix"] == T_FILE and results[0].started_unix == T_FILE
    assert rd.meta()["sources"][0]["date_from"] == "file time"
    rd, results = import_files([src], tmp_path / "dated", {}, date=_utc("2012-07-01T12:00:00"))
    assert rd.meta()["started_unix"] == _utc("2012-07-01T12:00:00") and results[0].notes[1:] == []
    assert rd.meta()["sources"][0]["date_from"] == "--date"


def test_history_orders_imports_by_when_they_were_measured(tmp_path):
    """Imported today, measured in 2012 and 2026: the 2012 one comes first, whatever the order of the imports."""
    env = {"CEPHBENCH_HISTORY": str(tmp_path / "h.sqlite")}
    new = tmp_path / "new.txt"
    shutil.copyfile(FIXTURES / "rados_bench/ceph16.2.15_write_64K_22s_dated.txt", new)
    res = cephbench("import", new, "--out", tmp_path / "i-new", env=env)
    assert res.returncode == 0, res.stderr
    assert "measured 2026-11-23 07:24 UTC, from the output" in res.stdout
    res = cephbench("import", OLD_W, "--out", tmp_path / "i-old", "--date", "2012-07-01", env=env)
    assert res.returncode == 0 and "measured 2012-07-01 00:00 UTC, from --date" in res.stdout
    res = cephbench("history", env=env)
    rows = [ln for ln in res.stdout.splitlines() if "i-old" in ln or "i-new" in ln]
    assert ["i-old" in rows[0], "i-new" in rows[1]] == [True, True], res.stdout
    assert rows[0].startswith("2012-07-01 00:00") and rows[1].startswith("2026-11-23 07:24")
    res = cephbench("history", "--trend", "bw", "--test", "write", "--ignore", "concurrency", env=env)
    assert res.returncode == 0


@pytest.mark.parametrize("date, expected", [
    ("yesterday", "--date: 'yesterday' is not a date (use YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC unless an "
                  "offset such as +02:00 follows)"),
    ("2012-13-01", "--date: '2012-13-01' is not a date"),
    ("2999-01-01", "--date: '2999-01-01' is in the future (give the date the files were measured)"),
])
def test_a_bad_date_is_one_line(tmp_path, date, expected):
    res = cephbench("import", OLD_W, "--out", tmp_path / "x", "--date", date,
                    env={"CEPHBENCH_HISTORY": str(tmp_path / "h.sqlite")})
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and expected in res.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("release", ["reef-18.2.7", "tentacle-20.2.4"])
def test_each_releases_own_outputs_import_osd_bench_too(tmp_path, release):
    """Issue 27: import reads every kind's output of each release; `ceph tell osd.N bench` JSON was refused."""
    srcs = sorted((FIXTURES / "releases" / release).iterdir())
    parsed = {p.name: read_file(p) for p in srcs}
    osd = parsed["osd-bench-4M-osd0.json"]
    assert (osd.format, osd.kind) == ("osd bench", "osd_bench")
    assert osd.params == {"total": 64 * 2**20, "block_size": 4 * 2**20}
    assert {p.kind for p in parsed.values()} == {"rados_bench", "rbd_bench", "fio_rbd", "fio_rados", "net_baseline",
                                                 "rgw", "osd_bench"}
    _, results = import_files(srcs, tmp_path / "run", {"ceph_version": release.split("-")[1]})
    assert len(results) == len(srcs) and all(r.status == "ok" for r in results)
