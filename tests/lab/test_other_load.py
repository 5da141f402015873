"""A daemon's own I/O is background, not other clients (issue 25 item 5): with the lab's RGW running and its log pool
written at the rate an RGW's housekeeping writes it (the issue's lab: 19 ops/s on default.rgw.log, 0.0 MiB/s), a
short rados bench is not marked and stays in the verdict; the note says what the background was."""

from __future__ import annotations

import os
import subprocess
import threading
import time

from cephbench.hosts.mon import import_rados
from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

SUITE = """
name: background
settings: {set_noscrub: false}
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
workloads:
  - name: rados
    type: rados_bench
    pool: rep2
    modes: [write]
    object_size: 64KiB
    concurrency: 4
    duration: 4s
"""


def _rgw_log_writer(lab_target, stop: threading.Event) -> threading.Thread:
    """RGW's housekeeping as the pool stats see it: small omap updates on default.rgw.log, about 25 a second
    (RGW's data log and gc entries are omap keys of its log pool's objects). Its one object is removed after."""
    rados = import_rados()

    def run() -> None:
        client = rados.Rados(conffile=str(lab_target.conf), conf={"keyring": str(lab_target.keyring)})
        client.connect(timeout=30)
        name = f"cephbench-test-{os.getpid()}-housekeeping"
        try:
            with client.open_ioctx("default.rgw.log") as io:
                io.write_full(name, b"")
                n = 0
                while not stop.is_set():
                    with rados.WriteOpCtx() as op:
                        io.set_omap(op, (f"k{n % 64}",), (b"x",))
                        io.operate_write_op(op, name)
                    n += 1
                    time.sleep(0.04)
                io.remove_object(name)
        finally:
            client.shutdown()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_rgws_log_writes_do_not_mark_a_rados_bench(lab, lab_cluster, lab_target, tmp_path):
    assert "default.rgw.log" in lab_cluster.pool_names()            # the session lab runs an RGW
    stop = threading.Event()
    writer = _rgw_log_writer(lab_target, stop)
    try:
        time.sleep(1)       # writing before the run starts, and all through its test
        out = tmp_path / "run"
        res = run_cli(["run", str(write_suite(tmp_path, SUITE)), "--out", str(out)], {**os.environ, **lab.env()})
    finally:
        stop.set()
        writer.join(timeout=30)
    assert res.returncode == 0, res.stdout + res.stderr
    results, _ = RunDir(out).results()
    (r,) = [r for r in results if r.test.kind == "rados_bench"]
    assert r.status == "ok"
    assert not any("other clients" in w for w in r.warnings), r.warnings
    other = r.evidence.other_load
    assert other is not None and "default.rgw.log" in other.background_pools, other
    assert any(n.startswith("background:") and "default.rgw.log" in n for n in r.notes), r.notes


def _counted(cluster, pool: str) -> None:
    """Until the cluster's counters hold all of the pool's writes: the same in two readings a stats period (1 s) apart.
    They come to the mgr once a stats period (the lab's is 1 s), so for a second or two after a client ends its
    last ops are not counted yet, and a window that starts then counts them (docs/model.md, "Other clients' load")."""
    last, deadline = None, time.monotonic() + 30
    while True:
        wr = next(p["stats"]["wr"] for p in cluster.ceph_json("df", "detail")["pools"] if p["name"] == pool)
        if wr == last:
            return
        assert time.monotonic() < deadline, f"the counters of {pool} still moved after 30 s"
        last = wr
        time.sleep(1.0)


def test_another_clients_burst_that_ended_before_the_test_is_not_its_load(lab_cluster, cephbench_env, tmp_path):
    """CI (stop 32) warned a 2 s test "other clients loaded the cluster" for the deletes of the test before it: the
    mon's pool rates are smoothed over several stats periods (here they stayed up ~8 s after a burst ended, on a
    cluster of 5 s periods ~30 s), so a test that starts soon after someone else's burst read that burst as its own
    time's. Another client writes hard and ends; once the cluster has counted its writes, the run that follows is not
    marked, and its evidence does not name the pool."""
    outside = "outside-burst-before"
    lab_cluster.ceph_ok("osd", "pool", "create", outside, "8")
    try:
        burst = subprocess.run(["rados", "bench", "-p", outside, "4", "write", "-b", "4096", "-t", "16"],
                               env=cephbench_env, capture_output=True, text=True, timeout=120)
        assert burst.returncode == 0, burst.stderr
        _counted(lab_cluster, outside)
        out = tmp_path / "run"
        res = run_cli(["run", str(write_suite(tmp_path, SUITE.replace("duration: 4s", "duration: 2s"))),
                       "--out", str(out)], cephbench_env)
        assert res.returncode == 0, res.stdout + res.stderr
    finally:
        lab_cluster.delete_pool(outside)
    (r,) = [r for r in RunDir(out).results()[0] if r.test.kind == "rados_bench"]
    assert r.status == "ok", r.error
    assert not any("other clients" in w for w in r.warnings), r.warnings
    other = r.evidence.other_load
    assert other is None or outside not in other.pools, other
