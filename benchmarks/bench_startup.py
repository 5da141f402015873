"""CPU of a `cephbench` start: the working tree's command against the same command of a base commit.

The test suite starts the CLI hundreds of times (issue 23), and most of a short command's CPU is its imports. For
each common invocation (help texts, a suite validated, commands refused before they touch anything: each ends
without a cluster), A is this working tree (its src/ and suites/ as they are, copied into a temporary directory) and
B the base commit, checked out with `git worktree add` into it (removed at the end). Both run with this interpreter
as `python -m cephbench.entry`, from their own root, with PYTHONPATH at their own src/. Rounds alternate A B and
B A; CPU is the child's user+sys time.

Per command: `startup_cpu_ratio` (A's median CPU / B's), both medians, `noise` (the spread of A's own runs,
(max - min) / median: a ratio closer to 1 than that says nothing), and `same_output` (A printed what B printed,
the roots' paths aside). Goal: a ratio of at most 0.6 for run, validate, lab and cleanup.

By default (`pyc=0` in the RESULT lines) every start compiles each cephbench module it imports from source, as
with PYTHONDONTWRITEBYTECODE set (this environment's), so a module not imported saves its compile too: neither copy
has a __pycache__ directory (the working tree's, which test processes may have written, are not copied), and none
is written. CEPHBENCH_STARTUP_PYC=1 measures starts as an installed cephbench makes them, from .pyc files: each
side's in a cache directory of its own (PYTHONPYCACHEPREFIX), written by one start of each command before the rounds.
CEPHBENCH_STARTUP_BASE (eac26c2) and CEPHBENCH_STARTUP_ROUNDS (7) override.
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

BASE = os.environ.get("CEPHBENCH_STARTUP_BASE", "eac26c2")
ROUNDS = int(os.environ.get("CEPHBENCH_STARTUP_ROUNDS", "7"))
PYC = os.environ.get("CEPHBENCH_STARTUP_PYC") == "1"
TREE = Path(__file__).resolve().parents[1]


def commands(tmp: Path) -> dict[str, list[str]]:
    """Each a start the test suite makes, ending without a cluster: its name in the RESULT lines, its arguments."""
    absent = tmp / "absent"         # never made: the refusals below name it
    return {
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
    res = subprocess.run([sys.executable, "-m", "cephbench.entry", *args], cwd=root, env=env, capture_output=True,
                         text=True, timeout=120)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    printed = f"exit {res.returncode}\n{res.stdout}\n{res.stderr}".replace(str(root), "<root>")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), printed


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="cephbench-bench-startup-") as tmp_name:
        tmp = Path(tmp_name)
        tree, base = tmp / "tree", tmp / "base"
        for part in ("src", "suites"):
            shutil.copytree(TREE / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
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
        result_line("startup", command=name, startup_cpu_ratio=a / b, tree_cpu_s=a, base_cpu_s=b, noise=noise,
                    same_output=int(printed[(name, "A")] == printed[(name, "B")]), rounds=ROUNDS, base=BASE,
                    pyc=int(PYC))


if __name__ == "__main__":
    main()
