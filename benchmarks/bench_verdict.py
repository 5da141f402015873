"""Does the verdict name the bottleneck the lab was built with? (issue 16, item 5)

Each case starts a multi-host lab with one known cause (`cephbench lab up --hosts 3 ...`), runs a short suite on
it with `cephbench run`, as a user would, and checks the bottleneck of the case's test against the cause:

  public          the public network shaped (50 Mbit/s), no cluster network: a write fills the OSD hosts' links
  cluster         only the cluster network shaped (50 Mbit/s), on writes: the replicas fill it
  osd-drive       one OSD's data drive throttled by blkio (8 MiB/s), 1 MiB writes
  wal-db          one OSD's WAL/DB drive throttled (1 MiB/s), 4 KiB writes (BlueStore defers them to the WAL)
  osd-iops        one OSD's data drive limited by IOPS (100), 4 KiB writes: its WAL writes merge, so only requests
                  counted before merging show the limit
  wal-db-iops     issue 25's lab: 400 Mbit/s links, every WAL/DB drive at 4 MiB/s and 150 IOPS, 4 KiB writes
  close           two causes close: 4 KiB writes at 64 in flight (the CPUs saturate, as in `cpu`), run once to
                  measure the write requests the data drives submit, then again with every data drive limited to
                  that ÷ CLOSE_SHARE (`cephbench lab throttle`): a drive near its limit beside busy CPUs, which the
                  verdict must call "cannot tell", naming both. A fixed limit does not do: what the drives submit
                  moves with the machine's other load (1,400 to 2,400 a second here), and a limit below it binds
  client-link     the client host's link shaped (50 Mbit/s), the load from that client
  latency         nothing shaped, 1 op in flight: each op's latency sets the rate
  cpu             nothing shaped, 4 KiB writes at 64 in flight: this machine's 2 cores run 3 OSDs, a mon and the
                  client
  cpu-limit       osd.1 held to 0.1 cores by a cgroup CFS quota (`--cpu-limit`, a container's limit), 64 KiB writes:
                  named with its limit, not as the machine's CPU (issue 35)
  neighbour       a neighbour burning 1.5 cores on h3 (`--host-load`), 4 KiB writes × 16: the CPUs named as other
                  processes', the cluster not measured alone
  drive-beside    osd.2's drive at 8 MiB/s with a neighbour burning a core on its host h3, 1 MiB writes
  existing-pool   nothing shaped, 4 KiB writes × 16 into a pool made beforehand (`pools: {p: {existing: ext}}`): the
                  run's own writes there are not other clients' load (named: no `other clients' load`, no warning)

The figures keep each rate far below what 2 cores can do (the CPU case apart): a shaped link or a throttle at a few
MiB/s saturates long before the CPUs. Prints one line per case (named or not, the bottleneck, the evidence line
that names it) and `RESULT verdict cases=N named=M both=K`: `both` counts verdicts of "X or CPU: cannot tell"
naming the case's cause beside the CPUs, in a case that expected the cause alone (not wrong, not named either).
CEPHBENCH_VERDICT_CASES=public,cpu runs some only; CEPHBENCH_VERDICT_SECONDS (8) sets each test's duration;
CEPHBENCH_VERDICT_CLOSE_SHARE (0.8) the close case's aim; CEPHBENCH_VERDICT_KEEP=1 keeps the run directories.

Where the evidence comes from (issue 28, item 5): CEPHBENCH_VERDICT_SOURCES=ssh (the default), prometheus, or
ssh,prometheus. `ssh` runs with `--lab-dir`, so cephbench reaches the lab's hosts over ssh as it does by itself.
`prometheus` starts each lab with `--monitoring` and runs as from a Rook toolbox: only a copy of the lab's ceph.conf
and key, in a directory of their own (a conf beside the lab's lab.json would give the run the lab's ssh), and
`settings.prometheus` naming the lab's Prometheus; the OSD hosts' devices and links then come from node-exporter and
the OSDs' counters through `ceph tell` (node-exporter has no cgroup throttles: a throttled drive is named by its
OSD's commit latency against its peers', the slow store of docs/model.md). A CPU limit is named from cAdvisor's
series of the limited OSD's cgroup when the lab runs cAdvisor (built by `make cadvisor`): cpu-limit from Prometheus
then counts as named only when its line is cAdvisor's (without it, from the OSD's slowness beside its peers'). With both, each case runs on the one lab
once per source, the first source alternating from case to case, with the OSDs done removing the first run's pool
before the second starts. Prints a line per case per source, `RESULT verdict source=S cases=N named=M both=K` per
source (ssh alone prints as before, without `source=`), and with both the cases whose sources named different
causes. client-link is not run from Prometheus: its load comes from a client host, which cephbench reaches only
over ssh.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from cephbench.cluster.ceph import Cluster, Target
from cephbench.analysis.cpusplit import CADVISOR
from cephbench.lab import Lab
from cephbench.lab import monitoring as mon_stack
from common import result_line

CLI = str(Path(sys.executable).with_name("cephbench"))
SECONDS = int(os.environ.get("CEPHBENCH_VERDICT_SECONDS", "8"))
CLOSE_SHARE = float(os.environ.get("CEPHBENCH_VERDICT_CLOSE_SHARE", "0.8"))   # of its limit the close case aims at
SOURCES = ("ssh", "prometheus")
SETTLE_S = 60.0         # the longest wait for the OSDs to remove the first source's pool


@dataclass(frozen=True)
class Case:
    name: str
    lab: list[str]            # `cephbench lab up` options beyond --dir
    workload: str             # one YAML flow mapping
    expect: str               # the bottleneck must start with this
    clients: bool = False
    also: tuple[str, ...] = ()   # ... and contain each of these
    calibrate: bool = False      # run once, then limit every data drive to its write requests ÷ CLOSE_SHARE
    existing: str | None = None  # a pool made before the run, which the suite names as existing (its `p`)
    avoid: str | None = None     # named when the bottleneck does not start with this and the result has no warning
    cadvisor: bool = False       # from Prometheus, named from cAdvisor's series when the lab runs one (make cadvisor)


CASES = [
    Case("public", ["--hosts", "3", "--public-net", "50mbit"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16}", "public network"),
    Case("cluster", ["--hosts", "3", "--cluster-net", "50mbit"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16}", "cluster network"),
    Case("osd-drive", ["--hosts", "3", "--osd-throttle", "osd.1=8MiB/s"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16}", "disk h2"),
    Case("wal-db", ["--hosts", "3", "--db-device", "1GiB", "--osd-throttle", "osd.1.db=1MiB/s"],
         "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 16}", "WAL/DB device h2"),
    Case("osd-iops", ["--hosts", "3", "--osd-throttle", "osd.1=100iops"],
         "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 16}", "disk h2"),
    Case("wal-db-iops", ["--hosts", "3", "--public-net", "400mbit", "--db-device", "1GiB",
                         *[a for n in range(3) for a in ("--osd-throttle", f"osd.{n}.db=4MiB/s,150iops")]],
         "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 16}", "WAL/DB device"),
    Case("close", ["--hosts", "3"], "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 64}",
         "disk h", also=("or CPU: cannot tell",), calibrate=True),
    Case("client-link", ["--hosts", "3", "--clients", "1", "--client-net", "50mbit"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16, clients: 1}", "client network",
         clients=True),
    Case("latency", ["--hosts", "3"],
         "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 1}", "latency"),
    Case("cpu", ["--hosts", "3"],
         "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 64}", "CPU"),
    Case("cpu-limit", ["--hosts", "3", "--cpu-limit", "osd.1=0.1"],
         "{type: rados_bench, modes: [write], object_size: 64KiB, concurrency: 16}", "CPU limit of osd.1",
         cadvisor=True),
    Case("neighbour", ["--hosts", "3", "--host-load", "h3=1.5"],
         "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 16}", "CPU (other processes on"),
    Case("drive-beside", ["--hosts", "3", "--osd-throttle", "osd.2=8MiB/s", "--host-load", "h3=1"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16}", "disk h3"),
    Case("existing-pool", ["--hosts", "3"],
         "{type: rados_bench, pool: p, modes: [write], object_size: 4KiB, concurrency: 16}", "",
         existing="ext", avoid="other clients' load"),
]


def _suite(case: Case, prometheus: str | None = None) -> str:
    head = "clients: lab\n" if case.clients else ""
    head += f"settings:\n  prometheus: {prometheus}\n" if prometheus else ""
    head += f"pools:\n  p: {{existing: {case.existing}}}\n" if case.existing else ""
    body = case.workload.rstrip("}") + f", duration: {SECONDS}s}}"
    return f"name: verdict-{case.name}\n{head}workloads:\n  - {body}\n"     # the default pool: size 3, 32 PGs


def _calibrate(case: Case, lab: Path, work: Path) -> int | None:
    """Run the case's suite once and limit every data drive to the write requests the busiest submitted ÷
    CLOSE_SHARE; the limit, or None when the run failed."""
    from statistics import median
    out = work / f"calibrate-{case.name}"
    subprocess.run([CLI, "run", str(work / f"{case.name}.yaml"), "--lab-dir", str(lab), "--out", str(out)],
                   capture_output=True, text=True)
    lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
    if not lines:
        return None
    devices = (json.loads(lines[-1]).get("evidence") or {}).get("devices") or []
    rates = [median(v for v in s if v >= 0.1 * max(s)) for d in devices if d["role"] == "data"
             and (s := d.get("write_requests_per_s")) and max(s) > 0]
    if not rates:
        return None
    limit = int(max(rates) / CLOSE_SHARE)
    subprocess.run([CLI, "lab", "throttle", "--dir", str(lab), *[f"osd.{n}={limit}iops" for n in range(3)]],
                   capture_output=True, text=True, check=True)
    return limit


Outcome = tuple[str, str, str]     # named, both or MISSED; the bottleneck; the evidence lines that name it


def _outcome(case: Case, out: Path, run: subprocess.CompletedProcess) -> Outcome:
    lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
    if run.returncode != 0 or not lines:
        return "MISSED", "-", f"run failed: {(run.stderr or run.stdout).strip().splitlines()[-1:]}"
    result = json.loads(lines[-1])
    a = result.get("analysis") or {}
    bottleneck = a.get("bottleneck") or "unknown"
    named = bottleneck.startswith(case.expect) and all(x in bottleneck for x in case.also)
    if case.avoid is not None:
        named = not bottleneck.startswith(case.avoid) and not result.get("warnings")
        if not named:
            return "MISSED", bottleneck, "; ".join(result.get("warnings") or []) or a.get("reason") or ""
    both = not named and "cannot tell" in bottleneck and (case.expect in bottleneck or case.expect == "CPU")
    first = bottleneck.split(" or ")[0]
    where = first.split("(")[-1].rstrip(")").split()[-1]     # h2 clu0 -> clu0, disk h2:loop1 -> h2:loop1
    if bottleneck.startswith("CPU"):     # whose (the split's line) or the daemon held by its limit (its own line)
        where = "by consumer" if bottleneck.startswith("CPU (") else "held by its CPU limit"
    why = " | ".join([ln for ln in a.get("evidence") or [] if where in ln][:1]
                     + [ln for ln in a.get("evidence") or [] if " or " in bottleneck and ln.startswith("CPU ")])
    return "named" if named else "both" if both else "MISSED", bottleneck, why or a.get("reason") or ""


def _toolbox(lab: Path, where: Path) -> list[str]:
    """`cephbench run`'s options as from a Rook toolbox: a copy of the lab's ceph.conf and admin key in a directory
    of their own, since a conf beside the lab's lab.json makes the run take the lab's ssh (launch.choose_target)."""
    lb = Lab(lab)
    where.mkdir()
    shutil.copyfile(lb.conf, where / "ceph.conf")
    shutil.copyfile(lb.admin_keyring, where / "keyring")
    return ["--conf", str(where / "ceph.conf"), "--keyring", str(where / "keyring")]


def _run_from(case: Case, source: str, lab: Path, work: Path) -> Outcome:
    """The case's suite run once, its evidence from SOURCE: the lab's ssh, or its Prometheus without ssh."""
    out = work / f"run-{case.name}-{source}"
    if source == "ssh":
        suite, where, env = work / f"{case.name}.yaml", ["--lab-dir", str(lab)], None
    else:
        info = Lab(lab).info()
        if info is None or not info.monitoring:
            return "MISSED", "-", f"the lab in {lab} runs no Prometheus"
        suite = work / f"{case.name}-{source}.yaml"
        suite.write_text(_suite(case, info.monitoring["prometheus"]))
        where = _toolbox(lab, work / f"toolbox-{case.name}")
        env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}
    run = subprocess.run([CLI, "run", str(suite), *where, "--out", str(out)], capture_output=True, text=True,
                         env=env)
    got = _outcome(case, out, run)
    if source == "prometheus" and case.cadvisor and mon_stack.cadvisor_binary(shutil.which) and got[0] == "named" \
            and not got[2].endswith(CADVISOR):
        # the lab scrapes cAdvisor: the limit is named from its series, not from the OSD's slowness alone
        return "MISSED", got[1], f"not from cAdvisor's series: {got[2]}"
    return got


def _settle(lab: Path) -> str:
    """Waits, up to SETTLE_S, until no OSD is removing the PGs of a pool a run deleted: they remove them after the
    run has ended, on the drives (and CPUs) the next run measures. '' when done, else what was still removing."""
    lb = Lab(lab)
    deadline = time.monotonic() + SETTLE_S
    with Cluster(Target(lb.conf, lb.admin_keyring, None, is_lab=True)) as cluster:
        osds = cluster.ceph_json("osd", "ls") or []
        while True:
            removing = {n: (cluster.tell_json(n, "perf dump").get("osd") or {}).get("numpg_removing", 0)
                        for n in osds}
            left = ", ".join(f"osd.{n} {k} PGs" for n, k in removing.items() if k)
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(1)


def run_case(case: Case, work: Path, sources: list[str]) -> dict[str, Outcome]:
    """Each source's outcome on one lab, in the order given."""
    lab = work / f"lab-{case.name}"
    monitoring = ["--monitoring"] if "prometheus" in sources else []
    up = subprocess.run([CLI, "lab", "up", "--dir", str(lab), "--no-rgw", "--osd-size", "4GiB", *case.lab,
                         *monitoring], capture_output=True, text=True)
    if up.returncode != 0:
        return {s: ("MISSED", "-", f"lab up failed: {up.stderr.strip().splitlines()[-1:]}") for s in sources}
    try:
        (work / f"{case.name}.yaml").write_text(_suite(case))
        if case.existing:
            lb = Lab(lab)
            ceph = ["ceph", "--conf", str(lb.conf), "--keyring", str(lb.admin_keyring)]
            subprocess.run([*ceph, "osd", "pool", "create", case.existing, "32", "32"], capture_output=True,
                           check=True)
            subprocess.run([*ceph, "osd", "pool", "application", "enable", case.existing, "rados"],
                           capture_output=True, check=True)
        limit = None
        if case.calibrate:
            limit = _calibrate(case, lab, work)
            if limit is None:
                return {s: ("MISSED", "-", "calibration run failed") for s in sources}
        got: dict[str, Outcome] = {}
        for source in sources:
            if got:
                left = _settle(lab)
                if left:
                    print(f"verdict {case.name:12} the OSDs were still removing the last run's pool after "
                          f"{SETTLE_S:.0f} s ({left}): {source}'s run began beside that", flush=True)
            outcome, bottleneck, why = _run_from(case, source, lab, work)
            got[source] = outcome, bottleneck, f"data drives limited to {limit} IOPS: {why}" if case.calibrate else why
        return got
    finally:
        subprocess.run([CLI, "lab", "down", "--dir", str(lab)], capture_output=True, text=True)


def _cause(case: Case, outcome: Outcome) -> tuple[str, str]:
    """What a verdict blames, without the details in brackets: `public network (h1 pub0)` and `public network (h3
    pub0)` name the same cause; and where the case expects no one device (`WAL/DB device`: every one limited alike),
    which of the equals a verdict names is none either."""
    bottleneck = re.sub(r" \([^)]*\)", "", outcome[1])
    return outcome[0], case.expect if bottleneck.startswith(case.expect) else bottleneck


def _sources() -> list[str]:
    raw = os.environ.get("CEPHBENCH_VERDICT_SOURCES", "ssh")
    got = list(dict.fromkeys(s.strip() for s in raw.split(",") if s.strip()))
    if not got or set(got) - set(SOURCES):
        print(f"bench verdict: CEPHBENCH_VERDICT_SOURCES={raw!r} names no source or one other than "
              f"{', '.join(SOURCES)}: give ssh, prometheus or ssh,prometheus", file=sys.stderr)
        raise SystemExit(2)
    return got


def main() -> None:
    sources = _sources()
    labelled = sources != ["ssh"]       # the default prints as it always has
    want = [n for n in os.environ.get("CEPHBENCH_VERDICT_CASES", "").split(",") if n]
    cases = [c for c in CASES if not want or c.name in want]
    work = Path(tempfile.mkdtemp(prefix="cephbench-verdict-"))
    outcomes: dict[str, dict[str, Outcome]] = {s: {} for s in sources}
    try:
        for i, case in enumerate(cases):
            # the first source alternates, so that neither always meets the lab fresh
            order = sources if i % 2 == 0 else sources[::-1]
            mine = [s for s in order if not (case.clients and s == "prometheus")]
            if len(mine) < len(sources):
                print(f"verdict {case.name:12} prometheus skipped: its load comes from a client host, which "
                      "cephbench reaches only over ssh", flush=True)
            t0 = time.monotonic()
            got = run_case(case, work, mine) if mine else {}
            for source in sources:
                if source not in got:
                    continue
                outcome, bottleneck, why = outcomes[source][case.name] = got[source]
                label = f"{source:10} " if labelled else ""
                print(f"verdict {case.name:12} {label}{outcome:6} expected {case.expect!r}, got "
                      f"{bottleneck!r} ({time.monotonic() - t0:.0f} s): {why}", flush=True)
    finally:
        if os.environ.get("CEPHBENCH_VERDICT_KEEP"):
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if len(sources) > 1:
        a, b = sources
        by_name = {c.name: c for c in cases}
        differ = [f"{n} ({a} {outcomes[a][n][1]!r}, {b} {outcomes[b][n][1]!r})" for n in outcomes[a]
                  if n in outcomes[b] and _cause(by_name[n], outcomes[a][n]) != _cause(by_name[n], outcomes[b][n])]
        print(f"verdict {a} and {b} named different causes in: {'; '.join(differ) or 'none'}", flush=True)
    for source in sources:
        said = list(outcomes[source].values())
        result_line("verdict", **({"source": source} if labelled else {}), cases=len(said),
                    named=[o[0] for o in said].count("named"), both=[o[0] for o in said].count("both"))
