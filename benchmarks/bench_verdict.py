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

The figures keep each rate far below what 2 cores can do (the CPU case apart): a shaped link or a throttle at a few
MiB/s saturates long before the CPUs. Prints one line per case (named or not, the bottleneck, the evidence line
that names it) and `RESULT verdict cases=N named=M both=K`: `both` counts verdicts of "X or CPU: cannot tell"
naming the case's cause beside the CPUs, in a case that expected the cause alone (not wrong, not named either).
CEPHBENCH_VERDICT_CASES=public,cpu runs some only; CEPHBENCH_VERDICT_SECONDS (8) sets each test's duration;
CEPHBENCH_VERDICT_CLOSE_SHARE (0.8) the close case's aim; CEPHBENCH_VERDICT_KEEP=1 keeps the run directories.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import result_line

CLI = str(Path(sys.executable).with_name("cephbench"))
SECONDS = int(os.environ.get("CEPHBENCH_VERDICT_SECONDS", "8"))
CLOSE_SHARE = float(os.environ.get("CEPHBENCH_VERDICT_CLOSE_SHARE", "0.8"))   # of its limit the close case aims at


@dataclass(frozen=True)
class Case:
    name: str
    lab: list[str]            # `cephbench lab up` options beyond --dir
    workload: str             # one YAML flow mapping
    expect: str               # the bottleneck must start with this
    clients: bool = False
    also: tuple[str, ...] = ()   # ... and contain each of these
    calibrate: bool = False      # run once, then limit every data drive to its write requests ÷ CLOSE_SHARE


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
]


def _suite(case: Case) -> str:
    head = "clients: lab\n" if case.clients else ""
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


def run_case(case: Case, work: Path) -> tuple[str, str, str]:
    """(named, both or MISSED, the bottleneck, the evidence lines that name it or the verdict's reason)."""
    lab = work / f"lab-{case.name}"
    up = subprocess.run([CLI, "lab", "up", "--dir", str(lab), "--no-rgw", "--osd-size", "4GiB", *case.lab],
                        capture_output=True, text=True)
    if up.returncode != 0:
        return "MISSED", "-", f"lab up failed: {up.stderr.strip().splitlines()[-1:]}"
    try:
        suite = work / f"{case.name}.yaml"
        suite.write_text(_suite(case))
        if case.calibrate:
            limit = _calibrate(case, lab, work)
            if limit is None:
                return "MISSED", "-", "calibration run failed"
        out = work / f"run-{case.name}"
        run = subprocess.run([CLI, "run", str(suite), "--lab-dir", str(lab), "--out", str(out)],
                             capture_output=True, text=True)
        lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
        if run.returncode != 0 or not lines:
            return "MISSED", "-", f"run failed: {(run.stderr or run.stdout).strip().splitlines()[-1:]}"
        result = json.loads(lines[-1])
        a = result.get("analysis") or {}
        bottleneck = a.get("bottleneck") or "unknown"
        named = bottleneck.startswith(case.expect) and all(x in bottleneck for x in case.also)
        both = not named and "cannot tell" in bottleneck and (case.expect in bottleneck or case.expect == "CPU")
        first = bottleneck.split(" or ")[0]
        where = first.split("(")[-1].rstrip(")").split()[-1]     # h2 clu0 -> clu0, disk h2:loop1 -> h2:loop1
        why = " | ".join([ln for ln in a.get("evidence") or [] if where in ln][:1]
                         + [ln for ln in a.get("evidence") or [] if " or " in bottleneck and ln.startswith("CPU ")])
        why = why or a.get("reason") or ""
        if case.calibrate:
            why = f"data drives limited to {limit} IOPS: {why}"
        return "named" if named else "both" if both else "MISSED", bottleneck, why
    finally:
        subprocess.run([CLI, "lab", "down", "--dir", str(lab)], capture_output=True, text=True)


def main() -> None:
    want = [n for n in os.environ.get("CEPHBENCH_VERDICT_CASES", "").split(",") if n]
    cases = [c for c in CASES if not want or c.name in want]
    work = Path(tempfile.mkdtemp(prefix="cephbench-verdict-"))
    outcomes: list[str] = []
    try:
        for case in cases:
            t0 = time.monotonic()
            outcome, bottleneck, why = run_case(case, work)
            outcomes.append(outcome)
            print(f"verdict {case.name:12} {outcome:6} expected {case.expect!r}, got "
                  f"{bottleneck!r} ({time.monotonic() - t0:.0f} s): {why}", flush=True)
    finally:
        if os.environ.get("CEPHBENCH_VERDICT_KEEP"):
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    result_line("verdict", cases=len(cases), named=outcomes.count("named"), both=outcomes.count("both"))
