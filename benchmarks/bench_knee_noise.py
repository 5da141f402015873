"""Is the knee search's knee stable on a noisy machine? (issue 36, item 1)

One multi-host lab (3 hosts, replica 3) with every OSD's data drive held at T = 16 MiB/s by its blkio throttle (every
client byte of a size-3 pool lands on all three drives, so 1 MiB writes cannot pass T), and a CPU burner beside it:
a process that spins on one core for a second and sleeps for the next, so the machine's spare CPU comes and goes as
another tenant's would. The same `concurrency: auto` search of 1 MiB writes runs RUNS times (`cephbench run`, one
run directory each, the lab kept between them), and analysis/curves.py's knee rule reads each run's steps.

Printed per run: each step's throughput and mean latency, the reruns a stall caused, where the search stopped and
why, and the knee (or the band of a knee not clear). The RESULT line: the knees' loads, how many doublings apart the
furthest two are (the goal: at most one), each knee's throughput over T (the goal: within 15 %), and how many runs
said their knee was not clear (its load: the low end of its band; `bands`: each run's knee or band, and whether
they all lie within one doubling of each other), the steps each run judged by turns (a step that seemed not to pay
measured again by turns with the one before it, drivers/search.py) and the steps it recorded, and the seconds the 5
runs took. A measurement, not a test: one lab on a shared machine.
Two cases: `throttle` as above; `cpu`, the one-host lab's 4 KiB writes (CPU-bound on a shared machine: the issue's
trial), without a known limit. Each run also prints where the rule before issue 36 (no noise, no reruns) would have
put the knee from the same steps. CEPHBENCH_KNEE_NOISE_RUNS (default 5), CEPHBENCH_KNEE_NOISE_CASES=throttle,cpu,
CEPHBENCH_KNEE_NOISE_REPEATS=3 (each step run 3 times: `auto: {repeats: 3}`) and CEPHBENCH_KNEE_NOISE_BURN=0 (no
burner) change it; CEPHBENCH_KNEE_NOISE_KEEP=DIR keeps each case's run directories under DIR/<case>/.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import result_line

from cephbench.analysis.curves import knees
from cephbench.core.loadsearch import pays, per_doubling
from cephbench.core.results import RunDir

CLI = [sys.executable, "-m", "cephbench.cli"]
MiB = 2**20
THROTTLE = 16 * MiB
# name: (lab up flags, the workload, the limit the knee should meet or None)
CASES = {
    # every OSD's data drive held at 16 MiB/s: 1 MiB writes to a size-3 pool cannot pass it
    "throttle": (["--hosts", "3", "--no-rgw", *[x for i in range(3) for x in ("--osd-throttle", f"osd.{i}=16MiB/s")]],
                 "{type: rados_bench, pool: rep, modes: [write], object_size: 1MiB, "
                 "concurrency: {auto: {max: 32}}, duration: 4s}", THROTTLE),
    # the one-host lab, 4 KiB writes: CPU-bound on this shared machine, the trial (a knee at t=2 one run and
    # t=16 the next)
    "cpu": (["--no-rgw"], "{type: rados_bench, pool: rep, modes: [write], object_size: 4KiB, "
                          "concurrency: {auto: {max: 64}}, duration: 4s}", None),
}
# one core busy for a second, idle the next: spare CPU that comes and goes
BURNER = "import time\nwhile True:\n    t = time.time() + 1\n    while time.time() < t: pass\n    time.sleep(1)\n"


def old_rule(points: list[tuple[int, float, float]]) -> int | None:
    """Where the search before issue 36 would have put the knee from the same steps (load, throughput, latency): it
    stopped at the first step from the third on that did not pay (loadsearch.pays, no noise), and the knee rule
    named the load before the first step that did not pay; None where growth came back (too noisy to tell)."""
    stop_at = len(points)
    for i in range(2, len(points)):
        (la, ta, ma), (lb, tb, mb) = points[i - 1], points[i]
        d = math.log2(lb / la)
        if not pays(per_doubling(tb / ta, d) - 1, per_doubling(mb / ma, d) if ma and mb else None):
            stop_at = i + 1
            break
    seen = points[:stop_at]
    fails = [i for i in range(1, len(seen)) if not pays(
        per_doubling(seen[i][1] / seen[i - 1][1], math.log2(seen[i][0] / seen[i - 1][0])) - 1,
        per_doubling(seen[i][2] / seen[i - 1][2], math.log2(seen[i][0] / seen[i - 1][0]))
        if seen[i][2] and seen[i - 1][2] else None)]
    if not fails:
        return seen[-1][0]
    first = fails[0]
    for i in range(first + 1, len(seen)):
        rise = seen[i][1] / seen[i - 1][1] - 1
        if rise > 0.04 and i not in fails:         # growth came back by more than two floors of noise
            return None
    return seen[first - 1][0]


def one_run(i: int, d: Path, lab_dir: Path, env: dict[str, str], workload: str
            ) -> tuple[int, float, str, int, int, int] | None:
    """One run's knee: (its load, or the low end of the band of a knee not clear; its throughput; its state; the
    band's high end, the load itself for a knee; steps judged by turns; steps the run recorded)."""
    suite = d / "suite.yaml"
    suite.write_text("name: knee-noise\nsettings: {drop_caches: false}\n"
                     "pools:\n  rep: {type: replicated, size: 3, pg_num: 32}\n"
                     f"workloads:\n  - {workload}\n")
    out = d / f"run{i}"
    run = subprocess.run([*CLI, "run", str(suite), "--lab-dir", str(lab_dir), "--out", str(out)],
                         env=env, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"run {i}: failed (exit {run.returncode}): {run.stderr.strip()[-500:]}", flush=True)
    results, _ = RunDir(out).results()
    for r in results:
        if r.status != "ok" or r.measurement is None:
            continue
        m = r.measurement
        again = [n for n in r.notes if n.startswith("search step run again")]
        turns = [n for n in r.notes if n.startswith("search step measured again by turns")]
        print(f"  run {i} t={r.test.params['concurrency']:>2}: {(m.bytes_per_s or 0) / MiB:6.1f} MiB/s, mean "
              f"{(m.latency.mean_ns or 0) / 1e6:7.1f} ms, seconds "
              f"{[round((s.bytes_per_s or 0) / MiB, 1) for s in m.timeseries]}"
              + (f"; {again[0]}" if again else "") + (f"; {turns[0]}" if turns else "")
              + (f"; stop: {r.search_stop.text}" if r.search_stop else ""), flush=True)
    found = knees(results)
    if not found:
        print(f"run {i}: no curve ({len(results)} results): {(run.stderr or run.stdout).strip()[-800:]}", flush=True)
        return None
    curve, k = found[0]
    at = k.point or curve.points[-1]
    before = old_rule([(p.load, curve.throughput(p) or 0.0, p.mean_ns or 0.0) for p in curve.points])
    band = (f" band {k.band[0].frm.load}-{k.band[-1].to.load}" if k.state == "unclear" and k.band else "")
    paired = sum(1 for s in k.steps if s.by_turns)
    print(f"run {i}: {k.state} at t={at.load}, {(at.bytes_per_s or 0) / MiB:.1f} MiB/s, "
          f"{at.ops_per_s or 0:,.0f} ops/s{band}; {paired} steps judged by turns; the rule before issue 36 on the "
          f"same steps: {'too noisy' if before is None else f't={before}'}", flush=True)
    hi = k.band[-1].to.load if k.state == "unclear" and k.band else at.load
    return at.load, (at.bytes_per_s or 0.0), k.state, hi, paired, len(results)


def case(name: str, env: dict[str, str], runs: int) -> None:
    flags, workload, limit = CASES[name]
    repeats = int(os.environ.get("CEPHBENCH_KNEE_NOISE_REPEATS", "1"))
    if repeats > 1:         # each step run that many times, its noise their spread
        workload = workload.replace("{auto: {max:", f"{{auto: {{repeats: {repeats}, max:")
    d = Path(tempfile.mkdtemp(prefix=f"cephbench-bench-knee-noise-{name}-"))
    lab_dir = d / "lab"
    burner = None
    try:
        subprocess.run([*CLI, "lab", "up", "--dir", str(lab_dir), "--osd-size", "6GiB", *flags], env=env,
                       check=True, capture_output=True, text=True)
        if os.environ.get("CEPHBENCH_KNEE_NOISE_BURN", "1") != "0":
            burner = subprocess.Popen([sys.executable, "-c", BURNER])
        t0 = time.monotonic()
        got = [k for i in range(1, runs + 1) if (k := one_run(i, d, lab_dir, env, workload)) is not None]
        elapsed = time.monotonic() - t0
        if not got:
            result_line(f"knee-noise-{name}", repeats=repeats, runs=runs, knees=0)
            return
        loads = [g[0] for g in got]
        apart = math.log2(max(loads) / min(loads))
        figures: dict[str, object] = {}
        if limit is not None:
            ratios = [g[1] / limit for g in got]
            figures = {"ratio_min": min(ratios), "ratio_max": max(ratios),
                       "within_15pct": sum(abs(r - 1) <= 0.15 for r in ratios)}
        # a knee not clear is its band: the bands and knees all within one doubling of each other when their
        # highest low end is within one doubling of their lowest high end (the same answer, said as a band)
        bands = "/".join(f"{g[0]}-{g[3]}" if g[3] != g[0] else str(g[0]) for g in got)
        common = math.log2(max(g[0] for g in got) / min(g[3] for g in got))
        result_line(f"knee-noise-{name}", repeats=repeats, runs=runs, knees=len(got),
                    loads="/".join(map(str, loads)), bands=bands,
                    doublings_apart=apart, within_one_step=apart <= 1, bands_within_one_step=common <= 1,
                    **figures, unclear=sum(g[2] == "unclear" for g in got),
                    by_turns="/".join(str(g[4]) for g in got), steps="/".join(str(g[5]) for g in got),
                    elapsed_s=elapsed, burner=burner is not None)
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
        subprocess.run([*CLI, "lab", "down", "--dir", str(lab_dir)], env=env, capture_output=True)
        if keep := os.environ.get("CEPHBENCH_KNEE_NOISE_KEEP"):      # the run directories, for fixtures
            for run in d.glob("run*"):
                shutil.copytree(run, Path(keep) / name / run.name, dirs_exist_ok=True)
        shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}
    runs = int(os.environ.get("CEPHBENCH_KNEE_NOISE_RUNS", "5"))
    for name in os.environ.get("CEPHBENCH_KNEE_NOISE_CASES", ",".join(CASES)).split(","):
        case(name, env, runs)


if __name__ == "__main__":
    main()
