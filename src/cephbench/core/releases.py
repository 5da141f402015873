"""Ceph's releases by name: the one a version string belongs to, and the one a cluster runs (pure).

A run records its cluster's release in run.json (`release`: the identity export, history and compare key on;
`ceph_release`: its version and every daemon's), on any cluster: a foreign cluster's comes from `ceph versions`, as a
lab's does."""

from __future__ import annotations

import re
from typing import Any, Mapping

NAMES_BY_MAJOR = {16: "pacific", 17: "quincy", 18: "reef", 19: "squid", 20: "tentacle"}
# "ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)"
_VERSION = re.compile(r"ceph version (\d+)\.(\d+)\.(\d+)\S*")


def release_of_version(version: str) -> str:
    """'ceph version 18.2.7 (...) reef (stable)' or '18.2.7+ds-1' -> 'reef' (the major number decides)."""
    for word in version.replace("-", " ").split():
        head = word.split(".")[0]
        if "." in word and head.isdigit():
            return NAMES_BY_MAJOR.get(int(head), f"ceph {head}")
    return ""


def cluster_release(versions: Any) -> dict[str, Any] | None:
    """`ceph versions` ({"overall": {"ceph version ...": count}, "osd": {...}, ...}) -> {"name": "reef",
    "version": "18.2.7", "daemons": count, "others": {"16.2.15": count}}: the release most daemons run, with the
    daemons on other versions (an upgrade in progress); None when the answer names no version."""
    overall = versions.get("overall") if isinstance(versions, Mapping) else None
    counts: dict[str, int] = {}
    for text, n in (overall.items() if isinstance(overall, Mapping) else ()):
        m = _VERSION.search(str(text))
        if m and isinstance(n, int) and not isinstance(n, bool):
            v = ".".join(m.groups())
            counts[v] = counts.get(v, 0) + n
    if not counts:
        return None
    top = max(counts, key=lambda v: (counts[v], tuple(int(x) for x in v.split("."))))
    return {"name": release_of_version(top), "version": top, "daemons": counts[top],
            "others": {v: n for v, n in sorted(counts.items()) if v != top}}
