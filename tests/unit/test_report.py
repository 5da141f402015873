"""report.md and report.html from a run directory made of parsed real outputs."""

import json
import time
from pathlib import Path

from cephbench.drivers import osd_bench
from cephbench.drivers import rados_bench as rb
from cephbench.report.write import write_report
from cephbench.results import Result, RunDir, Test

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
    from cephbench.hostload import load_from_stream
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
