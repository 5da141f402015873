"""CPU of a `cephbench` start: the working tree's command against the same command of a base commit.

The test suite starts the CLI hundreds of times (issue 23), and most of a short command's CPU is its imports. For
each common invocation (help texts, a suite validated, commands refused before they touch anything, a run shown: each
ends without a cluster), A is this working tree (its src/ and suites/ as they are, copied into a temporary directory)
and B the base commit, checked out with `git worktree add` into it (removed at the end). Both run with this
interpreter as `python -m cephbench.entry`, from their own root, with PYTHONPATH at their own src/. Rounds alternate
the commands, and A B and B A within each; CPU is the child's user+sys time, the median of the rounds.

Per command: `startup_cpu_ratio` (A's median CPU / B's), both medians, `noise` (the spread of A's own runs,
(max - min) / median: a ratio closer to 1 than that says nothing), and `same_output` (A printed what B printed,
the roots' paths aside). Goals: a ratio of at most 0.6 for run, validate, lab and cleanup (issue 23); at most 0.15 s
of CPU for `--version`, `validate` of a seed suite and `show` of a run (issue 39: `goal_cpu_s` and `met` on their
lines). The run shown is a real one kept as fixtures (tests/fixtures/report, SHOW_RUN: the 3-host lab's quick suite,
44 results); `show_small` shows a smaller one (6 results).

`libraries` is no cephbench command: the same interpreter importing what `validate` cannot do without (click, PyYAML,
pydantic with one model built), the floor under any start that reads a suite; it runs in the same rounds.

By default (`pyc=1` in the RESULT lines) starts read .pyc files, as an installed cephbench's and the test suite's do
(the Makefile unexports PYTHONDONTWRITEBYTECODE): each side's in a cache directory of its own (PYTHONPYCACHEPREFIX),
written by one start of each command before the rounds. CEPHBENCH_STARTUP_PYC=0 measures starts that compile each
cephbench module they import from source (PYTHONDONTWRITEBYTECODE, this environment's default): neither copy has a
__pycache__ directory (the working tree's, which test processes may have written, are not copied), and none is
written. CEPHBENCH_STARTUP_BASE (20b2553, before issue 39's start-up work) and CEPHBENCH_STARTUP_ROUNDS (7) override.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import result_line

BASE = os.environ.get("CEPHBENCH_STARTUP_BASE", "20b2553")
ROUNDS = int(os.environ.get("CEPHBENCH_STARTUP_ROUNDS", "7"))
PYC = os.environ.get("CEPHBENCH_STARTUP_PYC", "1") == "1"
TREE = Path(__file__).resolve().parents[1]
FIXTURES = TREE / "tests" / "fixtures" / "report"
SHOW_RUN = "ceph16.2.15_quick_multihost3"
SHOW_SMALL = "ceph16.2.15_repeated_first"
GOAL_CPU_S = 0.15
GOALS = ("version", "validate_seed", "show_run")      # issue 39's: at most GOAL_CPU_S each
# what validate needs before any of cephbench's own code: the floor under a start that reads a suite
LIBRARIES = ("import click, yaml\nfrom pydantic import BaseModel\n"
             "class M(BaseModel):\n    x: int\n")


def commands(tmp: Path) -> dict[str, list[str]]:
    """Each a start the test suite makes, ending without a cluster: its name in the RESULT lines, its arguments."""
    absent = tmp / "absent"         # never made: the refusals below name it
    return {
        "version": ["--version"],
        "validate_seed": ["validate", "suites/seed-han-2012.yaml"],
        "show_run": ["show", str(tmp / "runs" / SHOW_RUN)],
        "show_small": ["show", str(tmp / "runs" / SHOW_SMALL)],
        "libraries": ["-c", LIBRARIES],
        "help": ["--help"],
        "run_help": ["run", "--help"],
        "run_refused": ["run", str(absent / "suite.yaml")],
        "validate_quick": ["validate", "suites/quick.yaml"],
        "validate_sweep": ["validate", "suites/rados-sweep.yaml"],
        "lab_help": ["lab", "--help"],
        "lab_up_help": ["lab", "up", "--help"],
        "lab_env_no_lab": ["lab", "env", "--dir", str(absent / "lab")],
        "cleanup_help": ["cleanup", "--help"],
        "cleanup_refused": ["cleanup", str(absent / "run")],
        "report_refused": ["report", str(absent / "run")],
    }


def start(root: Path, args: list[str], pyc: Path | None) -> tuple[float, str]:
    """One start of the CLI from `root` (`pyc`: the side's .pyc cache; None: none read or written): (CPU s of the
    process, what it printed with `root` replaced)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CEPH") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root / "src")
    if pyc is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(pyc)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    argv = args if args[0] == "-c" else ["-m", "cephbench.entry", *args]
    res = subprocess.run([sys.executable, *argv], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    printed = f"exit {res.returncode}\n{res.stdout}\n{res.stderr}".replace(str(root), "<root>")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), printed


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="cephbench-bench-startup-") as tmp_name:
        tmp = Path(tmp_name)
        tree, base = tmp / "tree", tmp / "base"
        for part in ("src", "suites"):
            shutil.copytree(TREE / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
        for run in (SHOW_RUN, SHOW_SMALL):        # a run directory as `run` leaves it: run.json, results.jsonl
            (tmp / "runs" / run).mkdir(parents=True)
            shutil.copy(FIXTURES / f"{run}.run.json", tmp / "runs" / run / "run.json")
            shutil.copy(FIXTURES / f"{run}.results.jsonl", tmp / "runs" / run / "results.jsonl")
        subprocess.run(["git", "-C", str(TREE), "worktree", "add", "--quiet", "--detach", str(base), BASE], check=True)
        try:
            measure(commands(tmp), {"A": tree, "B": base}, tmp if PYC else None)
        finally:
            subprocess.run(["git", "-C", str(TREE), "worktree", "remove", "--force", str(base)], check=False)


def measure(cmds: dict[str, list[str]], roots: dict[str, Path], pyc_dir: Path | None) -> None:
    cpu: dict[tuple[str, str], list[float]] = {(name, side): [] for name in cmds for side in roots}
    printed: dict[tuple[str, str], set[str]] = {(name, side): set() for name in cmds for side in roots}
    pyc = {side: None if pyc_dir is None else pyc_dir / f"pyc-{side}" for side in roots}
    if pyc_dir is not None:
        for name, args in cmds.items():
            for side in roots:
                start(roots[side], args, pyc[side])
    for rnd in range(ROUNDS):
        for name, args in cmds.items():
            for side in ("AB" if rnd % 2 == 0 else "BA"):
                s, text = start(roots[side], args, pyc[side])
                cpu[(name, side)].append(s)
                printed[(name, side)].add(text)
        print(f"round {rnd + 1}/{ROUNDS}: " + ", ".join(
            f"{name} {cpu[(name, 'A')][-1]:.3f}/{cpu[(name, 'B')][-1]:.3f} s" for name in cmds), flush=True)
    for name in cmds:
        a, b = statistics.median(cpu[(name, "A")]), statistics.median(cpu[(name, "B")])
        noise = (max(cpu[(name, "A")]) - min(cpu[(name, "A")])) / a
        goal = {"goal_cpu_s": GOAL_CPU_S, "met": int(a <= GOAL_CPU_S)} if name in GOALS else {}
        result_line("startup", command=name, startup_cpu_ratio=a / b, tree_cpu_s=a, base_cpu_s=b, noise=noise,
                    same_output=int(printed[(name, "A")] == printed[(name, "B")]), **goal, rounds=ROUNDS, base=BASE,
                    pyc=int(PYC), load=f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
