"""A daemon's own I/O is background, not other clients (issue 25 item 5): with the lab's RGW running and its log pool
written at the rate an RGW's housekeeping writes it (the issue's lab: 19 ops/s on default.rgw.log, 0.0 MiB/s), a
short rados bench is not marked and stays in the verdict; the note says what the background was."""

from __future__ import annotations

import os
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
        time.sleep(6)       # the mon's pool rates are recent averages: let them show the writes before the test
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
