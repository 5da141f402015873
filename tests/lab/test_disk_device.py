"""The disk baseline of a multi-host lab measures each OSD's own drive (issue 25, item 6).

A multi-host lab puts each OSD on a loop device that blkio may throttle; the OSD directory `<lab>/osd/N` is on the
VM's disk. A lab of its own (3 hosts of one 2 GiB OSD, osd.2's drive throttled to 3 MiB/s): the suite's disk
baseline with `paths: lab-osds` must name osd.2's loop device as the slow one, near its throttle, and leave the
BlueStore OSDs whole (reads on their devices only; the write figure is the backing disk capped by the throttle).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cephbench.analysis import facts_from_run
from cephbench.lab import Lab
from cephbench.lab.multihost import MultiHostSpec
from cephbench.lab.throttle import parse_throttle_specs
from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

MULTI_HOST = True
# 1 MiB reads, 16 in flight: what is in flight when the second ends drains at 3 MiB/s (4 MiB reads took 21 s more)
MIB = 1024**2
THROTTLED = 2
SUITE = """
name: diskdev
baseline:
  disks: {paths: lab-osds, size: 16MiB, runtime: 1s, patterns: [read-1MiB]}
pools:
  rep1: {type: replicated, size: 1, pg_num: 8}
workloads:
  - {name: osd, type: osd_bench, total: 4MiB, block_size: 4MiB, repeat: 1}
"""


@pytest.fixture(scope="module")
def throttled_lab(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the multi-host lab needs root (network namespaces)")
    lb = Lab(tmp_path_factory.mktemp("diskdev") / "lab")
    lb.up(osd_size_bytes=2 * 1024**3, rgw=False,
          multi=MultiHostSpec(hosts=3, throttles=parse_throttle_specs(f"osd.{THROTTLED}=3MiB/s")))
    try:
        yield lb
    finally:
        lb.down()


def test_the_throttled_osds_loop_device_is_the_slow_disk(throttled_lab, tmp_path):
    lab_dir = Path(throttled_lab.dir)
    drives = {d["osd"]: d for d in json.loads((lab_dir / "drives.json").read_text())["drives"] if d["role"] == "data"}
    host_of = {o: h["name"] for h in throttled_lab.info().topology["hosts"] for o in h.get("osds") or []}
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, SUITE)), "--out", str(out)], {**os.environ, **throttled_lab.env()})
    assert res.returncode == 0, res.stdout + res.stderr
    results, _ = RunDir.open(out).results()
    by = {r.measurement.extra["pattern"]: r.measurement.extra for r in results
          if r.test.kind == "disk_baseline" and r.status == "ok"}
    slow_dev = drives[THROTTLED]["device"]
    for pattern in ("dd", "read-1MiB"):
        x = by[pattern]
        assert x["slowest_host"] == host_of[THROTTLED], (pattern, x["per_host"])
        assert slow_dev in x["slowest_disk"], (pattern, x["slowest_disk"])
        slow = x["alone"][x["slowest_disk"]]["bytes_per_s"]
        assert 2 * MIB <= slow <= 3.6 * MIB, (pattern, slow / MIB)
        fast = [v["bytes_per_s"] for k, v in x["alone"].items() if k != x["slowest_disk"]]
        assert min(fast) > 4 * slow, (pattern, x["alone"])
    # the model's note (the verdict's) names the slow host and its drive
    notes = " ".join(facts_from_run({}, results).notes)
    assert f"the slowest host, {host_of[THROTTLED]}" in notes and slow_dev in notes, notes
    # the OSDs' devices were only read: every OSD still up after the baseline ran on them
    st = subprocess.run(["ceph", "osd", "stat", "-f", "json"], capture_output=True, text=True, timeout=60,
                        env={**os.environ, **throttled_lab.env()})
    assert json.loads(st.stdout)["num_up_osds"] == 3, st.stdout + st.stderr
