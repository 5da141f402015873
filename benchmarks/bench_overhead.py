"""What cephbench adds to the work it runs: wall time and CPU of a one-test run next to the same work by hand.

A: `cephbench run` of a suite with one 5 s `rados bench` write (a separate process, as a user runs it: start-up,
preflight, facts, scrub flags, pool, report, cleanup all count). B: the same work typed by hand: `ceph osd pool
create`, `rados bench 5 write` with the same arguments, `ceph osd pool rm`. Rounds alternate A B B A and B A A B
so neither side always follows the other onto a cluster still removing the last pool. CPU is the children's
rusage: every process each side starts, tools included. Then a 12-test rados sweep of 3 s tests through cephbench:
its wall time against the sum of the test durations (`sweep_ratio`: the nominal 3 s each; `sweep_ratio_tools`:
each result's duration_s in results.jsonl, which counts what cephbench does within a test too: its drop of caches,
its counter readings; `sweep_ratio_processes`: the time the tool processes ran, each test from the birth of its
first raw output file, made as its tool starts, to the last write to one, its tool's summary;
`sweep_ratio_all_processes`: the same with the processes no result lists too, a seq's top-up write of the objects
its 3 s write could not feed, which on the 2-core lab takes 10-30 s of writing before each seq of 4 KiB objects).

Goal: at most 2 s and 1 CPU-second added to the one-test run, a sweep within 1.15 x its test time.
CEPHBENCH_OVERHEAD_ROUNDS (3) and CEPHBENCH_OVERHEAD_SECONDS (5) override; CEPHBENCH_BENCH_LAB=DIR reuses a lab.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import lab, result_line, settle

from cephbench.cluster.ceph import Cluster, Target

ROUNDS = int(os.environ.get("CEPHBENCH_OVERHEAD_ROUNDS", "3"))
SECONDS = int(os.environ.get("CEPHBENCH_OVERHEAD_SECONDS", "5"))
CLI = [sys.executable, "-m", "cephbench.cli"]
POOL = {"type": "replicated", "size": 3, "pg_num": 32}

ONE_TEST = f"""
name: overhead
pools:
  p: {json.dumps(POOL)}
workloads:
  - {{name: w, type: rados_bench, pool: p, modes: [write], object_size: 4MiB, concurrency: 16, duration: {SECONDS}s}}
"""

SWEEP = f"""
name: overhead-sweep
pools:
  p: {json.dumps(POOL)}
workloads:
  - name: r
    type: rados_bench
    pool: p
    modes: [write, seq, rand]
    object_size: [4KiB, 4MiB]
    concurrency: [4, 16]
    duration: 3s
"""
SWEEP_TESTS, SWEEP_TEST_S = 12, 3.0


def timed(argvs: list[list[str]], env: dict[str, str]) -> tuple[float, float]:
    """Run commands one after the other; (wall s, CPU s of every process they started)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.monotonic()
    for argv in argvs:
        res = subprocess.run(argv, env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({res.returncode}): {res.stderr.strip()[-500:]}")
    wall = time.monotonic() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def through_cephbench(suite: Path, out: Path, env: dict[str, str]) -> tuple[float, float]:
    return timed([[*CLI, "run", str(suite), "--out", str(out)]], env)


def tool_process_s(out: Path, results: list[dict], unrecorded: bool = False) -> float:
    """The time the tools' processes ran: for each test, its raw outputs' first birth to their last change (GNU
    stat: nanoseconds; the run directory's file system must record births, as ext4, xfs and tmpfs do). unrecorded:
    each seq's top-up write too (its output is beside the seq's, listed by no result), its instances timed
    together, apart from the test's."""
    total = 0.0
    for r in results:
        tests = [[str(out / p) for p in r.get("raw") or []]]
        if unrecorded:
            topups = sorted((out / "raw" / r["test"]["id"]).glob("rados-bench-topup-write-*"))
            tests.append([str(p) for p in topups])
        for files in tests:
            if not files:
                continue
            got = subprocess.run(["stat", "-c", "%.9W %.9Y", *files], capture_output=True, text=True,
                                 check=True).stdout.split()
            total += max(map(float, got[1::2])) - min(map(float, got[0::2]))
    return total


def by_hand(tag: str, env: dict[str, str]) -> tuple[float, float]:
    """What an operator types: the pool made as cephbench makes it, the same rados bench arguments."""
    pool = f"overhead-{tag}"
    pg = str(POOL["pg_num"])
    return timed([
        ["ceph", "osd", "pool", "create", pool, pg, pg, "replicated", f"--size={POOL['size']}",
         "--autoscale-mode=off"],
        ["rados", "-p", pool, "bench", str(SECONDS), "write", "-t", "16", "-b", str(4 * 2**20), "-O", str(4 * 2**20)],
        ["ceph", "osd", "pool", "rm", pool, pool, "--yes-i-really-really-mean-it"],
    ], env)


def main() -> None:
    with lab(rgw=False) as lb, tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **lb.env()}
        cluster = Cluster(Target(Path(env["CEPH_CONF"]), Path(env["CEPH_KEYRING"]), None, is_lab=True))
        suite = Path(tmp) / "one.yaml"
        suite.write_text(ONE_TEST)
        runs: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
        for rnd in range(ROUNDS):
            for i, side in enumerate("ABBA" if rnd % 2 == 0 else "BAAB"):
                if side == "A":
                    wall, cpu = through_cephbench(suite, Path(tmp) / f"run-{rnd}-{i}", env)
                else:
                    wall, cpu = by_hand(f"{rnd}-{i}", env)
                runs[side].append((wall, cpu))
                print(f"round {rnd + 1} {'cephbench' if side == 'A' else 'by hand  '}: wall {wall:.2f} s, "
                      f"CPU {cpu:.2f} s", flush=True)
                settle(cluster)
        sweep_suite = Path(tmp) / "sweep.yaml"
        sweep_suite.write_text(SWEEP)
        out = Path(tmp) / "sweep"
        sweep_wall, sweep_cpu = through_cephbench(sweep_suite, out, env)
        results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        assert len(results) == SWEEP_TESTS and all(r["status"] == "ok" for r in results), results
        tools_s = sum(r["duration_s"] for r in results)
        process_s = tool_process_s(out, results)
        all_process_s = tool_process_s(out, results, unrecorded=True)
        print(f"sweep: {SWEEP_TESTS} tests of {SWEEP_TEST_S:g} s in {sweep_wall:.1f} s (tests took {tools_s:.1f} s, "
              f"their tool processes {process_s:.1f} s, with the seqs' top-up writes {all_process_s:.1f} s), "
              f"CPU {sweep_cpu:.1f} s", flush=True)
        cluster.close()
        a_wall, a_cpu = (statistics.median(x) for x in zip(*runs["A"]))
        b_wall, b_cpu = (statistics.median(x) for x in zip(*runs["B"]))
        result_line("overhead", ratio_wall=a_wall / b_wall, ratio_cpu=a_cpu / b_cpu,
                    added_wall_s=a_wall - b_wall, added_cpu_s=a_cpu - b_cpu,
                    sweep_ratio=sweep_wall / (SWEEP_TESTS * SWEEP_TEST_S), sweep_ratio_tools=sweep_wall / tools_s,
                    sweep_ratio_processes=sweep_wall / process_s, sweep_ratio_all_processes=sweep_wall / all_process_s,
                    cephbench_wall_s=a_wall, cephbench_cpu_s=a_cpu, by_hand_wall_s=b_wall, by_hand_cpu_s=b_cpu,
                    sweep_wall_s=sweep_wall, rounds=ROUNDS, goal_added_wall_s=2.0, goal_added_cpu_s=1.0,
                    goal_sweep_ratio=1.15)


if __name__ == "__main__":
    main()
