"""The model reads the cluster's own settings (deferred-write threshold per the OSDs' rotational flag, RGW's pool
sizes, min_alloc_size) and uses only the results the verdict counts (issue 25 item 4).

The run is real: tests/fixtures/report/ceph16.2.15_settings_rgw.* (the suite beside it on the one-host lab with RGW,
Ceph 16.2.15): a disk baseline, rados bench write and seq at 4 KiB and 4 MiB on a size-2 pool, S3 PUT and GET of
4 KiB through the lab's RGW (whose pools have size 3), under two variants: `default` and `no-deferred`
(`bluestore_prefer_deferred_size_hdd 0`). Its seqs ran out of objects and carry a warning."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from cephbench.analysis import RunAnalyzer, analyse, facts_from_run
from cephbench.analysis.storesettings import store_settings
from cephbench.core.results import Result

FIX = Path(__file__).parent.parent / "fixtures" / "report"
MIB = 1024**2


def _run() -> tuple[dict, list[Result]]:
    meta = json.loads((FIX / "ceph16.2.15_settings_rgw.run.json").read_text())
    results = [Result.model_validate_json(line) for line in
               (FIX / "ceph16.2.15_settings_rgw.results.jsonl").read_text().splitlines() if line.strip()]
    return meta, results


def _replay(meta: dict | None = None) -> dict[str, Result]:
    """Every result through a fresh analyser, in the run's order, as the runner attached them."""
    m, results = _run()
    meta = meta or m
    client = (meta.get("hosts") or {}).get("client") or {}
    an = RunAnalyzer(cluster=meta["cluster"], client_hostname=client.get("hostname"), cpus=client.get("cpu_count"))
    out = {}
    for r in results:
        r.analysis = None
        out[r.test.id] = an.attach(r)
    return out


def test_the_deferred_write_follows_the_variant_that_turned_it_off():
    got = _replay()
    off = got["008-rados-write-4KiB-t8-no-deferred"].analysis
    on = got["006-rados-write-4KiB-t8-default"].analysis
    assert "deferred write" not in off.reason, off.reason
    assert "bluestore_prefer_deferred_size_hdd" in off.reason and "0" in off.reason, off.reason
    assert "÷ 2 for BlueStore's deferred write" in on.reason and "bluestore_prefer_deferred_size_hdd" in on.reason
    # the same disks, twice the ceiling without the WAL's double write
    assert off.ceiling_bytes_per_s == pytest.approx(2 * on.ceiling_bytes_per_s)


def test_a_deferred_threshold_set_in_the_config_database_is_read_from_run_json():
    meta, _ = _run()
    meta = copy.deepcopy(meta)
    # the shape of the run's own config_dump entry (mgr/devicehealth/enable_monitoring), for an osd option
    meta["cluster"]["config_dump"].append({"section": "osd", "name": "bluestore_prefer_deferred_size_hdd",
                                           "value": "0", "level": "advanced", "can_update_at_runtime": True,
                                           "mask": ""})
    got = _replay(meta)
    assert "deferred write" not in got["006-rados-write-4KiB-t8-default"].analysis.reason


def test_solid_state_osds_use_the_ssd_threshold():
    meta, results = _run()
    cluster = copy.deepcopy(meta["cluster"])
    for md in cluster["osd_metadata"]:
        md["bluestore_bdev_rotational"] = md["rotational"] = "0"
    r = next(r for r in results if r.test.id == "006-rados-write-4KiB-t8-default")
    s = store_settings(r, cluster, rotational=False)
    assert s.deferred_max_bytes == 0 and "bluestore_prefer_deferred_size_ssd" in s.deferred_text
    cluster["config_dump"].append({"section": "osd", "name": "bluestore_prefer_deferred_size_ssd",
                                   "value": "65536", "level": "advanced", "can_update_at_runtime": True, "mask": ""})
    s = store_settings(r, cluster, rotational=False)
    assert s.deferred_max_bytes == 64 * 1024 and "config" in s.deferred_text


def test_min_alloc_size_is_the_one_the_osds_were_made_with():
    meta, results = _run()
    r = results[5]
    assert store_settings(r, meta["cluster"], rotational=True).min_alloc_bytes == 4096   # osd metadata says 4096


def test_rgw_get_ceiling_never_rests_on_a_rados_result_the_verdict_excludes():
    got = _replay()
    seqs = [r for r in got.values() if r.test.params.get("phase") == "seq"]
    assert seqs and all(r.warnings for r in seqs)          # every seq of this run ran out of objects
    get = got["015-rgw-get-4KiB-t8-default"].analysis
    assert "rados bench seq" not in get.reason, get.reason


def test_rgw_put_ceiling_uses_rgws_own_pool_size_not_another_pools_rates():
    meta, _ = _run()
    sizes = {p["pool_name"]: p["size"] for p in meta["cluster"]["pools"]}
    assert sizes["default.rgw.buckets.data"] == 3
    got = _replay()
    put = got["014-rgw-put-4KiB-t8-default"].analysis
    # the run's rados bench wrote to a size-2 pool: not what RGW's size-3 data pool does
    assert "rados bench write 4KiB of this run" not in put.reason, put.reason
    assert "3 replicas" in put.reason, put.reason


def test_facts_of_the_run_name_where_the_threshold_came_from():
    meta, results = _run()
    facts = facts_from_run(meta["cluster"], results)
    r = results[5]
    a = analyse(r, facts, cluster=meta["cluster"])
    assert "Pacific" in a.reason or "default" in a.reason


def test_the_osds_own_reading_of_the_threshold_is_kept_and_used():
    """The admin socket's `config show` (tests/fixtures/config_show, Ceph 16.2.15) carries the deferred thresholds
    and min_alloc_size: evidence.settings keeps them, and the model reads them before run.json's config dump."""
    from cephbench.evidence.settings import capping_settings
    doc = json.loads((Path(__file__).parent.parent / "fixtures" / "config_show" /
                      "ceph16.2.15_osd0_asok_config_show.json").read_text())
    kept = capping_settings(doc)
    assert kept["bluestore_prefer_deferred_size_hdd"] == "65536" and kept["bluestore_min_alloc_size_hdd"] == "4096"
    meta, results = _run()
    r = next(r for r in results if r.test.id == "006-rados-write-4KiB-t8-default")
    r.evidence.settings = {f"osd.{n}": capping_settings(dict(doc, bluestore_prefer_deferred_size_hdd="16384"))
                           for n in range(3)}
    s = store_settings(r, meta["cluster"], rotational=True)
    assert s.deferred_max_bytes == 16384 and "OSDs' config show" in s.deferred_text
