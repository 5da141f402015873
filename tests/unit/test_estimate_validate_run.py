"""`validate` prints the estimate `run` prints (issue 36 item 4): validate, which knows no cluster, printed 4m23s for
suites/quick.yaml, its plan's own guess, while `run` estimated again for the OSD hosts it found (2m35s on the
one-host lab, 6m15s on the 3-host one). Now validate prints run's own figure for both clusters it cannot tell apart,
and the figure of the real runs' hosts (run.json's CRUSH hosts and client: what `run` counted) is among them."""

import json

import pytest

from clirun import cephbench
from conftest import FIXTURES, REPO
from cephbench.cli.common import estimate_text
from cephbench.suite.config import load_suite
from cephbench.suite.plan import Room, capacity_cut, estimate, expand, for_cluster


@pytest.mark.parametrize("run, where", [("ceph16.2.15_quick_onehost", "every OSD on this machine"),
                                        ("ceph16.2.15_quick_multihost3", "3 OSD hosts over ssh")])
def test_validate_prints_the_estimate_run_prints_for_the_hosts_it_finds(run, where):
    meta = json.loads((FIXTURES / "report" / f"{run}.run.json").read_text())
    hosts = [n["name"] for n in meta["cluster"]["osd_tree"]["nodes"] if n["type"] == "host" and n.get("children")]
    client = meta["hosts"]["client"]["hostname"]
    suite = REPO / "suites" / "quick.yaml"
    # what `run` prints ("about ..."): launch.prepare's tests for the cluster's hosts (launch._estimated_for), their
    # estimate in cli.run's words; quick.yaml's search of fio's queue depth makes it a range
    pg, osds = meta["cluster"]["status"]["pgmap"], meta["cluster"]["status"]["osdmap"]["num_osds"]
    tests = for_cluster(expand(load_suite(suite)).tests, hosts, client)
    run_est = estimate_text(estimate(capacity_cut(tests, load_suite(suite), Room(pg["bytes_total"], pg["bytes_used"],
                                                                                   osds))))
    assert run_est.startswith("about ") and "if every search runs to its max" in run_est, run_est
    res = cephbench("validate", suite)
    assert res.returncode == 0, res.stderr
    last = res.stdout.strip().splitlines()[-1]
    assert f"{run_est} with {where}" in last, (run_est, last)
    assert "`run` prints its estimate for the OSD hosts it finds" in last
