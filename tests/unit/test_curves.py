"""Latency-throughput curves and their knee (analysis/curves.py, report/curves.py), on real lab sweeps kept under
tests/fixtures/curves/ (README there: Ceph 16.2.15, the one-host lab)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from cephbench.analysis.compare import LoadedRun, compare_runs
from cephbench.analysis.curves import NOISE_FLOOR, curves, knee, steps
from cephbench.report import compare_render
from cephbench.report.curves import Overlaid, chart, knee_lines, knee_text, print_curves, table
from cephbench.cli import main
from cephbench.report.write import write_report
from cephbench.core.results import Result, RunDir

FIXTURES = Path(__file__).parent.parent / "fixtures" / "curves"


def load(name: str) -> list[Result]:
    return [Result.model_validate(json.loads(line)) for line in (FIXTURES / name).read_text().splitlines()]


@pytest.fixture(scope="module")
def run1() -> list[Result]:
    return load("lab1-repeat2.jsonl")


def of(results: list[Result], kind: str, max_load: int = 1 << 30, min_load: int = 0) -> list[Result]:
    load = lambda r: r.test.params.get("concurrency") or r.test.params.get("iodepth")  # noqa: E731
    return [r for r in results if r.test.kind == kind and min_load <= load(r) <= max_load]


def test_one_curve_per_operation_and_size_one_point_per_load(run1):
    found = curves(run1)
    assert [c.title for c in found] == ["write 4KiB (rados)", "randwrite 4KiB (rbd)"]
    rados, rbd = found
    assert [p.load for p in rados.points] == [1, 2, 4, 8, 16, 32, 64]
    assert [p.label for p in rbd.points][:2] == ["qd=1", "qd=2"]
    assert all(p.repeats == 2 for c in found for p in c.points)
    # rados bench gives no percentiles: its mean stands for latency; fio's p99 does
    assert not rados.percentiles and rbd.percentiles
    assert rados.in_ops and rados.throughput(rados.points[4]) == rados.points[4].ops_per_s
    # the median repeat (the lower of two) stands for the load, with the spread of both
    t16 = rados.points[4]
    assert t16.test_id == "009-rados-write-4KiB-t16-r1" and t16.low == pytest.approx(1353.93, abs=0.01)
    assert t16.high == pytest.approx(1541.83, abs=0.01) and t16.bottleneck == "CPU"


def test_a_curve_that_bends_has_its_knee_before_the_first_step_that_does_not_pay(run1):
    # the real sweep up to 32 in flight: +92% per doubling from 8 to 16, then -2% and the mean latency ×2.04
    (c,) = curves(of(run1, "rados_bench", max_load=32))
    k = knee(c)
    assert k.state == "knee" and k.point is not None and k.point.load == 16
    assert k.after is not None and k.after.gain == pytest.approx(-0.02, abs=0.005)
    text = knee_text(c, k)
    assert text.startswith("RADOS write 4KiB (rados): knee at 1,354 objects/s, mean latency 11.81 ms, at "
                           "t=16 (16 in flight)")
    assert "bottleneck at the knee: CPU" in text and "-2% throughput, mean latency ×2.04" in text


def test_a_curve_that_never_bends_says_so(run1):
    (c,) = curves(of(run1, "rados_bench", max_load=16))
    k = knee(c)
    assert k.state == "no knee" and k.point is not None and k.point.load == 16
    assert "no knee up to 16 in flight (t=16)" in knee_text(c, k)


def test_growth_that_comes_back_beyond_the_noise_is_too_noisy_to_tell(run1):
    # the whole real sweep: 1,354 objects/s at 16, 1,326 at 32, then 1,719 at 64, the repeats within 1-2%
    rados, rbd = curves(run1)
    k = knee(rados)
    assert k.state == "noisy" and k.resumed is not None and (k.resumed.frm.load, k.resumed.to.load) == (32, 64)
    assert "too noisy to tell a knee: throughput -2% from t=16 to t=32, then +30% from t=32 to t=64" \
        in knee_text(rados, k)
    # fio: qd=2 fell 46% below qd=1 (its repeats 236-404 IOPS), then grew back past qd=4
    assert knee(rbd).state == "noisy"


def test_growth_that_comes_back_within_the_noise_does_not_hide_the_knee(run1):
    # fio from qd=1 to 4: 434 IOPS, then 236 at qd=2 (repeats 236-404), then 403 at qd=4 (repeats 403-786): the
    # climb back (+71%) is within the two points' noise (37% + 48%), so the fall stands and the knee is at qd=1
    (c,) = curves(of(run1, "fio_rbd", max_load=4))
    assert [round(p.noise, 2) for p in c.points] == [0.03, 0.36, 0.48]
    assert all(s.noise == pytest.approx(s.frm.noise + s.to.noise) for s in steps(c))
    k = knee(c)
    assert k.state == "knee" and k.point is c.points[0]
    assert "(the lowest load tested: the knee may lie below it)" in knee_text(c, k)


def test_latency_that_doubles_per_doubling_is_a_knee_though_throughput_grows(run1):
    # fio from qd=16: +42% IOPS to qd=32 with p99 ×2.00, then +40% to qd=64 but p99 ×2.25: load only queued
    (c,) = curves(of(run1, "fio_rbd", min_load=16))
    k = knee(c)
    assert k.state == "knee" and k.point is not None and k.point.label == "qd=32"
    assert k.after is not None and k.after.gain > 0.3 and k.after.latency_factor == pytest.approx(2.25, abs=0.01)
    assert knee_text(c, k).startswith("RBD randwrite 4KiB (rbd): knee at 1,360 IOPS, p50 18.22 ms, p99 102 ms, "
                                      "at qd=32 (32 in flight)")


def test_two_loads_are_too_few(run1):
    (c,) = curves(of(run1, "rados_bench", min_load=16, max_load=32))
    assert knee(c).state == "too few"
    assert "2 loads: too few to find a knee" in knee_text(c, knee(c))


def test_a_single_run_has_the_noise_of_its_seconds(run1):
    single = [r for r in of(run1, "rados_bench") if r.test.id.endswith("-r1")]
    (c,) = curves(single)
    p = c.points[0]
    r = single[0].measurement
    assert p.repeats == 1 and p.noise == pytest.approx(max(NOISE_FLOOR, r.ops_per_s_stddev / r.ops_per_s / 5 ** 0.5))


def test_results_with_a_warning_or_failed_make_no_point(run1):
    rs = of(run1, "rados_bench", max_load=4)
    warned = [rs[0].model_copy(update={"warnings": ["ran out of objects"]}), *rs[1:]]
    failed = [rs[0].model_copy(update={"status": "failed"}), *rs[1:]]
    assert curves(warned)[0].points[0].repeats == 1
    assert curves(failed)[0].points[0].repeats == 1
    assert curves(rs[:2]) == []         # one load (two repeats) is no curve


def test_a_silence_of_the_monitors_leaves_the_point_on_its_curve(run1):
    """The search counted such a step (the watch's warning reaches the result after the search saw the step): the
    curve must too. A lab test's search on throttled drives failed with "too few" points when the monitors went
    silent for 5-7 s in two of its four steps on a loaded machine."""
    from cephbench.evidence.clusterwatch import silence_text
    rs = of(run1, "rados_bench", max_load=4)
    silent = [rs[0].model_copy(update={"warnings": [silence_text(1.0, 7.0, False)]}), *rs[1:]]
    assert curves(silent)[0].points[0].repeats == curves(rs)[0].points[0].repeats == 2
    both = [rs[0].model_copy(update={"warnings": [silence_text(1.0, 7.0, False), "ran out of objects"]}), *rs[1:]]
    assert curves(both)[0].points[0].repeats == 1


def test_the_terminal_prints_each_curve_as_a_table_and_a_knee_line(run1):
    rs = of(run1, "rados_bench", max_load=32)
    console = Console(width=200, file=None, record=True, color_system=None)
    print_curves(console, rs)
    text = console.export_text()
    assert "RADOS write 4KiB (rados): latency against throughput by load" in text
    row = next(line for line in text.splitlines() if line.startswith("t=16"))
    assert "1,354 objects/s" in row and "KNEE" in row and "CPU" in row
    assert knee_lines(rs) == [knee_text(*next(iter([(c, knee(c)) for c in curves(rs)])))]


def test_the_chart_labels_each_point_with_its_load_and_rings_the_knee(run1):
    (c,) = curves(of(run1, "rados_bench", max_load=32))
    svg = chart([Overlaid("", c, knee(c))])
    assert svg is not None and svg.count(">t=") == 6 and svg.count('r="7"') == 1
    assert "objects/s" in svg and "latency (ms)" in svg
    t = table(c, knee(c))
    assert [row[-1] for row in t.rows] == ["", "", "", "", "KNEE", ""]


def test_compare_overlays_the_runs_curves(run1):
    a = LoadedRun(Path("before"), {}, of(run1, "rados_bench", max_load=32), [])
    b = LoadedRun(Path("after"), {}, of(run1, "rados_bench", max_load=16), [])
    (pair,) = compare_runs([a, b])
    (group,) = compare_render.curve_groups([pair])
    assert [o.run for o in group] == ["A", "B"]
    svg = chart(group)
    assert svg is not None and "A mean" in svg and "B mean" in svg
    text = compare_render.render_text([pair])
    assert "A: RADOS write 4KiB (rados): knee at 1,354 objects/s" in text
    assert "B: RADOS write 4KiB (rados): no knee up to 16 in flight" in text
    md = compare_render.render_markdown([pair])
    assert "| run | load | in flight |" in md
    assert 'data-chart="curve-1"' in compare_render.render_html([pair])


def test_report_html_and_md_draw_each_curve_and_put_its_knee_in_the_verdict(run1, tmp_path):
    rd = RunDir.create(tmp_path / "run", {"suite_name": "knee <b>", "started_unix": 0})
    for r in of(run1, "rados_bench", max_load=32) + run1[14:]:
        rd.append(r)
    html_path, md_path, n = write_report(rd)
    page, md = html_path.read_text(), md_path.read_text()
    assert page.count('data-chart="curve-') == 2 and f'content="{n}"' in page
    assert ">Latency against throughput<" in page and "<li>RADOS write 4KiB (rados): knee at 1,354 objects/s" in page
    assert "## Latency against throughput" in md and "- RBD randwrite 4KiB (rbd): too noisy to tell a knee" in md
    assert md.index("knee at 1,354") < md.index("## Latency against throughput")      # in the verdict
    assert "| t=16 | 16 | 1,354 objects/s | 2 (1,354–1,542) |" in md


@pytest.fixture(scope="module")
def run2() -> list[Result]:
    return load("lab1-repeat3.jsonl")


def test_three_repeats_of_the_lab_sweep_find_each_curves_knee(run2):
    rados, rbd = curves(run2)
    assert [p.repeats for p in rados.points] == [3] * 8
    # rados bench: every doubling paid up to 64 in flight (+20% from 32 to 64), then 128 gave -8% at ×2.18 the mean
    k = knee(rados)
    assert k.state == "knee" and k.point is not None and k.point.label == "t=64"
    assert knee_text(rados, k) == (
        "RADOS write 4KiB (rados): knee at 2,091 objects/s, mean latency 30.49 ms, at t=64 (64 in flight); past it, "
        "per doubling of load: -8% throughput, mean latency ×2.18; bottleneck at the knee: CPU")
    # fio: qd=16 to 32 still gave +16% IOPS, but p99 went from 36 to 102 ms: the latency bound ends the climb
    k = knee(rbd)
    assert k.state == "knee" and k.point is not None and k.point.label == "qd=16"
    assert k.after is not None and k.after.gain > 0.10 and k.after.latency_factor == pytest.approx(2.81, abs=0.01)
    assert "knee at 1,360 IOPS, p50 10.16 ms, p99 36.44 ms, at qd=16 (16 in flight)" in knee_text(rbd, k)


def test_compare_overlays_two_real_sweeps(run1, run2):
    (pair,) = compare_runs([LoadedRun(Path("repeat2"), {}, run1, []), LoadedRun(Path("repeat3"), {}, run2, [])])
    groups = compare_render.curve_groups([pair])
    assert [[o.run for o in g] for g in groups] == [["A", "B"], ["A", "B"]]
    assert [knee(o.curve).state for o in groups[0]] == ["noisy", "knee"]
    svg = chart(groups[0])
    assert svg is not None and svg.count('r="7"') == 1       # B's knee; A is too noisy to ring one


def test_configurations_of_equal_load_make_one_curve_per_other_load_parameter(run2):
    # the grouping only: t=2, 4, 8 relabelled as 2 instances of t=1, 2, 4 (the same ops in flight)
    rs = of(run2, "rados_bench", max_load=16)
    twice = [r.model_copy(update={"test": r.test.model_copy(update={
        "id": r.test.id + "-x2", "index": r.test.index + 100,
        "params": {**r.test.params, "concurrency": r.test.params["concurrency"] // 2, "instances": 2}})})
        for r in rs if 2 <= r.test.params["concurrency"] <= 8]
    found = curves(rs + twice)
    assert [c.title for c in found] == ["write 4KiB (rados) instances=1", "write 4KiB (rados) instances=2"]
    assert [p.label for p in found[1].points] == ["t=1 instances=2", "t=2 instances=2", "t=4 instances=2"]
    assert [p.load for p in found[0].points] == [1, 2, 4, 8, 16]


def test_compare_markdown_writes_each_curves_chart_beside_it(run1, run2, tmp_path):
    dirs = []
    for name, rs in (("a", run1), ("b", run2)):
        rd = RunDir.create(tmp_path / name, {"suite_name": name})
        for r in rs:
            rd.append(r)
        dirs.append(str(rd.path))
    res = CliRunner().invoke(main, ["compare", *dirs, "--format", "markdown", "--out", str(tmp_path / "cmp.md")])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "cmp.md").read_text()
    assert "![latency against throughput, the runs overlaid](cmp-curve-1.svg)" in md
    assert (tmp_path / "cmp-curve-2.svg").read_text().startswith("<svg")
