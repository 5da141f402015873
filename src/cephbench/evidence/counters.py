"""OSD perf counters: the deltas of two `perf dump` documents (`ceph daemon osd.N perf dump`) over one test.

Pure: no I/O. Pacific (16.x) names BlueStore's latencies `commit_lat`, `kv_sync_lat`, `kv_flush_lat`,
`state_aio_wait_lat`; newer Ceph renamed some with a `txc_` prefix (`txc_commit_lat`, `txc_kv_sync_lat`, ...).
Each field takes the first name present, so one parser reads both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..results import Evidence, OsdCounters

# field -> (section, candidate names, newest first is not needed: the first present wins)
_COUNTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "op_r": ("osd", ("op_r",)),
    "op_w": ("osd", ("op_w",)),
    "op_in_bytes": ("osd", ("op_in_bytes",)),
    "op_out_bytes": ("osd", ("op_out_bytes",)),
    "subop_w": ("osd", ("subop_w",)),
}
_LATENCIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "op_r_latency_s": ("osd", ("op_r_latency",)),
    "op_w_latency_s": ("osd", ("op_w_latency",)),
    "op_r_process_latency_s": ("osd", ("op_r_process_latency",)),
    "op_w_process_latency_s": ("osd", ("op_w_process_latency",)),
    "subop_w_latency_s": ("osd", ("subop_w_latency",)),
    "commit_latency_s": ("bluestore", ("commit_lat", "txc_commit_lat")),
    "kv_sync_latency_s": ("bluestore", ("kv_sync_lat", "txc_kv_sync_lat")),
    "kv_flush_latency_s": ("bluestore", ("kv_flush_lat", "txc_kv_flush_lat")),
    "aio_wait_latency_s": ("bluestore", ("state_aio_wait_lat", "txc_state_aio_wait_lat")),
}
# gauges: the value at the test's end, not a delta
_GAUGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "bluefs_db_used_bytes": ("bluefs", ("db_used_bytes",)),
    "bluefs_slow_used_bytes": ("bluefs", ("slow_used_bytes",)),
}


def _lookup(dump: Mapping[str, Any], section: str, names: tuple[str, ...]) -> tuple[str, Any] | None:
    part = dump.get(section)
    if not isinstance(part, Mapping):
        return None
    for name in names:
        if name in part:
            return name, part[name]
    return None


def _number(value: Any) -> float | None:
    # bool is an int in Python; a counter never is one
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _avg_parts(value: Any) -> tuple[float, float] | None:
    """A long-running average counter is {avgcount, sum (seconds), avgtime}; its delta's mean is Δsum / Δavgcount."""
    if not isinstance(value, Mapping):
        return None
    count, total = _number(value.get("avgcount")), _number(value.get("sum"))
    if count is None or total is None:
        return None
    return count, total


def deltas(before: Mapping[str, Any], after: Mapping[str, Any], osd: int, host: str | None = None) -> OsdCounters:
    """The counters of one OSD from `before` to `after` (two `perf dump` documents). A counter absent from either
    dump, or not of the expected shape, is None and named in `missing` (as section.name); a latency with no ops in
    between is None without being missing. A counter that went backwards (the OSD restarted) is treated as missing."""
    fields: dict[str, float | None] = {}
    missing: list[str] = []

    def _missing(section: str, names: tuple[str, ...]) -> None:
        missing.append(f"{section}.{'|'.join(names)}")

    for field, (section, names) in _COUNTS.items():
        a, b = _lookup(before, section, names), _lookup(after, section, names)
        va = _number(a[1]) if a else None
        vb = _number(b[1]) if b else None
        if va is None or vb is None or vb < va:
            _missing(section, names)
            fields[field] = None
        else:
            fields[field] = vb - va
    for field, (section, names) in _LATENCIES.items():
        a, b = _lookup(before, section, names), _lookup(after, section, names)
        pa = _avg_parts(a[1]) if a else None
        pb = _avg_parts(b[1]) if b else None
        if pa is None or pb is None or pb[0] < pa[0] or pb[1] < pa[1]:
            _missing(section, names)
            fields[field] = None
            continue
        count = pb[0] - pa[0]
        fields[field] = (pb[1] - pa[1]) / count if count > 0 else None
    for field, (section, names) in _GAUGES.items():
        b = _lookup(after, section, names)
        vb = _number(b[1]) if b else None
        if vb is None:
            _missing(section, names)
        fields[field] = vb
    return OsdCounters(osd=osd, host=host, missing=missing, **fields)


def osd_evidence(before: tuple[dict[int, dict[str, Any]], dict[int, str]],
                 after: tuple[dict[int, dict[str, Any]], dict[int, str]], hosts: Mapping[int, str]) -> Evidence:
    """Both readings of every OSD (perf dumps, and why an OSD could not be read) -> the test's Evidence."""
    osds, notes = [], []
    for osd in sorted(set(before[0]) | set(after[0]) | set(before[1]) | set(after[1])):
        why = after[1].get(osd) or before[1].get(osd)
        if osd in before[0] and osd in after[0]:
            osds.append(deltas(before[0][osd], after[0][osd], osd, hosts.get(osd)))
        else:
            notes.append(f"osd.{osd} on {hosts.get(osd, 'its host')}: counters not read ({why or 'no answer'})")
    return Evidence(osds=osds, notes=notes)
