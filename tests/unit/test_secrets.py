"""A Prometheus URL's credentials: never in an error, whatever the password holds, and a resumed run sends them as
the original run did (run.json does not keep them)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.core.names import shown_url, without_credentials
from cephbench.evidence.prometheus import Prometheus
from cephbench.suite.config import PROMETHEUS_ENV, load_suite, parse_suite, resumed_suite
from clirun import cephbench

PASSWORDS = ["s3/cret", "s3#cret", "s3?cret", "s3@cret", "s3 cret", "s3'cr\"et", "s3:cret", "s3%2Fcret", "s3cret/"]


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_url_is_shown_without_its_password_whatever_it_holds(password):
    for url in (f"http://u:{password}@prom:9090", f"https://u:{password}@prom/x?y=1", f"u:{password}@prom",
                f"ftp://u:{password}@prom:99999"):
        assert "s3" not in shown_url(url) and "***@prom" in shown_url(url), url
        assert "s3" not in without_credentials(f"at {url!r}: refused", (url,))


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("shape", ["http://u:{p}@h:9090", "ftp://u:{p}@h:9090", "http://u:{p}@h:99999",
                                   "http://u:{p}@", "u:{p}@h", "http://u:{p}@h:9090/ x", "[http://u:{p}@h]",
                                   "{{url: 'http://u:{p}@h'}}", "http://u:{p}@h:9090\n"])
def test_validate_never_prints_the_password(tmp_path, password, shape):
    value = shape.format(p=password)
    suite = tmp_path / "s.yaml"
    suite.write_text(json.dumps({"name": "t", "settings": {"prometheus": value}, "workloads": [{"type": "osd_bench"}]}))
    res = cephbench("validate", suite)
    if res.returncode == 0:         # a URL it takes: the plan is printed, never the URL
        assert "s3" not in res.stdout + res.stderr
        return
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "s3" not in res.stderr and "settings.prometheus" in res.stderr, res.stderr


def test_a_password_that_would_end_the_host_is_refused_not_sent_elsewhere():
    # u:123/secret@h parses as host u, port 123, path /secret@h: the request would go to u
    with pytest.raises(UserError) as exc:
        parse_suite({"name": "t", "settings": {"prometheus": "http://u:123/secret@h:9090"},
                     "workloads": [{"type": "osd_bench"}]}, "s.yaml")
    assert "percent-encoded" in exc.value.one_line() and "secret" not in exc.value.one_line()


URL = "http://u:s3%2Fcr%40t@127.0.0.1:{port}"
SUITE = "name: t\nsettings: {{prometheus: '{url}'}}\nworkloads:\n  - {{type: osd_bench}}\n"


@pytest.fixture
def prometheus():
    """A real server on 127.0.0.1 answering buildinfo, keeping each request's Authorization."""
    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            seen.append(self.headers.get("Authorization"))
            body = b'{"status":"success","data":{}}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    yield URL.format(port=httpd.server_address[1]), seen
    httpd.shutdown()
    httpd.server_close()


def _recorded(tmp_path: Path, url: str) -> tuple[Path, dict]:
    path = tmp_path / "s.yaml"
    path.write_text(SUITE.format(url=url))
    recorded = json.loads(json.dumps(load_suite(path).model_dump(mode="json")))    # as run.json keeps it
    assert "s3" not in json.dumps(recorded) and "***@127.0.0.1" in recorded["settings"]["prometheus"]
    return path, recorded


def test_a_resumed_run_sends_the_credentials_the_original_run_sent(tmp_path, prometheus):
    url, seen = prometheus
    path, recorded = _recorded(tmp_path, url)
    Prometheus(load_suite(path).settings.prometheus).check()
    for suite in (resumed_suite(recorded, "run.json", load_suite(path), {}),           # the suite file again
                  resumed_suite(recorded, "run.json", None, {PROMETHEUS_ENV: url})):   # or the variable
        Prometheus(suite.settings.prometheus).check()
    assert seen == ["Basic " + base64.b64encode(b"u:s3/cr@t").decode()] * 3


def test_a_resumed_run_without_its_credentials_is_refused_never_sends_stars(tmp_path, prometheus):
    url, seen = prometheus
    _, recorded = _recorded(tmp_path, url)
    for env in ({}, {PROMETHEUS_ENV: url.replace("127.0.0.1", "localhost")}, {PROMETHEUS_ENV: shown_url(url)}):
        with pytest.raises(UserError) as exc:
            resumed_suite(recorded, "run.json", None, env)
        line = exc.value.one_line()
        assert "--resume" in line and PROMETHEUS_ENV in line and "s3" not in line, line
    # a suite whose URL had no credentials resumes from run.json alone
    plain = {**recorded, "settings": {**recorded["settings"], "prometheus": "http://127.0.0.1:1"}}
    assert resumed_suite(plain, "run.json", None, {}).settings.prometheus == "http://127.0.0.1:1"
    assert seen == []


def test_run_resume_of_a_run_with_credentials_is_one_line(tmp_path, prometheus):
    from cephbench.core.results import RunDir
    url, _ = prometheus
    path, recorded = _recorded(tmp_path, url)
    RunDir.create(tmp_path / "run", {"cephbench_version": "test", "suite_name": "t", "run_ids": ["abc123"],
                                     "suite": recorded, "started_unix": 1_700_000_000.0})
    args = ["--resume", tmp_path / "run", "--dry-run", "--conf", tmp_path / "no.conf"]
    res = cephbench("run", *args, env={PROMETHEUS_ENV: None})
    assert res.returncode == 2 and "--resume" in res.stderr and "s3" not in res.stderr, res.stderr
    # with its suite file, or the variable, it goes on to the cluster (here, a conf that does not exist)
    for res in (cephbench("run", path, *args, env={PROMETHEUS_ENV: None}),
                cephbench("run", *args, env={PROMETHEUS_ENV: url})):
        assert res.returncode == 2 and "--conf" in res.stderr and "does not exist" in res.stderr, res.stderr
