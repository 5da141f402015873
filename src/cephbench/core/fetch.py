"""One HTTP GET with a deadline on its whole answer, credentials kept to their origin, and a bound on its size.

urllib's timeout is each read's, and restarts with every byte: a server that sends one a second holds a request
forever. Here each connection's socket is shut at the deadline whatever the request waits for (TLS, headers, the
body). A header such as Authorization follows a redirect only within its origin (scheme, host and port).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class _Deadline:
    """Each connection a request opens, shut at the deadline whatever it waits for (TLS, headers, body): a
    duplicate of its socket's descriptor is shut down by a timer, which ends the read under way with an EOF."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self._guards: list[tuple[threading.Timer, socket.socket]] = []

    def connect(self, address: Any, timeout: Any = None, source_address: Any = None) -> socket.socket:
        sock = socket.create_connection(address, timeout, source_address)
        guard = socket.socket(fileno=os.dup(sock.fileno()))
        timer = threading.Timer(max(0.0, self.at - time.monotonic()), _shut, (guard,))
        timer.daemon = True
        timer.start()
        self._guards.append((timer, guard))
        return sock

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def close(self) -> None:
        for timer, guard in self._guards:
            timer.cancel()
            guard.close()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _timed(base: type, deadline: _Deadline) -> type:
    """`base` (HTTPConnection or HTTPSConnection) whose sockets the deadline shuts."""
    class Timed(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = deadline.connect
    return Timed


class _Timed:
    """An HTTP(S) handler whose connections the deadline shuts."""

    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(_timed(http_class, self.deadline), req, **kwargs)  # type: ignore[misc]


class _HTTP(_Timed, urllib.request.HTTPHandler):
    pass


class _HTTPS(_Timed, urllib.request.HTTPSHandler):
    pass


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(
        parts.scheme.lower())


class _SameOriginCredentials(urllib.request.HTTPRedirectHandler):
    """A redirect is followed, and the credentials with it only to the origin they were given for (scheme, host and
    port): a Prometheus behind a proxy that adds a slash keeps them, another host never gets them."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            new.remove_header("Authorization")
        return new


def _bounded_read(r: Any, max_bytes: int) -> bytes:
    body = r.read(max_bytes + 1)
    if len(body) > max_bytes:
        raise OSError(f"its answer is larger than {max_bytes // 1024**2} MiB")
    return body


def fetch(url: str, headers: dict[str, str] | None = None, timeout_s: float = 10.0, deadline_s: float = 60.0,
          max_bytes: int = 256 * 1024**2) -> tuple[int, str, bytes]:
    """GET `url`: its status, reason and body, an error status's too. OSError when it cannot be reached, its whole
    answer has not come within deadline_s (each connect and read within timeout_s), or it is larger than
    max_bytes."""
    req = urllib.request.Request(url, headers=headers or {})
    deadline = _Deadline(deadline_s)
    opener = urllib.request.build_opener(_HTTP(deadline), _HTTPS(deadline), _SameOriginCredentials())
    try:
        try:
            with opener.open(req, timeout=timeout_s) as r:
                status, reason, body = r.status, r.reason, _bounded_read(r, max_bytes)
        except urllib.error.HTTPError as exc:
            with exc:
                status, reason, body = exc.code, str(exc.reason), _bounded_read(exc, max_bytes)
    except (OSError, http.client.HTTPException) as exc:     # URLError is an OSError
        if not deadline.passed:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise OSError(str(reason) or type(exc).__name__) from None
    finally:
        deadline.close()
    if deadline.passed:     # cut short: what came is not the whole answer, whatever it looks like
        raise OSError(f"its whole answer did not come within {deadline_s:g} s")
    return status, reason, body
