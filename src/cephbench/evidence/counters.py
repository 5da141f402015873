"""OSD perf counters: the deltas of two `perf dump` documents (`ceph daemon osd.N perf dump`, or `ceph tell osd.N
perf dump`) over one test.

Pure: no I/O. A counter's name differs by release: Pacific (16.x) names BlueStore's latencies `commit_lat`,
`submit_lat`, `throttle_lat`; Quincy and later (Reef 18, Tentacle 20) `txc_commit_lat`, `txc_submit_lat`,
`txc_throttle_lat`. Each field is a meaning, found in the OSD's own schema (`perf schema`, or Reef's `counter
schema`) by its section, its type and the names releases gave it, else by its nick (the short name `ceph daemonperf`
shows; the txc_ renames kept theirs, `c_l` is the commit latency in both, while Reef re-nicked others whose names
stayed: kv_sync_lat's `ks_l` became `kscl`). Without a schema (an imported run, an OSD that gave none) the first of
its names present in the dump wins. So one parser reads every release.

Reef deprecates `perf dump` for `counter dump`, whose counters carry labels; a labelled section is a list of
{labels, counters}. Reef 18.2.7's OSD labels only its messenger workers: every counter read here is still in its
`perf dump` under the same section and name (tests/fixtures/counter_dump/), and `flat` reads either document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ..core.results import Evidence, OsdCounters


class Meaning(NamedTuple):
    section: str
    nick: str               # its nick in Pacific's `perf schema` (for a rename not listed); "" when none to go by
    names: tuple[str, ...]  # the names releases gave it


# `perf schema`'s type bits (src/common/perf_counters.h): a latency is a long-run average of a time, a count a
# monotonic u64 counter, a gauge a u64 that is not one
_TIME, _U64, _LONGRUNAVG, _COUNTER = 1, 2, 4, 8
LATENCY, COUNT, GAUGE = _TIME | _LONGRUNAVG, _U64 | _COUNTER, _U64

_COUNTS: dict[str, Meaning] = {
    "op_r": Meaning("osd", "", ("op_r",)),
    "op_w": Meaning("osd", "", ("op_w",)),
    "op_in_bytes": Meaning("osd", "wr", ("op_in_bytes",)),
    "op_out_bytes": Meaning("osd", "rd", ("op_out_bytes",)),
    "subop_w": Meaning("osd", "", ("subop_w",)),
}
_LATENCIES: dict[str, Meaning] = {
    "op_r_latency_s": Meaning("osd", "", ("op_r_latency",)),
    "op_w_latency_s": Meaning("osd", "", ("op_w_latency",)),
    "op_r_process_latency_s": Meaning("osd", "", ("op_r_process_latency",)),
    "op_w_process_latency_s": Meaning("osd", "", ("op_w_process_latency",)),
    "subop_w_latency_s": Meaning("osd", "", ("subop_w_latency",)),
    "commit_latency_s": Meaning("bluestore", "c_l", ("commit_lat", "txc_commit_lat")),
    "submit_latency_s": Meaning("bluestore", "s_l", ("submit_lat", "txc_submit_lat")),
    "throttle_latency_s": Meaning("bluestore", "th_l", ("throttle_lat", "txc_throttle_lat")),
    "kv_sync_latency_s": Meaning("bluestore", "ks_l", ("kv_sync_lat",)),
    "kv_flush_latency_s": Meaning("bluestore", "fl_l", ("kv_flush_lat",)),
    "aio_wait_latency_s": Meaning("bluestore", "io_l", ("state_aio_wait_lat",)),
}
# gauges: the value at the test's end, not a delta
_GAUGES: dict[str, Meaning] = {
    "bluefs_db_used_bytes": Meaning("bluefs", "u", ("db_used_bytes",)),
    "bluefs_slow_used_bytes": Meaning("bluefs", "slou", ("slow_used_bytes",)),
}


def read_names() -> list[tuple[str, str, bool]]:
    """Every counter `deltas` may read: (section, name, is a latency), each release's name: what an exporter's
    series of the same counters are named after (evidence/cephexporter.py)."""
    return [(m.section, name, table is _LATENCIES) for table in (_COUNTS, _LATENCIES, _GAUGES)
            for m in table.values() for name in m.names]


def _of_type(entry: Any, kind: int) -> bool:
    t = entry.get("type") if isinstance(entry, Mapping) else None
    return isinstance(t, int) and not isinstance(t, bool) and t & 0x1f & ~0x10 == kind


def flat(doc: Any) -> dict[str, Any]:
    """A `perf dump`/`perf schema` as is, or a `counter dump`/`counter schema` ({section: [{labels, counters}]})
    as one: each section's unlabelled counters; a labelled instance's as `section{key=value,...}`."""
    if not isinstance(doc, Mapping):
        return {}
    out: dict[str, Any] = {}
    for section, part in doc.items():
        if not isinstance(part, list):
            out[str(section)] = part
            continue
        for entry in part:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("counters"), Mapping):
                continue
            labels = entry.get("labels") if isinstance(entry.get("labels"), Mapping) else {}
            key = str(section) + ("{" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())) + "}"
                                  if labels else "")
            out.setdefault(key, {}).update(entry["counters"])
    return out


def resolve(schema: Mapping[str, Any] | None, meaning: Meaning, kind: int) -> tuple[str, ...]:
    """The name to read `meaning` by: from the OSD's schema, the counter of its section with its type and one of
    its names, else the one with its type and nick; without a schema, or a schema without the section, its names
    (the first present in the dump wins). () when the schema says the OSD has no such counter."""
    part = schema.get(meaning.section) if isinstance(schema, Mapping) else None
    if not isinstance(part, Mapping):
        return meaning.names
    typed = [name for name, entry in part.items() if _of_type(entry, kind)]
    by_name = [name for name in meaning.names if name in typed]
    if by_name:
        return (by_name[0],)
    by_nick = [name for name in typed if meaning.nick and part[name].get("nick") == meaning.nick]
    return (by_nick[0],) if len(by_nick) == 1 else ()


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


def deltas(before: Mapping[str, Any], after: Mapping[str, Any], osd: int, host: str | None = None,
           schema: Mapping[str, Any] | None = None, source: str | None = None) -> OsdCounters:
    """The counters of one OSD from `before` to `after` (two `perf dump` documents), their names found through
    `schema` (its `perf schema`) when given. A counter absent from either dump, or not of the expected shape, is
    None and named in `missing` (as section.name); a latency with no ops in between is None without being missing.
    A counter that went backwards (the OSD restarted) is treated as missing."""
    before, after, schema = flat(before), flat(after), flat(schema) if schema is not None else None
    fields: dict[str, float | None] = {}
    missing: list[str] = []

    def _missing(section: str, names: tuple[str, ...]) -> None:
        missing.append(f"{section}.{'|'.join(names)}")

    for field, m in _COUNTS.items():
        section, names = m.section, resolve(schema, m, COUNT) or m.names
        a, b = _lookup(before, section, names), _lookup(after, section, names)
        va = _number(a[1]) if a else None
        vb = _number(b[1]) if b else None
        if va is None or vb is None or vb < va:
            _missing(section, names)
            fields[field] = None
        else:
            fields[field] = vb - va
    for field, m in _LATENCIES.items():
        section, names = m.section, resolve(schema, m, LATENCY) or m.names
        a, b = _lookup(before, section, names), _lookup(after, section, names)
        pa = _avg_parts(a[1]) if a else None
        pb = _avg_parts(b[1]) if b else None
        if pa is None or pb is None or pb[0] < pa[0] or pb[1] < pa[1]:
            _missing(section, names)
            fields[field] = None
            continue
        count = pb[0] - pa[0]
        fields[field] = (pb[1] - pa[1]) / count if count > 0 else None
    for field, m in _GAUGES.items():
        section, names = m.section, resolve(schema, m, GAUGE) or m.names
        b = _lookup(after, section, names)
        vb = _number(b[1]) if b else None
        if vb is None:
            _missing(section, names)
        fields[field] = vb
    return OsdCounters(osd=osd, host=host, source=source, missing=missing, **fields)


def osd_evidence(before: tuple[dict[int, dict[str, Any]], dict[int, str]],
                 after: tuple[dict[int, dict[str, Any]], dict[int, str]], hosts: Mapping[int, str],
                 schemas: Mapping[int, Mapping[str, Any]] | None = None,
                 sources: Mapping[int, str] | None = None) -> Evidence:
    """Both readings of every OSD (perf dumps, and why an OSD could not be read) -> the test's Evidence; each
    OSD's `perf schema` (schemas) names its counters, and `sources` says how its counters were read."""
    osds, notes = [], []
    for osd in sorted(set(before[0]) | set(after[0]) | set(before[1]) | set(after[1])):
        why = after[1].get(osd) or before[1].get(osd)
        if osd in before[0] and osd in after[0]:
            osds.append(deltas(before[0][osd], after[0][osd], osd, hosts.get(osd), (schemas or {}).get(osd),
                               (sources or {}).get(osd)))
        else:
            notes.append(f"osd.{osd} on {hosts.get(osd, 'its host')}: counters not read ({why or 'no answer'})")
    return Evidence(osds=osds, notes=notes)
