"""The OSDs' counters from Prometheus (issue 38, "Evidence as deployed"): a toolbox run (conf and key alone, no ssh,
so no admin socket) whose key may not `ceph tell` the OSDs reads every OSD's counters from the Reef lab's
Prometheus, and names the series it matched to the cluster's hosts. No lab here runs ceph-exporter (Debian packages
none: lab/monitoring.py), so the series are the mgr prometheus module's, with Reef's exclude_perf_counters turned
off; the ceph-exporter source is asked first and says it has none. Ground truth: each client write is one op on its
PG's primary, so the OSDs' op_w deltas add up to the writes rados bench says it made."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from cephbench.lab import Lab

from labcli import TINY_RADOS, run_cli, write_suite
from test_release_lab import root_or_skip

MULTI_HOST = True
NEEDS_ROOTS = True

# TINY's rados bench write alone, at one size
SUITE = TINY_RADOS.replace("modes: [write, rand]", "modes: [write]").replace("[64KiB, 1MiB]", "[64KiB]")


def test_a_toolbox_that_may_not_tell_reads_the_osds_counters_from_prometheus(tmp_path: Path):
    root_or_skip("reef")
    lb = Lab(tmp_path / "lab")
    try:
        up = run_cli(["lab", "up", "--dir", lb.dir, "--release", "reef", "--hosts", "3", "--monitoring", "--no-rgw",
                      "--osd-size", "3GiB"])
        assert up.returncode == 0, up.stdout + up.stderr
        assert "no ceph-exporter: Debian's ceph packages ship none" in up.stdout + up.stderr
        info = lb.info()
        assert info is not None and info.monitoring is not None
        env = {**os.environ, **lb.env()}
        # a key that may write and make pools, not tell the OSDs (osd 'allow rwx', not 'allow *')
        box = tmp_path / "toolbox"
        box.mkdir()
        key = subprocess.run(["ceph", "--conf", str(lb.conf), "auth", "get-or-create", "client.bench", "mon",
                              "allow *", "mgr", "allow *", "osd", "allow rwx"], capture_output=True, text=True,
                             env=env, timeout=60)
        assert key.returncode == 0, key.stderr
        (box / "keyring").write_text(key.stdout)
        (box / "ceph.conf").write_text(f"[global]\nmon host = {_mon_host(lb.conf)}\n")
        told = subprocess.run(["ceph", "--conf", str(box / "ceph.conf"), "--keyring", str(box / "keyring"), "-n",
                               "client.bench", "tell", "osd.0", "perf", "dump"], capture_output=True, text=True,
                              timeout=60)
        assert told.returncode != 0, "the key may tell the OSDs"

        bare = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING", "CEPHBENCH_PROMETHEUS")}
        out = tmp_path / "run"
        res = run_cli(["run", write_suite(tmp_path, SUITE), "--conf", box / "ceph.conf", "--keyring", box / "keyring",
                       "--id", "bench", "--prometheus", info.monitoring["prometheus"], "--out", out], bare)
        assert res.returncode == 0, res.stdout + res.stderr
        result = json.loads((out / "results.jsonl").read_text().splitlines()[0])
        ev = result["evidence"]
        print(*ev["notes"], sep="\n")
        assert {o["osd"] for o in ev["osds"]} == {0, 1, 2}, ev["notes"]
        assert all(o["source"].startswith("the mgr's prometheus module via Prometheus") for o in ev["osds"]), ev["osds"]
        line = next(n for n in ev["notes"] if n.startswith("OSD counters from Prometheus: "))
        assert re.search(r"osd\.0, osd\.1, osd\.2 from the mgr's prometheus module \(job ceph, instance \S+: h\d\)",
                         line), line
        assert any("has no ceph-exporter series of the OSDs" in n for n in ev["notes"]), ev["notes"]
        raw = "\n".join(p.read_text() for p in (out / "raw").rglob("*.txt"))
        writes = int(re.search(r"Total writes made:\s+(\d+)", raw).group(1))
        op_w = sum(o["op_w"] for o in ev["osds"])
        print(f"rados bench: {writes} writes; the OSDs' op_w from Prometheus: {op_w:g}")
        # rados bench writes one object more than it counts: its run's metadata (benchmark_last_metadata)
        assert writes <= op_w <= writes + 1
    finally:
        down = run_cli(["lab", "down", "--dir", lb.dir])
        assert down.returncode == 0, down.stdout + down.stderr


def _mon_host(conf: Path) -> str:
    return next(line.split("=", 1)[1].strip() for line in conf.read_text().splitlines()
                if line.replace("_", " ").startswith("mon host"))
