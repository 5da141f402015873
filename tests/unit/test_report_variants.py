"""The Variants section (issue 17 item 4) on a REAL run with variants: tests/fixtures/report/
ceph16.2.15_variants_throttle.* is `cephbench run` of the suite beside it on the one-host 3-OSD lab, Ceph 16.2.15:
rados bench write (4 s) and seq (1 s) at 4 KiB and 1 MiB, 16 in flight, 4 repeats, under `default` and under
`throttle-16KiB` (bluestore_throttle_bytes 16 KiB for every OSD, set at runtime and restored by the run).

The figures below are the rados bench "Bandwidth (MB/sec)" (MiB/s) of each repeat, read from results.jsonl, and
every expected change is worked out here from them, not by the code under test.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from cephbench.analysis import variants
from cephbench.analysis.compare import match_key
from cephbench.report import html, markdown
from cephbench.report.sections import build
from cephbench.report.terminal import print_verdict
from cephbench.report.variants import notes, summary_rows, tables
from cephbench.core.results import RunDir

FIX = Path(__file__).parent.parent / "fixtures" / "report"
RUN = "ceph16.2.15_variants_throttle"
NO_VARIANTS = "ceph16.2.15_quick_multihost3"
SVG_NS = "{http://www.w3.org/2000/svg}"
KIB, MIB = 1024, 1024 * 1024

# MiB/s of repeats 1-4 (results.jsonl in plan order: the variants run A B | B A | A B | B A)
BW = {
    ("write", 4 * KIB): {"default": [3.30138, 3.45688, 3.17156, 4.04255],
                         "throttle-16KiB": [2.71378, 2.66266, 2.31066, 2.52100]},
    ("seq", 4 * KIB): {"default": [22.0836, 19.4296, 16.3167, 21.2162],
                       "throttle-16KiB": [21.1522, 19.7313, 16.5929, 18.5786]},
    ("write", MIB): {"default": [127.636, 104.462, 109.284, 123.292],
                     "throttle-16KiB": [102.357, 113.428, 141.391, 83.3557]},
    ("seq", MIB): {"default": [520.800, 451.774, 525.152, 422.559],
                   "throttle-16KiB": [510.428, 424.257, 430.579, 442.840]},
}
# by hand: the median of 4 is the lower of the middle two (stats.median: a real repeat, as the verdict shows it)
#   write 4 KiB: default 3.30138 against throttle 2.52100: -23.64 %
#   seq 4 KiB:   19.4296 against 18.5786: -4.38 %
#   write 1 MiB: 109.284 against 102.357: -6.34 %
#   seq 1 MiB:   451.774 against 430.579: -4.69 %
CHANGE_PCT = {("write", 4 * KIB): -23.638, ("seq", 4 * KIB): -4.380, ("write", MIB): -6.339, ("seq", MIB): -4.692}


def copy_run(tmp_path: Path, name: str = RUN, keep=None) -> RunDir:
    d = tmp_path / name
    d.mkdir()
    shutil.copy(FIX / f"{name}.run.json", d / "run.json")
    lines = (FIX / f"{name}.results.jsonl").read_text().splitlines(keepends=True)
    if keep is not None:       # keep(test) on each line's test, as JSON
        lines = [ln for ln in lines if keep(json.loads(ln)["test"])]
    (d / "results.jsonl").write_text("".join(lines))
    return RunDir.open(d)


@pytest.fixture
def run(tmp_path) -> RunDir:
    return copy_run(tmp_path)


@pytest.fixture
def view(run) -> variants.VariantsView:
    v = variants.view(run.results()[0])
    assert v is not None
    return v


def test_the_fixture_is_what_the_hand_figures_say(run):
    got: dict[tuple[str, int], dict[str, list[float]]] = {}
    for r in sorted(run.results()[0], key=lambda r: r.test.index):
        key = (r.test.params["phase"], r.test.params["object_size"])
        got.setdefault(key, {}).setdefault(r.test.variant, []).append(r.measurement.bytes_per_s / MIB)
    assert got.keys() == BW.keys()
    for key, by_variant in BW.items():
        for v, figures in by_variant.items():
            assert got[key][v] == pytest.approx(figures, rel=1e-5)
    for key, pct in CHANGE_PCT.items():
        a, b = (statistics.median_low(BW[key][v]) for v in ("default", "throttle-16KiB"))
        assert (b / a - 1) * 100 == pytest.approx(pct, abs=0.005)


def test_tests_are_matched_across_variants_and_grouped_by_level_size_and_operation(view):
    assert view.variants == ("default", "throttle-16KiB") and view.first == "default"
    # op size first (4 KiB, then 1 MiB), the write before its seq as the plan ran them; one test in each
    assert [(g.level, g.op, g.size) for g in view.groups] == [
        ("RADOS", "write", 4 * KIB), ("RADOS", "seq", 4 * KIB), ("RADOS", "write", MIB), ("RADOS", "seq", MIB)]
    assert [t.label for t in view.tests()] == ["rados-write-4KiB-t16", "rados-seq-4KiB-t16", "rados-write-1MiB-t16",
                                               "rados-seq-1MiB-t16"]
    for t in view.tests():
        # the same test under both variants: 4 repeats each, ids that differ only in the variant
        assert set(t.samples) == {"default", "throttle-16KiB"}
        ids = {v: {re.sub(r"^\d+-", "", r.test.id) for r in s.results} for v, s in t.samples.items()}
        assert {i.replace("-default-", "-throttle-16KiB-") for i in ids["default"]} == ids["throttle-16KiB"]
        assert all(len(s.results) == 4 for s in t.samples.values())
        assert t.metric.name == "bytes_per_s"
    assert view.no_reference == ()


def test_a_test_under_two_variants_is_two_configurations_for_compare_and_one_test_here(run):
    results = run.results()[0]
    w = [r for r in results if r.test.params["phase"] == "write" and r.test.params["object_size"] == 4 * KIB]
    assert len({r.test.match_key() for r in w}) == 2             # compare and the verdict keep variants apart
    assert len({match_key(r.test, ignore=["duration_s"]) for r in w}) == 2    # also when a parameter is ignored
    assert len({variants.base_key(r.test) for r in w}) == 1


def test_each_change_is_the_medians_against_the_first_variant(view):
    for t in view.tests():
        (c,) = t.changes
        assert c.variant == "throttle-16KiB"
        assert c.delta.delta_pct == pytest.approx(CHANGE_PCT[(t.op, t.size)], abs=0.005)
        assert c.delta.side_a.median / MIB == pytest.approx(statistics.median_low(BW[(t.op, t.size)]["default"]),
                                                            rel=1e-5)


def test_significance_marks_follow_compares_mann_whitney(view):
    marks = {(t.op, t.size): t.changes[0].delta.sig for t in view.tests()}
    # 4 KiB writes: every throttled repeat is below every default one: U = 0, the smallest two-sided p that 4
    # against 4 repeats can give, 2 / C(8, 4) = 2/70
    w4k = marks[("write", 4 * KIB)]
    assert w4k.significant and w4k.p == pytest.approx(2 / 70) and w4k.text() == "p=0.0286"
    assert view.tests()[0].changes[0].delta.worse_pct == pytest.approx(23.638, abs=0.005)
    # the others overlap (1 MiB writes: 83-141 against 104-128 MiB/s): not significant, but testable (n = 4)
    for key in (("seq", 4 * KIB), ("write", MIB), ("seq", MIB)):
        assert not marks[key].significant and marks[key].p is not None and marks[key].p > 0.05
        assert marks[key].text() == "~"
    assert view.too_few() == 0 and not any("too few" in n for n in notes(view))


def test_two_repeats_per_variant_can_never_be_significant_and_say_so(tmp_path):
    """The n rule: repeats 1 and 2 alone (the smallest p is 2 / C(4, 2) = 0.33), as a `repeat: 2` suite gives."""
    run = copy_run(tmp_path, keep=lambda t: t["repeat"] <= 2)
    v = variants.view(run.results()[0])
    assert all(len(s.results) == 2 for t in v.tests() for s in t.samples.values())
    assert all(c.delta.sig.p is None and c.delta.sig.text() == "~" for t in v.tests() for c in t.changes)
    assert v.too_few() == 4
    assert any(n.startswith("4 of 4 changes have too few repeats") and "repeat: 4" in n for n in notes(v))
    # 4 KiB write, repeats 1-2: the lower of each pair, 3.30138 against 2.66266: -19.35 %
    w4k = v.tests()[0].changes[0].delta
    assert w4k.delta_pct == pytest.approx((2.66266 / 3.30138 - 1) * 100, abs=0.005)
    assert [row[-1] for row in summary_rows(v)] == ["2", "2"]      # too few repeats: every change of each row


def test_summary_per_level_and_operation(view):
    (write, seq) = view.summary()
    # write: the median of -23.64 % (4 KiB) and -6.34 % (1 MiB) = -14.99 %; one significant change, for the worse
    assert (write.level, write.op, write.variant, write.n) == ("RADOS", "write", "throttle-16KiB", 2)
    assert write.median_pct == pytest.approx((-23.638 - 6.339) / 2, abs=0.01)
    assert (write.better, write.worse, write.too_few) == (0, 1, 0)
    # seq: the median of -4.38 % and -4.69 % = -4.54 %; none significant
    assert (seq.op, seq.n, seq.significant) == ("seq", 2, 0)
    assert seq.median_pct == pytest.approx((-4.380 - 4.692) / 2, abs=0.01)
    assert summary_rows(view) == [["RADOS", "write", "throttle-16KiB", "-15.0%", "2", "1 (1 worse)", "0"],
                                  ["RADOS", "seq", "throttle-16KiB", "-4.5%", "2", "0", "0"]]


def test_per_test_table_has_the_reference_then_each_variant(view):
    summary, rados = tables(view)
    assert summary.title.startswith("Summary")
    assert rados.title == "RADOS: each test under each variant against default"
    assert rados.rows[:2] == [
        ["rados-write-4KiB-t16", "default", "MiB/s", "3.3", "3.2–4.0", "4", "reference", ""],
        ["rados-write-4KiB-t16", "throttle-16KiB", "MiB/s", "2.5", "2.3–2.7", "4", "-23.6%", "p=0.0286"]]
    assert [r[6] for r in rados.rows] == ["reference", "-23.6%", "reference", "-4.4%", "reference", "-6.3%",
                                          "reference", "-4.7%"]


def svg_root(figure: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg.*?</svg>", figure, re.S).group(0))


def test_report_html_has_a_variants_section_with_the_chart_and_tables(run):
    data = build(run)
    page, n = html.render(data)
    assert '<h2 id="variants">Variants</h2>' in page
    # after the verdict, before the environment
    assert page.index('id="verdict"') < page.index('id="variants"') < page.index('id="environment"')
    fig = re.search(r'<figure class="chart" id="variants-RADOS" data-chart="variants-RADOS">.*?</figure>', page, re.S)
    assert fig and n == page.count('<figure class="chart') and f'content="{n}"' in page
    root = svg_root(fig.group(0))
    y = {"".join(t.itertext()): float(t.get("y")) for t in root.iter(f"{SVG_NS}text")}
    texts = list(y)
    # one block per operation and op size, top to bottom in the order of the groups, each test under its heading
    blocks = ["write · 4KiB", "rados-write-4KiB-t16", "seq · 4KiB", "rados-seq-4KiB-t16", "write · 1MiB",
              "rados-write-1MiB-t16", "seq · 1MiB", "rados-seq-1MiB-t16"]
    assert sorted(blocks, key=y.__getitem__) == blocks
    for pct in ("-23.6%", "-4.4%", "-6.3%", "-4.7%"):
        assert pct in texts
    assert "throttle-16KiB" in texts and "faded: not significant" in texts
    # the significant change is solid, the three others faded
    bars = [r for r in root.iter(f"{SVG_NS}rect") if r.find(f"{SVG_NS}title") is not None
            and "throttle-16KiB" in r.find(f"{SVG_NS}title").text]
    assert len(bars) == 4
    assert [b.get("fill-opacity") for b in bars] == [None, "0.35", "0.35", "0.35"]
    # the table: the significant change for the worse is marked
    assert re.search(r'<tr class="worse"><td>rados-write-4KiB-t16</td><td>throttle-16KiB</td>', page)
    assert page.count('<tr class="ref">') == 4


def test_report_md_and_terminal_have_the_variants(run):
    md = markdown.render(build(run))
    assert "## Variants" in md and md.index("## Verdict") < md.index("## Variants") < md.index("## Environment")
    assert "| RADOS | write | throttle-16KiB | -15.0% | 2 | 1 (1 worse) | 0 |" in md
    assert "| rados-write-4KiB-t16 | throttle-16KiB | MiB/s | 2.5 | 2.3–2.7 | 4 | -23.6% | p=0.0286 |" in md
    buf = io.StringIO()
    print_verdict(Console(file=buf, width=160, color_system=None), run.results()[0])
    out = buf.getvalue()
    assert out.index("Variants: % change against default") < out.index("Verdict")
    assert re.search(r"rados-write-4KiB-t16 .* 3\.3 .* -23\.6% p=0\.0286", out)
    assert re.search(r"rados-seq-1MiB-t16 .* 451\.8 .* -4\.7% ~", out)
    assert re.search(r"RADOS .* write .* throttle-16KiB .* -15\.0% .* 2 .* 1 \(1 worse\)", out)


def test_a_run_without_variants_has_no_variants_section(tmp_path):
    run = copy_run(tmp_path, NO_VARIANTS)
    results = run.results()[0]
    assert results and all(r.test.variant is None for r in results)
    assert variants.view(results) is None
    data = build(run)
    assert data.variants is None
    page, _ = html.render(data)
    assert 'id="variants"' not in page and "data-chart=\"variants-" not in page
    assert "## Variants" not in markdown.render(data)
    buf = io.StringIO()
    print_verdict(Console(file=buf, width=160, color_system=None), results)
    assert "Variants" not in buf.getvalue()


def test_one_variant_alone_is_nothing_to_compare(tmp_path):
    run = copy_run(tmp_path, keep=lambda t: t["variant"] == "default")
    assert variants.view(run.results()[0]) is None


def test_a_test_without_results_under_the_first_variant_is_named_not_compared(tmp_path):
    """A variant that failed (a daemon that did not take the option) leaves its tests without a figure."""
    run = copy_run(tmp_path, keep=lambda t: not (t["variant"] == "default" and t["params"]["object_size"] == MIB))
    v = variants.view(run.results()[0])
    assert [t.label for t in v.tests()] == ["rados-write-4KiB-t16", "rados-seq-4KiB-t16"]
    assert v.no_reference == ("rados-write-1MiB-t16", "rados-seq-1MiB-t16")
    assert any("no result under default" in n and "rados-write-1MiB-t16" in n for n in notes(v))
