"""compare's % change chart is the Variants section's (issue 17 item 4): one function, charts.pct_change, with tests
grouped by level, operation and op size. On real runs: the variants fixture (tests/fixtures/report/
ceph16.2.15_variants_throttle.*, see test_report_variants.py) split into two runs, one per variant, as two runs
made before and after `ceph config set osd bluestore_throttle_bytes 16KiB` would be."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cephbench.analysis import variants
from cephbench.analysis.compare import compare_runs, load_run
from cephbench.report import charts, compare_render
from cephbench.report import variants as variant_report
from cephbench.core.results import RunDir
from runfactory import fixture_measurement, repeats, write_run

FIX = Path(__file__).parent.parent / "fixtures" / "report"
RUN = "ceph16.2.15_variants_throttle"
SVG_NS = "{http://www.w3.org/2000/svg}"


def split_run(tmp_path: Path, variant: str) -> Path:
    """The fixture's results under one variant, as a run without variants (what two separate runs would give)."""
    d = tmp_path / variant
    d.mkdir()
    shutil.copy(FIX / f"{RUN}.run.json", d / "run.json")
    out = []
    for line in (FIX / f"{RUN}.results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["test"]["variant"] == variant:
            r["test"]["id"] = r["test"]["id"].replace(f"-{variant}", "")
            r["test"]["variant"] = r["variant"] = None
            out.append(json.dumps(r))
    (d / "results.jsonl").write_text("\n".join(out) + "\n")
    return d


def bars(svg: str) -> dict[str, float]:
    """Each bar's tooltip -> its opacity."""
    root = ET.fromstring(svg)
    return {r.find(f"{SVG_NS}title").text: float(r.get("fill-opacity", 1))
            for r in root.iter(f"{SVG_NS}rect") if r.find(f"{SVG_NS}title") is not None}


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def test_compare_draws_the_variants_chart_b_against_a(tmp_path):
    a, b = split_run(tmp_path, "default"), split_run(tmp_path, "throttle-16KiB")
    (pair,) = compare_runs([load_run(a), load_run(b)])
    svg = compare_render.pct_change_svg(pair)
    t = texts(svg)
    # blocks by level, operation and op size, in the Variants section's order
    heads = [x for x in t if re.fullmatch(r"RADOS \w+ · \d+[KM]iB", x)]
    assert heads == ["RADOS write · 4KiB", "RADOS seq · 4KiB", "RADOS write · 1MiB", "RADOS seq · 1MiB"]
    assert "% change, B against A" in t and "faded: not significant" in t
    # the same changes as the one run with variants: bandwidth of the 4 KiB write -23.6 %, significant (solid)
    got = bars(svg)
    assert got["rados-write-4KiB-t16: MiB/s -23.6%"] == 1.0
    assert got["rados-seq-4KiB-t16: MiB/s -4.4%"] == charts.NOT_SIGNIFICANT
    assert got["rados-write-1MiB-t16: MiB/s -6.3%"] == charts.NOT_SIGNIFICANT
    assert got["rados-seq-1MiB-t16: MiB/s -4.7%"] == charts.NOT_SIGNIFICANT
    assert "rados-write-4KiB-t16: mean lat ms (lower is better) +29.8%" in got
    view = variants.view(RunDir.open(_whole(tmp_path)).results()[0])
    vbars = bars(variant_report.level_chart(view, "RADOS"))
    assert {k.split(": ")[0]: v for k, v in vbars.items()} == {
        k.split(": ")[0]: v for k, v in got.items() if ": MiB/s " in k}


def _whole(tmp_path: Path) -> Path:
    d = tmp_path / "whole"
    d.mkdir()
    for ext in ("run.json", "results.jsonl"):
        shutil.copy(FIX / f"{RUN}.{ext}", d / ext)
    return d


def test_one_function_draws_both(tmp_path, monkeypatch):
    calls = []
    real = charts.pct_change

    def spy(blocks, series, title, label=""):
        calls.append((title, [s for s, _ in series], [b.title for b in blocks]))
        return real(blocks, series, title, label)

    monkeypatch.setattr(charts, "pct_change", spy)
    a, b = split_run(tmp_path, "default"), split_run(tmp_path, "throttle-16KiB")
    (pair,) = compare_runs([load_run(a), load_run(b)])
    assert "<svg" in compare_render.render_html([pair])
    view = variants.view(RunDir.open(_whole(tmp_path)).results()[0])
    assert variant_report.chart_list(view)
    assert [c[0] for c in calls] == ["% change, B against A", "RADOS: % change against default"]
    # compare: a bar per metric, operations named as rados bench counts them (kinds.ops_unit)
    assert calls[0][1] == ["MiB/s", "objects/s", "mean lat ms (lower is better)"]
    assert calls[1][1] == ["throttle-16KiB"]                                    # variants: a bar per variant
    assert calls[1][2] == ["write · 4KiB", "seq · 4KiB", "write · 1MiB", "seq · 1MiB"]


def test_compare_keeps_the_variants_of_a_run_apart_even_with_ignore(tmp_path):
    a, b = _whole(tmp_path), tmp_path / "again"
    shutil.copytree(a, b)
    for opts in ({}, {"ignore": ["duration_s"]}, {"match_on": ["phase", "object_size"]}):
        (pair,) = compare_runs([load_run(a), load_run(b)], **opts)
        # 4 tests under 2 variants: 8 configurations, never pooled into 4 "tests" of 8 repeats
        assert len(pair.tests) == 8, opts
        assert {t.test.variant for t in pair.tests} == {"default", "throttle-16KiB"}
        assert all(len(d.a) == 4 for t in pair.tests for d in t.metrics)


def test_a_chart_of_many_tests_shows_the_largest_changes_and_says_so(tmp_path):
    w = fixture_measurement()
    params = [{"object_size": 4194304, "concurrency": c, "phase": "write"} for c in range(1, 46)]
    a = write_run(tmp_path / "A", [("rados_bench", p, repeats(w, 1.0, n=1)) for p in params])
    b = write_run(tmp_path / "B", [("rados_bench", p, repeats(w, 1.0 + p["concurrency"] / 100, n=1))
                                   for p in params])
    (pair,) = compare_runs([load_run(a), load_run(b)])
    svg = compare_render.pct_change_svg(pair)
    t = texts(svg)
    assert f"% change, B against A; the {charts.MAX_CHANGE_ROWS} largest changes of 45" in t
    labels = [x for x in t if x.startswith("rados_bench-")]
    assert len(labels) == charts.MAX_CHANGE_ROWS
    assert not any(re.search(r"-([1-5])-write$", x) for x in labels)    # +1..+5 %: the smallest, left out


@pytest.mark.parametrize("value", [-250.0, 250.0])
def test_a_bar_to_the_plot_edge_carries_its_figure_inside(value):
    """A change as large as the axis: its figure is written inside the bar, never past the frame."""
    from cephbench.analysis.compare import METRICS, MetricDelta
    from cephbench.core.stats import mann_whitney
    a = (100.0, 101.0, 99.0, 100.0)          # both middle repeats 100: B's median is A's × the factor either way
    b = tuple(x * (1 + value / 100) for x in a)
    d = MetricDelta(METRICS[0], a, b, mann_whitney(a, b))
    svg = charts.pct_change([charts.ChangeBlock("RADOS write · 4MiB", (("t", (d,)),))], [("B", "#1f77b4")], "x")
    root = ET.fromstring(svg)
    figure = next(e for e in root.iter(f"{SVG_NS}text") if "".join(e.itertext()).endswith("%")
                  and "".join(e.itertext())[0] in "+-")
    frame = [r for r in root.iter(f"{SVG_NS}rect") if r.get("stroke") == "#333"][0]
    x0, x1 = float(frame.get("x")), float(frame.get("x")) + float(frame.get("width"))
    assert x0 <= float(figure.get("x")) <= x1
    assert figure.get("fill") == "#fff"        # on a solid (significant) bar
