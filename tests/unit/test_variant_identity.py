"""Variants (and a run's release) are part of a configuration's identity in export, history, compare and the
catalog (issue 25, item 3): a real variant run (tests/fixtures/report/ceph16.2.15_variants_throttle) and run
directories of real measurements (tests/unit/runfactory.py)."""

from __future__ import annotations

import csv
import io
import json
import shlex

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families

from clirun import cephbench
from conftest import FIXTURES
from runfactory import copy_fixture_run, fixture_measurement, repeats, write_run
from cephbench.analysis.compare import compare_runs, load_run
from cephbench.rundirs.export import export
from cephbench.report import compare_render

VARIANTS = FIXTURES / "report" / "ceph16.2.15_variants_throttle"
W4M = {"pool": "rep", "object_size": 4194304, "concurrency": 16, "phase": "write", "duration_s": 5.0}
DISK = {"paths": "lab-osds", "hosts": None, "size": 134217728, "runtime_s": 2.0, "allow_raw_device": False,
        "pattern": "write-4MiB"}


@pytest.fixture
def variant_run(tmp_path):
    return copy_fixture_run(VARIANTS, tmp_path / "variants")


def _variants_by_test(path):
    return {json.loads(line)["test"]["id"]: json.loads(line)["test"]["variant"]
            for line in (path / "results.jsonl").read_text().splitlines()}


def test_every_export_carries_each_tests_variant(variant_run):
    want = _variants_by_test(variant_run)
    assert set(want.values()) == {"default", "throttle-16KiB"}
    rows = list(csv.DictReader(io.StringIO(export(variant_run, "csv"))))
    assert {r["test"]: r["variant"] for r in rows} == want
    assert {r["test"]: r["variant"] for r in json.loads(export(variant_run, "json"))} == want
    series = [s for f in openmetrics_families(export(variant_run, "openmetrics")) for s in f.samples
              if s.name == "cephbench_bandwidth_bytes_per_second"]
    assert {s.labels["test"]: s.labels["variant"] for s in series} == want


def test_a_runs_release_is_exported_when_run_json_has_one(tmp_path):
    w = fixture_measurement()
    plain = write_run(tmp_path / "plain", [("rados_bench", W4M, repeats(w, 1.0, n=2))])
    quincy = write_run(tmp_path / "quincy", [("rados_bench", W4M, repeats(w, 1.0, n=2))], {"release": "quincy"})
    assert {r["release"] for r in csv.DictReader(io.StringIO(export(plain, "csv")))} == {""}
    assert {r["release"] for r in json.loads(export(quincy, "json"))} == {"quincy"}
    assert 'release="quincy"' in export(quincy, "openmetrics")


@pytest.fixture
def catalog(tmp_path, variant_run):
    """The variant run and a plain run of the same 4 KiB write, catalogued."""
    w = fixture_measurement()
    plain = write_run(tmp_path / "plain", [("rados_bench", {k: v for k, v in json.loads(
        (variant_run / "results.jsonl").read_text().splitlines()[0])["test"]["params"].items()},
        repeats(w, 0.01, n=4))], {"started_unix": 1_800_000_000.0,
                                  "cluster": json.loads((variant_run / "run.json").read_text())["cluster"]})
    db = tmp_path / "h.sqlite"
    assert cephbench("history", "--db", db, "add", variant_run, plain).returncode == 0
    return db


WRITE_4K = "rados_bench phase=write object_size=4096"


def test_a_trend_keeps_variants_apart_and_picks_one(catalog):
    res = cephbench("history", "--db", catalog, "--trend", "bw", "--test", WRITE_4K)
    assert res.returncode == 0, res.stderr
    # three configurations: the plain run, and each variant of the variant run with its 4 repeats
    assert "3 configurations match" in res.stdout and "variant" in res.stdout
    assert " 8 " not in res.stdout
    only = cephbench("history", "--db", catalog, "--trend", "bw", "--test", WRITE_4K, "--variant", "default")
    assert only.returncode == 0, only.stderr
    assert "variants" in only.stdout and "plain" not in only.stdout and "configurations match" not in only.stdout
    assert " 4 " in only.stdout
    none = cephbench("history", "--db", catalog, "--trend", "bw", "--test", WRITE_4K, "--variant", "none")
    assert none.returncode == 0, none.stderr
    assert "plain" in none.stdout and "variants" not in none.stdout.replace("configurations", "")


@pytest.fixture
def plain_and_variant(tmp_path):
    """A: a plain run of a 4 MiB write with a disk baseline. B: the same under two variants, and the same baseline
    30% faster (as a rerun on another day might give)."""
    w = fixture_measurement()
    a = write_run(tmp_path / "A", [("disk_baseline", DISK, repeats(w, 2.0, n=1)),
                                   ("rados_bench", W4M, repeats(w, 1.0, n=4))])
    b = write_run(tmp_path / "B", [("disk_baseline", DISK, repeats(w, 2.6, n=1)),
                                   ("rados_bench", W4M, repeats(w, 1.0, n=4, offset=1), "as-is"),
                                   ("rados_bench", W4M, repeats(w, 1.5, n=4, offset=2), "tuned")])
    return a, b


def test_compare_of_a_plain_and_a_variant_run_suggests_matching_across_variants(plain_and_variant):
    a, b = plain_and_variant
    (pair,) = compare_runs([load_run(a), load_run(b)])
    assert pair.suggestion is not None
    cmd = pair.suggestion.command()
    assert "--variant as-is" in cmd
    text = compare_render.render_text([pair])
    assert cmd in text
    # the baseline alone matched: it is listed apart, never summarised as the cluster
    assert "over 1 matched" not in text and "no cluster test" in text
    res = cephbench(*shlex.split(cmd)[1:])
    assert res.returncode == 0, res.stderr
    assert "over 1 matched cluster test" in res.stdout and "rados_bench" in res.stdout


def test_baselines_are_listed_apart_from_the_clusters_summary(plain_and_variant):
    a, b = plain_and_variant
    (pair,) = compare_runs([load_run(a), load_run(b)], variant="tuned")
    assert pair.geomean()["bytes_per_s"] == pytest.approx(1.5, rel=0.02)      # the cluster's tests only
    text = compare_render.render_text([pair])
    summary = next(line for line in text.splitlines() if line.startswith("geometric mean"))
    assert "×1.5" in summary and "×1.3" not in summary
    assert any(line.startswith("baselines") and "×1.300" in line for line in text.splitlines())


def test_a_variant_compare_names_the_variants_it_has(plain_and_variant):
    a, b = plain_and_variant
    res = cephbench("compare", a, b, "--variant", "nope")
    assert res.returncode == 2
    assert "--variant" in res.stderr and "as-is" in res.stderr and "tuned" in res.stderr


def test_runs_of_two_releases_are_two_configurations(tmp_path):
    w = fixture_measurement()
    a = write_run(tmp_path / "A", [("rados_bench", W4M, repeats(w, 1.0, n=4))], {"release": "pacific"})
    b = write_run(tmp_path / "B", [("rados_bench", W4M, repeats(w, 1.2, n=4))], {"release": "quincy"})
    res = cephbench("compare", a, b)
    assert res.returncode == 2 and "release" in res.stderr and "--ignore release" in res.stderr
    ok = cephbench("compare", a, b, "--ignore", "release")
    assert ok.returncode == 0 and "+20" in ok.stdout


def test_a_catalog_of_schema_1_gains_the_identity_and_reads_its_old_rows(tmp_path, variant_run):
    import sqlite3
    from cephbench.rundirs.history import SCHEMA, History
    db = tmp_path / "old.sqlite"
    with History.open(db) as h:
        h.add(variant_run)
    conn = sqlite3.connect(db)          # as schema 1 had it: no identity column; the match key holds the variant
    with conn:
        conn.execute("ALTER TABLE results DROP COLUMN identity")
        conn.execute("UPDATE catalog SET value = '1' WHERE key = 'schema'")
    conn.close()
    with History.open(db) as h:
        pts = h.trend("bw", WRITE_4K, variant="throttle-16KiB")
        assert [len(p.values) for p in pts] == [4] and pts[0].identity == {"variant": "throttle-16KiB"}
        assert h.conn.execute("SELECT value FROM catalog WHERE key = 'schema'").fetchone()[0] == str(SCHEMA)


def _releases_run(path, w):
    """A run of one test on two variants whose lab shapes named a release (`lab: {release: ...}`), on a lab found
    on Pacific: each result records its variant's release, as the runner writes it."""
    run = write_run(path, [("rados_bench", W4M, repeats(w, 1.0, n=4), "pacific"),
                           ("rados_bench", W4M, repeats(w, 1.5, n=4), "reef")], {"release": "pacific"})
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    for d in lines:
        d["variant"] = {"name": d["test"]["variant"], "release": d["test"]["variant"]}
    (run / "results.jsonl").write_text("".join(json.dumps(d) + "\n" for d in lines))
    return run


def test_each_result_carries_the_release_its_variant_ran_on(tmp_path):
    w = fixture_measurement()
    run = _releases_run(tmp_path / "R", w)
    rows = list(csv.DictReader(io.StringIO(export(run, "csv"))))
    assert {(r["variant"], r["release"]) for r in rows} == {("pacific", "pacific"), ("reef", "reef")}
    # a plain run on Reef matches the Reef variant's tests; on Pacific it does not, and compare says it is the release
    on_reef = write_run(tmp_path / "plain-reef", [("rados_bench", W4M, repeats(w, 1.5, n=4))], {"release": "reef"})
    ok = cephbench("compare", on_reef, run, "--variant", "reef")
    assert ok.returncode == 0, ok.stderr
    on_pacific = write_run(tmp_path / "plain-pac", [("rados_bench", W4M, repeats(w, 1.0, n=4))],
                           {"release": "pacific"})
    res = cephbench("compare", on_pacific, run, "--variant", "reef")
    assert res.returncode == 2 and "release" in res.stderr and "--ignore release" in res.stderr
    db = tmp_path / "h.sqlite"
    assert cephbench("history", "--db", db, "add", run, on_reef).returncode == 0
    trend = cephbench("history", "--db", db, "--trend", "bw", "--test", "rados_bench phase=write", "--release", "reef")
    assert trend.returncode == 0, trend.stderr
    assert "R" in trend.stdout and "plain-reef" in trend.stdout and "configurations match" in trend.stdout


def test_the_variants_view_names_each_variants_release(tmp_path):
    from cephbench.analysis.variants import view
    run = load_run(_releases_run(tmp_path / "R", fixture_measurement()))
    v = view(run.results)
    assert v is not None and v.releases == (("pacific", "pacific"), ("reef", "reef"))
    assert [round(c.delta.delta_pct) for t in v.tests() for c in t.changes] == [50]


def test_rbd_tests_are_grouped_by_the_size_they_read_not_their_images_objects():
    # a real fio_rbd test's parameters (the quick suite on the 3-host lab): objects of 4 MiB, reads of 4 KiB; a 64
    # KiB read of the same image was put in the 4 KiB read's group, both named 4 MiB
    from cephbench.analysis.variants import group_of
    from cephbench.core.results import Result, Test
    line = next(ln for ln in (FIXTURES / "report" / "ceph16.2.15_quick_multihost3.results.jsonl").read_text()
                .splitlines() if '"kind": "fio_rbd"' in ln or '"kind":"fio_rbd"' in ln)
    small = Result.model_validate_json(line).test
    large = small.model_copy(update={"params": {**small.params, "block_size": 65536}})
    assert small.params["object_size"] == 4 * 2**20
    assert group_of(small)[2] == small.params["block_size"] == 4096 and group_of(large)[2] == 65536
