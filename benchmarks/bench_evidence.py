"""What collecting the evidence of issue 16 costs a run: the speed issue's per-run budget is 2 s and 1 CPU-second.

1. `RESULT evidence_run`: the same one-test `cephbench run` (a 5 s rados bench 4 KiB write, 16 in flight) on a
   one-host lab, A with the evidence off (`osd_counters: false`, `other_load: false`) and B with it on (the
   defaults: every OSD's perf dump and settings through its admin socket at the start and end, the pools' counters
   (`ceph df detail`) before and after), rounds alternating A B B A / B A A B. CPU is every process the run
   started (the admin-socket script, the host's watch included). The lab's noise is the spread of A's own rounds (|A/A' - 1|).
2. `RESULT evidence_watch`: one host's watch (hostload.WATCH_SH) following 2 devices and 2 interfaces for
   CEPHBENCH_EVIDENCE_WATCH_S (20) seconds: its CPU per second watched, which every watched host pays.

CEPHBENCH_EVIDENCE_ROUNDS (3) overrides; CEPHBENCH_BENCH_LAB=DIR reuses a lab.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_overhead import CLI, timed
from common import lab, result_line, settle

from cephbench.cluster.ceph import Cluster, Target
from cephbench.evidence.hostload import watch_argv

ROUNDS = int(os.environ.get("CEPHBENCH_EVIDENCE_ROUNDS", "3"))
WATCH_S = float(os.environ.get("CEPHBENCH_EVIDENCE_WATCH_S", "20"))

SUITE = """
name: evidence-cost
settings: {{osd_counters: {on}, other_load: {on}}}
pools:
  p: {{type: replicated, size: 3, pg_num: 32}}
workloads:
  - {{name: w, type: rados_bench, pool: p, modes: [write], object_size: 4KiB, concurrency: 16, duration: 5s}}
"""


def watch_cost() -> float:
    """CPU seconds per second of one watch of the first two block devices and interfaces of this machine."""
    devs = [ln.split()[2] for ln in Path("/proc/diskstats").read_text().splitlines()][:2]
    argv = watch_argv(devs, ["127.0.0.1"], [])
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
    time.sleep(WATCH_S)
    os.killpg(p.pid, 15)
    p.wait()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) / WATCH_S


def main() -> None:
    per_s = watch_cost()
    print(f"one host's watch: {per_s * 1000:.1f} ms of CPU per second watched", flush=True)
    with lab(rgw=False) as lb, tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **lb.env()}
        cluster = Cluster(Target(Path(env["CEPH_CONF"]), Path(env["CEPH_KEYRING"]), None, is_lab=True))
        suites = {}
        for side, on in (("A", "false"), ("B", "true")):
            suites[side] = Path(tmp) / f"{side}.yaml"
            suites[side].write_text(SUITE.format(on=on))
        runs: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
        for rnd in range(ROUNDS):
            for i, side in enumerate("ABBA" if rnd % 2 == 0 else "BAAB"):
                wall, cpu = timed([[*CLI, "run", str(suites[side]), "--out", str(Path(tmp) / f"r{rnd}-{i}")]], env)
                runs[side].append((wall, cpu))
                print(f"round {rnd + 1} evidence {'off' if side == 'A' else 'on '}: wall {wall:.2f} s, CPU {cpu:.2f} s",
                      flush=True)
                settle(cluster)
        cluster.close()
    a_wall, a_cpu = (statistics.median(x) for x in zip(*runs["A"]))
    b_wall, b_cpu = (statistics.median(x) for x in zip(*runs["B"]))
    walls = [w for w, _ in runs["A"]]
    noise = statistics.median(abs(x / y - 1) for x, y in zip(walls[::2], walls[1::2]))
    result_line("evidence_run", ratio_wall=b_wall / a_wall, ratio_cpu=b_cpu / a_cpu, added_wall_s=b_wall - a_wall,
                added_cpu_s=b_cpu - a_cpu, off_wall_s=a_wall, on_wall_s=b_wall, off_cpu_s=a_cpu, on_cpu_s=b_cpu,
                lab_noise_wall=noise, rounds=ROUNDS, goal_added_wall_s=2.0, goal_added_cpu_s=1.0)
    result_line("evidence_watch", cpu_ms_per_s=per_s * 1000, seconds=WATCH_S)
