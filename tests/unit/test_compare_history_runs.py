"""compare and history on two real runs of one suite (tests/fixtures/report/ceph16.2.15_repeated_*: a suite with 3
repeats on two pool profiles, run twice on the lab): compared test by test (each side's median, min–max and n), the
compare page opened in headless Chromium, and each pool profile followed apart with --trend.

That runs are catalogued at the end of `cephbench run` is checked on the lab (tests/lab/test_compare_history.py);
everything here is output made from the run directories alone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from clirun import cephbench
from runfactory import copy_fixture_run
from test_report_variants_browser import browser

FIX = Path(__file__).parent.parent / "fixtures" / "report" / "ceph16.2.15_repeated"
TEST = "rados_bench phase=write object_size=64KiB"


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    """The two runs as run directories named first and second, catalogued by hand (raw/ is not kept)."""
    out = [copy_fixture_run(f"{FIX}_{name}", tmp_path / name) for name in ("first", "second")]
    res = cephbench("history", "--db", tmp_path / "history.sqlite", "add", *out)
    assert res.returncode == 0, res.stderr
    return out


def test_the_fixture_runs_are_the_suite_beside_them(runs):
    suite = yaml.safe_load(Path(f"{FIX}.suite.yaml").read_text())
    for run in runs:
        meta = json.loads((run / "run.json").read_text())
        assert meta["suite"]["name"] == suite["name"] and meta["suite"]["pools"].keys() == suite["pools"].keys()
        assert len((run / "results.jsonl").read_text().splitlines()) == 6      # 2 pools x 3 repeats


def test_each_side_shows_its_median_inside_its_spread_from_3_repeats(runs):
    res = cephbench("compare", *runs, "--fail-on-regression", "1000")
    assert res.returncode == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if ln.startswith("rados-write") and "MiB/s" in ln]
    assert len(rows) == 2, res.stdout                      # one per pool profile
    for row in rows:
        cells = re.split(r"\s{2,}", row.strip())         # the terminal's plain table: 2 spaces between columns
        # each side: a median inside its min–max, from the 3 repeats of each run (the samples)
        for median, spread in ((cells[2], cells[3]), (cells[4], cells[5])):
            low, high = (float(x.replace(",", "")) for x in spread.split("–"))
            assert low <= float(median.replace(",", "")) <= high, row
        assert cells[9] == "3/3" and "(n=" not in row
    assert "geometric mean" in res.stdout and "too few repeats" in res.stdout   # 3 per side cannot reach 0.05


def test_the_compare_page_draws_its_chart_in_chromium(runs, tmp_path):
    page = tmp_path / "compare.html"
    res = cephbench("compare", *runs, "--format", "html", "--out", page)
    assert res.returncode == 0, res.stderr
    html = page.read_text()
    assert "--accent:#2e86c1" in html                      # report.html's stylesheet
    dom = browser(["--dump-dom", page.as_uri()], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert len(re.findall(r'<figure class="chart"[^>]*>\s*<svg', dom.stdout)) == 1
    problems = [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln and re.search(r"rror|Uncaught|Refused", ln)]
    assert problems == [], problems
    for width in (1280, 1920):                            # left for a person to look at
        shot = tmp_path / f"compare-{width}.png"
        res = browser([f"--screenshot={shot}", f"--window-size={width},1400", page.as_uri()], tmp_path)
        assert res.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_pool_profile_is_followed_apart(runs, tmp_path):
    db = tmp_path / "history.sqlite"
    res = cephbench("history", "--db", db, "--suite", "repeated")
    assert res.returncode == 0 and all(str(r) in res.stdout for r in runs), res.stdout
    res = cephbench("history", "--db", db, "--trend", "iops", "--test", TEST)
    assert res.returncode == 0, res.stderr
    titles = [ln for ln in res.stdout.splitlines() if "oldest first" in ln]
    assert [("replicated size 2" in titles[0]), ("replicated size 3" in titles[1])] == [True, True], res.stdout
    assert "2 configurations match" in res.stdout and "--pool-profile 'replicated size 2'" in res.stdout
    res = cephbench("history", "--db", db, "--trend", "iops", "--test", TEST, "--pool-profile", "replicated size 2")
    assert res.returncode == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if "rados-write" in ln]
    assert [("first" in rows[0]), ("second" in rows[1])] == [True, True] and " 3 " in rows[0], res.stdout
    assert "configurations match" not in res.stdout and "+0.0%" in rows[0]
