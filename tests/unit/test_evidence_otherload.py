"""Other clients' load from real `ceph osd pool stats -f json` of Ceph 16.2.15 (tests/fixtures/pool_stats/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.evidence.otherload import PoolIo, other_load, others_io, rgw_pools

FIX = Path(__file__).parent.parent / "fixtures" / "pool_stats"


def _doc(name: str):
    return json.loads((FIX / name).read_text())


def test_another_clients_writes_count_and_ours_do_not():
    io = others_io(_doc("ceph16.2.15_other_and_ours_writing.json"), "cephbench-r1-")
    assert io.pools == ["other"]
    # that client's rados bench reported 10.1 MB/s over its 6 s; the mon's recent average said 10.9
    assert 9e6 < io.write_bytes_per_s < 12e6 and io.read_bytes_per_s == 0 and io.ops_per_s == 166


def test_another_run_of_cephbench_is_another_client():
    io = others_io(_doc("ceph16.2.15_other_and_ours_writing.json"), "cephbench-r2-")
    assert sorted(io.pools) == ["cephbench-r1-rados", "other"]


def test_an_idle_cluster_has_no_other_load():
    samples = [others_io(_doc("ceph16.2.15_idle.json"), "cephbench-r1-")] * 3
    assert samples[0].pools == [] and other_load(samples) is None


def test_the_load_is_the_mean_over_the_tests_samples():
    busy = others_io(_doc("ceph16.2.15_other_and_ours_writing.json"), "cephbench-r1-")
    idle = others_io(_doc("ceph16.2.15_idle.json"), "cephbench-r1-")
    load = other_load([busy, idle])
    assert load is not None and load.pools == ["other"]
    assert load.write_bytes_per_s == pytest.approx(busy.write_bytes_per_s / 2)


@pytest.mark.parametrize("doc", [None, {}, "x", [1, {"pool_name": 3}, {"pool_name": "p", "client_io_rate": []},
                                                  {"pool_name": "p", "client_io_rate": {"write_bytes_sec": "many"}}]])
def test_documents_that_do_not_read_give_no_load(doc):
    assert others_io(doc, "cephbench-r1-") == PoolIo()


def test_an_rgw_tests_own_load_through_the_gateway_is_not_anothers():
    """`ceph osd pool ls detail` of the one-host lab with RGW (Ceph 16.2.15): its rgw pools are RGW's own."""
    detail = json.loads((FIX / "ceph16.2.15_pool_ls_detail_with_rgw.json").read_text())
    rgw = rgw_pools(detail)
    assert rgw and all(".rgw." in p or p.endswith(".rgw.root") for p in rgw), rgw
    doc = [{"pool_name": p, "client_io_rate": {"write_bytes_sec": 5 * 2**20, "write_op_per_sec": 80}} for p in rgw]
    assert set(others_io(doc, "cephbench-r1-").pools) == rgw          # another client's, for any other test
    assert others_io(doc, "cephbench-r1-", rgw).pools == []


def test_rgws_housekeeping_is_background_and_a_client_through_rgw_is_not():
    """`ceph osd pool stats` of the one-host lab (Ceph 16.2.15) while an S3 PUT test wrote through its RGW: the
    gateway's own .rgw.root/log/meta I/O (a few ops/s, ~0 bytes) beside the client's MiB/s on the data and index
    pools. The first is background, the second another client."""
    io = others_io(_doc("ceph16.2.15_rgw_put_housekeeping_and_data.json"), "cephbench-r1-")
    assert sorted(io.background_pools) == [".rgw.root", "default.rgw.log", "default.rgw.meta"]
    assert sorted(io.pools) == ["default.rgw.buckets.data", "default.rgw.buckets.index"]
    assert io.write_bytes_per_s > 1 * 2**20 and io.background_bytes_per_s < 10 * 1024


def test_an_rgw_doing_only_its_housekeeping_does_not_taint_a_result():
    """The same lab a few seconds after the S3 test: only the gateway's own reads of its root, log and meta pools."""
    from cephbench.evidence.otherload import busy, describe_background
    sample = others_io(_doc("ceph16.2.15_rgw_housekeeping_only.json"), "cephbench-r1-")
    assert sample.pools == [] and sample.background_pools
    # at the rate the issue saw (19 ops/s on default.rgw.log, 0.0 MiB/s): background still
    loud = [{"pool_name": p["pool_name"], "client_io_rate": {k: (v * 4 if k.endswith("op_per_sec") else v)
                                                             for k, v in p["client_io_rate"].items()}}
            for p in _doc("ceph16.2.15_rgw_housekeeping_only.json")]
    load = other_load([others_io(loud, "cephbench-r1-")] * 3)
    assert load is not None and load.background_ops_per_s >= 19 and not busy(load)
    note = describe_background(load)
    assert note and "default.rgw.log" in note and "background" in note


def test_a_housekeeping_pool_moving_mib_per_s_is_a_client():
    doc = [{"pool_name": "default.rgw.log", "client_io_rate": {"write_bytes_sec": 5 * 2**20, "write_op_per_sec": 40}},
           {"pool_name": ".mgr", "client_io_rate": {"write_bytes_sec": 2048, "write_op_per_sec": 30}}]
    io = others_io(doc, "cephbench-r1-")
    assert io.pools == ["default.rgw.log"] and io.background_pools == [".mgr"]
