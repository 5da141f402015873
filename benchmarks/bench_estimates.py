"""How close is the estimate `validate` and `run` print to the run's real duration?

The seed suites (suites/seed-*.yaml; CEPHBENCH_ESTIMATE_SUITES=a.yaml:b.yaml names others, "none" none) are run
on the lab (`cephbench run SUITE --lab-dir`: CEPHBENCH_BENCH_LAB, else a lab made in a temporary directory, which
each suite's lab shapes rebuild), and with them every run directory CEPHBENCH_ESTIMATE_RUNS names (colon-separated,
runs recorded earlier). For each, the suite in its run.json is expanded again with the current estimate model
(suite/plan.py expand, then for_cluster for the OSD hosts the run had) and compared with the run's wall time
(run.json's finished_unix - started_unix), as the ratio estimate/actual. Each group's estimate (its tests') is
compared with its actual share of the run (its first start to the next group's, the run's end for the last one),
and the groups that miss most are printed, largest error first: where the model is wrong.

The runs kept in tests/fixtures/report are printed too, not counted: an older cephbench recorded them (before
a seq's top-up, a search's 5 s steps and reruns), so their durations are of work the tool no longer does.
Goal: every counted run's ratio within 0.85-1.15.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import result_line

from cephbench.lab import Lab
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import HERE, LAB_REBUILD_S, expand, first_build_ready, for_cluster, estimate_s

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "report"


SUITES = Path(__file__).resolve().parent.parent / "suites"


def fixtures() -> list[tuple[str, dict, list[dict]]]:
    """(name, run.json, results) of every recorded run in tests/fixtures/report that has both."""
    out = []
    for meta in sorted(FIXTURES.glob("*.run.json")):
        res = meta.with_name(meta.name.removesuffix(".run.json") + ".results.jsonl")
        if res.exists():
            out.append((meta.name.removesuffix(".run.json"), json.loads(meta.read_text()),
                        [json.loads(x) for x in res.read_text().splitlines() if x.strip()]))
    return out


def read_run(p: Path) -> tuple[str, dict, list[dict]] | None:
    if not ((p / "run.json").exists() and (p / "results.jsonl").exists()):
        print(f"{p}: no run.json and results.jsonl; left out")
        return None
    return (p.name, json.loads((p / "run.json").read_text()),
            [json.loads(x) for x in (p / "results.jsonl").read_text().splitlines() if x.strip()])


def made_runs(out_dir: Path) -> list[tuple[str, dict, list[dict]]]:
    """Each suite run on the lab now, by the CLI an operator uses."""
    named = os.environ.get("CEPHBENCH_ESTIMATE_SUITES")
    if named == "none":
        return []
    suites = [Path(x) for x in named.split(":")] if named else sorted(SUITES.glob("seed-*.yaml"))
    lab_dir = os.environ.get("CEPHBENCH_BENCH_LAB") or str(out_dir / "lab")
    cli = Path(sys.executable).with_name("cephbench")
    out = []
    for suite in suites:
        run_dir = out_dir / suite.stem
        t0 = time.monotonic()
        done = subprocess.run([str(cli), "run", str(suite), "--lab-dir", lab_dir, "--out", str(run_dir)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        print(f"{suite.name}: ran in {time.monotonic() - t0:.0f} s, exit {done.returncode}"
              + (f": {done.stderr.strip().splitlines()[-1]}" if done.returncode and done.stderr.strip() else ""),
              flush=True)
        run = read_run(run_dir)
        if run is not None:
            out.append(run)
    return out


def _auto(value):
    """A suite recorded before `auto` was dumped as {auto: {...}}: its {max, latency_max} as the suite writes it."""
    if isinstance(value, dict) and value and set(value) <= {"max", "latency_max", "repeats"}:
        return {"auto": value}
    if isinstance(value, dict):
        return {k: _auto(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_auto(v) for v in value]
    return value


def planned(results: list[dict], tests: list) -> dict[str, list[dict]]:
    """Each planned test's results: its own, or its parts' (a network baseline's pairs, a search's steps), whose ids
    begin with its id."""
    out: dict[str, list[dict]] = {}
    ids = sorted((t.id for t in tests), key=len, reverse=True)
    for r in results:
        rid = r["test"]["id"]
        own = next((i for i in ids if rid == i or rid.startswith(i + "-")), None)
        if own is not None:
            out.setdefault(own, []).append(r)
    return out


def osd_hosts(meta: dict) -> list[str]:
    """The OSD hosts the run found: the lab's hosts with OSDs (over ssh), else every OSD on this machine."""
    topo = meta.get("lab_topology") or {}
    hosts = [h["name"] for h in topo.get("hosts", []) if h.get("osds")]
    return hosts or [HERE]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="cephbench-estimates-") as tmp:
        try:
            counted = [r for r in (read_run(Path(d)) for d in
                                   filter(None, os.environ.get("CEPHBENCH_ESTIMATE_RUNS", "").split(":"))) if r]
            counted += made_runs(Path(tmp))
        finally:
            if not os.environ.get("CEPHBENCH_BENCH_LAB") and (Path(tmp) / "lab").exists():
                Lab(Path(tmp) / "lab").down()
    old_ratios = compare(fixtures(), "fixture (older cephbench, not counted)")
    ratios = compare(counted, "run")
    worst = max(ratios.values(), key=lambda r: abs(r - 1)) if ratios else float("nan")
    result_line("estimates", runs=len(ratios), worst_ratio=round(worst, 3),
                within_15pct=sum(0.85 <= r <= 1.15 for r in ratios.values()),
                **{f"ratio_{k}": round(v, 3) for k, v in ratios.items()},
                fixtures_within_15pct=f"{sum(0.85 <= r <= 1.15 for r in old_ratios.values())}/{len(old_ratios)}",
                goal="0.85-1.15")


def compare(runs: list[tuple[str, dict, list[dict]]], what: str) -> dict[str, float]:
    """Each run's estimate/actual, printed with the groups that miss most."""
    ratios: dict[str, float] = {}
    misses: list[tuple[float, str, str, float, float]] = []
    for name, meta, results in runs:
        if meta.get("interrupted") or not meta.get("finished_unix"):
            continue
        suite = parse_suite(_auto(meta["suite"]), name)
        plan = expand(suite)
        tests = for_cluster(plan.tests, osd_hosts(meta), HERE, suite.settings.drop_caches)
        ran = {tid: min(rs, key=lambda r: r["started_unix"]) for tid, rs in planned(results, tests).items()}
        if results and min(r["started_unix"] for r in results) - meta["started_unix"] < LAB_REBUILD_S:
            tests = first_build_ready(tests)    # as `run` estimates when the lab runs in the first build already
        todo = [t for t in tests if t.id in ran]
        if len(todo) != len(tests):
            print(f"{name}: {len(tests) - len(todo)} planned tests have no result; left out of its estimate")
        est = estimate_s(todo)
        actual = meta["finished_unix"] - meta["started_unix"]
        ratios[name] = est / actual
        # by group: a group's set-up is counted in its first test's estimate, and its tests may share one tool run
        # (a disk baseline's patterns are one fio): its first start to the next group's
        groups: dict[str, list] = {}
        for t in todo:
            groups.setdefault(t.group, []).append(t)
        starts = sorted((min(ran[t.id]["started_unix"] for t in ts), g) for g, ts in groups.items())
        for (start, g), nxt in zip(starts, [*starts[1:], None]):
            real = (nxt[0] if nxt else meta["finished_unix"]) - start
            planned_s = sum(t.est_duration_s for t in groups[g])
            misses.append((planned_s - real, name, f"{groups[g][0].id} ({len(groups[g])} tests)", planned_s, real))
        first = starts[0][0] - meta["started_unix"] if starts else 0.0
        print(f"{what} {name}: estimate {est:.0f} s, actual {actual:.0f} s, ratio {est / actual:.3f} "
              f"(before the first test {first:.0f} s)", flush=True)
    print(f"largest per-group misses, {what} (estimate - actual, s):")
    for err, name, tid, est, real in sorted(misses, key=lambda m: -abs(m[0]))[:12]:
        print(f"  {err:+7.1f}  {name} {tid}: estimate {est:.1f}, actual {real:.1f}")
    return ratios


if __name__ == "__main__":
    sys.exit(main())
