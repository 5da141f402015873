"""`cephbench lab up` and `lab down` of both lab shapes: medians of several cycles, and the start-up breakdown.

- one-host: 3 OSDs of 10 GiB on loopback + RGW. Goal: up <= 2 s (issue 39), down <= 2 s on 2 cores.
- multi-host: 3 hosts of one OSD (10 GiB, on a loop device) + 1 client host + RGW, public links shaped to 1gbit,
  each host with its sshd and cgroups (issue 14). Goal: up <= 5 s (issue 39), down <= 5 s on 2 cores.
The shapes alternate within a run (one-host, multi-host, multi-host, one-host, ...); each figure is the median of
its shape's cycles, on a quiet machine (run it under `flock -x /tmp/cephbench-quiet.lock`).

LAB_BENCH_RUNS=N       cycles of each shape (default 5; with a baseline, N rounds of A B B A)
LAB_BENCH_BASELINE=REV also time the lab code of git revision REV, alternating with this tree's, and print
                       the ratios (e.g. LAB_BENCH_BASELINE=8944eb2, the lab before issue 13)
LAB_BENCH_DIR=DIR      where the labs go (default: the system's temporary directory)

Each cycle runs in a fresh Python process (so old and new code never share an interpreter); what is timed is
Lab.up() and Lab.down(), not the CLI's own start-up.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from common import median, result_line

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GOALS = {"one-host": (2.0, 2.0), "multi-host": (5.0, 5.0)}      # up, down (s)

CYCLE = """
import json, sys, time
from pathlib import Path
from cephbench.lab import Lab
lb = Lab(Path(sys.argv[1]))
multi = None
if sys.argv[2] == "multi-host":
    from cephbench.lab.multihost import MultiHostSpec
    from cephbench.lab.rates import parse_link
    multi = MultiHostSpec(hosts=3, osds_per_host=1, clients=1, public=parse_link("1gbit"))
t0 = time.monotonic()
info = lb.up(osds=3, osd_size_bytes=10 * 1024**3, rgw=True, **({"multi": multi} if multi else {}))
up_s = time.monotonic() - t0
t0 = time.monotonic()
lb.down()
down_s = time.monotonic() - t0
print(json.dumps({"up_s": up_s, "down_s": down_s, "steps": getattr(info, "startup_steps", {})}))
"""


def _source_of(rev: str, into: Path) -> Path:
    """src/ of a git revision, unpacked (no checkout, no worktree)."""
    tar = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(tar)) as t:
        t.extractall(into, filter="data")
    return into / "src"


def _cycle(src: Path, shape: str = "one-host") -> dict:
    parent = Path(tempfile.mkdtemp(prefix="cephbench-bench-lab-", dir=os.environ.get("LAB_BENCH_DIR")))
    try:
        res = subprocess.run([sys.executable, "-c", CYCLE, str(parent / "lab"), shape], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(src)}, timeout=1800)
        if res.returncode != 0:
            raise SystemExit(f"bench lab: a cycle failed:\n{res.stderr[-2000:]}")
        return json.loads(res.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _figures(shape: str, rs: list[dict]) -> dict[str, object]:
    up_goal, down_goal = GOALS[shape]
    up, down = median([r["up_s"] for r in rs]), median([r["down_s"] for r in rs])
    figures: dict[str, object] = {"up_s_median": up, "down_s_median": down, "up_goal_s": up_goal,
                                  "down_goal_s": down_goal, "up_ratio_to_goal": up / up_goal,
                                  "down_ratio_to_goal": down / down_goal, "runs": len(rs),
                                  "load": f"{os.getloadavg()[0]:.1f}"}
    for step in rs[0]["steps"]:
        figures[f"at_{step.replace(' ', '_')}_s"] = median([r["steps"][step] for r in rs if step in r["steps"]])
    return figures


def main() -> None:
    runs = int(os.environ.get("LAB_BENCH_RUNS", "5"))
    baseline = os.environ.get("LAB_BENCH_BASELINE")
    new_src = REPO / "src"
    results: dict[str, list[dict]] = {"one-host": [], "multi-host": [], "old": []}
    multi_ok = os.geteuid() == 0     # namespaces, loop devices and cgroups need root
    with tempfile.TemporaryDirectory(prefix="cephbench-bench-lab-src-") as tmp:
        pairs = [["one-host", "multi-host"] if i % 2 == 0 else ["multi-host", "one-host"] for i in range(runs)]
        order = [shape for pair in pairs for shape in pair] if multi_ok else ["one-host"] * runs
        if baseline:
            old_src = _source_of(baseline, Path(tmp))
            order = ["old", "one-host", "one-host", "old"] * runs
        for which in order:
            r = _cycle(old_src if which == "old" else new_src, "one-host" if which == "old" else which)
            results[which].append(r)
            print(f"{which}: up {r['up_s']:.1f} s, down {r['down_s']:.2f} s"
                  + (f"  ({', '.join(f'{k} {v:.1f}' for k, v in r['steps'].items())})" if r["steps"] else ""),
                  flush=True)
    figures = _figures("one-host", results["one-host"])
    if baseline:
        old = results["old"]
        old_up, old_down = median([r["up_s"] for r in old]), median([r["down_s"] for r in old])
        figures.update(baseline=baseline, baseline_up_s_median=old_up, baseline_down_s_median=old_down,
                       up_ratio_new_to_old=figures["up_s_median"] / old_up,
                       down_ratio_new_to_old=figures["down_s_median"] / old_down)
    result_line("lab", **figures)
    if results["multi-host"]:
        result_line("lab-multihost", **_figures("multi-host", results["multi-host"]))


if __name__ == "__main__":
    main()
