"""How close is the estimate `validate` and `run` print to the run's real duration?

Cases (CEPHBENCH_ESTIMATE_CASES, comma-separated; default all): `seeds`, the seed suites (suites/seed-*.yaml;
CEPHBENCH_ESTIMATE_SUITES=a.yaml:b.yaml names others, "none" none) run on the lab (`cephbench run SUITE --lab-dir`:
CEPHBENCH_BENCH_LAB, else a lab made here, which each suite's lab shapes rebuild); `search`, suites/quick.yaml and
rados bench searches of concurrency on the one-host lab; `clients`, `clients: auto` on a lab of 3 hosts and 2 client
hosts; `prometheus`, a run from a toolbox (the conf and key alone, no ssh to the OSD hosts) with the lab's Prometheus
(`lab up --monitoring`). Every run directory CEPHBENCH_ESTIMATE_RUNS names (colon-separated, runs kept earlier) is
counted too. For each, the suite in its run.json is planned again with the current estimate model as `run` plans it
for the hosts the run found (suite/plan.py planned_for) and its expected estimate compared with the run's wall time
(run.json's finished_unix - started_unix), as the ratio estimate/actual; each search's steps run against its
expected count; each group's estimate against its actual share of the run, the groups that miss most printed first.
CEPHBENCH_ESTIMATE_OUT=DIR keeps the runs there; CEPHBENCH_ESTIMATE_FIXTURES=DIR writes each counted run as a
tests/fixtures/estimates fixture (<run>.run-timings.json). Take it under `flock -x` on a quiet machine: each run's
line prints the load average.

The runs kept in tests/fixtures/report are printed too, not counted: an older cephbench recorded them (before
a seq's top-up, a search's 5 s steps and reruns), so their durations are of work the tool no longer does.
Goal: every counted run's ratio within 0.85-1.15; a run with searches, whose course (how far each search goes, its
steps measured again in pairs) no plan knows, lies within its estimate's range (0.85x its least to its longest), and
the estimate of the course it took (plan.as_run_s) within 0.85-1.15 of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from common import result_line

from cephbench.core.loadsearch import PAIR_KEY
from cephbench.lab import Lab
from cephbench.lab.multihost import MultiHostSpec
from cephbench.lab.rates import parse_link
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import (HERE, LAB_REBUILD_S, Room, as_run_s, estimate, planned_for, run_share,
                                  waits_for_client_hosts)

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


# The cases beyond the seed suites (issue 36 item 4), each a suite and the lab it runs on:
#   search: the operator's first suite (suites/quick.yaml: baselines, RGW, OSD bench and a search of fio's queue
#     depth) and searches of rados bench's concurrency, on the one-host lab;
#   clients: `clients: auto` (rados bench and fio from c1, then c1 and c2), on a lab of 3 hosts and 2 client hosts;
#   prometheus: a run from a toolbox (the conf and key alone: no ssh to the OSD hosts) whose device, link and CPU
#     figures come from the lab's Prometheus (`lab up --monitoring`), on the same lab.
SEARCH_SUITE = {
    "name": "est-search",
    "pools": {"rep": {"type": "replicated", "size": 3, "pg_num": 32}},
    "workloads": [
        {"name": "rados", "type": "rados_bench", "pool": "rep", "modes": ["write", "rand"], "object_size": "4KiB",
         "concurrency": {"auto": {"max": 64}}, "duration": "5s"},
        {"name": "big", "type": "rados_bench", "pool": "rep", "modes": ["write"], "object_size": "1MiB",
         "concurrency": {"auto": {}}, "duration": "5s"},
    ]}
CLIENTS_SUITE = {
    "name": "est-clients", "clients": "lab",
    "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 16}},
    "workloads": [
        {"name": "rados", "type": "rados_bench", "pool": "rep2", "modes": ["write", "seq"], "object_size": "4MiB",
         "concurrency": 16, "duration": {"write": "12s", "seq": "2s"}, "clients": "auto"},
        {"name": "small", "type": "rados_bench", "pool": "rep2", "modes": ["write", "rand"], "object_size": "4KiB",
         "concurrency": 8, "duration": "5s", "clients": "auto"},
        {"name": "rbd", "type": "fio_rbd", "pool": "rep2", "image_size": "128MiB", "rw": ["randwrite"],
         "block_size": "4KiB", "iodepth": 16, "duration": "5s", "clients": "auto"},
    ]}
PROM_SUITE = {
    "name": "est-prometheus",
    # no ssh to the OSD hosts: their page caches cannot be dropped (the preflight refuses it, and says to set this)
    "settings": {"drop_caches": False},
    "pools": {"rep3": {"type": "replicated", "size": 3, "pg_num": 32}},
    "workloads": [
        {"name": "rados", "type": "rados_bench", "pool": "rep3", "modes": ["write", "seq"], "object_size": "4MiB",
         "concurrency": 16, "duration": {"write": "12s", "seq": "2s"}},
        {"name": "small", "type": "rados_bench", "pool": "rep3", "modes": ["write"], "object_size": ["64KiB", "4KiB"],
         "concurrency": 16, "duration": "6s"},
        {"name": "rbd", "type": "fio_rbd", "pool": "rep3", "image_size": "128MiB", "rw": ["randwrite", "randread"],
         "block_size": "4KiB", "iodepth": 16, "duration": "4s"},
    ]}
CASES = ("seeds", "search", "clients", "prometheus")


def _run(cli: Path, name: str, argv: list[str], out_dir: Path, env: dict[str, str] | None = None
         ) -> tuple[str, dict, list[dict]] | None:
    run_dir = out_dir / name
    t0 = time.monotonic()
    done = subprocess.run([str(cli), "run", *argv, "--out", str(run_dir)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env)
    print(f"{name}: ran in {time.monotonic() - t0:.0f} s, exit {done.returncode}, {_uptime()}"
          + (f": {done.stderr.strip().splitlines()[-1]}" if done.returncode and done.stderr.strip() else ""),
          flush=True)
    return read_run(run_dir)


def _uptime() -> str:
    return "load average " + Path("/proc/loadavg").read_text().split()[0]


def _suite_file(out_dir: Path, data: dict) -> Path:
    p = out_dir / f"{data['name']}.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def made_runs(out_dir: Path) -> list[tuple[str, dict, list[dict]]]:
    """Each case's suites run now, by the CLI an operator uses (CEPHBENCH_ESTIMATE_CASES: which, comma-separated)."""
    cases = [c for c in os.environ.get("CEPHBENCH_ESTIMATE_CASES", ",".join(CASES)).split(",") if c]
    cli = Path(sys.executable).with_name("cephbench")
    out: list[tuple[str, dict, list[dict]] | None] = []
    if "search" in cases:
        lb = Lab(out_dir / "lab-search")
        try:
            lb.up(osd_size_bytes=6 * 1024**3)
            for name, suite in (("search-quick", SUITES / "quick.yaml"),
                                ("search-rados", _suite_file(out_dir, SEARCH_SUITE))):
                out.append(_run(cli, name, [str(suite), "--lab-dir", str(lb.dir)], out_dir))
        finally:
            lb.down()
    if {"clients", "prometheus"} & set(cases):
        lb = Lab(out_dir / "lab-clients")
        try:
            info = lb.up(osd_size_bytes=4 * 1024**3, rgw=False, monitoring="prometheus" in cases,
                         multi=MultiHostSpec(hosts=3, clients=2, client=parse_link("200mbit")))
            if "clients" in cases:
                out.append(_run(cli, "clients-auto", [str(_suite_file(out_dir, CLIENTS_SUITE)), "--lab-dir",
                                                      str(lb.dir)], out_dir))
            if "prometheus" in cases:
                # as tests/lab/test_prometheus_evidence.py's toolbox: a copy of the conf and key alone, no lab.json
                # beside them (it would bring the lab's ssh), no CEPH_* from the environment
                box = out_dir / "toolbox"
                box.mkdir(exist_ok=True)
                shutil.copyfile(lb.conf, box / "ceph.conf")
                shutil.copyfile(lb.admin_keyring, box / "keyring")
                bare = {k: v for k, v in os.environ.items() if not k.startswith(("CEPH_", "CEPHBENCH_PROMETHEUS"))}
                assert info.monitoring is not None
                out.append(_run(cli, "prometheus-toolbox", [
                    str(_suite_file(out_dir, PROM_SUITE)), "--conf", str(box / "ceph.conf"), "--keyring",
                    str(box / "keyring"), "--prometheus", info.monitoring["prometheus"]], out_dir, bare))
        finally:
            lb.down()
    if "seeds" in cases:
        named = os.environ.get("CEPHBENCH_ESTIMATE_SUITES")
        suites = [] if named == "none" else \
            [Path(x) for x in named.split(":")] if named else sorted(SUITES.glob("seed-*.yaml"))
        lab_dir = os.environ.get("CEPHBENCH_BENCH_LAB") or str(out_dir / "lab")
        try:
            for suite in suites:
                out.append(_run(cli, suite.stem, [str(suite), "--lab-dir", lab_dir], out_dir))
        finally:
            if not os.environ.get("CEPHBENCH_BENCH_LAB") and (out_dir / "lab").exists():
                Lab(out_dir / "lab").down()
    return [r for r in out if r is not None]


def _auto(value):
    """A suite recorded before `auto` was dumped as {auto: {...}}: its {max, latency_max} as the suite writes it."""
    if isinstance(value, dict) and set(value) == {"auto"}:
        return value
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
    keep = os.environ.get("CEPHBENCH_ESTIMATE_OUT")     # the runs kept there (to compare again: ESTIMATE_RUNS)
    with contextlib.ExitStack() as stack:
        tmp = Path(keep) if keep else Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="cephbench-estimates-")))
        tmp.mkdir(parents=True, exist_ok=True)
        counted = [r for r in (read_run(Path(d)) for d in
                               filter(None, os.environ.get("CEPHBENCH_ESTIMATE_RUNS", "").split(":"))) if r]
        counted += made_runs(tmp)
    old_ratios = compare(fixtures(), "fixture (older cephbench, not counted)")
    as_run: dict[str, float] = {}
    in_range: dict[str, bool] = {}
    ratios = compare(counted, "run", as_run, in_range)
    # a run with searches is held to the estimate of the course they took and to its range; any other to its estimate
    held = {k: as_run.get(k, v) for k, v in ratios.items()}
    worst = max(held.values(), key=lambda r: abs(r - 1)) if held else float("nan")
    met = sum(0.85 <= r <= 1.15 and in_range.get(k, True) for k, r in held.items())
    result_line("estimates", runs=len(ratios), worst_ratio=round(worst, 3), met=f"{met}/{len(held)}",
                **{f"ratio_{k}": round(v, 3) for k, v in ratios.items()},
                **{f"as_run_{k}": round(v, 3) for k, v in as_run.items()},
                **{f"in_range_{k}": int(v) for k, v in in_range.items()},
                fixtures_within_15pct=f"{sum(0.85 <= r <= 1.15 for r in old_ratios.values())}/{len(old_ratios)}",
                goal="0.85-1.15; with searches: their course's estimate so, and the run within 0.85x its least to "
                     "its longest")


def roots_built(meta: dict) -> frozenset[str]:
    """The releases whose roots were built while the run ran (their manifests' build time in its window): the run
    paid for them (plan.ROOT_BUILD_S)."""
    from cephbench.lab import roots
    start, end = meta["started_unix"], meta.get("finished_unix") or 0.0
    return frozenset(r.release for r in roots.list_roots() if start <= r.built_unix <= end)


def cluster_of(meta: dict) -> tuple[list[str], str]:
    """The OSD hosts the run found and this machine's name, as `run` took them for its estimate
    (launch._estimated_for): the CRUSH hosts with OSDs, and the client's host name; a run recorded without the
    cluster's tree, by the lab's topology."""
    nodes = ((meta.get("cluster") or {}).get("osd_tree") or {}).get("nodes") or []
    hosts = [n["name"] for n in nodes if n.get("type") == "host" and n.get("children")]
    here = ((meta.get("hosts") or {}).get("client") or {}).get("hostname")
    if hosts and here:
        return hosts, here
    return osd_hosts(meta), HERE


def room_of(meta: dict) -> Room | None:
    """The cluster's raw space and OSDs as the run found them (run.json's `ceph status`), which `run` counts the
    capacity guard's cuts by (launch._room)."""
    status = (meta.get("cluster") or {}).get("status") or {}
    pg, osds = status.get("pgmap") or {}, (status.get("osdmap") or {}).get("num_osds")
    if not pg.get("bytes_total") or not osds:
        return None
    return Room(int(pg["bytes_total"]), int(pg.get("bytes_used") or 0), int(osds))


def compare(runs: list[tuple[str, dict, list[dict]]], what: str, as_run: dict[str, float] | None = None,
            in_range: dict[str, bool] | None = None) -> dict[str, float]:
    """Each run's estimate/actual, printed with the groups that miss most; for a run with searches, the estimate of
    the course they took against it (`as_run`) and whether it lies in the estimate's range (`in_range`)."""
    as_run = {} if as_run is None else as_run
    in_range = {} if in_range is None else in_range
    ratios: dict[str, float] = {}
    misses: list[tuple[float, str, str, float, float]] = []
    for name, meta, results in runs:
        if meta.get("interrupted") or not meta.get("finished_unix"):
            continue
        # runs of one case kept from several benches (CEPHBENCH_ESTIMATE_RUNS) each keep their own ratio
        name = next(n for n in (name, *(f"{name}-{i}" for i in range(2, 100))) if n not in ratios)
        suite = parse_suite(_auto(meta["suite"]), name)
        # the run plans a search of client hosts up to the lab's every one with their number (launch.prepare)
        clients = len(meta.get("clients") or {}) if waits_for_client_hosts(suite) else None
        hosts, here = cluster_of(meta)
        ready = bool(results) and min(r["started_unix"] for r in results) - meta["started_unix"] < LAB_REBUILD_S
        # a run without the lab's ssh (a toolbox's conf and key alone) reached none of the OSD hosts
        tests = planned_for(suite, hosts, here, clients, ready, watched=None if meta.get("lab_topology") else [],
                            room=room_of(meta), unbuilt=roots_built(meta))
        ran = {tid: min(rs, key=lambda r: r["started_unix"]) for tid, rs in planned(results, tests).items()}
        # every test `run` counted: a search's steps past its stop are skipped results, counted at their chance
        todo = [t for t in tests if t.id in ran]
        if len(todo) != len(tests):
            print(f"{name}: {len(tests) - len(todo)} planned tests have no result; left out of its estimate")
        e = estimate(todo)
        est = e.expected_s
        actual = meta["finished_unix"] - meta["started_unix"]
        ratios[name] = est / actual
        if e.ranged:
            # a search's course is not known before it runs: the run lies in the estimate's range, and the estimate
            # of the course it took (the steps it ran, its stalls' reruns, its steps measured again in pairs) is
            # within 15 % of it
            course = as_run_s(todo, {t.id for t in todo if ran[t.id].get("status") != "skipped"},
                              {t.id: _reruns(ran[t.id]) for t in todo}, {t.id for t in todo if _paired(ran[t.id])})
            as_run[name] = course / actual
            in_range[name] = 0.85 * e.shortest_s <= actual <= e.longest_s
            print(f"  {name}: its searches' course estimated {course:.0f} s, ratio {course / actual:.3f}; the run "
                  f"{'lies' if in_range[name] else 'does NOT lie'} in the range {e.shortest_s:.0f}-{e.longest_s:.0f} s")
        if what == "run" and os.environ.get("CEPHBENCH_ESTIMATE_FIXTURES"):
            write_fixture(name, meta, results, Path(os.environ["CEPHBENCH_ESTIMATE_FIXTURES"]))
        # by group: a group's set-up is counted in its first test's estimate, and its tests may share one tool run
        # (a disk baseline's patterns are one fio): its first start to the next group's
        groups: dict[str, list] = {}
        for t in todo:
            groups.setdefault(t.group, []).append(t)
        real_run = {t.id for t in todo if ran[t.id].get("status") != "skipped"}
        starts = sorted((min(ran[t.id]["started_unix"] for t in ts), g) for g, ts in groups.items())
        for (start, g), nxt in zip(starts, [*starts[1:], None]):
            real = (nxt[0] if nxt else meta["finished_unix"]) - start
            planned_s = sum(run_share(t) * t.est_duration_s for t in groups[g])
            misses.append((planned_s - real, name, f"{groups[g][0].id} ({len(groups[g])} tests)", planned_s, real))
            searched = [t for t in groups[g] if t.search is not None]
            if searched:
                print(f"  {name} {g}: search steps run {sum(t.id in real_run for t in searched)} of "
                      f"{len(searched)}, expected {sum(run_share(t) for t in searched):.1f}; reruns after a stall "
                      f"{sum(_reruns(ran[t.id]) for t in searched if t.id in real_run)}")
        first = starts[0][0] - meta["started_unix"] if starts else 0.0
        span = f", {e.shortest_s:.0f}-{e.longest_s:.0f} s as the searches stop" if e.ranged else ""
        print(f"{what} {name}: estimate {est:.0f} s{span}, actual {actual:.0f} s, ratio {est / actual:.3f} "
              f"(before the first test {first:.0f} s)", flush=True)
    print(f"largest per-group misses, {what} (estimate - actual, s):")
    for err, name, tid, est, real in sorted(misses, key=lambda m: -abs(m[0]))[:12]:
        print(f"  {err:+7.1f}  {name} {tid}: estimate {est:.1f}, actual {real:.1f}")
    return ratios


def write_fixture(name: str, meta: dict, results: list[dict], to: Path) -> None:
    """The run as tests/fixtures/estimates keeps it (CEPHBENCH_ESTIMATE_FIXTURES=DIR): what its estimate is made of
    (the suite as recorded, the OSD hosts, this machine's name, the client hosts) and each result's start, length
    and whether it was skipped or ran again after a stall; with the cephbench commit and the Ceph release."""
    hosts, here = cluster_of(meta)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=SUITES.parent).stdout.strip()
    release = meta.get("ceph_release") or {}
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(meta["started_unix"]))
    doc = {"about": f"{name} run on the lab by benchmarks/bench_estimates.py ({when} UTC; cephbench at {commit} with "
                    f"its working tree when written, Ceph {release.get('version', '?')} {release.get('name', '')}, "
                    "the 2-core VM): each result's start, length, skipped or not, its reruns after a stall and "
                    "whether it was measured again in pairs; the cluster's raw space and OSDs at the run's start "
                    "(`ceph status`), the run's start and end, from run.json",
           "suite": meta["suite"], "osd_hosts": hosts, "here": here, "clients": len(meta.get("clients") or {}),
           "ssh_reached": bool(meta.get("lab_topology")), "roots_built": sorted(roots_built(meta)),
           "raw_bytes": ({"total": room.total_raw, "used": room.used_raw, "osds": room.osds}
                         if (room := room_of(meta)) is not None else None),
           "started_unix": meta["started_unix"], "finished_unix": meta["finished_unix"],
           "tests": [{"id": r["test"]["id"], "started_unix": r["started_unix"], "duration_s": r.get("duration_s"),
                      "skipped": r.get("status") == "skipped", "reruns": _reruns(r), "paired": _paired(r)}
                     for r in results]}
    to.mkdir(parents=True, exist_ok=True)
    (to / f"{name}.run-timings.json").write_text(json.dumps(doc, indent=1) + "\n")


def _paired(result: dict) -> bool:
    """The search step was measured again beside the one before it (loadsearch.PAIR_KEY in its measurement)."""
    return bool(((result.get("measurement") or {}).get("extra") or {}).get(PAIR_KEY))


def _reruns(result: dict) -> int:
    """How often a search step ran again after a stall (drivers/rounds.py's note)."""
    note = next((n for n in result.get("notes") or [] if n.startswith("search step run again after a stall")), "")
    return note.count("stalled (")


if __name__ == "__main__":
    sys.exit(main())
