"""report.html's pictures (issue 16 item 4, issue 18 item 3) from a real run directory: the quick suite on the
3-host lab, Ceph 16.2.15 (tests/fixtures/report/, see the fixtures README)."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cephbench.report import charts, html
from cephbench.report.format import mib_s, pct
from cephbench.report.gap import Facts, gap_of
from cephbench.report.sections import KEY_HEADERS, build
from cephbench.report.write import write_report
from cephbench.core.results import LatencyBreakdown, RunDir, Sample

FIX = Path(__file__).parent.parent / "fixtures" / "report"
RUN = "ceph16.2.15_quick_multihost3"
SVG_NS = "{http://www.w3.org/2000/svg}"
MIB = 1024 * 1024


def fixture_run(tmp_path: Path) -> RunDir:
    d = tmp_path / "run"
    d.mkdir()
    shutil.copy(FIX / f"{RUN}.run.json", d / "run.json")
    shutil.copy(FIX / f"{RUN}.results.jsonl", d / "results.jsonl")
    return RunDir.open(d)


def figures(page: str) -> dict[str, str]:
    """data-chart id -> the figure's HTML."""
    return {m.group(1): m.group(0) for m in
            re.finditer(r'<figure class="chart[^"]*" id="[^"]*" data-chart="([^"]*)">.*?</figure>', page, re.S)}


def svg_of(figure: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg.*?</svg>", figure, re.S).group(0))


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]


@pytest.fixture
def run(tmp_path):
    return fixture_run(tmp_path)


def test_every_verdict_line_with_a_ceiling_is_a_gap_chart_with_the_models_figures(run):
    data = build(run)
    results = {r.test.id: r for r in run.results()[0]}
    page, n = html.render(data)
    figs = figures(page)
    with_ceiling = [v for v in data.verdict if v.efficiency is not None]
    assert with_ceiling and all(f"gap-{v.test_id}" in figs for v in with_ceiling)
    for v in with_ceiling:
        r = results[v.test_id]
        t = texts(svg_of(figs[f"gap-{v.test_id}"]))
        # the answer first: the headline names the efficiency and the bottleneck the analysis named
        a = r.analysis
        assert t[0] == f"{v.title()}: {pct(a.efficiency)} of its ceiling · bottleneck: {a.bottleneck}"
        assert f"ceiling {mib_s(r.analysis.ceiling_bytes_per_s)} MiB/s" in t
        assert f"{mib_s(r.measurement.bytes_per_s)} MiB/s" in " ".join(t)
        # the present text stays, under the chart
        assert v.reason and str(v.reason)[:60].replace("'", "&#39;") in figs[f"gap-{v.test_id}"]
    assert n == page.count('<figure class="chart') and f'content="{n}"' in page


def test_a_write_gap_goes_from_the_hardware_through_replication_to_the_measurement(run):
    results, _ = run.results()
    facts = Facts(run.meta(), results)
    write = next(r for r in results if r.test.kind == "rados_bench" and r.test.params["phase"] == "write"
                 and r.test.params["object_size"] == 4 * MIB)
    g = gap_of(write, "RADOS write", facts)
    assert g is not None and g.ceiling_bytes_per_s == write.analysis.ceiling_bytes_per_s
    rows = {row.resource: row for row in g.rows}
    f = facts.of(write)
    # 3 replicas over one network: the OSD hosts' links carry the client's bytes and two copies
    pub = rows["public network"]
    assert pub.hardware == pytest.approx(f.osd_hosts * f.public_bytes_per_s)
    assert pub.ceiling == pytest.approx(pub.hardware / 3)
    disks = rows["disks"]
    assert disks.ceiling == pytest.approx(disks.hardware / 3)          # 4 MiB: no WAL double write, ÷ 3 replicas
    limit = [row for row in g.rows if row.limit]
    assert len(limit) == 1 and limit[0].ceiling == pytest.approx(g.ceiling_bytes_per_s)
    assert g.rows[-1].limit                           # widest first: the limit is the last row above the measurement
    svg = charts.gap(g)
    assert "← sets the ceiling" in svg and "hardware (baseline)" in svg


def test_a_stored_ceiling_the_baselines_no_longer_give_is_drawn_as_one_row(run):
    results, _ = run.results()
    facts = Facts(run.meta(), results)
    write = next(r for r in results if r.analysis and r.analysis.ceiling_bytes_per_s and r.test.kind == "rados_bench")
    moved = write.model_copy(update={"analysis": write.analysis.model_copy(
        update={"ceiling_bytes_per_s": write.analysis.ceiling_bytes_per_s * 2})})
    g = gap_of(moved, "RADOS write", facts)
    assert [row.resource for row in g.rows if row.ceiling is not None] == ["RADOS ceiling"]
    assert g.rows[-1].ceiling == write.analysis.ceiling_bytes_per_s * 2


def test_latency_breakdown_is_one_bar_per_test_with_its_parts_in_ms(run):
    page, _ = html.render(build(run))
    figs = figures(page)
    results = [r for r in run.results()[0] if r.analysis and r.analysis.breakdown]
    assert results, "the fixture's results carry breakdowns"
    for level in ("RADOS", "RBD", "RGW"):
        rs = [r for r in results if r.test.kind.startswith({"RADOS": "rados", "RBD": "fio_rbd", "RGW": "rgw"}[level])]
        if not rs:
            continue
        root = svg_of(figs[f"breakdown-{level}"])
        t = texts(root)
        for r in rs:
            assert r.test.id in t
            assert f"mean {charts._ms(r.analysis.breakdown.client_s * 1000)}" in t
        # each bar fills the plot: the parts are shares of the mean
        bars: dict[float, float] = {}
        for rect in root.iter(f"{SVG_NS}rect"):
            title = rect.find(f"{SVG_NS}title")
            if title is not None and any(title.text.startswith(r.test.id + ":") for r in rs):
                y = float(rect.get("y"))
                bars[y] = bars.get(y, 0.0) + float(rect.get("width"))
        assert len(bars) == len(rs) and max(bars.values()) - min(bars.values()) < 1.0


def test_breakdown_parts_split_the_commit_and_name_what_no_counter_explains():
    # kv_sync and the device wait add up past the commit (averages over different ops): scaled into it
    b = LatencyBreakdown(client_s=0.010, network_s=0.002, queue_s=0.001, replica_s=0.0, commit_s=0.004,
                         kv_sync_s=0.003, device_wait_s=0.003, other_s=0.001)
    parts = charts.breakdown_parts(b)
    assert parts[3] + parts[4] == pytest.approx(4.0) and parts[5] == 0.0
    assert parts[7] == pytest.approx(2.0)            # 10 − (2 + 1 + 0 + 4 + 1) ms: not split
    missing = LatencyBreakdown(client_s=0.010, network_s=0.004, queue_s=0.001)
    assert charts.breakdown_parts(missing)[7] == pytest.approx(5.0)


def test_each_test_with_device_and_link_series_gets_a_small_utilization_chart(run):
    page, _ = html.render(build(run))
    figs = figures(page)
    with_series = [r for r in run.results()[0] if r.evidence and r.evidence.devices and r.evidence.links
                   and r.status == "ok"]
    assert with_series, "the fixture's results carry device and link series"
    for r in with_series:
        root = svg_of(figs[f"util-{r.test.id}"])
        t = texts(root)
        for d in r.evidence.devices:
            assert f"{d.host}:{d.device} ({d.role})" in t
        for lk in r.evidence.links:                     # every link: against its speed, else in MiB/s
            assert f"{lk.host}:{lk.iface} ({lk.network})" in t
        assert "devicesbusy %" in t and "testMiB/s" in t   # the panels (two-line labels)
        assert ("links% of speed" in t) == any(lk.speed_bits_per_s for lk in r.evidence.links)
        assert ("links MiB/sspeed unknown" in t) == any(not lk.speed_bits_per_s for lk in r.evidence.links)
        lines = {g.find(f"{SVG_NS}title").text: g.find(f"{SVG_NS}polyline") for g in root.iter(f"{SVG_NS}g")}
        d = r.evidence.devices[0]
        assert len(lines[f"{d.host}:{d.device} ({d.role})"].get("points").split()) == len(d.busy)


def test_missing_evidence_is_one_line_never_an_empty_chart(run):
    results, _ = run.results()
    stripped = RunDir.create(run.path.parent / "stripped", run.meta())
    for r in results:
        stripped.append(r.model_copy(update={
            "evidence": None,
            "analysis": r.analysis.model_copy(update={"breakdown": None}) if r.analysis else None}))
    page, n = html.render(build(stripped))
    figs = figures(page)
    assert not [k for k in figs if k.startswith(("breakdown-", "util-"))]
    assert "not measured: the latency breakdown of" in page
    assert "not measured: device and link utilization of" in page
    assert n == page.count('<figure class="chart')


def test_key_columns_come_first_and_the_rest_is_folded(run):
    page = write_report(run)[0].read_text()
    head = "".join(f"<th>{h}</th>" for h in KEY_HEADERS)
    assert page.count(f"<tr>{head}</tr>") == 3                  # rados bench, fio (rbd), rgw
    key = page.index(f"<tr>{head}</tr>")
    folded = page.index("<details", key)
    assert page.index("<th>Stddev bandwidth (MiB/s)</th>") > folded  # a detail column is inside the fold
    r = next(r for r in run.results()[0] if r.test.kind == "rados_bench" and r.status == "ok")
    assert f"<td>{r.test.id}</td><td>{mib_s(r.measurement.bytes_per_s)} MiB/s" in page[key:folded]


def _partial_sample(t: float, mib: float) -> Sample:
    if "partial" in Sample.model_fields:                          # issue 18's field, once on main
        return Sample(t_s=t, bytes_per_s=mib * MIB, partial=True)

    class Partial(Sample):                                        # until then: the report's hook reads the attribute
        partial: bool = True
    return Partial(t_s=t, bytes_per_s=mib * MIB)


def test_partial_seconds_are_not_drawn_and_are_shaded(run):
    r = next(r for r in run.results()[0] if r.test.kind == "rados_bench" and r.status == "ok"
             and len(r.measurement.timeseries) >= 3)
    ts = list(r.measurement.timeseries)
    last = ts[-1]
    ts[-1] = _partial_sample(last.t_s, 0.001)
    marked = r.model_copy(update={"measurement": r.measurement.model_copy(update={"timeseries": ts})})
    root = ET.fromstring(charts.timeseries([marked]))
    assert "partial second (not drawn)" in texts(root)
    shaded = [rect for rect in root.iter(f"{SVG_NS}rect")
              if (tt := rect.find(f"{SVG_NS}title")) is not None and tt.text == charts.PARTIAL_LABEL]
    assert len(shaded) == 3                                       # the second, on each panel (MiB/s, IOPS, CPU)
    line = next(root.iter(f"{SVG_NS}polyline")).get("points").split()
    assert len(line) == len(ts) - 1                               # the partial second is not on the line
    plain = ET.fromstring(charts.timeseries([r]))
    assert "partial second (not drawn)" not in texts(plain)
