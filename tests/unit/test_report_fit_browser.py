"""The real quick-suite run on the 3-host lab (tests/fixtures/report/ceph16.2.15_quick_multihost3), its report
made by `cephbench report` and opened in Debian's headless Chromium as tests/lab/test_report_browser.py opens a
fresh run's: at 1280 and 1920 px the key columns (test, measured, efficiency, bottleneck, status) and every chart
end inside the window; a screenshot is left for a person."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clirun import cephbench
from runfactory import copy_fixture_run
from test_report_variants_browser import browser

FIXTURE_RUN = Path(__file__).parent.parent / "fixtures" / "report" / "ceph16.2.15_quick_multihost3"
MEASURE = """<script>
// what a person sees without scrolling: the right edge of every key table, and of every chart, in CSS pixels
const right = sel => Math.max(0, ...[...document.querySelectorAll(sel)].map(e => e.getBoundingClientRect().right));
document.body.setAttribute("data-key-right", right(".key table"));
document.body.setAttribute("data-chart-right", right("figure.chart svg"));
document.body.setAttribute("data-view", document.documentElement.clientWidth);
</script></body>"""


@pytest.mark.parametrize("width", [1280, 1920])
def test_key_columns_and_charts_fit_the_window(tmp_path, width):
    run = copy_fixture_run(FIXTURE_RUN, tmp_path / "run")
    res = cephbench("report", run)
    assert res.returncode == 0, res.stderr
    page = (run / "report.html").read_text()
    measured = run / "measured.html"
    measured.write_text(page.replace("</body>", MEASURE))
    dom = browser([f"--window-size={width},1000", "--dump-dom", measured.as_uri()], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    got = {k: float(v) for k, v in re.findall(r'data-(key-right|chart-right|view)="([\d.]+)"', dom.stdout)}
    assert 0 < got["key-right"] <= got["view"], got
    assert 0 < got["chart-right"] <= got["view"], got
    shot = run / f"report-{width}.png"
    res = browser([f"--screenshot={shot}", f"--window-size={width},3000", (run / "report.html").as_uri()], tmp_path)
    assert res.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
