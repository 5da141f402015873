"""The rgw workload: cephbench-loadgen argv, parser and exact HDR merge on real RGW output (loadgen/testdata:
RGW 16.2.15 from a `cephbench lab up` cluster; hdr_fixture.json holds two Go-encoded histograms and the
percentiles of their merge computed in Go), credentials, and the suite checks."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cephbench.cluster.ceph import Target
from cephbench.suite.config import parse_suite
from cephbench.core.errors import ParseError
from cephbench.drivers.rgw import binary, credentials, driver, endpoint
from cephbench.drivers.rgw import parse as rgw_parse
from cephbench.core.errors import UserError
from cephbench.suite.plan import expand
from cephbench.core.results import Test

TESTDATA = Path(__file__).resolve().parents[2] / "loadgen" / "testdata"
S3_MIXED = TESTDATA / "result-rgw-16.2.15-s3-mixed.json"
SWIFT_GET_OPEN = TESTDATA / "result-rgw-16.2.15-swift-get-open.json"
HDR_FIXTURE = TESTDATA / "hdr_fixture.json"


def doc(path: Path) -> dict:
    return json.loads(path.read_text())


# ---- parser ---------------------------------------------------------------------------------

def test_parse_s3_mixed_closed_loop():
    d = doc(S3_MIXED)
    m = rgw_parse.parse(S3_MIXED.read_text())
    assert m.tool == "cephbench-loadgen" and m.op == "mixed"
    assert m.ops_total == d["total"]["ops"] == sum(o["ops"] for o in d["operations"].values())
    assert m.ops_per_s == pytest.approx(d["total"]["ops_per_s"])
    assert m.bytes_per_s == pytest.approx(d["total"]["bytes_per_s"])
    assert m.duration_s == 5
    lat = d["total"]["lat_ns"]
    assert m.latency.percentiles_ns == {"50": lat["p50"], "90": lat["p90"], "99": lat["p99"], "99.9": lat["p999"]}
    assert (m.latency.min_ns, m.latency.max_ns, m.latency.mean_ns) == (lat["min"], lat["max"], lat["mean"])
    assert m.op_size_bytes is None          # a size distribution (4 KiB:70, 64 KiB:30)
    assert [s.t_s for s in m.timeseries] == [1, 2, 3, 4, 5, 6]
    assert m.timeseries[0].ops_per_s == 321 and m.timeseries[0].bytes_per_s == 6660096
    assert m.extra["loop"] == "closed" and m.extra["mix"] == {"delete": 10, "get": 70, "put": 20}
    assert set(m.extra["operations"]) == {"delete", "get", "put"}
    assert m.extra["operations"]["get"]["lat_ns"]["percentiles_ns"]["99"] == d["operations"]["get"]["lat_ns"]["p99"]
    assert m.extra["errors"] == 0 and m.extra["errors_by_kind"] == {}
    assert m.extra["ttfb_ns"]["50"] == d["total"]["ttfb_ns"]["p50"]
    assert m.extra["warmup_ops"] == 291 and m.extra["cleanup"]["buckets_left"] == []
    assert "stopped_reason" not in m.extra   # ran to the end


def test_parse_swift_get_open_loop():
    d = doc(SWIFT_GET_OPEN)
    m = rgw_parse.parse(SWIFT_GET_OPEN.read_text())
    assert m.op == "get" and m.op_size_bytes == 4096
    assert m.extra["protocol"] == "swift"
    assert (m.extra["loop"], m.extra["arrival"], m.extra["rate_ops_per_s"]) == ("open", "poisson", 100)
    assert m.extra["ttfb_ns"]["99.9"] == d["total"]["ttfb_ns"]["p999"]
    assert m.extra["ttfb_ns"]["max"] == d["total"]["ttfb_ns"]["max"]
    assert "operations" not in m.extra        # one op: the totals are that op
    assert len(m.extra["timeseries_lat_p50_p99_ns"]) == len(m.timeseries) == 6


def test_parse_keeps_errors_and_stop_reason():
    d = doc(SWIFT_GET_OPEN)
    d["total"]["errors"] = 7
    d["total"]["errors_by_kind"] = {"503 SlowDown": 5, "timeout": 2}
    d["stopped_reason"] = "error-ratio"
    m = rgw_parse.parse(json.dumps(d))
    assert m.extra["errors"] == 7 and m.extra["errors_by_kind"] == {"503 SlowDown": 5, "timeout": 2}
    assert m.extra["stopped_reason"] == "error-ratio"


@pytest.mark.parametrize("text,what", [
    ("", "not JSON"), ("{\"schema\": \"cephbench-loadgen/2\"}", "schema"), ("[1]", "schema"),
    (json.dumps({"schema": "cephbench-loadgen/1", "total": {}}), "missing"),
])
def test_parse_rejects_what_it_cannot_read(text, what):
    with pytest.raises(ParseError, match=what):
        rgw_parse.parse(text)


def test_parse_no_successful_op():
    d = doc(SWIFT_GET_OPEN)
    d["total"].update(ops=0, lat_ns=None, ttfb_ns=None, ops_per_s=0, bytes_per_s=0)
    m = rgw_parse.parse(json.dumps(d))
    assert m.ops_total == 0 and m.latency.percentiles_ns == {} and "ttfb_ns" not in m.extra


# ---- exact merge --------------------------------------------------------------------------------

def test_merge_equals_go_percentiles_of_the_merged_histograms():
    """Two clients whose histograms are hdr_fixture's A and B: the merge gives exactly Go's percentiles."""
    fx = doc(HDR_FIXTURE)
    parts = []
    for key in ("A", "B"):
        d = doc(SWIFT_GET_OPEN)
        d["total"]["hdr_lat"] = fx[key]
        parts.append(rgw_parse.parse(json.dumps(d)))
    m = rgw_parse.merge(parts)
    want = {k: float(fx["Percentiles"][k]) for k in ("50", "90", "99", "99.9")}
    assert m.latency.percentiles_ns == want
    assert rgw_parse.merge_histograms([fx["A"], fx["B"]]).get_total_count() == fx["TotalCount"]


def test_merge_of_two_real_clients():
    a, b = rgw_parse.parse(S3_MIXED.read_text()), rgw_parse.parse(SWIFT_GET_OPEN.read_text())
    m = rgw_parse.merge([a, b])
    assert m.ops_total == a.ops_total + b.ops_total
    assert m.ops_per_s == pytest.approx(a.ops_per_s + b.ops_per_s)
    assert m.bytes_total == a.bytes_total + b.bytes_total
    assert m.latency.min_ns == min(a.latency.min_ns, b.latency.min_ns)
    assert m.latency.max_ns == max(a.latency.max_ns, b.latency.max_ns)
    assert m.latency.mean_ns == pytest.approx(
        (a.latency.mean_ns * a.ops_total + b.latency.mean_ns * b.ops_total) / (a.ops_total + b.ops_total))
    hist = rgw_parse.merge_histograms([a.extra["hdr_lat"], b.extra["hdr_lat"]])
    assert hist.get_total_count() == m.ops_total
    assert m.latency.percentiles_ns["99"] == hist.get_value_at_percentile(99)
    # the merged histogram travels on, so merges compose
    assert rgw_parse._decode(m.extra["hdr_lat"]).get_total_count() == m.ops_total
    assert m.extra["instances"] == 2 and len(m.instances) == 2
    assert all(not k.startswith("hdr_") for i in m.instances for k in i.extra)
    assert set(m.extra["ttfb_ns"]) >= {"50", "90", "99", "99.9", "min", "max", "mean"}


def test_merge_aligns_time_series_on_start():
    a = rgw_parse.parse(SWIFT_GET_OPEN.read_text())
    late = doc(SWIFT_GET_OPEN)
    late["start_unix_ns"] += 2 * 10**9      # this client's measured phase began 2 s later
    b = rgw_parse.parse(json.dumps(late))
    m = rgw_parse.merge([a, b])
    by_t = {s.t_s: s.ops_per_s for s in m.timeseries}
    assert by_t[1] == a.timeseries[0].ops_per_s
    assert by_t[3] == a.timeseries[2].ops_per_s + b.timeseries[0].ops_per_s
    assert max(by_t) == 8


def test_merge_of_identical_clients_keeps_percentiles():
    a = rgw_parse.parse(SWIFT_GET_OPEN.read_text())
    m = rgw_parse.merge([a, a.model_copy()])
    # (p99.9 of 528 values is the 527th; of the doubled 1056 it is the 1055th, a copy of the max: not compared)
    assert {k: m.latency.percentiles_ns[k] for k in ("50", "90", "99")} == \
        {k: a.latency.percentiles_ns[k] for k in ("50", "90", "99")}
    assert m.ops_total == 2 * a.ops_total
    assert rgw_parse.merge([a]) is a
    with pytest.raises(ValueError):
        rgw_parse.merge([])


# ---- diagnosis ----------------------------------------------------------------------------------

def test_diagnose_names_the_nagle_stall():
    # the fixture's lab RGW had no tcp_nodelay: 4 KiB GET p50 45 ms, TTFB 3 ms
    notes = rgw_parse.diagnose(rgw_parse.parse(SWIFT_GET_OPEN.read_text()))
    assert len(notes) == 1 and "tcp_nodelay=1" in notes[0]
    d = doc(SWIFT_GET_OPEN)
    d["total"]["lat_ns"]["p50"] = d["total"]["ttfb_ns"]["p50"] + 2_000_000
    assert rgw_parse.diagnose(rgw_parse.parse(json.dumps(d))) == []


# ---- command line -------------------------------------------------------------------------------

def test_argv_duration_closed_loop(tmp_path):
    c = driver.LoadgenCommand(binary="lg", protocol="s3", endpoint="http://127.0.0.1:8000", workload="get",
                          object_size=4096, concurrency=16, bucket_prefix="cephbench-x-g001-get-i0-",
                          output=tmp_path / "o.json", duration_s=2.5, prefill=True)
    argv = c.argv()
    assert argv[:2] == ["lg", "run"]
    flags = dict(zip(argv[2::2], argv[3::2]))
    assert flags["--duration"] == "2500ms" and flags["--workload"] == "get" and flags["--object-size"] == "4096"
    assert flags["--bucket-prefix"] == "cephbench-x-g001-get-i0-"
    assert "--prefill=true" in argv and "--rate" not in argv and "--ops" not in argv


def test_argv_open_loop_mixed(tmp_path):
    c = driver.LoadgenCommand(binary="lg", protocol="swift", endpoint="http://h:1", workload="mixed", object_size=1,
                          concurrency=4, bucket_prefix="p-", output=tmp_path / "o.json", ops=1000, rate=250.0,
                          arrival="poisson", mix={"get": 7, "put": 3}, warmup_s=2)
    argv = c.argv()
    s = " ".join(argv)
    assert "--ops 1000" in s and "--rate 250 --arrival poisson" in s and "--mix get:7,put:3" in s
    assert "--warmup 2s" in s and "--duration" not in s and "--prefill" not in s
    with pytest.raises(ValueError):
        driver.LoadgenCommand(binary="lg", protocol="s3", endpoint="e", workload="put", object_size=1, concurrency=1,
                          bucket_prefix="p", output=tmp_path / "o").argv()


def test_find_loadgen_missing_names_setup(monkeypatch, tmp_path):
    monkeypatch.setattr(binary, "REPO_BINARY", tmp_path / "nope")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as e:
        binary.find_loadgen()
    assert "scripts/setup.sh" in e.value.one_line()


# ---- credentials ---------------------------------------------------------------------------------

USER_INFO = json.dumps({
    "user_id": "cephbench-abc-rgw",
    "keys": [{"user": "cephbench-abc-rgw", "access_key": "AK", "secret_key": "SK"}],
    "swift_keys": [{"user": "cephbench-abc-rgw:swift", "secret_key": "SWK"}],
})


def test_credentials_from_radosgw_admin_and_env_never_show_secrets():
    c = credentials.credentials_from_user_info(USER_INFO, "cephbench-abc-rgw")
    assert c.has("s3") and c.has("swift")
    assert "SK" not in repr(c) and "SWK" not in repr(c) and "AK" not in repr(c)
    assert c.env("s3") == {"CEPHBENCH_S3_ACCESS_KEY": "AK", "CEPHBENCH_S3_SECRET_KEY": "SK",
                           "CEPHBENCH_SWIFT_USER": "", "CEPHBENCH_SWIFT_KEY": ""}
    assert c.env("swift")["CEPHBENCH_SWIFT_USER"] == "cephbench-abc-rgw:swift"
    with pytest.raises(ParseError):
        credentials.credentials_from_user_info("{}", "x")


def test_credentials_from_env_and_file(tmp_path):
    assert credentials.credentials_from_env({}) is None
    e = credentials.credentials_from_env({"CEPHBENCH_S3_ACCESS_KEY": "a", "CEPHBENCH_S3_SECRET_KEY": "b"})
    assert e.has("s3") and not e.has("swift") and e.source == "environment"
    f = tmp_path / "keys.json"
    f.write_text(json.dumps({"swift_user": "u:swift", "swift_key": "k"}))
    c = credentials.credentials_from_file(str(f))
    assert c.has("swift") and not c.has("s3")
    with pytest.raises(UserError, match="does not exist"):
        credentials.credentials_from_file(str(tmp_path / "missing.json"))
    f.write_text("not json")
    with pytest.raises(UserError, match="cannot be read as JSON") as exc:
        credentials.credentials_from_file(str(f))
    assert "not json" not in exc.value.one_line()    # the content (maybe a secret) is never echoed


# ---- endpoint and preflight ----------------------------------------------------------------------

def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_closed_port_is_one_line():
    port = closed_port()
    with pytest.raises(UserError) as e:
        endpoint.check_connect(f"http://127.0.0.1:{port}")
    line = e.value.one_line()
    assert f"127.0.0.1:{port}" in line and "\n" not in line and "is RGW running" in line


def test_non_lab_target_needs_an_endpoint(tmp_path):
    target = Target(tmp_path / "ceph.conf", is_lab=False)
    with pytest.raises(UserError, match="needs the RGW address"):
        endpoint.resolve_endpoint({"endpoint": None}, target)
    assert endpoint.resolve_endpoint({"endpoint": "http://h:80"}, target) == "http://h:80"


def test_preflight_refuses_keys_without_the_protocol(monkeypatch, tmp_path):
    port_sock = socket.socket()
    port_sock.bind(("127.0.0.1", 0))
    port_sock.listen()
    try:
        ep = f"http://127.0.0.1:{port_sock.getsockname()[1]}"
        monkeypatch.setenv("CEPHBENCH_S3_ACCESS_KEY", "a")
        monkeypatch.setenv("CEPHBENCH_S3_SECRET_KEY", "b")
        monkeypatch.delenv("CEPHBENCH_SWIFT_USER", raising=False)
        monkeypatch.delenv("CEPHBENCH_SWIFT_KEY", raising=False)
        monkeypatch.setattr(driver, "find_loadgen", lambda: "lg")
        suite = parse_suite({"name": "t", "workloads": [{"type": "rgw", "protocol": ["s3", "swift"],
                                                         "endpoint": ep, "duration": "1s"}]}, "t.yaml")
        tests = expand(suite).tests

        class C:
            target = Target(tmp_path / "ceph.conf", is_lab=False)
        driver.preflight(C(), [t for t in tests if t.params["protocol"] == "s3"], None)
        with pytest.raises(UserError) as e:
            driver.preflight(C(), tests, None)
        assert "gives no swift keys" in e.value.one_line() and "CEPHBENCH_SWIFT_USER" in e.value.one_line()
    finally:
        port_sock.close()


# ---- suite ---------------------------------------------------------------------------------------

def rgw_suite(**w) -> dict:
    return {"name": "t", "workloads": [{"type": "rgw", **w}]}


@pytest.mark.parametrize("w,msg", [
    ({"object_size": "4X"}, "workloads[0].object_size: '4X' is not a size"),
    ({"op": ["mixed"], "mix": {"get": 0, "put": 0}}, "workloads[0]: the mix weights sum to zero"),
    ({"rate": 100}, "workloads[0]: an open-loop rate needs a length"),
    ({"duration": "1s", "ops": 10}, "give duration or ops, not both"),
    ({"mix": {"get": 1}}, "mix is used only by op mixed"),
    ({"arrival": "poisson", "duration": "1s"}, "arrival applies to an open loop"),
    ({"endpoint": "http://h:1/path"}, "workloads[0].endpoint: 'http://h:1/path' is not an RGW base URL"),
    ({"protocol": "ftp"}, "workloads[0].protocol"),
    ({"op": ["get", "copy"]}, "workloads[0].op[1]"),
    ({"concurrency": 0}, "workloads[0].concurrency"),
])
def test_bad_rgw_suites_are_one_line(w, msg):
    with pytest.raises(UserError) as e:
        parse_suite(rgw_suite(**w), "s.yaml")
    line = e.value.one_line()
    assert msg in line and "\n" not in line


def test_rgw_plan_phases_and_sweeps():
    suite = parse_suite(rgw_suite(protocol=["s3", "swift"], op=["put", "get"], object_size=["4KiB", "1MiB"],
                                  concurrency=[16, 64], duration="2s"), "s.yaml")
    tests = expand(suite).tests
    assert len(tests) == 16 and len({t.group for t in tests}) == 8
    t: Test = tests[0]
    assert t.id == "001-rgw-put-s3-4KiB-t16" and t.params["phase"] == "put" and t.params["duration_s"] == 2.0
    assert tests[1].params["phase"] == "get" and tests[1].group == t.group
    default = parse_suite(rgw_suite(), "s.yaml").workloads[0]
    assert default.duration == [30.0] and default.op == ["put", "get"]
    by_ops = expand(parse_suite(rgw_suite(ops=1000, rate=50), "s.yaml")).tests[0].params
    assert by_ops["ops"] == 1000 and by_ops["rate"] == 50 and by_ops.get("duration_s") is None


def test_live_figures_sum_the_last_progress_line_of_each_instance(tmp_path):
    # what cephbench-loadgen writes to its log while it runs (a put at 4 KiB against the lab's RGW)
    (tmp_path / "i0.log").write_text(
        "cephbench-loadgen: progress t=1s ops_per_s=210.0 bytes_per_s=860160\n"
        "cephbench-loadgen: progress t=2s ops_per_s=250.0 bytes_per_s=1024000\n")
    (tmp_path / "i1.log").write_text("cephbench-loadgen: progress t=1s ops_per_s=100.0 bytes_per_s=409600\n"
                                     "cephbench-loadgen: progress t=2s ops_per_s=1")   # being written
    from cephbench.drivers.rgw.driver import live_figures
    bw, ops = live_figures([tmp_path / "i0.log", tmp_path / "i1.log", tmp_path / "missing.log"])
    assert (bw, ops) == (1024000 + 409600, 250.0 + 100.0)
    assert live_figures([tmp_path / "missing.log"]) == (None, None)


def test_a_failure_after_progress_lines_reports_loadgen_s_message_not_a_progress_line():
    from cephbench.hosts.local import CommandResult
    log = ("cephbench-loadgen: progress t=1s ops_per_s=210.0 bytes_per_s=860160\n"
           "cephbench-loadgen: writing result: open /x/r.json: permission denied\n"
           "cephbench-loadgen: progress t=2s ops_per_s=0.0 bytes_per_s=0\n")
    assert CommandResult(["cephbench-loadgen"], 1, log, "", 2.0).error_text() == \
        "cephbench-loadgen: writing result: open /x/r.json: permission denied"
    only_progress = CommandResult(["cephbench-loadgen"], 137, log.splitlines()[0] + "\n", "", 2.0)
    assert only_progress.error_text() == "exit code 137"
