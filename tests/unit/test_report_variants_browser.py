"""The Variants section of the real variants run (tests/fixtures/report/ceph16.2.15_variants_throttle.*) in Debian's
headless Chromium, as tests/lab/test_report_browser.py opens report.html: at 1280 and 1920 px the section's
chart and tables are drawn and end inside the window; a screenshot of each width is left beside the report."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cephbench.report.write import write_report
from cephbench.core.results import RunDir
from runfactory import copy_fixture_run

FIX = Path(__file__).parent.parent / "fixtures" / "report" / "ceph16.2.15_variants_throttle"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]
MEASURE = """<script>
const parts = [...document.querySelectorAll('[data-chart^="variants-"] svg, .variants table, .vsummary table')];
document.body.setAttribute("data-right", Math.max(0, ...parts.map(e => e.getBoundingClientRect().right)));
document.body.setAttribute("data-parts", parts.length);
document.body.setAttribute("data-view", document.documentElement.clientWidth);
</script></body>"""


def browser(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("chromium is not installed: run scripts/setup.sh (make test does)")
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("width", [1280, 1920])
def test_variants_section_is_drawn_and_fits_the_window(tmp_path, width):
    run = copy_fixture_run(FIX, tmp_path / "run")
    page_path, _, _ = write_report(RunDir.open(run))
    measured = run / "measured.html"
    measured.write_text(page_path.read_text().replace("</body>", MEASURE))
    dom = browser([f"--window-size={width},1000", "--dump-dom", measured.as_uri()], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    errors = [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln and re.search(r"rror|Uncaught", ln)]
    assert errors == []
    got = {k: float(v) for k, v in re.findall(r'data-(right|parts|view)="([\d.]+)"', dom.stdout)}
    assert got["parts"] == 3, got          # the summary, the RADOS chart and the RADOS table
    assert 0 < got["right"] <= got["view"], got
    shot = run / f"report-{width}.png"
    res = browser([f"--screenshot={shot}", f"--window-size={width},1400", page_path.as_uri()], tmp_path)
    assert res.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
