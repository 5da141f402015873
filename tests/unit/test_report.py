"""report.md and report.html from a run directory made of parsed real outputs."""

import time
from pathlib import Path

from cephbench.drivers import osd_bench
from cephbench.drivers import rados_bench as rb
from cephbench.report.write import write_report
from cephbench.core.results import Result, RunDir, Test

FIX = Path(__file__).parent.parent / "fixtures"
EVIL = '<script>alert("x")</script>|`*_'


def make_run(tmp_path: Path) -> RunDir:
    rd = RunDir.create(tmp_path / "run", {
        "suite_name": f"quick {EVIL}", "suite": {"pools": {"rep": {"type": "replicated", "size": 3, "pg_num": 32}}},
        "cluster": {"config_dump": [{"section": "osd", "name": "osd_memory_target", "value": EVIL}],
                    "versions": {"overall": {"ceph version 16.2.15": 6}}},
        "hosts": {"client": {"hostname": "h", "cpu_count": 2}}, "started_unix": time.time()})
    i = 0
    for size, mode in (("4M", "write"), ("4M", "seq"), ("4K", "write"), ("4K", "seq")):
        i += 1
        m = rb.parse((FIX / "rados_bench" / f"ceph16.2.15_{mode}_{size}.txt").read_text(), mode)
        t = Test(id=f"{i:03d}-rados-{mode}-{size}", index=i, workload="rados", kind="rados_bench", group=f"g{size}",
                 params={"phase": mode, "object_size": m.op_size_bytes, "concurrency": 16, "instances": 1})
        rd.append(Result(test=t, status="ok", started_unix=time.time(), duration_s=m.duration_s, measurement=m,
                         notes=[f"note {EVIL}"]))
    m = osd_bench.parse((FIX / "osd_bench" / "ceph16.2.15_osd0_1GiB_4MiB.json").read_text())
    per = {"osd.0": {"bytes_per_s": m.bytes_per_s, "ops_per_s": m.ops_per_s, "duration_s": 1},
           "osd.1": {"bytes_per_s": m.bytes_per_s * 0.5, "ops_per_s": 1, "duration_s": 1},
           "osd.2": {"bytes_per_s": m.bytes_per_s, "ops_per_s": 1, "duration_s": 1}}
    m.extra.update(per_osd=per, slow_osds=["osd.1"], median_bytes_per_s=m.bytes_per_s, slow_threshold=0.2)
    t = Test(id="005-osd", index=5, workload="osd", kind="osd_bench", group="g5", params={"total": 2**30})
    rd.append(Result(test=t, status="ok", started_unix=time.time(), duration_s=1, measurement=m))
    with open(rd.results_jsonl, "a") as f:
        f.write("{not json\n")
    return rd


def test_report_has_every_section_escapes_everything_and_counts_charts(tmp_path):
    rd = make_run(tmp_path)
    html_path, md_path, charts = write_report(rd)
    page = html_path.read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page
    for fetch in ('src="http', "href=\"http", "url(http", "@import", "<link", "<script"):
        assert fetch not in page, fetch  # self-contained: nothing for a browser to fetch
    for heading in ("Verdict", "Environment", "RADOS", "OSD", "Unreadable result lines"):
        assert f">{heading}<" in page or f">{heading} " in page, heading
    # time series for the rados workload, per-OSD bars, and the object-size sweep
    assert charts == page.count('<figure class="chart"') == 3
    assert 'content="3"' in page
    assert "Slow OSDs" in page and "osd.1" in page
    md = md_path.read_text()
    assert "<script>" not in md and "\\<script\\>" in md
    assert "| Bandwidth (MiB/s) |" in md and "140.8" in md      # 140.784 MiB/s from the fixture
    assert "results.jsonl line 6" in md


def test_report_of_an_empty_run(tmp_path):
    rd = RunDir.create(tmp_path / "r", {"suite_name": "empty"})
    html_path, md_path, charts = write_report(rd)
    assert charts == 0 and "No cluster results" in html_path.read_text()


def test_timeseries_chart_adds_the_watched_hosts_cpu():
    from cephbench.evidence.hostload import load_from_stream
    from cephbench.report import charts
    m = rb.parse((FIX / "rados_bench" / "ceph16.2.15_write_4M.txt").read_text(), "write")
    t = Test(id="001-rados-write-4M", index=1, workload="rados", kind="rados_bench", group="g1",
             params={"phase": "write"})
    plain = Result(test=t, status="ok", started_unix=0, duration_s=5, measurement=m)
    assert "CPU busy" not in charts.timeseries([plain])
    stream = "2\n" + "".join(f"cpu  {1000 + 90 * i} 0 0 {1000 + 10 * i} 0 0 0 0\n" for i in range(6))
    watched = plain.model_copy(update={"hosts": [load_from_stream(stream, "osd-1", "OSD host")]})
    assert watched.hosts[0].cpu_busy_series == [0.9] * 5
    assert "CPU busy" in charts.timeseries([watched])


# ---- charts: SVG written by report/svg.py -------------------------------------------------------

SVG_NS = "{http://www.w3.org/2000/svg}"


def parse_svg(text: str):
    """The chart as XML: a parse error here is a broken page in the browser."""
    import xml.etree.ElementTree as ET
    assert text.startswith("<svg") and "<script" not in text and " id=" not in text and "href" not in text
    return ET.fromstring(text)


def texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]


def coords(root) -> list[tuple[float, float]]:
    out = []
    for pl in root.iter(f"{SVG_NS}polyline"):
        out += [tuple(map(float, p.split(","))) for p in pl.get("points").split()]
    for c in root.iter(f"{SVG_NS}circle"):
        out.append((float(c.get("cx")), float(c.get("cy"))))
    return out


def inside(root) -> bool:
    w, h = float(root.get("width")), float(root.get("height"))
    return all(0 <= x <= w and 0 <= y <= h for x, y in coords(root))


def rados_result(name: str, mode: str, test_id: str, **params) -> Result:
    m = rb.parse((FIX / "rados_bench" / name).read_text(), mode)
    t = Test(id=test_id, index=1, workload="rados", kind="rados_bench", group="g",
             params={"phase": mode, "object_size": m.op_size_bytes, **params})
    return Result(test=t, status="ok", started_unix=0, duration_s=m.duration_s, measurement=m)


def test_nice_ticks_are_round_and_cover_the_data():
    from cephbench.report.svg import log10_ticks, nice_ticks, tick_text
    assert nice_ticks(0, 37.4) == (0, 40, [(0, "0"), (10, "10"), (20, "20"), (30, "30"), (40, "40")])
    lo, hi, ticks = nice_ticks(0, 9470)            # IOPS of the 4 KiB fixture
    assert (lo, hi) == (0, 10000) and [t for _, t in ticks] == ["0", "2000", "4000", "6000", "8000", "10000"]
    assert [t for _, t in nice_ticks(0, 0.83)[2]] == ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert [t for _, t in nice_ticks(-30, 42.9, 8)[2]][:3] == ["-30", "-20", "-10"]
    assert [t for _, t in nice_ticks(0, 11)[2]] == ["0", "2.5", "5.0", "7.5", "10.0", "12.5"]
    assert tick_text(-1e-12, 0.2) == "0" and tick_text(250, 250) == "250"
    assert nice_ticks(5, 5)[0] < 5 < nice_ticks(5, 5)[1]    # one value: an axis around it, not a zero span
    assert log10_ticks(0.66, 620)[:2] == (0.1, 1000) and [t for _, t in log10_ticks(0.66, 620)[2]] == \
        ["0.1", "1", "10", "100", "1000"]
    assert [t for _, t in log10_ticks(300, 600)[2]] == ["100", "200", "500", "1000"]


def test_thin_keeps_peaks_and_dips_of_long_series():
    from cephbench.report.svg import thin
    pts = [(float(i), float(i % 97)) for i in range(10_000)] + [(10_000.0, 500.0)]
    pts[4321] = (4321.0, -50.0)
    out = thin(pts, 600)
    assert len(out) <= 1200 and (4321.0, -50.0) in out and (10_000.0, 500.0) in out
    assert [x for x, _ in out] == sorted(x for x, _ in out)
    assert thin(pts[:100], 600) == pts[:100]


def test_timeseries_chart_draws_one_line_per_test_and_panel_and_escapes_ids():
    from cephbench.report import charts
    evil = rados_result("ceph16.2.15_write_4M.txt", "write", f"001-{EVIL}")
    small = rados_result("ceph16.2.15_rand_4K.txt", "rand", "002-rados-rand-4K")
    root = parse_svg(charts.timeseries([evil, small]))
    assert len(list(root.iter(f"{SVG_NS}polyline"))) == 2 * 2      # bandwidth and IOPS panels
    t = texts(root)
    assert {"MiB/s", "objects/s", "time (s)", "002-rados-rand-4K"} <= set(t)  # rados bench's operations (kinds)
    assert not [x for x in t if "IOPS" in x or "ops/s" in x]
    assert any(x.startswith("001-<script>") for x in t)             # escaped in the file, intact when read
    assert max(s.ops_per_s for s in small.measurement.timeseries) > 9000
    assert "10000" in t                                              # so the IOPS axis goes up to 10,000
    assert inside(root)


def test_sweep_chart_labels_swept_sizes_and_lines_by_phase():
    from cephbench.report import charts
    rs = [rados_result(f"ceph16.2.15_{mode}_{size}.txt", mode, f"{i}-{mode}-{size}", concurrency=16)
          for i, (mode, size) in enumerate((("write", "4M"), ("seq", "4M"), ("write", "4K"), ("seq", "4K")))]
    root = parse_svg(charts.sweep(rs, "object_size"))
    t = texts(root)
    assert {"4KiB", "4MiB", "write", "seq", "object size"} <= set(t)
    assert len(list(root.iter(f"{SVG_NS}polyline"))) == 2 and len(list(root.iter(f"{SVG_NS}circle"))) >= 4
    assert inside(root)
    assert charts.sweep(rs, "concurrency") is None                   # one value: nothing was swept


def test_percentile_chart_on_real_fio_latencies():
    from cephbench.drivers import fio
    from cephbench.report import charts
    rs = []
    for i, name in enumerate(("fio3.33_ceph16.2.15_rados_randread_4K_qd16.json",
                              "fio3.33_ceph16.2.15_rados_write_4M_qd16.json")):
        m = fio.to_measurement(fio.parse_fio_json((FIX / "fio" / name).read_text()), "randread" if i == 0 else "write")
        t = Test(id=f"fio-{i}", index=i, workload="fio", kind="fio_rados", group="g", params={})
        rs.append(Result(test=t, status="ok", started_unix=0, duration_s=m.duration_s, measurement=m))
    root = parse_svg(charts.percentiles(rs))
    t = texts(root)
    assert {"p50", "p99", "p99.99", "latency (ms)", "fio-0", "fio-1"} <= set(t)
    assert "1" in t and "10" in t                                     # log axis: decades
    assert inside(root)


def test_osd_bars_mark_slow_osds_and_draw_median_and_threshold():
    from cephbench.report import charts
    m = osd_bench.parse((FIX / "osd_bench" / "ceph16.2.15_osd0_1GiB_4MiB.json").read_text())
    per = {f"osd.{k}": {"bytes_per_s": m.bytes_per_s * (0.5 if k in (3, 11) else 1.0)} for k in range(16)}
    m.extra.update(per_osd=per, slow_osds=["osd.3", "osd.11"], median_bytes_per_s=m.bytes_per_s, slow_threshold=0.2)
    t = Test(id="osd", index=1, workload="osd", kind="osd_bench", group="g", params={})
    from cephbench.report.osd_bench import osd_bars
    root = parse_svg(osd_bars(Result(test=t, status="ok", started_unix=0, duration_s=1, measurement=m)))
    bars = [r for r in root.iter(f"{SVG_NS}rect") if r.find(f"{SVG_NS}title") is not None]
    assert [r.find(f"{SVG_NS}title").text.split(":")[0] for r in bars] == [f"osd.{k}" for k in range(16)]
    assert [r.get("fill") for r in bars].count(charts.SLOW) == 2
    assert bars[3].get("fill") == bars[11].get("fill") == charts.SLOW
    median = m.bytes_per_s / 2**20
    assert f"median {median:.0f} MiB/s" in texts(root) and f"slow below {median * 0.8:.0f} MiB/s" in texts(root)


def test_compare_chart_fades_changes_that_are_not_significant(tmp_path):
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from runfactory import fixture_measurement, scaled, write_run

    from cephbench.analysis.compare import compare_runs, load_run
    from cephbench.report import compare_render
    w = fixture_measurement()
    noise = (0.99, 1.01, 1.0, 0.995)
    cfg = [("rados_bench", {"phase": "write", "object_size": 4 << 20, "pool": f"p{k}{EVIL}"},
            [scaled(w, f * n) for n in noise]) for k, f in enumerate((1.0, 1.0))]
    a = write_run(tmp_path / "A", cfg)
    b = write_run(tmp_path / "B", [(k, p, [scaled(w, (1.3 if i == 0 else 1.0) * n) for n in noise])
                                   for i, (k, p, _) in enumerate(cfg)])
    pair = compare_runs([load_run(a), load_run(b)])[0]
    root = parse_svg(compare_render.pct_change_svg(pair))
    bars = [r for r in root.iter(f"{SVG_NS}rect") if r.find(f"{SVG_NS}title") is not None]
    faded = [r for r in bars if r.get("fill-opacity") == "0.35"]
    assert len(bars) == 6 and len(faded) == 3                        # 3 metrics × 2 tests; the unchanged one faded
    assert all("+30.0%" in r.find(f"{SVG_NS}title").text or "-23.1%" in r.find(f"{SVG_NS}title").text
               for r in bars if r not in faded)
    assert any(EVIL in x for x in texts(root))


def test_the_report_needs_no_plotting_library():
    """The report runs at the end of every `cephbench run`: its imports are a fixed cost of every run."""
    import subprocess
    import sys
    code = ("import sys, tempfile; from pathlib import Path; sys.path.insert(0, %r); import test_report as t; "
            "t.write_report(t.make_run(Path(tempfile.mkdtemp()))); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'numpy', 'scipy')))"
            % str(Path(__file__).parent))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"


# ---- many clients --------------------------------------------------------------------------------

def two_client_run(tmp_path: Path) -> RunDir:
    """A rados bench write from clients c1 and c2 (c2 at 60% of c1's rate, started 20 ms later), merged by
    core/merge.py, and the same write from this host alone."""
    from cephbench.core.merge import merge_instances
    a = rb.parse((FIX / "rados_bench" / "ceph16.2.15_write_4M.txt").read_text(), "write")
    b = a.model_copy(update={"bytes_per_s": a.bytes_per_s * 0.6, "timeseries": [
        s.model_copy(update={"bytes_per_s": s.bytes_per_s * 0.6}) for s in a.timeseries]})
    t0 = 1_700_000_000.0
    parts = [a.model_copy(update={"host": "c1", "start_unix_s": t0, "end_unix_s": t0 + a.duration_s}),
             b.model_copy(update={"host": "c2", "start_unix_s": t0 + 0.02, "end_unix_s": t0 + 0.02 + a.duration_s})]
    rd = RunDir.create(tmp_path / "run", {"suite_name": "clients", "started_unix": t0})
    for i, m in enumerate((merge_instances(parts, latency="mean-max"), a), 1):
        t = Test(id=f"00{i}-rados-write-4M", index=i, workload="rados", kind="rados_bench", group=f"g{i}",
                 params={"phase": "write", "object_size": 4 << 20, "concurrency": 16, "instances": 1})
        rd.append(Result(test=t, status="ok", started_unix=t0, duration_s=6, measurement=m))
    return rd


def test_per_client_table_chart_and_imbalance_only_for_a_result_of_several_clients(tmp_path):
    rd = two_client_run(tmp_path)
    html_path, md_path, charts = write_report(rd)
    md, page = md_path.read_text(), html_path.read_text()
    assert md.count("per client**") == 1 and "001-rados-write-4M: per client" in md
    assert "002-rados-write-4M: per client" not in md           # one host: no per-client table
    rows = [ln for ln in md.splitlines() if ln.startswith("| c1 ") or ln.startswith("| c2 ")]
    assert len(rows) == 2 and rows[1].endswith("| BELOW |") and not rows[0].endswith("BELOW |")
    assert "| 20 ms |" in rows[1] and "| 0 ms |" in rows[0]         # start offsets
    assert "| 62% |" in rows[0] and "| 38% |" in rows[1]            # shares of the window's bandwidth
    assert "client c2 40% below the others (imbalance)" in md
    assert "imbalance: client c2 ran 40% below" in md and "no percentiles exist" in md
    assert '<td class="slow">BELOW</td>' in page
    # the per-client bars, beside the time series and the rados charts
    assert 'id="clients-001-rados-write-4M"' in page and 'id="clients-002' not in page
    assert charts == page.count('<figure class="chart"')
    root = parse_svg(page.split('id="clients-001-rados-write-4M" data-chart="clients-001-rados-write-4M">')[1]
                     .split("<figcaption>")[0])
    assert {"c1", "c2"} <= set(texts(root)) and "more than 20% below the others" in texts(root)


def test_terminal_shows_the_clients_spread_in_one_line(tmp_path):
    from rich.console import Console
    from cephbench.report.terminal import print_results
    results, _ = two_client_run(tmp_path).results()
    console = Console(record=True, width=300)
    print_results(console, results)
    lines = [ln for ln in console.export_text().splitlines() if ln.startswith("  ~ ")]
    assert lines == [lines[0]] and lines[0].startswith("  ~ 001-rados-write-4M: 2 clients, start spread 20 ms, "
                                                       "end spread 20 ms, first done 5.1 s, last done 5.2 s")
    assert "client c2 40% below the others (imbalance)" in lines[0]
