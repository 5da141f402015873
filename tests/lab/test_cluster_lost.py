"""A cluster that goes away mid-run ends the run after the first failure, in one line that lists what could not
be cleaned, instead of failing every remaining test in turn (a throwaway lab, stopped while the run goes on)."""

import subprocess
import time

from cephbench.lab import Lab
from cephbench.core.results import RunDir

from labcli import CLI, write_suite

SWEEP = """
name: lost
pools:
  rep: {type: replicated, size: 1, pg_num: 8}
workloads:
  - {name: rados, type: rados_bench, pool: rep, modes: [write], object_size: 64KiB, concurrency: 4,
     duration: 3s, repeat: 8}
"""


def test_a_cluster_that_goes_away_ends_the_run_in_one_line(tmp_path):
    lab = Lab(tmp_path / "lab")
    lab.up(osds=1, osd_size_bytes=2 * 1024**3, rgw=False)
    try:
        env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("CEPH")}
        env.update(lab.env())
        proc = subprocess.Popen([*CLI, "run", str(write_suite(tmp_path, SWEEP)), "--out", str(tmp_path / "run")],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        results = tmp_path / "run" / "results.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (results.exists() and results.read_text().count("\n") >= 1):
            time.sleep(0.2)
        lab.down()                       # the monitors and OSDs go, and the conf with them
        started = time.monotonic()
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 1, (out, err)
        # a command in flight gives up as soon as the conf is gone: no monitor timeout is waited out
        assert time.monotonic() - started < 30, (time.monotonic() - started, err[-3000:])
        lines = [line for line in err.splitlines() if line.startswith("cephbench: the run ended early")]
        assert len(lines) == 1 and "left on the cluster:" in lines[0] and "cephbench cleanup" in lines[0], err
        rs, _ = RunDir.open(tmp_path / "run").results()
        assert sum(r.status == "failed" for r in rs) <= 1, [(r.test.id, r.status, r.error) for r in rs]
        assert len(rs) < 8
        assert "Traceback" not in err
    finally:
        lab.down()
