"""Names cephbench makes from others' words: a host or client name as part of a file name."""

from __future__ import annotations

import base64
import re
import shlex
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
    """A URL as it may be shown or written (run.json, logs, reports, errors): everything before its last "@" after
    the scheme replaced by ***. Textual and greedy, so that a password holding "/", "?", "#" or "@" (which end
    the authority to urlsplit, leaving the rest of the password in the path) and a URL that does not parse at all
    are shown without their credentials too; an "@" in a path costs the host's name, never the password."""
    text = url.strip()
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text)
    head = scheme.group(0) if scheme else ""
    rest = text[len(head):]
    if "@" in rest:
        rest = "***" + rest[rest.rindex("@"):]
    return (head + rest).rstrip("/")


# a URL inside other text ends at a space or a quote: its credentials, up to its last "@", are removed
_URL_WITH_USER = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^\s'\"<>]*@")


def without_credentials(text: str, urls: tuple[str, ...] = ()) -> str:
    """Any text that may quote a URL (an error, a note) with every URL's credentials removed: `urls`, the URLs
    the text may quote as they were given (whatever their password holds, spaces and quotes too), replaced by
    their shown_url, then any other scheme://user@ left."""
    for url in sorted(urls, key=len, reverse=True):
        if "@" in url:
            for form in (url, repr(url)[1:-1]):
                text = text.replace(form, shown_url(url))
    return _URL_WITH_USER.sub(r"\1***@", text)


# flags whose value is a secret in the commands cephbench runs (radosgw-admin's keys, a password)
SECRET_FLAGS = ("--secret-key", "--secret", "--access-key", "--key", "--password", "--pass")


def shown_argv(argv: list[str]) -> str:
    """A command as a log may show it: the value of each secret flag (`--secret-key S` or `--secret-key=S`) as
    ***, and every URL without its credentials."""
    shown: list[str] = []
    hide = False
    for word in argv:
        flag, eq, _ = word.partition("=")
        if hide:
            shown.append("***")
        elif eq and flag in SECRET_FLAGS:
            shown.append(f"{flag}=***")
        else:
            shown.append(word)
        hide = not hide and word in SECRET_FLAGS
    return without_credentials(shlex.join(shown))
