"""history: the SQLite catalog of runs, filters, trends from stored figures, missing run directories."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from clirun import cephbench

from cephbench.core.errors import UserError
from cephbench.rundirs.history import Filters, History, ceph_version, default_path, parse_date
from runfactory import fixture_measurement, repeats, write_run

W4M = {"pool": "rep", "object_size": 4194304, "concurrency": 16, "phase": "write", "duration_s": 5.0}
FSID_A, FSID_B = "5e1f0c6a-0000-4000-8000-00000000000a", "9b2d7e10-0000-4000-8000-00000000000b"
DAY = 86400.0
T0 = 1_790_000_000.0        # 2026-09-21


def cluster(fsid: str, version: str) -> dict:
    return {"status": {"fsid": fsid},
            "versions": {"mon": {f"ceph version {version} (abc) pacific (stable)": 3},
                         "overall": {f"ceph version {version} (abc) pacific (stable)": 6}}}


@pytest.fixture
def catalog(tmp_path):
    """Three runs of one 4 MiB write, 5 repeats each, on two clusters and versions, a day apart; B is 20% faster."""
    w = fixture_measurement()
    runs = []
    for i, (name, factor, fsid, ver) in enumerate([("r1", 1.0, FSID_A, "16.2.14"), ("r2", 1.2, FSID_A, "16.2.15"),
                                                   ("r3", 1.1, FSID_B, "17.2.7")]):
        runs.append(write_run(tmp_path / name, [("rados_bench", W4M, repeats(w, factor, offset=i))],
                              {"suite_name": "quick" if i < 2 else "sweep", "started_unix": T0 + i * DAY,
                               "cluster": cluster(fsid, ver)}))
    h = History.open(tmp_path / "h.sqlite")
    for r in runs:
        h.add(r)
    yield h, runs
    h.close()


def test_ceph_version_from_run_json():
    assert ceph_version({"cluster": cluster(FSID_A, "16.2.15")}) == "16.2.15"
    assert ceph_version({"cluster": {"versions": {"error": "timed out"}}}) is None
    assert ceph_version({}) is None


def test_list_and_filters(catalog):
    h, runs = catalog
    assert [r.path for r in h.runs()] == [str(p.resolve()) for p in runs]
    assert [r.suite for r in h.runs(Filters(suite="sweep"))] == ["sweep"]
    assert len(h.runs(Filters(fsid=FSID_A[:8]))) == 2
    assert [r.ceph_version for r in h.runs(Filters(ceph_version="16.2"))] == ["16.2.14", "16.2.15"]
    assert [r.ceph_version for r in h.runs(Filters(ceph_version="17"))] == ["17.2.7"]
    assert len(h.runs(Filters(since=T0 + DAY / 2))) == 2
    assert len(h.runs(Filters(until=T0 + DAY / 2))) == 1
    day0 = "2026-09-21"
    assert parse_date(day0, end=True) - parse_date(day0) == DAY
    with pytest.raises(UserError, match="not a date"):
        parse_date("yesterday")


def test_trend_oldest_first_and_survives_deleted_runs(catalog):
    h, runs = catalog
    pts = h.trend("bw", "rados_bench phase=write object_size=4MiB")
    assert [p.run.ceph_version for p in pts] == ["16.2.14", "16.2.15", "17.2.7"]
    assert all(len(p.values) == 5 for p in pts)
    assert pts[1].median / pts[0].median == pytest.approx(1.2, rel=0.02)
    shutil.rmtree(runs[1])
    listed = h.runs()
    assert [r.missing for r in listed] == [False, True, False]
    again = h.trend("bytes_per_s", "4194304-16-write")          # a part of the test id
    assert [p.median for p in again] == [p.median for p in pts]   # from the catalog, not the deleted directory
    assert h.trend("p99", "write") == []                      # rados bench gives no p99
    assert len(h.trend("lat", "write", Filters(fsid=FSID_B))) == 1
    with pytest.raises(UserError, match="unknown metric"):
        h.trend("speed", "write")


def test_adding_again_replaces_rows(catalog):
    h, runs = catalog
    h.add(runs[0])
    assert len(h.runs()) == 3
    assert len(h.trend("iops", "write", Filters(ceph_version="16.2.14"))[0].values) == 5


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.delenv("CEPHBENCH_HISTORY", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "cephbench" / "history.sqlite"
    monkeypatch.setenv("CEPHBENCH_HISTORY", str(tmp_path / "elsewhere.sqlite"))
    assert default_path() == tmp_path / "elsewhere.sqlite"


def test_not_a_catalog(tmp_path):
    bad = tmp_path / "h.sqlite"
    bad.write_text("not sqlite at all, just text " * 100)
    with pytest.raises(UserError, match="cannot be used"):
        History.open(bad)


# ---- CLI ---------------------------------------------------------------------------------------

def cli(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return cephbench(*args, env={"CEPHBENCH_HISTORY": str(tmp_path / "cli.sqlite")})


def test_cli_history(tmp_path, catalog):
    _, runs = catalog
    res = cli(tmp_path, "history", "add", *map(str, runs))
    assert res.returncode == 0, res.stderr
    shutil.rmtree(runs[2])
    res = cli(tmp_path, "history", "--ceph-version", "17")
    assert res.returncode == 0 and "missing" in res.stdout and "17.2.7" in res.stdout and "16.2.14" not in res.stdout
    res = cli(tmp_path, "history", "list", "--since", "2026-09-22", "--until", "2026-09-22")
    assert res.returncode == 0 and "16.2.15" in res.stdout and "16.2.14" not in res.stdout and "17.2" not in res.stdout
    res = cli(tmp_path, "history", "--trend", "bytes_per_s", "--test", "rados_bench phase=write")
    assert res.returncode == 0, res.stderr
    # the terminal's plain table (report/textout.py): 2 spaces between columns, a row per run from its date
    rows = [re.split(r"\s{2,}", ln.strip()) for ln in res.stdout.splitlines() if re.match(r"^\d{4}-\d\d-\d\d ", ln)]
    assert [(r[1], r[2]) for r in rows] == [("r1", "16.2.14"), ("r2", "16.2.15"), ("r3", "17.2.7")]
    assert rows[1][6].startswith(("+19.", "+20.")) and rows[2][7] == "missing"


def _one_line_exit_2(res):
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    return res.stderr


def test_cli_history_bad_inputs(tmp_path, catalog):
    _, runs = catalog
    (tmp_path / "empty").mkdir()
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "run.json").write_text(json.dumps({"schema_version": 2}))
    assert "no run.json" in _one_line_exit_2(cli(tmp_path, "history", "add", str(tmp_path / "empty")))
    assert "schema 2" in _one_line_exit_2(cli(tmp_path, "history", "add", str(newer)))
    assert "no runs catalogued yet" in _one_line_exit_2(cli(tmp_path, "history", "--trend", "bw", "--test", "x"))
    res = cli(tmp_path, "history")
    assert res.returncode == 0 and "no runs catalogued yet" in res.stdout
    assert not (tmp_path / "cli.sqlite").exists()                 # looking creates no catalog
    # a --db typed by hand that names nothing is a mistake, not an empty history
    for missing in (tmp_path / "nope.sqlite", Path("/nonexistent/h.db")):
        err = _one_line_exit_2(cli(tmp_path, "history", "--db", str(missing), "list"))
        assert "--db" in err and str(missing) in err and not missing.exists()
    assert "not a date" in _one_line_exit_2(cli(tmp_path, "history", "--since", "yesterday"))
    with open(runs[0] / "results.jsonl", "a") as f:
        f.write("{not json\n")
    res = cli(tmp_path, "history", "add", str(runs[0]))
    assert res.returncode == 0 and "results.jsonl:6: unreadable result skipped" in res.stderr
    assert "catalogued" in res.stdout and "Traceback" not in res.stderr
    assert "no catalogued result" in _one_line_exit_2(
        cli(tmp_path, "history", "--trend", "iops", "--test", "nothing-like-this"))


# ---- a trend never mixes configurations ----------------------------------------------------------

def _profiled(size: int | None = None, ec: tuple[int, int] | None = None, **extra) -> dict:
    prof = {"type": "erasure", "k": ec[0], "m": ec[1], "plugin": "jerasure", "pg_num": 32} if ec else \
        {"type": "replicated", "size": size, "min_size": None, "pg_num": 32}
    return {**W4M, "pool_profile": prof, **extra}


@pytest.fixture
def mixed(tmp_path):
    """Issue 18: replica 3 and replica 2 runs of one write, interleaved by day; replica 2 is ~40% faster. Then an
    EC 2+1 run, and a replica 3 run of a variant."""
    w = fixture_measurement()
    plan = [("d0-rep3", _profiled(3), 1.0, None), ("d1-rep2", _profiled(2), 1.64, None),
            ("d2-rep3", _profiled(3), 1.1, None), ("d3-rep2", _profiled(2), 1.8, None),
            ("d4-ec21", _profiled(ec=(2, 1)), 0.7, None),
            ("d5-rep3-tuned", _profiled(3), 1.2, "tuned")]          # a variant is the test's, not a parameter
    runs = [write_run(tmp_path / name, [("rados_bench", params, repeats(w, f, n=3), variant)],
                      {"started_unix": T0 + i * DAY, "cluster": cluster(FSID_A, "16.2.15")})
            for i, (name, params, f, variant) in enumerate(plan)]
    env = {"CEPHBENCH_HISTORY": str(tmp_path / "mixed.sqlite")}
    assert cephbench("history", "add", *runs, env=env).returncode == 0
    return env


def _tables(stdout: str) -> list[list[list[str]]]:
    """Each printed table's rows, as cells."""
    tables: list[list[list[str]]] = []
    for ln in stdout.splitlines():
        if "oldest first" in ln:
            tables.append([])
        elif re.match(r"^\d{4}-\d\d-\d\d ", ln):                     # a row: the terminal's plain table
            tables[-1].append(re.split(r"\s{2,}", ln.strip()))
    return tables


def test_trend_is_one_series_per_pool_profile_and_variant(mixed):
    res = cephbench("history", "--trend", "bw", "--test", "rados_bench phase=write", env=mixed)
    assert res.returncode == 0, res.stderr
    tables = _tables(res.stdout)
    runs = [[row[1] for row in t] for t in tables]
    assert runs == [["d0-rep3", "d2-rep3"], ["d1-rep2", "d3-rep2"], ["d4-ec21"], ["d5-rep3-tuned"]]
    # each "vs first" against its own configuration's first run: never rep2 against rep3
    assert [[row[6] for row in t] for t in tables][:2] == [["+0.0%", "+10.0%"], ["+0.0%", "+9.8%"]]
    assert "configuration 2 of 4: pool profile replicated size 2 · variant none" in res.stdout
    assert "configuration 4 of 4: pool profile replicated size 3 · variant tuned" in res.stdout
    assert "4 configurations match 'rados_bench phase=write' (they differ in pool profile, variant)" in res.stdout


def test_the_flags_a_mixed_trend_names_pick_one_series(mixed):
    res = cephbench("history", "--trend", "bw", "--test", "rados_bench phase=write", env=mixed)
    hint = next(ln for ln in res.stdout.splitlines() if "To follow one, give" in ln)
    assert "--pool-profile 'replicated size 3'" in hint and "--variant none" in hint
    picked = cephbench("history", "--trend", "bw", "--test", "rados_bench phase=write",
                       "--pool-profile", "replicated size 3", "--variant", "none", env=mixed)
    assert picked.returncode == 0 and "configurations match" not in picked.stdout
    assert [[row[1] for row in t] for t in _tables(picked.stdout)] == [["d0-rep3", "d2-rep3"]]
    for spelling in ("rep2", "size 2", "Replicated size 2"):
        res = cephbench("history", "--trend", "bw", "--test", "write", "--pool-profile", spelling, env=mixed)
        assert [[row[1] for row in t] for t in _tables(res.stdout)] == [["d1-rep2", "d3-rep2"]], spelling
    res = cephbench("history", "--trend", "bw", "--test", "write", "--pool-profile", "ec2+1", env=mixed)
    assert [[row[1] for row in t] for t in _tables(res.stdout)] == [["d4-ec21"]]


def test_a_trend_never_mixes_clusters(tmp_path):
    w = fixture_measurement()
    runs = [write_run(tmp_path / f"c{i}", [("rados_bench", W4M, repeats(w, 1.0 + i / 10, n=3))],
                      {"started_unix": T0 + i * DAY, "cluster": cluster(fsid, "16.2.15")})
            for i, fsid in enumerate([FSID_A, FSID_B, FSID_A])]
    env = {"CEPHBENCH_HISTORY": str(tmp_path / "c.sqlite")}
    cephbench("history", "add", *runs, env=env)
    res = cephbench("history", "--trend", "iops", "--test", "write", env=env)
    assert [[row[1] for row in t] for t in _tables(res.stdout)] == [["c0", "c2"], ["c1"]]
    assert f"configuration 2 of 2: cluster {FSID_B[:8]}" in res.stdout and f"--fsid {FSID_A[:8]}" in res.stdout
    res = cephbench("history", "--trend", "iops", "--test", "write", "--cluster", FSID_B[:8], env=env)
    assert [[row[1] for row in t] for t in _tables(res.stdout)] == [["c1"]]


def test_ignore_lets_a_changed_duration_be_one_series(tmp_path):
    w = fixture_measurement()
    runs = [write_run(tmp_path / f"d{i}", [("rados_bench", {**W4M, "duration_s": d}, repeats(w, 1.0, n=3))],
                      {"started_unix": T0 + i * DAY, "cluster": cluster(FSID_A, "16.2.15")})
            for i, d in enumerate([5.0, 30.0])]
    env = {"CEPHBENCH_HISTORY": str(tmp_path / "d.sqlite")}
    cephbench("history", "add", *runs, env=env)
    res = cephbench("history", "--trend", "iops", "--test", "write", env=env)
    assert len(_tables(res.stdout)) == 2 and "(they differ in duration_s)" in res.stdout and "--ignore KEY" in res.stdout
    res = cephbench("history", "--trend", "iops", "--test", "write", "--ignore", "duration_s", env=env)
    assert [[row[1] for row in t] for t in _tables(res.stdout)] == [["d0", "d1"]]


def test_mixed_trend_bad_inputs(mixed):
    base = ("history", "--trend", "bw", "--test", "write")
    err = _one_line_exit_2(cephbench(*base, "--pool-profile", "triple", env=mixed))
    assert "--pool-profile: 'triple' is not a pool profile (use e.g. 'replicated size 3' or 'EC 2+1')" in err
    err = _one_line_exit_2(cephbench(*base, "--ignore", "pool_profile", env=mixed))
    assert "--ignore: a trend never mixes configurations: pool_profile cannot be ignored (pick one with " \
           "--pool-profile)" in err
    assert "--variant" in _one_line_exit_2(cephbench(*base, "--ignore", "variant", env=mixed))
    assert "--pool-profile" in _one_line_exit_2(cephbench("history", "--pool-profile", "rep3", env=mixed))
