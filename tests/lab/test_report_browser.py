"""A real run's report.html, opened in a real browser (Debian's headless Chromium).

Checks the page loads without console errors and with every chart drawn, and leaves report.png in the run
directory for a person to look at. The run is the session's plain run of labcli.TINY (conftest.tiny_run), which
test_run.py checks for results, evidence and cleanup. That the key columns and charts of a report fit the
window is checked on a real run kept as a fixture: tests/unit/test_report_fit_browser.py.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0"]


def chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("chromium is not installed: run scripts/setup.sh (make test does)")
    return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", *args],
                          capture_output=True, text=True, timeout=120)


def test_report_renders_in_chromium(tiny_run, tmp_path):
    out, res = tiny_run.out, tiny_run.res
    assert res.returncode == 0, res.stderr
    assert "report: " in res.stdout
    page = out / "report.html"
    expected = int(re.search(r'name="cephbench-charts" content="(\d+)"', page.read_text()).group(1))
    assert expected >= 3   # time series, object-size sweep, OSD bars
    assert 'data-chart="breakdown-RADOS"' in page.read_text()   # the OSDs' counters split each test's latency

    dom = chromium(["--dump-dom", page.as_uri()], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    drawn = re.findall(r'<figure class="chart[^"]*"[^>]*>\s*<svg', dom.stdout)
    assert len(drawn) == expected
    console = [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln]
    problems = [ln for ln in console if re.search(r"rror|Uncaught|Failed to load|Refused", ln)]
    assert problems == [], problems

    shot = out / "report.png"
    res = chromium([f"--screenshot={shot}", "--window-size=1280,2400", page.as_uri()], tmp_path)
    assert res.returncode == 0 and shot.stat().st_size > 20_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
