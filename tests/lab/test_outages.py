"""The cluster's own outages during a run, on a throwaway lab of this module: a monitor paused (SIGSTOP by its
PID, longer than --connect-timeout) is a warning with its duration and no longer holds up the test or each mon
call; an RGW killed mid-run fails its tests with the cause while the run goes on and prints its tables."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

from cephbench.cluster.ceph import Cluster, Target
from cephbench.core.errors import OperationFailed
from cephbench.lab import Lab
from cephbench.core.results import RunDir

from labcli import CLI, write_suite

TIMEOUT = 3             # --connect-timeout of these runs
PAUSE_S = 8             # longer than TIMEOUT (each mon call gives up), shorter than the 3 misses that stop a test

WRITE = """
name: mon-pause
settings: {set_noscrub: false, osd_counters: false}
pools:
  rep: {type: replicated, size: 1, pg_num: 8}
workloads:
  - {name: rados, type: rados_bench, pool: rep, modes: [write], object_size: 16KiB, concurrency: 1, duration: 16s}
"""

RGW_THEN_RADOS = """
name: rgw-dies
settings: {set_noscrub: false, osd_counters: false}
pools:
  rep: {type: replicated, size: 1, pg_num: 8}
workloads:
  - {name: rgw, type: rgw, protocol: s3, op: [put, get], object_size: 4KiB, concurrency: 2, objects: 32,
     duration: 8s}
  - {name: rados, type: rados_bench, pool: rep, modes: [write], object_size: 16KiB, concurrency: 1, duration: 2s}
"""


@pytest.fixture(scope="module")
def own_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    lab = Lab(tmp_path_factory.mktemp("outages") / "lab")
    lab.up(osds=1, osd_size_bytes=3 * 1024**3)
    try:
        yield lab
    finally:
        lab.down()


def _pid(lab: Lab, name: str) -> int:
    [d] = [d for d in lab.daemons() if d.name == name and d.running]
    assert d.pid is not None
    return d.pid


def _env(lab: Lab) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEPH")}
    return {**env, **lab.env()}


def _wait_for_tool(run: Path, prefix: str, deadline_s: float = 120) -> None:
    """Until a tool's output of the run exists under raw/ and has grown: the test's load is on."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        logs = [p for p in (run / "raw").glob(f"*/{prefix}*") if p.stat().st_size > 0] if (run / "raw").is_dir() \
            else []
        if logs:
            return
        time.sleep(0.2)
    raise AssertionError(f"no {prefix} output under {run}/raw in {deadline_s:.0f} s")


def _healthy_again(lab: Lab, within_s: float = 90) -> None:
    """The lab healthy for the next test: after a paused mon, the mgr's reports and the OSD's beacons take a
    while to settle."""
    deadline = time.monotonic() + within_s
    while not lab.healthy():
        assert time.monotonic() < deadline, lab.health()
        time.sleep(2)


def test_a_mon_call_gives_up_after_the_connect_timeout(own_lab: Lab) -> None:
    env = own_lab.env()
    cluster = Cluster(Target(Path(env["CEPH_CONF"]), Path(env["CEPH_KEYRING"]), is_lab=True),
                      connect_timeout_s=TIMEOUT)
    cluster.status()                            # connected while the mon answers
    mon = _pid(own_lab, "mon.a")
    os.kill(mon, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(OperationFailed):
            cluster.status()
        waited = time.monotonic() - started
    finally:
        os.kill(mon, signal.SIGCONT)
    assert waited < TIMEOUT + 2, waited         # was the 60 s of every call, whatever --connect-timeout said
    cluster.status()
    cluster.close()
    _healthy_again(own_lab)


def test_a_paused_mon_is_a_warning_with_its_duration(own_lab: Lab, tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = subprocess.Popen([*CLI, "run", str(write_suite(tmp_path, WRITE)), "--out", str(run),
                             "--connect-timeout", str(TIMEOUT)], env=_env(own_lab), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    mon = _pid(own_lab, "mon.a")
    try:
        _wait_for_tool(run, "rados")
        time.sleep(2)
        os.kill(mon, signal.SIGSTOP)
        time.sleep(PAUSE_S)
    finally:
        os.kill(mon, signal.SIGCONT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, (out, err[-3000:])
    [r] = RunDir.open(run).results()[0]
    assert r.status == "ok", r.error
    silences = [w for w in r.warnings if w.startswith("the monitors did not answer for")]
    assert len(silences) == 1, r.warnings
    # a monitor on a busy machine answers up to a few seconds after its SIGCONT (10.6 s for an 8 s pause at load 11)
    assert r.cluster is not None and PAUSE_S - 1 <= r.cluster.mon_silent_s <= PAUSE_S + 4, r.cluster
    assert any("the monitors stopped answering" in e for e in r.cluster.events), r.cluster.events
    # the tools' loop never waited on the mon: the test took its 16 s and the end's own costs, not the pause's
    assert r.duration_s < 16 + PAUSE_S, r.duration_s
    assert "Traceback" not in err
    _healthy_again(own_lab)


def test_an_rgw_killed_mid_run_fails_its_tests_and_the_run_goes_on(own_lab: Lab, tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = subprocess.Popen([*CLI, "run", str(write_suite(tmp_path, RGW_THEN_RADOS)), "--out", str(run)],
                            env=_env(own_lab), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_tool(run, "loadgen-put")
    time.sleep(3)
    os.kill(_pid(own_lab, "client.rgw.lab"), signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, (out, err[-3000:])           # tests failed; not the exit 2 of bad input
    results, _ = RunDir.open(run).results()
    by_kind = {}
    for r in results:
        by_kind.setdefault(r.test.kind, []).append(r)
    assert [r.status for r in by_kind["rgw"]] == ["failed", "failed"], [(r.test.id, r.error) for r in results]
    assert all("RGW stopped answering during the run" in (r.error or "") for r in by_kind["rgw"]), \
        [r.error for r in by_kind["rgw"]]
    assert [r.status for r in by_kind["rados_bench"]] == ["ok"]
    # both kinds' tables are printed, the failed RGW tests in theirs
    assert "rados bench" in out and "RGW (cephbench-loadgen)" in out and "001-rgw-put" in out, out
    assert "Traceback" not in err and "left on the cluster" not in err, err[-3000:]
