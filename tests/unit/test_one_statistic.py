"""One statistic per figure (issue 25, item 2): the verdict's headline, its percentage and its reason, compare and
history's trend all show the same median of a configuration's repeats, for even and odd repeat counts."""

from __future__ import annotations

import pytest

from clirun import cephbench
from runfactory import fixture_measurement, scaled, write_run
from cephbench.analysis.compare import compare_runs, load_run
from cephbench.report.format import mib_s, pct
from cephbench.report.verdict import verdict
from cephbench.core.results import Analysis, RunDir

MIB = 2**20
CEILING = 855.8 * MIB
RAND = {"pool": "rep", "object_size": 4 << 20, "concurrency": 16, "phase": "rand", "duration_s": 5.0}
FIGURES = {4: [453.9, 615.2, 640.0, 700.0], 3: [453.9, 615.2, 700.0], 5: [400.0, 453.9, 615.2, 640.0, 700.0],
           2: [453.9, 615.2]}


def _run(tmp_path, n: int, name: str = "run"):
    """n repeats of one rand read, each analysed as the model does: its own figure over one ceiling, and a reason
    that states both."""
    base = fixture_measurement("ceph16.2.15_rand_4M.txt", "rand")
    ms = [scaled(base, f * MIB / base.bytes_per_s) for f in FIGURES[n]]
    analyses = {i: Analysis(ceiling_bytes_per_s=CEILING, efficiency=m.bytes_per_s / CEILING, bottleneck="disks",
                            reason=f"rand 4MiB: {mib_s(m.bytes_per_s)} MiB/s = {pct(m.bytes_per_s / CEILING)} of a "
                                   f"{mib_s(CEILING)} MiB/s ceiling")
                for i, m in enumerate(ms, 1)}
    return write_run(tmp_path / name, [("rados_bench", RAND, ms)], analyses=analyses)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_a_verdicts_percentage_is_its_figure_over_its_ceiling(tmp_path, n):
    results, _ = RunDir.open(_run(tmp_path, n)).results()
    (line,) = verdict(results)
    assert line.repeats == n
    assert line.efficiency == pytest.approx(line.bytes_per_s / CEILING)
    # the reason restates the headline's figure, not another repeat's
    assert f"{mib_s(line.bytes_per_s)} MiB/s = {pct(line.efficiency)}" in line.reason
    assert f"{mib_s(line.bytes_per_s)} MiB/s" in line.text()


def test_the_median_of_an_even_count_is_a_real_repeat(tmp_path):
    results, _ = RunDir.open(_run(tmp_path, 4)).results()
    (line,) = verdict(results)
    assert line.bytes_per_s == pytest.approx(615.2 * MIB)
    assert line.test_id == next(r.test.id for r in results if r.measurement.bytes_per_s == line.bytes_per_s)


def test_compare_and_history_show_the_verdicts_median(tmp_path):
    path = _run(tmp_path, 4)
    results, _ = RunDir.open(path).results()
    (line,) = verdict(results)
    run = load_run(path)
    (pair,) = compare_runs([run, load_run(_run(tmp_path, 4, "again"))])
    side = next(d for d in pair.tests[0].metrics if d.metric.name == "bytes_per_s").side_a
    assert side.median == pytest.approx(line.bytes_per_s)

    db = tmp_path / "h.sqlite"
    assert cephbench("history", "--db", db, "add", path).returncode == 0
    res = cephbench("history", "--db", db, "--trend", "bw", "--test", "rados_bench phase=rand")
    assert res.returncode == 0, res.stderr
    assert "615.2" in res.stdout and "627.6" not in res.stdout      # the median, never the mean of the middle two
    assert "median" in res.stdout
