"""`ceph df` just after the OSDs come up: the mgr has no report from them yet and counts 0 B of 0 B (CI, a lab shape
rebuilt: the capacity guard refused a write with "0B of 0B raw used")."""

import json
from pathlib import Path

from cephbench.core.capacity import df_capacity

FIX = Path(__file__).parent.parent / "fixtures"


def load(name: str) -> dict:
    return json.loads((FIX / name).read_text())


def test_a_df_that_counts_no_osd_yet_is_not_a_capacity():
    df = load("ceph_df/ceph16.2.15_osds_up_before_their_stats.json")
    status = load("ceph_status/ceph16.2.15_osds_up_before_their_stats.json")
    up = status["osdmap"]["num_up_osds"]
    assert up == 2 and status["pgmap"]["bytes_total"] == 0
    assert df_capacity(df, up) is None


def test_a_df_that_counts_every_up_osd_gives_total_and_used():
    df = load("ceph_df/ceph16.2.15_2osds_2GiB.json")
    assert df_capacity(df, 2) == (4 * 2**30, df["stats"]["total_used_raw_bytes"])
    assert df["stats"]["total_used_raw_bytes"] > 0


def test_a_df_that_counts_fewer_osds_than_are_up_is_not_a_capacity_yet():
    # the same real document, read while a third OSD is up that the mgr has not heard from
    assert df_capacity(load("ceph_df/ceph16.2.15_2osds_2GiB.json"), 3) is None
