"""compare and history on real runs: a suite with repeats on two pool profiles run twice on the lab, catalogued
at the end of each run, compared test by test (each side's median, min–max and n), the compare page opened in
headless Chromium, and each pool profile followed apart with --trend."""

import re

from labcli import run_cli
from test_report_browser import chromium

REPEATED = """
name: repeated
pools:
  rep2: {type: replicated, size: 2, pg_num: 16}
  rep3: {type: replicated, size: 3, pg_num: 16}
workloads:
  - name: rados
    type: rados_bench
    pool: [rep2, rep3]
    modes: [write]
    object_size: 64KiB
    concurrency: 4
    duration: 1s
    repeat: 3
"""


def test_two_runs_are_catalogued_compared_and_trended(lab_cluster, cephbench_env, tmp_path):
    env = {**cephbench_env, "CEPHBENCH_HISTORY": str(tmp_path / "history.sqlite")}
    suite = tmp_path / "suite.yaml"
    suite.write_text(REPEATED)
    runs = [tmp_path / "first", tmp_path / "second"]
    for out in runs:
        res = run_cli(["run", str(suite), "--out", str(out)], env)
        assert res.returncode == 0, res.stderr + res.stdout
        assert "history catalog" not in res.stderr          # catalogued without a warning
    res = run_cli(["history", "--suite", "repeated"], env)
    assert res.returncode == 0 and all(str(r) in res.stdout for r in runs), res.stdout

    res = run_cli(["compare", *map(str, runs), "--fail-on-regression", "1000"], env)
    assert res.returncode == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if "MiB/s" in ln and "rados-write" in ln]
    assert len(rows) == 2, res.stdout                      # one per pool profile
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        # each side: a median inside its min–max, from the 3 repeats of each run (the samples)
        for median, spread in ((cells[2], cells[3]), (cells[4], cells[5])):
            low, high = (float(x.replace(",", "")) for x in spread.split("–"))
            assert low <= float(median.replace(",", "")) <= high, row
        assert cells[8] == "3/3" and "(n=" not in row
    assert "geometric mean" in res.stdout and "too few repeats" in res.stdout   # 3 per side cannot reach 0.05

    page = tmp_path / "compare.html"
    res = run_cli(["compare", *map(str, runs), "--format", "html", "--out", str(page)], env)
    assert res.returncode == 0, res.stderr
    html = page.read_text()
    assert "--accent:#2e86c1" in html                      # report.html's stylesheet
    dom = chromium(["--dump-dom", page.as_uri()], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert len(re.findall(r'<figure class="chart"[^>]*>\s*<svg', dom.stdout)) == 1
    problems = [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln and re.search(r"rror|Uncaught|Refused", ln)]
    assert problems == [], problems
    for width in (1280, 1920):                            # left for a person to look at
        shot = tmp_path / f"compare-{width}.png"
        res = chromium([f"--screenshot={shot}", f"--window-size={width},1400", page.as_uri()], tmp_path)
        assert res.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    res = run_cli(["history", "--trend", "iops", "--test", "rados_bench phase=write object_size=64KiB"], env)
    assert res.returncode == 0, res.stderr
    titles = [ln for ln in res.stdout.splitlines() if "oldest first" in ln]
    assert [("replicated size 2" in titles[0]), ("replicated size 3" in titles[1])] == [True, True], res.stdout
    assert "2 configurations match" in res.stdout and "--pool-profile 'replicated size 2'" in res.stdout
    res = run_cli(["history", "--trend", "iops", "--test", "rados_bench phase=write object_size=64KiB",
                   "--pool-profile", "replicated size 2"], env)
    assert res.returncode == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if "rados-write" in ln]
    assert [("first" in rows[0]), ("second" in rows[1])] == [True, True] and " 3 " in rows[0], res.stdout
    assert "configurations match" not in res.stdout and "+0.0%" in rows[0]
