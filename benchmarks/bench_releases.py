"""The quick suite on each release's lab, side by side (issue 27): Pacific (the host's Ceph), Reef and Tentacle.

For each release: `cephbench lab up --release R` (the one-host lab, 3 OSDs), timed; `cephbench run
suites/quick.yaml` on it; `lab down`. Prints, per release, the lab's start-up time, each test's figure and the
verdict's lines, then one RESULT line per release. One run per release on a shared machine: the figures move
between runs by as much as the releases differ (see suites/seed-argonaut-bobtail-now.yaml for repeats and their
significance); what this says reliably is that every kind runs, and what each release's verdict names.
A release whose root cannot be built here is reported and skipped. CEPHBENCH_BENCH_RELEASES=reef,tentacle picks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import each_release, result_line

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cephbench.cli"]
MiB = 2**20


def figure(r: dict) -> str:
    m = r.get("measurement") or {}
    if r.get("status") != "ok" or not m:
        return r.get("status", "?")
    bw, ops = m.get("bytes_per_s"), m.get("ops_per_s")
    return (f"{bw / MiB:,.1f} MiB/s" if bw else "") + (f", {ops:,.0f} ops/s" if ops else "")


def one(release: str, env: dict[str, str]) -> dict | None:
    d = Path(tempfile.mkdtemp(prefix=f"cephbench-bench-{release}-"))
    lab_dir = d / "lab"
    try:
        t0 = time.monotonic()
        up = subprocess.run([*CLI, "lab", "up", "--dir", str(lab_dir), "--release", release], env=env,
                            capture_output=True, text=True)
        up_s = time.monotonic() - t0
        if up.returncode != 0:
            print(f"{release}: lab up failed, skipped: {up.stderr.strip().splitlines()[-1:]}", flush=True)
            return None
        t1 = time.monotonic()
        run = subprocess.run([*CLI, "run", str(REPO / "suites" / "quick.yaml"), "--lab-dir", str(lab_dir),
                              "--out", str(d / "run")], env=env, capture_output=True, text=True)
        run_s = time.monotonic() - t1
        results = [json.loads(x) for x in (d / "run" / "results.jsonl").read_text().splitlines() if x.strip()] \
            if (d / "run" / "results.jsonl").exists() else []
        out = run.stdout
        verdict = out[out.index("Verdict"):].split("report:")[0].strip() if "Verdict" in out else "(no verdict)"
        return {"release": release, "up_s": up_s, "run_s": run_s, "rc": run.returncode, "verdict": verdict,
                "tests": {r["test"]["id"]: figure(r) for r in results if not r["test"]["kind"].endswith("baseline")},
                "bottlenecks": {r["test"]["id"]: (r.get("analysis") or {}).get("bottleneck") for r in results
                                if r.get("analysis")}}
    finally:
        subprocess.run([*CLI, "lab", "down", "--dir", str(lab_dir)], env=env, capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def main() -> None:
    done = each_release(one)
    if not done:
        print("no release's lab started", flush=True)
        return
    ids = sorted({t for x in done for t in x["tests"]})
    width = max(len(t) for t in ids)
    print(f"{'test':<{width}}  " + "  ".join(f"{x['release']:>26}" for x in done))
    for t in ids:
        print(f"{t:<{width}}  " + "  ".join(f"{x['tests'].get(t, '-'):>26}" for x in done))
    for x in done:
        print(f"\n== {x['release']}: lab up {x['up_s']:.1f} s, quick suite {x['run_s']:.1f} s (exit {x['rc']})")
        print(x["verdict"])
    for x in done:
        named = sorted({b for b in x["bottlenecks"].values() if b})
        result_line(f"releases-{x['release']}", lab_up_s=x["up_s"], quick_suite_s=x["run_s"], exit=x["rc"],
                    tests_ok=sum(1 for v in x["tests"].values() if "/s" in v), tests=len(x["tests"]),
                    bottlenecks="|".join(named).replace(" ", "_"))
