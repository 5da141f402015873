"""Only the disk baseline's paths on an OSD's own device feed the model (issue 25, item 7).

A disk baseline result records per path whether it measured an OSD's own data device (`osd_devices`, from
drivers/osd_devices.py). A path on another device stands for no OSD: its figures are dropped and the medians
recomputed over the rest; the sentence saying so goes to the ceiling's reason. Paths that could not be checked
(older runs, `cephbench baseline disk` without a cluster) are used as before.
"""

from __future__ import annotations

import statistics
from typing import Any

from ..core.results import Result

KEYS = ("bytes_per_s", "ops_per_s")


def not_used(extra: dict[str, Any]) -> dict[str, str]:
    """The paths of one result that are not an OSD's own device -> the sentence saying so."""
    checked = extra.get("osd_devices") or {}
    return {label: str(c.get("text") or f"disk baseline measured {label}, not an OSD's device: not used")
            for label, c in checked.items() if isinstance(c, dict) and c.get("own") is False}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _without(extra: dict[str, Any], drop: set[str]) -> dict[str, Any]:
    """`extra` as if the baseline had measured only the paths not in `drop` (their own figures kept as measured)."""
    paths = [p for p in extra.get("paths") or [] if p not in drop]
    out = {**extra, "paths": paths, "devices": {p: d for p, d in (extra.get("devices") or {}).items() if p in paths}}
    per_host: dict[str, dict[str, Any]] = {}
    for scope in ("alone", "parallel"):
        mine = {p: s for p, s in (extra.get(scope) or {}).items() if p in paths and isinstance(s, dict)}
        out[scope] = mine
        for key in KEYS:
            out[f"{scope}_median_{key}"] = _median([float(s.get(key) or 0.0) for s in mine.values()])
        for s in mine.values():
            per_host.setdefault(str(s.get("host")), {"disks": 0})
        for host, x in per_host.items():
            here = [s for s in mine.values() if str(s.get("host")) == host]
            if scope == "alone":
                x["disks"] = len(here)
            for key in KEYS:
                x[f"{scope}_median_{key}"] = _median([float(s.get(key) or 0.0) for s in here])
    out["hosts"], out["per_host"] = list(per_host), per_host
    out.pop("slowest_disk", None)
    if out.get("slowest_host") not in per_host or len(per_host) < 2:
        out["slowest_host"] = None
    return out


def usable(disk: list[Result]) -> tuple[list[Result], list[str]]:
    """The disk baseline results with only their OSD-device paths (results left with none are dropped), and the
    sentences for the paths not used."""
    out: list[Result] = []
    texts: dict[str, str] = {}
    for r in disk:
        m = r.measurement
        drop = not_used(m.extra) if r.status == "ok" and m is not None else {}
        if not drop:
            out.append(r)
            continue
        texts.update(drop)
        extra = _without(m.extra, set(drop))
        if extra["paths"]:
            out.append(r.model_copy(update={"measurement": m.model_copy(update={
                "extra": extra, "bytes_per_s": extra["alone_median_bytes_per_s"],
                "ops_per_s": extra["alone_median_ops_per_s"]})}))
    return out, list(texts.values())
