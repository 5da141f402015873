"""Other clients' load from real `ceph df detail -f json` of Ceph 16.2.15, 18.2.7 and 20.2.4, read before and after
another client's writes (tests/fixtures/ceph_df/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.evidence.otherload import (PoolCounts, PoolIo, busy, describe_background, other_load, others_between,
                                          pool_counts, rgw_pools)

FIX = Path(__file__).parent.parent / "fixtures"


def _counts(name: str) -> dict[str, PoolCounts]:
    return pool_counts(json.loads((FIX / "ceph_df" / name).read_text()))


def _pair(what: str, release: str = "ceph16.2.15") -> tuple[dict[str, PoolCounts], dict[str, PoolCounts]]:
    return _counts(f"{release}_detail_before_{what}.json"), _counts(f"{release}_detail_after_{what}.json")


def test_another_clients_writes_count_and_ours_do_not():
    """Two 3 s rados bench writes at once, 64 KiB x 4 in flight: into `other` (1790 writes, 37.2 MB/s) and into
    `cephbench-r1-rados` (1815): over the 3 s, the other client's ops and bytes, and none of ours."""
    before, after = _pair("writes")
    io = others_between(before, after, 3.0, "cephbench-r1-")
    assert io.pools == ["other"] and io.background_pools == []
    # rados bench's own metadata object is one write more, of 1 KiB
    assert io.ops_per_s == pytest.approx(1791 / 3) and io.write_bytes_per_s == pytest.approx(1790 * 65536 / 3, rel=1e-3)
    assert io.read_bytes_per_s == 0 and busy(other_load(io))


def test_another_run_of_cephbench_is_another_client():
    before, after = _pair("writes")
    assert sorted(others_between(before, after, 3.0, "cephbench-r2-").pools) == ["cephbench-r1-rados", "other"]


@pytest.mark.parametrize("release,writes", [("ceph18.2.7", 3021), ("ceph20.2.4", 3906)])
def test_reef_and_tentacle_count_the_same_way(release, writes):
    """A 2 s rados bench write of 64 KiB into `other` on a 2-OSD lab of each release (3020 and 3905 writes made)."""
    before, after = _pair("writes", release)
    io = others_between(before, after, 2.0, "cephbench-r1-")
    assert "other" in io.pools and io.ops_per_s >= writes / 2
    assert io.write_bytes_per_s == pytest.approx((writes - 1) * 65536 / 2, rel=1e-3)


def test_a_cluster_idle_between_the_readings_has_no_other_load():
    before, _ = _pair("writes")
    assert others_between(before, before, 3.0, "cephbench-r1-") == PoolIo()
    assert other_load(PoolIo()) is None


def test_a_pool_made_between_the_readings_counts_from_zero_and_one_made_again_is_left_out():
    before, after = _pair("writes")
    assert others_between({k: v for k, v in before.items() if k != "other"}, after, 3.0,
                          "cephbench-r1-").pools == ["other"]
    again = {**before, "other": PoolCounts(write_ops=10**6, write_bytes=10**12)}
    assert others_between(again, after, 3.0, "cephbench-r1-").pools == []


@pytest.mark.parametrize("doc", [None, {}, "x", {"pools": "x"}, {"pools": [1, {"name": 3, "stats": {}}]},
                                 {"pools": [{"name": "p", "stats": []}]},
                                 {"pools": [{"name": "p", "stats": {"rd": 1, "rd_bytes": 2, "wr": "many",
                                                                    "wr_bytes": 4}}]},
                                 {"pools": [{"name": "p", "stats": {"stored": 1, "objects": 2}}]}])
def test_documents_that_do_not_read_give_no_counts(doc):
    """`ceph df` without `detail` has no rd/wr: nothing, rather than zeros that would read as an idle cluster."""
    assert pool_counts(doc) == {}


def test_no_window_gives_no_load():
    before, after = _pair("writes")
    assert others_between(before, after, 0.0, "cephbench-r1-") == PoolIo()


def test_an_rgw_tests_own_load_through_the_gateway_is_not_anothers():
    """`ceph osd pool ls detail` of the one-host lab with RGW (Ceph 16.2.15): its rgw pools are RGW's own."""
    detail = json.loads((FIX / "pool_stats" / "ceph16.2.15_pool_ls_detail_with_rgw.json").read_text())
    rgw = rgw_pools(detail)
    assert rgw and all(".rgw." in p or p.endswith(".rgw.root") for p in rgw), rgw
    after = {p: PoolCounts(write_ops=400, write_bytes=20 * 2**20) for p in rgw}
    assert set(others_between({}, after, 4.0, "cephbench-r1-").pools) == rgw      # another client's, for another test
    assert others_between({}, after, 4.0, "cephbench-r1-", rgw).pools == []


def test_rgws_log_writes_are_background():
    """73 omap writes to default.rgw.log over 3 s (about 24 a second, as an RGW's data log and gc write it): the
    counters moved by 73 ops and 72 KiB, background; the note says so."""
    before, after = _pair("rgw_log_writes")
    io = others_between(before, after, 3.0, "cephbench-r1-")
    assert io.pools == [] and io.background_pools == ["default.rgw.log"]
    assert io.background_ops_per_s == pytest.approx(73 / 3)
    load = other_load(io)
    assert load is not None and not busy(load)
    note = describe_background(load)
    assert note and "default.rgw.log" in note and "background" in note


def test_a_housekeeping_pool_moving_mib_per_s_is_a_client_and_rgws_data_pools_always_are():
    after = {"default.rgw.log": PoolCounts(write_ops=160, write_bytes=20 * 2**20),
             ".mgr": PoolCounts(write_ops=120, write_bytes=8192),
             "default.rgw.buckets.index": PoolCounts(write_ops=60)}
    io = others_between({}, after, 4.0, "cephbench-r1-")
    assert sorted(io.pools) == ["default.rgw.buckets.index", "default.rgw.log"] and io.background_pools == [".mgr"]
