"""What makes a configuration itself beside its kind and parameters: the variant it ran under and the Ceph release
it ran on: its variant's lab shape's (`lab: {release: reef}`), else its run's. Export, history (and its catalog)
and compare all take it from here, so a new part of the identity is added in one place.

A part is absent, never "none", when the test has none: a plain run's key is what it was before variants existed.
"""

from __future__ import annotations

from typing import Any, Mapping

from .results import Result

# the parts, in the order they are shown; each also names the compare/history option that picks one
PARTS = ("variant", "release")


def release(meta: Mapping[str, Any]) -> str | None:
    """The Ceph release a run records in run.json (`release`), when it records one."""
    value = meta.get("release")
    return str(value) if isinstance(value, (str, int, float)) and str(value) else None


def result_release(result: Result, run_release: str | None) -> str | None:
    """The release `result` ran on: the one its variant's lab shape named, else its run's (`run_release`)."""
    own = result.variant.release if result.variant is not None else None
    return own or run_release


def identity(result: Result, meta: Mapping[str, Any]) -> dict[str, str]:
    """The parts of `result`'s identity that it has, e.g. {"variant": "tuned", "release": "quincy"}."""
    out: dict[str, str] = {}
    if result.test.variant is not None:
        out["variant"] = result.test.variant
    if (rel := result_release(result, release(meta))) is not None:
        out["release"] = rel
    return out
