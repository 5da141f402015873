"""What makes a configuration itself beside its kind and parameters: the variant it ran under and, when its run
records one, the Ceph release. Export, history (and its catalog) and compare all take it from here, so a new
part of the identity (a release per test, say) is added in one place.

A part is absent, never "none", when the test has none: a plain run's key is what it was before variants existed.
"""

from __future__ import annotations

from typing import Any, Mapping

from .results import Test

# the parts, in the order they are shown; each also names the compare/history option that picks one
PARTS = ("variant", "release")


def release(meta: Mapping[str, Any]) -> str | None:
    """The Ceph release a run records in run.json (`release`), when it records one."""
    value = meta.get("release")
    return str(value) if isinstance(value, (str, int, float)) and str(value) else None


def identity(test: Test, meta: Mapping[str, Any]) -> dict[str, str]:
    """The parts of `test`'s identity that it has, e.g. {"variant": "tuned", "release": "quincy"}."""
    out: dict[str, str] = {}
    if test.variant is not None:
        out["variant"] = test.variant
    if (rel := release(meta)) is not None:
        out["release"] = rel
    return out
