"""`cephbench export` and `show --json`: run directories of real fixture measurements, read back by real parsers
(prometheus_client's OpenMetrics parser and its Prometheus text-format parser, promtool when installed)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as text_families

from clirun import cephbench
from conftest import FIXTURES
from runfactory import fixture_measurement
from cephbench.rundirs.export import LABELS, export
from cephbench.rundirs.importer import read_file
from cephbench.core.results import Analysis, Result, RunDir, Test

REP3 = {"type": "replicated", "size": 3, "min_size": None, "pg_num": 32}
EC21 = {"type": "erasure", "k": 2, "m": 1, "plugin": "jerasure", "pg_num": 32}


def make_run(path, suite="exp-test"):
    """A write (with the model's analysis) and a rand read of rados bench on replica 3, a fio rados randread
    (percentiles) on EC 2+1, and a failed test."""
    rd = RunDir.create(path, {"cephbench_version": "test", "suite_name": suite, "run_ids": ["abc123"]})
    write = fixture_measurement("ceph16.2.15_write_4M.txt", "write")
    rand = fixture_measurement("ceph16.2.15_rand_4M.txt", "rand")
    fio = read_file(FIXTURES / "fio" / "fio3.33_ceph16.2.15_rados_randread_4K_qd16.json").measurement
    rows = [
        ("001-rados-write-4MiB-t16", "rados_bench", {"pool": "rep3", "pool_profile": REP3, "object_size": 4 << 20,
                                                     "concurrency": 16, "instances": 1, "phase": "write"}, write,
         Analysis(efficiency=0.62, ceiling_bytes_per_s=2e8, bottleneck="disks")),
        ("002-rados-rand-4MiB-t16", "rados_bench", {"pool": "rep3", "pool_profile": REP3, "object_size": 4 << 20,
                                                    "concurrency": 16, "instances": 1, "phase": "rand"}, rand, None),
        ("003-fio-randread-4KiB-qd16", "fio_rados", {"pool": "ec21", "pool_profile": EC21, "block_size": 4096,
                                                     "iodepth": 16, "phase": "randread"}, fio, None),
    ]
    for i, (tid, kind, params, m, a) in enumerate(rows, 1):
        t = Test(id=tid, index=i, workload=kind, kind=kind, group=f"g{i}", params=params)
        rd.append(Result(test=t, status="ok", started_unix=1_700_000_000.0 + i, duration_s=5.0, measurement=m,
                         analysis=a))
    t = Test(id="004-rados-write-4KiB-t16", index=4, workload="rados_bench", kind="rados_bench", group="g4",
             params={"pool": "rep3", "pool_profile": REP3, "object_size": 4096, "concurrency": 16, "phase": "write"})
    rd.append(Result(test=t, status="failed", error="rados bench write failed: boom", started_unix=1_700_000_010.0,
                     duration_s=1.0))
    return path, {"write": write, "rand": rand, "fio": fio}


def samples(families):
    return {(f.name, s.labels["test"]): s for f in families for s in f.samples}


def test_openmetrics_is_read_by_the_openmetrics_parser_with_units_and_labels(tmp_path):
    run, m = make_run(tmp_path / "run")
    text = export(run, "openmetrics")
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in openmetrics_families(text)}
    assert families["cephbench_bandwidth_bytes_per_second"].unit == "bytes_per_second"
    assert families["cephbench_latency_p99_seconds"].unit == "seconds"
    assert families["cephbench_efficiency_ratio"].unit == "ratio"
    assert all(f.type == "gauge" and f.documentation for f in families.values())
    s = samples(families.values())
    bw = s[("cephbench_bandwidth_bytes_per_second", "001-rados-write-4MiB-t16")]
    assert bw.value == pytest.approx(m["write"].bytes_per_s)               # bytes/s, not MiB/s
    assert bw.timestamp is None                                            # neither textfile nor Pushgateway take one
    assert bw.labels == {"suite": "exp-test", "test": "001-rados-write-4MiB-t16", "kind": "rados_bench", "op": "write",
                         "object_size": str(4 << 20), "concurrency": "16", "pool_profile": "replicated size 3",
                         "variant": "", "release": ""}
    assert set(bw.labels) == set(LABELS)
    lat = s[("cephbench_latency_mean_seconds", "002-rados-rand-4MiB-t16")].value
    assert lat == pytest.approx(m["rand"].latency.mean_ns / 1e9)           # seconds
    fio = s[("cephbench_latency_p99_seconds", "003-fio-randread-4KiB-qd16")]
    assert fio.value == pytest.approx(m["fio"].latency.percentiles_ns["99"] / 1e9)
    assert fio.labels["pool_profile"] == "EC 2+1" and fio.labels["object_size"] == "4096"
    assert fio.labels["concurrency"] == "16" and fio.labels["op"] == "randread"
    # rados bench gives no percentiles, the model analysed only the write: no series for what is not known
    assert ("cephbench_latency_p99_seconds", "001-rados-write-4MiB-t16") not in s
    assert [k[1] for k in s if k[0] == "cephbench_efficiency_ratio"] == ["001-rados-write-4MiB-t16"]
    assert s[("cephbench_efficiency_ratio", "001-rados-write-4MiB-t16")].value == pytest.approx(0.62)
    # one series per test and metric; a failed test has none
    assert len(s) == sum(len(f.samples) for f in families.values())
    assert not any(t == "004-rados-write-4KiB-t16" for _, t in s)


def test_openmetrics_is_read_by_the_prometheus_text_parser(tmp_path):
    """node_exporter's textfile collector and the Pushgateway read the Prometheus text format: same series."""
    run, _ = make_run(tmp_path / "run")
    text = export(run, "openmetrics")
    plain = samples(text_families(text))
    om = samples(openmetrics_families(text))
    assert {k: v.value for k, v in plain.items()} == {k: v.value for k, v in om.items()}


def test_label_values_are_escaped(tmp_path):
    run, _ = make_run(tmp_path / "run", suite='odd "name" \\ here')
    families = list(openmetrics_families(export(run, "openmetrics")))
    assert {s.labels["suite"] for f in families for s in f.samples} == {'odd "name" \\ here'}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed (apt-get install prometheus)")
def test_promtool_check_metrics_accepts_it(tmp_path):
    run, _ = make_run(tmp_path / "run")
    res = subprocess.run(["promtool", "check", "metrics"], input=export(run, "openmetrics"), text=True,
                         capture_output=True, timeout=30)
    assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), (res.stdout, res.stderr)


def test_csv_one_row_per_test_in_base_units(tmp_path):
    run, m = make_run(tmp_path / "run")
    rows = list(csv.DictReader(io.StringIO(export(run, "csv"))))
    assert [r["test"] for r in rows] == ["001-rados-write-4MiB-t16", "002-rados-rand-4MiB-t16",
                                         "003-fio-randread-4KiB-qd16", "004-rados-write-4KiB-t16"]
    w = rows[0]
    assert float(w["bandwidth_bytes_per_s"]) == pytest.approx(m["write"].bytes_per_s)
    assert float(w["latency_mean_s"]) == pytest.approx(m["write"].latency.mean_ns / 1e9)
    assert w["efficiency"] == "0.62" and w["bottleneck"] == "disks" and w["object_size_bytes"] == str(4 << 20)
    assert w["run"] == "run" and w["suite"] == "exp-test" and w["pool_profile"] == "replicated size 3"
    assert rows[3]["status"] == "failed" and rows[3]["error"] == "rados bench write failed: boom"
    assert rows[3]["bandwidth_bytes_per_s"] == ""


def test_json_is_a_list_of_results_and_show_json_prints_it(tmp_path):
    run, m = make_run(tmp_path / "run")
    data = json.loads(export(run, "json"))
    assert isinstance(data, list) and len(data) == 4
    assert data[2]["params"]["pool_profile"] == EC21 and data[2]["latency_p50_s"] == pytest.approx(
        m["fio"].latency.percentiles_ns["50"] / 1e9)
    assert data[3]["status"] == "failed" and data[3]["bandwidth_bytes_per_s"] is None
    shown = cephbench("show", run, "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout) == data


def test_export_command_writes_a_file(tmp_path):
    run, _ = make_run(tmp_path / "run")
    out = tmp_path / "cephbench.prom"
    res = cephbench("export", run, "--format", "openmetrics", "--out", out)
    assert res.returncode == 0, res.stderr
    assert out.read_text() == export(run, "openmetrics") and not list(tmp_path.glob("*.tmp"))
    res = cephbench("export", run, "--format", "csv")
    assert res.returncode == 0 and res.stdout == export(run, "csv")


def one_line_exit_2(res, *fragments):
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cephbench: ") and "Traceback" not in res.stderr, res.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def test_export_of_a_directory_that_is_not_a_run(tmp_path):
    one_line_exit_2(cephbench("export", tmp_path, "--format", "csv"), "not a cephbench run directory")
    one_line_exit_2(cephbench("show", tmp_path, "--json"), "not a cephbench run directory")


def test_export_of_a_run_without_results(tmp_path):
    RunDir.create(tmp_path / "empty", {"suite_name": "x"})
    for fmt in ("csv", "json", "openmetrics"):
        one_line_exit_2(cephbench("export", tmp_path / "empty", "--format", fmt), "no results")


def test_export_of_a_missing_path_and_a_bad_format(tmp_path):
    one_line_exit_2(cephbench("export", tmp_path / "nope", "--format", "json"), "not a cephbench run directory")
    res = cephbench("export", tmp_path, "--format", "xml")
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_grafana_dashboard_reads_the_exported_metrics_and_cephs_own(tmp_path):
    """docs/grafana-cephbench.json queries only metrics the export writes, and labels it sets."""
    import re
    from conftest import REPO
    from cephbench.rundirs.export import METRICS
    dash = json.loads((REPO / "docs" / "grafana-cephbench.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["query"]["query"] for v in dash["templating"]["list"] if isinstance(v.get("query"), dict)]
    ours = {f"cephbench_{m.name}" for m in METRICS}
    used = {n for e in exprs for n in re.findall(r"\bcephbench_[a-z0-9_]+", e)}
    assert used and used <= ours, used - ours
    assert {lbl for e in exprs for lbl in re.findall(r"(\w+)=~", e)} <= set(LABELS)
    assert any("ceph_osd_op_w_latency_sum" in e for e in exprs)             # the mgr prometheus module's beside them


def test_grafana_annotations_are_one_region_per_test_with_its_figures_and_tags(tmp_path):
    """Issue 28 item 6: the run's tests over the operator's dashboards, as the body of Grafana's POST
    /api/annotations (ms since the epoch), found by the tags the dashboard's annotation query asks for."""
    run, m = make_run(tmp_path / "run")
    notes = json.loads(export(run, "grafana-annotations"))
    assert len(notes) == 4
    w = notes[0]
    assert w["time"] == 1_700_000_001_000 and w["timeEnd"] - w["time"] == int(m["write"].duration_s * 1000)
    assert w["tags"][:4] == ["cephbench", "run:run", "suite:exp-test", "kind:rados_bench"] and "op:write" in w["tags"]
    assert w["text"].startswith(f"cephbench 001-rados-write-4MiB-t16: {m['write'].bytes_per_s / 2**20:,.1f} MiB/s")
    assert "62% of its ceiling, bottleneck: disks" in w["text"]
    assert "p99" in notes[2]["text"]                                       # fio gives percentiles
    assert notes[3]["text"].endswith("failed: rados bench write failed: boom")
    dash = json.loads((Path(__file__).parent.parent.parent / "docs" / "grafana-cephbench.json").read_text())
    (ann,) = [a for a in dash["annotations"]["list"] if "cephbench" in a.get("target", {}).get("tags", [])]
    assert ann["datasource"]["type"] == "grafana" and ann["target"]["type"] == "tags"
    assert set(ann["target"]["tags"]) <= set(w["tags"])
