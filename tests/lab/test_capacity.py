"""Capacity across runs: two runs started together, each of which would fit alone, keep the cluster below the
limit between them (their markers reserve what each write may add), and a second run warns about the first."""

import subprocess
import time

from cephbench.core.results import RunDir

from labcli import CLI, write_suite

FILL = """
name: fill
settings: {{max_raw_used: {limit}}}
pools:
  rep: {{type: replicated, size: 3, pg_num: 16}}
workloads:
  - {{name: fill, type: rados_bench, pool: rep, modes: [write], object_size: 4MiB, concurrency: 1, duration: 30s}}
"""
# One write in flight: the first run's write fills its room over about 10 s, not 3 (at 8 in flight, 70 MiB/s), so
# the second run's start-up (seconds on a busy machine) ends while the first still runs and holds its marker


def test_two_concurrent_runs_stay_below_the_limit(lab_cluster, cephbench_env, tmp_path):
    total, used = lab_cluster.raw_capacity()
    limit = round(used / total + 0.04, 3)          # room for a few hundred MiB: each run alone could take most
    suite = write_suite(tmp_path, FILL.format(limit=limit))
    def start(i):
        return subprocess.Popen([*CLI, "run", str(suite), "--out", str(tmp_path / f"run{i}")], env=cephbench_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs = [start(0)]
    deadline = time.monotonic() + 60            # the second starts once the first has marked the cluster
    while not lab_cluster.ceph_json("config-key", "dump", "cephbench/runs/") and time.monotonic() < deadline:
        time.sleep(0.1)
    procs.append(start(1))
    peak = used / total
    while any(p.poll() is None for p in procs):      # the cluster's own figure, sampled from outside the runs
        t, u = lab_cluster.raw_capacity()
        peak = max(peak, u / t)
        time.sleep(0.5)
    outputs = [p.communicate() for p in procs]
    assert all(p.returncode in (0, 1) for p in procs), outputs
    results = [RunDir.open(tmp_path / f"run{i}").results()[0] for i in (0, 1)]
    written = [r[0].measurement.bytes_total for r in results if r and r[0].measurement]
    assert written, outputs
    assert peak < limit, f"the cluster reached {peak:.1%} raw used with a {limit:.1%} limit"
    for rs in results:
        for r in rs:
            assert r.cluster is None or (r.cluster.raw_used_max or 0) < limit
    # both ran at once: the one that started second saw the first one's marker (and its reservation)
    assert any("another cephbench run is in progress" in err for _, err in outputs), [e for _, e in outputs]
    # and nothing of either is left: pools, markers
    assert not [p for p in lab_cluster.pool_names() if p.startswith("cephbench-")]
    assert not lab_cluster.ceph_json("config-key", "dump", "cephbench/runs/")
