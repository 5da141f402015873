"""Names cephbench makes from others' words: a host or client name as part of a file name."""

from __future__ import annotations

import base64
import re
import urllib.parse

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """Anything -> a file-name part: each run of other characters becomes one "_"."""
    return _SAFE.sub("_", text)


def split_url(url: str) -> tuple[str, str | None]:
    """URL -> (the URL without user and password, its Basic credentials base64-encoded, or None)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url.rstrip("/"), None
    host = parts.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    bare = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)).rstrip("/")
    user = urllib.parse.unquote(parts.username or "")
    password = urllib.parse.unquote(parts.password or "")
    return bare, base64.b64encode(f"{user}:{password}".encode()).decode()


def shown_url(url: str) -> str:
    """A URL as it may be shown or written (run.json, logs, reports): its credentials replaced by ***. Textual, so
    that a URL that does not parse (a port out of range) is shown without them too."""
    return re.sub(r"^((?:[A-Za-z][A-Za-z0-9+.-]*://)?)[^/?#]*@", r"\1***@", url.strip()).rstrip("/")
