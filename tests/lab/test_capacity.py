"""Capacity across runs: two runs started together, each of which would fit alone, keep the cluster below the
limit between them (their markers reserve what each write may add), and a second run warns about the first."""

import os
import signal
import subprocess
import time
from pathlib import Path

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
# One write in flight: the first run's write fills its room over seconds, not one (at 8 in flight, 70 MiB/s). The
# first run's write is also held (SIGSTOP) while the second starts: at 108 MiB/s it filled its room and its run
# ended before the second's start-up, on CI's busy CPUs, had read the markers (fresh-clone run X).


def _benches(pid: int) -> list[int]:
    """The `rados bench` processes that `pid` started, at any depth."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        try:
            parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (ValueError, OSError, IndexError):
            continue
    found = []
    for p in parent:
        q = p
        while q in parent and q != pid and q > 1:
            q = parent[q]
        if q == pid and p != pid:
            try:
                argv = (Path("/proc") / str(p) / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"rados") and b"bench" in argv:
                found.append(p)
    return found


def test_two_concurrent_runs_stay_below_the_limit(lab_cluster, cephbench_env, tmp_path):
    total, used = lab_cluster.raw_capacity()
    limit = round(used / total + 0.04, 3)          # room for a few hundred MiB: each run alone could take most
    suite = write_suite(tmp_path, FILL.format(limit=limit))
    def start(i):
        return subprocess.Popen([*CLI, "run", str(suite), "--out", str(tmp_path / f"run{i}")], env=cephbench_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def markers() -> int:
        return len(lab_cluster.ceph_json("config-key", "dump", "cephbench/runs/") or {})

    procs, tools = [start(0)], []
    deadline = time.monotonic() + 60            # the first has marked the cluster and its write has started
    while not (markers() and (tools := _benches(procs[0].pid))) and time.monotonic() < deadline:
        assert procs[0].poll() is None, procs[0].communicate()
        time.sleep(0.1)
    assert tools, "the first run's write did not start"
    for t in tools:                              # held until the second run has marked the cluster too
        os.kill(t, signal.SIGSTOP)
    try:
        procs.append(start(1))
        while markers() < 2 and procs[1].poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        for t in tools:
            try:
                os.kill(t, signal.SIGCONT)
            except ProcessLookupError:
                pass
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
