"""Where a run's Prometheus comes from, and a URL that answers but is not Prometheus (issue 38): `--prometheus`, else
the suite's settings.prometheus, else CEPHBENCH_PROMETHEUS (what `lab env` exports), each refused in one line naming
it; a node-exporter's address given in Prometheus' place is named as what it is, not "Expecting value: line 1
column 1", on its real answers and against a real node-exporter."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.evidence import promanswer as pa
from cephbench.suite.config import PROMETHEUS_ENV, parse_suite, with_prometheus

from clirun import cephbench

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "prometheus"
SUITE = {"name": "p", "pools": {"rep": {"type": "replicated", "size": 1, "pg_num": 8}},
         "workloads": [{"name": "w", "type": "rados_bench", "pool": "rep", "modes": ["write"],
                        "object_size": ["4KiB"], "concurrency": 1, "duration": "1s"}]}


def _suite(prometheus: str | None = None):
    return parse_suite({**SUITE, **({"settings": {"prometheus": prometheus}} if prometheus else {})}, "s.yaml")


def test_the_flag_then_the_suite_then_the_environment():
    env = {PROMETHEUS_ENV: "http://env:9090"}
    suite, where = with_prometheus(_suite("http://suite:9095"), "https://u:p@flag:9090", env)
    assert (suite.settings.prometheus, where) == ("https://u:p@flag:9090", "--prometheus")
    suite, where = with_prometheus(_suite("http://suite:9095"), None, env)
    assert (suite.settings.prometheus, where) == ("http://suite:9095", "settings.prometheus")
    suite, where = with_prometheus(_suite(), None, env)
    assert (suite.settings.prometheus, where) == ("http://env:9090", PROMETHEUS_ENV)
    assert with_prometheus(_suite(), None, {}) == (_suite(), "")
    # run.json keeps it without its credentials, as the suite's own
    assert with_prometheus(_suite(), "https://u:p@flag:9090", {})[0].model_dump(mode="json")["settings"][
        "prometheus"] == "https://***@flag:9090"


@pytest.mark.parametrize("flag, env, where", [("ftp://x:1", {}, "--prometheus"), ("", {}, "--prometheus"),
                                               (None, {PROMETHEUS_ENV: "http://u:sec/ret@h:9090"}, PROMETHEUS_ENV)])
def test_a_url_that_is_not_one_is_refused_naming_where_it_came_from(flag, env, where):
    with pytest.raises(UserError) as exc:
        with_prometheus(_suite(), flag, env)
    assert exc.value.where == where and "sec" not in exc.value.one_line(), exc.value.one_line()


def test_what_answers_in_prometheus_place_is_named():
    assert pa.not_prometheus((FIXTURES / "prom2.42_buildinfo.json").read_bytes()) == ""
    page = pa.not_prometheus((FIXTURES / "node-exporter1.5.0_metrics_head.txt").read_bytes())
    assert page.startswith("it serves a metrics page (an exporter's") and "go_gc_duration_seconds" in page
    landing = pa.not_prometheus((FIXTURES / "node-exporter1.5.0_api_v1_status_buildinfo.html").read_bytes())
    assert landing == "it answered an HTML page titled 'Node Exporter', not Prometheus's query API's JSON"
    assert pa.not_prometheus(b'{"status": "error"}').startswith("its JSON is not a Prometheus answer")
    assert pa.not_prometheus(b"") == "it answered nothing"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def node_exporter():
    exe = shutil.which("prometheus-node-exporter")
    if exe is None:
        pytest.skip("prometheus-node-exporter is not installed (scripts/setup.sh installs it for the lab)")
    port = _free_port()
    proc = subprocess.Popen([exe, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                             "--collector.loadavg"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


def test_a_run_given_a_node_exporter_for_prometheus_says_so_in_one_line(node_exporter, tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text("name: p\npools:\n  rep: {type: replicated, size: 1, pg_num: 8}\nworkloads:\n  - name: w\n"
                     "    type: rados_bench\n    pool: rep\n    modes: [write]\n    object_size: [4KiB]\n"
                     "    concurrency: 1\n    duration: 1s\n")
    for args, env, where in (([suite, "--prometheus", node_exporter], {}, "--prometheus"),
                             ([suite], {PROMETHEUS_ENV: node_exporter}, PROMETHEUS_ENV)):
        res = cephbench("run", *args, "--out", tmp_path / "run", env=env)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1, res.stdout + res.stderr
        assert lines[0].startswith(f"cephbench: {where}: {node_exporter} answers, but is not Prometheus: it "
                                   "answered an HTML page titled 'Node Exporter'"), lines[0]
        assert "port 9095" in lines[0] and "Expecting value" not in lines[0]
        assert not (tmp_path / "run").exists()
