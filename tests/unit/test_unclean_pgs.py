"""A pool just made waits for its own PGs (cluster/ceph.py `unclean_pgs`), and says which states hold it up:
the error named the newest pool for another pool's PGs."""

import json

from conftest import FIXTURES
from cephbench.cluster.ceph import unclean_pgs
from cephbench.hosts.mon import mon_command_for


def _load(name: str):
    return json.loads((FIXTURES / "pg_ls" / f"ceph16.2.15_ls_by_pool_{name}.json").read_text())


def test_a_pool_with_more_copies_than_osds_is_counted_by_its_states():
    assert unclean_pgs(_load("size4_on_3_osds")) == {"active+undersized": 8}


def test_a_clean_pool_has_nothing_unclean():
    assert unclean_pgs(_load("size3_clean")) == {}
    # the list form older releases print, and an empty answer
    assert unclean_pgs(_load("size3_clean")["pg_stats"]) == {}
    assert unclean_pgs(None) == {} and unclean_pgs({"pg_ready": True}) == {}


def test_the_mon_command_names_the_pool_as_the_mgr_takes_it():
    assert mon_command_for(["pg", "ls-by-pool", "p1"]) == {"prefix": "pg ls-by-pool", "poolstr": "p1"}
