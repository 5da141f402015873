"""A real run's report.html, opened in a real browser (Debian's headless Chromium).

Checks the page loads without console errors and with every chart drawn, and
leaves report.png in the run directory for a person to look at.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from labcli import CLI
SUITE = """
name: browser
pools:
  rep2: {type: replicated, size: 2, pg_num: 16}
workloads:
  - name: rados
    type: rados_bench
    pool: rep2
    modes: [write, seq]
    object_size: [64KiB, 1MiB]
    concurrency: 8
    duration: 3s
  - name: osd
    type: osd_bench
    total: 32MiB
    block_size: 4MiB
"""
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0"]


def chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("chromium is not installed: run scripts/setup.sh (make test does)")
    return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", *args],
                          capture_output=True, text=True, timeout=120)


def test_report_renders_in_chromium(cephbench_env, tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    out = tmp_path / "run"
    res = subprocess.run([*CLI, "run", str(suite), "--out", str(out)], capture_output=True, text=True,
                         env=cephbench_env, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "report: " in res.stdout
    page = out / "report.html"
    expected = int(re.search(r'name="cephbench-charts" content="(\d+)"', page.read_text()).group(1))
    assert expected >= 3   # time series, object-size sweep, OSD bars

    dom = chromium(["--dump-dom", page.as_uri()], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    drawn = re.findall(r'<figure class="chart"[^>]*>\s*<svg', dom.stdout)
    assert len(drawn) == expected
    console = [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln]
    problems = [ln for ln in console if re.search(r"rror|Uncaught|Failed to load|Refused", ln)]
    assert problems == [], problems

    shot = out / "report.png"
    res = chromium([f"--screenshot={shot}", "--window-size=1280,2400", page.as_uri()], tmp_path)
    assert res.returncode == 0 and shot.stat().st_size > 20_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
