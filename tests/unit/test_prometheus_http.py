"""Prometheus over HTTP against real local servers (127.0.0.1): credentials stay with their origin across
redirects, and a server that answers one byte at a time cannot hold a request past its deadline."""

from __future__ import annotations

import base64
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cephbench.core.errors import UserError
from cephbench.evidence import prometheus as prom_mod
from cephbench.evidence.prometheus import Prometheus

BUILDINFO = b'{"status":"success","data":{"version":"2.42.0"}}'
CREDS = "Basic " + base64.b64encode(b"u:s3/cr#t?").decode()


class _Server:
    """A ThreadingHTTPServer whose handler is `answer(handler)`; every request's path and Authorization kept."""

    def __init__(self, answer) -> None:
        seen = self.seen = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                seen.append((self.path, self.headers.get("Authorization")))
                answer(self)

            def log_message(self, *args):
                pass
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers():
    made: list[_Server] = []

    def make(answer) -> _Server:
        made.append(_Server(answer))
        return made[-1]
    yield make
    for s in made:
        s.close()


def _ok(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(BUILDINFO)))
    h.end_headers()
    h.wfile.write(BUILDINFO)


def _redirect_to(url):
    """An answer redirecting every path to /moved<path> at url() (here, or another server), answered there."""
    def answer(h: BaseHTTPRequestHandler) -> None:
        if h.path.startswith("/moved"):
            return _ok(h)
        h.send_response(302)
        h.send_header("Location", f"{url()}/moved{h.path}")
        h.send_header("Content-Length", "0")
        h.end_headers()
    return answer


def _with_creds(url: str) -> str:
    return url.replace("http://", "http://u:s3%2Fcr%23t%3F@")


def test_credentials_never_follow_a_redirect_to_another_origin(servers):
    other = servers(_ok)                                   # another port of the same host: another origin
    first = servers(_redirect_to(lambda: other.url))
    assert Prometheus(_with_creds(first.url)).get("/api/v1/status/buildinfo") == BUILDINFO
    assert first.seen == [("/api/v1/status/buildinfo", CREDS)]
    assert other.seen == [("/moved/api/v1/status/buildinfo", None)]


def test_credentials_follow_a_redirect_within_their_origin(servers):
    same = servers(_redirect_to(lambda: same.url))
    assert Prometheus(_with_creds(same.url)).get("/api/v1/status/buildinfo") == BUILDINFO
    assert same.seen == [("/api/v1/status/buildinfo", CREDS), ("/moved/api/v1/status/buildinfo", CREDS)]


@pytest.fixture
def slow_loris():
    """A server that reads the request, then answers one byte every 0.1 s for as long as the client listens: no
    read ever waits a whole timeout."""
    lsock = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Pad: " + b"a" * 10**6
            for byte in answer:
                if stop.is_set():
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.1)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    yield f"http://u:secret@127.0.0.1:{lsock.getsockname()[1]}"
    stop.set()
    lsock.close()


def _within(seconds: float, fn):
    """fn() in a thread: its exception or result, failing the test if it has neither after `seconds` (a hang)."""
    box: dict = {}

    def call() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc
    t = threading.Thread(target=call, daemon=True)
    t0 = time.monotonic()
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still waiting after {seconds} s"
    return box, time.monotonic() - t0


def test_a_server_sending_a_byte_at_a_time_is_cut_at_the_deadline(slow_loris):
    box, took = _within(10, lambda: Prometheus(slow_loris, timeout_s=1, deadline_s=1.5).get("/api/v1/query"))
    assert isinstance(box.get("error"), OSError) and "within 1.5 s" in str(box["error"]), box
    assert 1.4 < took < 3


def test_the_preflight_of_a_slow_loris_is_one_line_without_the_password(slow_loris):
    box, took = _within(10, lambda: Prometheus(slow_loris, timeout_s=1, deadline_s=1).check())
    assert isinstance(box.get("error"), UserError), box
    line = box["error"].one_line()
    assert "did not come within 1 s" in line and "secret" not in line and "***@127.0.0.1" in line, line
    assert took < 3


def test_an_answer_past_the_bound_is_refused_not_read_whole(servers, monkeypatch):
    monkeypatch.setattr(prom_mod, "MAX_ANSWER_BYTES", 100)
    big = servers(lambda h: (h.send_response(200), h.send_header("Content-Length", "1000"), h.end_headers(),
                             h.wfile.write(b"{" + b" " * 999)))
    with pytest.raises(OSError, match="larger than"):
        Prometheus(big.url).get("/api/v1/query")


def test_the_default_deadline_is_a_whole_request_and_longer_than_a_connect():
    p = Prometheus("http://prom:9090")
    assert p.timeout_s < p.deadline_s <= 120
