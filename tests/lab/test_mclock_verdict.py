"""The verdict names mClock's client limit (issue 27 item 3): on a one-OSD Reef lab, a 4 KiB rados bench write with
Reef's defaults (profile `balanced`, client limit 0) does not name the scheduler; the same under a `custom` profile
whose client limit is 0.3 of the OSD's 315 IOPS (94 ops/s, well under the ~2,000 ops/s the lab does) names it, with
its line, and serves no more than the cap allows.

The host's Pacific `ceph` sets Reef's options: `config set` is checked by the Reef monitor, which knows them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from cephbench.analysis.scheduler import NAME
from cephbench.lab import Lab, roots
from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

NEEDS_ROOTS = True      # last in its session (conftest): `make roots` builds the roots meanwhile

SUITE = """
name: mclock
pools:
  one: {type: replicated, size: 1, pg_num: 8}
workloads:
  - name: rados
    type: rados_bench
    pool: one
    modes: [write]
    object_size: [4KiB]
    concurrency: 16
    duration: 5s
"""
LIMIT = 0.3               # of osd_mclock_max_capacity_iops_hdd (Reef's default 315, kept when its bench reads more)
RES = 0.1                 # under the limit: dmClock serves the reservation whatever the limit, max(res, lim) holds
OPTIONS = {"osd_mclock_profile": "custom", "osd_mclock_scheduler_client_res": str(RES),
           "osd_mclock_scheduler_client_lim": str(LIMIT)}


def run_once(lb: Lab, tmp_path: Path, name: str):
    out = tmp_path / name
    res = run_cli(["run", write_suite(tmp_path, SUITE), "--out", out], {**os.environ, **lb.env()})
    assert res.returncode == 0, res.stderr[-3000:] + res.stdout[-3000:]
    print(res.stdout[res.stdout.find("Verdict"):].strip())
    (r,) = RunDir(out).results()[0]
    assert r.status == "ok" and r.analysis is not None and r.evidence is not None, r.error
    return r


def ceph(lb: Lab, *args: str) -> str:
    res = subprocess.run(["ceph", *args], capture_output=True, text=True, env={**os.environ, **lb.env()}, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_a_custom_client_limit_is_named_and_the_default_profile_is_not(tmp_path):
    roots.ensure("reef", progress=print)
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-mclock-"))
    lb = Lab(d / "lab")
    try:
        up = run_cli(["lab", "up", "--dir", lb.dir, "--release", "reef", "--osds", "1", "--no-rgw",
                      "--osd-size", "3GiB"])
        assert up.returncode == 0, up.stderr[-3000:]

        default = run_once(lb, tmp_path, "default")
        assert default.evidence.settings["osd.0"]["osd_mclock_profile"] == "balanced"
        assert default.analysis.bottleneck != NAME, default.analysis.reason
        assert not any("mClock" in line for line in default.analysis.evidence), default.analysis.evidence

        for name, value in OPTIONS.items():
            ceph(lb, "config", "set", "osd", name, value)
        shown = json.loads(ceph(lb, "tell", "osd.0", "config", "get", "osd_mclock_scheduler_client_lim"))
        assert float(shown["osd_mclock_scheduler_client_lim"]) == LIMIT
        capped = run_once(lb, tmp_path, "custom")
        settings = capped.evidence.settings["osd.0"]
        assert settings["osd_mclock_profile"] == "custom"
        cap = LIMIT * float(settings["osd_mclock_max_capacity_iops_hdd"])
        assert capped.analysis.bottleneck == NAME, capped.analysis.reason + "\n" + "\n".join(capped.analysis.evidence)
        (line,) = [x for x in capped.analysis.evidence if "mClock" in x]
        assert line.startswith(f"osd.0 mClock, profile custom: client limit {LIMIT:g} of "
                               "osd_mclock_max_capacity_iops_hdd "), line
        assert f"= {cap:,.0f} client ops/s" in line, line
        # the cap held: no more than it allows (a few percent over: the first second's burst)
        assert capped.measurement.ops_per_s <= cap * 1.1, (capped.measurement.ops_per_s, cap)
        assert default.measurement.ops_per_s > 2 * cap, (default.measurement.ops_per_s, cap)
    finally:
        if lb.info() is not None:
            for name in OPTIONS:
                subprocess.run(["ceph", "config", "rm", "osd", name], capture_output=True,
                               env={**os.environ, **lb.env()}, timeout=60)
        down = run_cli(["lab", "down", "--dir", lb.dir])
        shutil.rmtree(d, ignore_errors=True)
    assert down.returncode == 0, down.stderr
