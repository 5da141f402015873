"""A suite whose shapes change the OSD count: each shape's results are analysed with that shape's own cluster facts
(issue 26: run.json's `cluster` was never refreshed per shape, so the 3-OSD shape was given the 2-OSD lab's ceiling).

A one-host lab of this test's own (2 OSDs, no RGW) runs the shape `two` as it is, is rebuilt to 3 OSDs for `three`,
and put back. OSD bench stands in for a disk baseline, so the model's only term is the disks': `N disks × ...`.
"""

from __future__ import annotations

import json
import os

import pytest

import labcli
from labcli import run_cli, write_suite

SUITE = """name: shape-facts
settings: {drop_caches: false}
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
variants:
  - {name: two, lab: {osds: 2, osd_size: 2GiB, rgw: false}}
  - {name: three, lab: {osds: 3, osd_size: 2GiB, rgw: false}}
workloads:
  - {type: osd_bench, total: 8MiB, block_size: 4MiB, repeat: 1}
  - {type: rados_bench, pool: rep2, modes: [write], object_size: 4MiB, concurrency: 4, duration: 2s}
"""


@pytest.fixture(scope="module")
def own_lab():
    with labcli.own_lab("cb-shape-facts-", osds=2) as lb:
        yield lb


def test_each_shape_is_analysed_with_its_own_osds(own_lab, tmp_path):
    rundir = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}
    res = run_cli(["run", write_suite(tmp_path, SUITE), "--lab-dir", own_lab.dir, "--out", rundir], env)
    assert res.returncode == 0, res.stdout + res.stderr
    meta = json.loads((rundir / "run.json").read_text())
    osds = {v: len(s["cluster"]["osd_metadata"]) for v, s in meta["lab_shapes"].items()}
    assert osds == {"two": 2, "three": 3}
    writes = [json.loads(line) for line in (rundir / "results.jsonl").read_text().splitlines()]
    reasons = {r["test"]["variant"]: r["analysis"]["reason"] for r in writes
               if r["test"]["kind"] == "rados_bench" and r["status"] == "ok"}
    assert set(reasons) == {"two", "three"}, res.stderr
    assert "2 disks ×" in reasons["two"] and "3 disks ×" in reasons["three"], reasons
    info = own_lab.info()
    assert info is not None and info.osds == 2          # the lab put back as the test made it
