"""BlueStore's settings the model needs, as the cluster ran them for one result (pure).

Where each value comes from, first found wins:
  1. the result's variant, as the OSDs reported it after `ceph config set` (Result.variant);
  2. the OSDs' own `config show` at the run's first counter reading (Result.evidence.settings);
  3. run.json's cluster facts: `ceph config dump` (osd before global, no device-class or host mask);
  4. Pacific's defaults.
min_alloc_size is fixed when an OSD is made: `ceph osd metadata`'s `bluestore_min_alloc_size` says what it is,
whatever the option says today.

Ceph takes `bluestore_prefer_deferred_size` (and `bluestore_min_alloc_size`) when it is not 0, else the `_hdd` or
`_ssd` one by the OSD's rotational flag. A write of at most that size goes through the WAL first (the double write).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..core.results import Result
from ..core.units import parse_size
from ..core.units import exact_size

PACIFIC_DEFAULTS = {
    "bluestore_prefer_deferred_size": "0", "bluestore_prefer_deferred_size_hdd": "65536",
    "bluestore_prefer_deferred_size_ssd": "0",
    "bluestore_min_alloc_size": "0", "bluestore_min_alloc_size_hdd": "4096", "bluestore_min_alloc_size_ssd": "4096",
}


@dataclass(frozen=True)
class StoreSettings:
    deferred_max_bytes: int          # writes of at most this many bytes are deferred (0: none)
    deferred_text: str               # the option, its value and where it came from, for the reason
    min_alloc_bytes: int | None      # the OSDs' allocation unit, as made
    min_alloc_text: str


def _bytes(value: str) -> int | None:
    try:
        return parse_size(value.strip())
    except Exception:   # noqa: BLE001 - a value we cannot read is not a setting we can use
        return None


def _from_variant(result: Result, name: str) -> tuple[str, str] | None:
    for o in (result.variant.options if result.variant else []):
        if o.name == name and o.who.split(".")[0] in ("osd", "global"):
            reported = list(o.reported.values())
            value = Counter(reported).most_common(1)[0][0] if reported else o.value
            return value, f"variant {result.variant.name}"
    return None


def _from_evidence(result: Result, name: str) -> tuple[str, str] | None:
    per_osd = [s[name] for s in ((result.evidence.settings or {}).values() if result.evidence else [])
               if isinstance(s, dict) and name in s]
    if not per_osd:
        return None
    value, n = Counter(per_osd).most_common(1)[0]
    where = "the OSDs' config show" if n == len(per_osd) else f"{n} of {len(per_osd)} OSDs' config show"
    return value, where


def _from_config_dump(cluster: dict[str, Any], name: str) -> tuple[str, str] | None:
    dump = cluster.get("config_dump")
    found = {e.get("section"): str(e.get("value")) for e in (dump if isinstance(dump, list) else [])
             if isinstance(e, dict) and e.get("name") == name and not e.get("mask") and "value" in e}
    for section in ("osd", "global"):
        if section in found:
            return found[section], f"ceph config ({section})"
    return None


def _option(result: Result, cluster: dict[str, Any], name: str) -> tuple[int, str]:
    for look in (_from_variant, _from_evidence):
        if (got := look(result, name)) and (v := _bytes(got[0])) is not None:
            return v, got[1]
    if (got := _from_config_dump(cluster, name)) and (v := _bytes(got[0])) is not None:
        return v, got[1]
    return int(PACIFIC_DEFAULTS[name]), "Pacific's default"


def _per_medium(result: Result, cluster: dict[str, Any], base: str, rotational: bool) -> tuple[int, str]:
    """The generic option when it is not 0, else the one for the OSDs' medium."""
    v, src = _option(result, cluster, base)
    if v:
        return v, f"{base} {exact_size(v)}, {src}"
    name = f"{base}_{'hdd' if rotational else 'ssd'}"
    v, src = _option(result, cluster, name)
    return v, f"{name} {exact_size(v) if v else '0'}, {src}"


def store_settings(result: Result, cluster: dict[str, Any], rotational: bool) -> StoreSettings:
    deferred, dtext = _per_medium(result, cluster, "bluestore_prefer_deferred_size", rotational)
    made = [int(m["bluestore_min_alloc_size"]) for m in (cluster.get("osd_metadata") or [])
            if isinstance(m, dict) and str(m.get("bluestore_min_alloc_size", "")).isdigit()]
    if made:
        alloc = int(statistics.median(made))
        atext = f"min_alloc_size {exact_size(alloc)} (osd metadata)"
    else:
        alloc, src = _per_medium(result, cluster, "bluestore_min_alloc_size", rotational)
        atext = f"min_alloc_size: {src}"
    return StoreSettings(deferred, dtext, alloc or None, atext)
