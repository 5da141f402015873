"""The OSD settings that cap results (and the BlueStore ones the model reads), from `ceph config show-with-defaults
osd.N -f json` (pure: no I/O).
(`config show` alone lists only values that differ from the defaults, so it misses a default osd_op_queue.)
mClock's options are kept only when the scheduler is mClock: under wpq they do nothing."""

from __future__ import annotations

from typing import Any

CAPPING = ("osd_op_queue", "osd_memory_target", "bluestore_cache_size", "bluestore_cache_size_hdd",
           "bluestore_cache_size_ssd", "bluestore_cache_autotune")
MCLOCK_PREFIX = "osd_mclock_"
# what the model reads of BlueStore (analysis/storesettings.py): the deferred-write thresholds, the allocation unit
MODELLED = ("bluestore_prefer_deferred_size", "bluestore_prefer_deferred_size_hdd",
            "bluestore_prefer_deferred_size_ssd", "bluestore_min_alloc_size", "bluestore_min_alloc_size_hdd",
            "bluestore_min_alloc_size_ssd")


def capping_settings(doc: Any) -> dict[str, str]:
    """`config show-with-defaults` ([{name, value, source}, ...]) or the OSD's own `config show` ({name: value}:
    every option, defaults included; through its admin socket or `ceph tell osd.N`) -> {option: value} of the
    options that cap results; entries that do not read are skipped. The scheduler is among them: osd_op_queue, and
    under mClock (Reef's default) its profile, its client limits and each OSD's measured osd_mclock_max_capacity_* and max_sequential_bandwidth_* (what Reef's
    limits are fractions of: analysis/scheduler.py)."""
    if isinstance(doc, dict):
        values = {str(k): str(v) for k, v in doc.items() if isinstance(v, (str, int, float))}
    else:
        values = {e["name"]: str(e["value"]) for e in (doc if isinstance(doc, list) else [])
                  if isinstance(e, dict) and isinstance(e.get("name"), str) and "value" in e}
    out = {k: values[k] for k in CAPPING + MODELLED if k in values}
    if values.get("osd_op_queue", "").startswith("mclock"):
        out.update({k: v for k, v in sorted(values.items())
                    if k == "osd_mclock_profile" or k.startswith(MCLOCK_PREFIX + "max_capacity")
                    or k.startswith(MCLOCK_PREFIX + "max_sequential_bandwidth")
                    or k.startswith(MCLOCK_PREFIX + "scheduler_")})
    return out


def scheduler_of(settings: Any) -> dict[str, dict[str, str]]:
    """An evidence's settings ({"osd.N": capping_settings}) -> each OSD's scheduler alone: osd_op_queue and, under
    mClock, its profile, limits and measured capacities (what run.json records as `osd_scheduler`)."""
    out: dict[str, dict[str, str]] = {}
    for osd, values in (settings.items() if isinstance(settings, dict) else ()):
        if isinstance(values, dict):
            mine = {k: str(v) for k, v in values.items() if k == "osd_op_queue" or k.startswith(MCLOCK_PREFIX)}
            if mine:
                out[str(osd)] = mine
    return out
