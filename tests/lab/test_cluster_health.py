"""An OSD killed in the middle of a write: recorded on the result (min_size 1: the write goes on, degraded), or
the test stopped with its cause (min_size 2: PGs go inactive). The OSD is killed by the lab's own PID file once
the write's rados bench is running (its PID is in the run's resources.json), and started again afterwards."""

import json
import os
import signal
import subprocess
import time

import pytest

from cephbench.evidence.clusterwatch import INACTIVE_LIMIT_S
from cephbench.core.results import RunDir

from labcli import CLI, write_suite, tool_processes

SUITE = """
name: osdkill
pools:
  rep2: {{type: replicated, size: 2, min_size: {min_size}, pg_num: 16}}
workloads:
  - {{name: rados, type: rados_bench, pool: rep2, modes: [write], object_size: 64KiB, concurrency: 8,
      duration: {duration}s}}
"""


def kill_osd_during_the_write(lab, env, suite, out, victim="osd.1", after_s=2.0):
    proc = subprocess.Popen([*CLI, "run", str(suite), "--out", str(out)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    resources = out / "resources.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if resources.exists() and tool_processes(json.loads(resources.read_text() or "[]")):
            break
        time.sleep(0.05)
    time.sleep(after_s)
    [pid] = [d.pid for d in lab.daemons() if d.name == victim]
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    stdout, stderr = proc.communicate(timeout=300)
    return proc.returncode, stdout, stderr, time.monotonic() - killed


@pytest.fixture
def revive(lab):
    yield
    down = [d.name for d in lab.daemons() if d.name.startswith("osd.") and not d.running]
    if down:
        lab.start_osds(down)


def test_osd_killed_mid_write_with_min_size_1_is_recorded_on_the_result(lab, cephbench_env, tmp_path, revive):
    # 25 s: the writes to osd.1's PGs wait until the mons mark it down, and the degraded PGs reach `ceph status` a
    # stats period after they peer again. With 10 s, CI (phase 1's load) marked it down as the write was ending,
    # and the test's watch ended before any PG was reported degraded.
    rc, out, err, _ = kill_osd_during_the_write(lab, cephbench_env,
                                                write_suite(tmp_path, SUITE.format(min_size=1, duration=25)),
                                                tmp_path / "run")
    [r] = RunDir.open(tmp_path / "run").results()[0]
    assert r.status == "ok", (r.error, err)
    assert r.cluster.osds_down_max == 1 and r.cluster.pgs_degraded_max > 0, r.cluster
    assert any("1 of 3 OSD(s) down" in e for e in r.cluster.events), r.cluster.events
    assert any(w.startswith("the cluster was degraded during this test") for w in r.warnings), r.warnings
    # the verdict does not count it as a capability of the cluster
    assert "RADOS write: best" not in out and "not counted in the verdict" in out, out


def test_osd_killed_mid_write_with_min_size_2_stops_the_test_with_the_cause(lab, cephbench_env, tmp_path, revive):
    rc, out, err, after_kill = kill_osd_during_the_write(lab, cephbench_env,
                                                         write_suite(tmp_path, SUITE.format(min_size=2, duration=120)),
                                                         tmp_path / "run")
    [r] = RunDir.open(tmp_path / "run").results()[0]
    assert r.status == "failed" and rc == 1, (r.status, err)
    assert "PG(s) inactive for" in r.error and "I/O to them blocks" in r.error, r.error
    assert r.cluster.stopped and r.cluster.pgs_inactive_max > 0
    # stopped within the inactive limit and the tool's grace, not after the 120 s write or a bare time-out
    assert after_kill < INACTIVE_LIMIT_S + 30, after_kill
    assert "timed out" not in r.error
    assert json.loads((tmp_path / "run" / "resources.json").read_text()) == []
