"""A pool whose PGs could never be clean is refused at preflight, before anything is made.

On `lab up --hosts 2 --osds-per-host 2` (4 OSDs, Ceph 16.2.15), an RBD suite on an EC 2+1 pool waited 300 s and
failed every test with `pool cephbench-8dbbae-g001-data: PGs not active+clean after 300 s (104/112)`: its images'
metadata pool, replicated size 3 by default, cannot place 3 replicas on 2 hosts (the multi-host lab's CRUSH rule
puts each on a host of its own; its 8 PGs were the 8 not clean), and the count checked was OSDs (4)."""

import json
from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.run.runner import check_fits_count, hosts_with_osd_up

TREE = Path(__file__).parents[1] / "fixtures" / "osd_tree" / "ceph16.2.15_lab_2hosts_4osds.json"


def test_the_hosts_with_an_osd_up_are_counted_from_the_osd_tree():
    tree = json.loads(TREE.read_text())
    assert hosts_with_osd_up(tree) == 2
    for n in tree["nodes"]:
        if n["name"] in ("osd.0", "osd.1"):
            n["status"] = "down"
    assert hosts_with_osd_up(tree) == 1          # h1's OSDs both down


def test_a_replicated_pool_wider_than_the_labs_hosts_is_refused_and_one_that_fits_is_not():
    hosts = hosts_with_osd_up(json.loads(TREE.read_text()))
    with pytest.raises(UserError, match="needs 3 hosts with an OSD up .* the lab has 2"):
        check_fits_count({"type": "replicated", "size": 3}, 4, hosts)
    check_fits_count({"type": "replicated", "size": 2}, 4, hosts)
    check_fits_count({"type": "erasure", "k": 2, "m": 1}, 4, hosts)    # the lab's EC chunks go per OSD
    check_fits_count({"type": "replicated", "size": 3}, 4, None)        # not known to be per host: OSDs count
    with pytest.raises(UserError, match="needs 5 OSDs up"):
        check_fits_count({"type": "erasure", "k": 3, "m": 2}, 4, hosts)
