"""Does the verdict name the bottleneck the lab was built with? (issue 16, item 5)

Each case starts a multi-host lab with one known cause (`cephbench lab up --hosts 3 ...`), runs a short suite on
it with `cephbench run`, as a user would, and checks the bottleneck of the case's test against the cause:

  public          the public network shaped (50 Mbit/s), no cluster network: a write fills the OSD hosts' links
  cluster         only the cluster network shaped (50 Mbit/s), on writes: the replicas fill it
  osd-drive       one OSD's data drive throttled by blkio (8 MiB/s), 1 MiB writes
  wal-db          one OSD's WAL/DB drive throttled (1 MiB/s), 4 KiB writes (BlueStore defers them to the WAL)
  client-link     the client host's link shaped (50 Mbit/s), the load from that client
  latency         nothing shaped, 1 op in flight: each op's latency sets the rate
  cpu             nothing shaped, 4 KiB writes at 64 in flight: this machine's 2 cores run 3 OSDs, a mon and the
                  client

The figures keep each rate far below what 2 cores can do (the CPU case apart): a shaped link or a throttle at a few
MiB/s saturates long before the CPUs. Prints one line per case (named or not, the bottleneck, the evidence line
that names it) and `RESULT verdict cases=N named=M`. CEPHBENCH_VERDICT_CASES=public,cpu runs some only;
CEPHBENCH_VERDICT_SECONDS (8) sets each test's duration;
CEPHBENCH_VERDICT_KEEP=1 keeps the run directories.
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


@dataclass(frozen=True)
class Case:
    name: str
    lab: list[str]            # `cephbench lab up` options beyond --dir
    workload: str             # one YAML flow mapping
    expect: str               # the bottleneck must start with this
    clients: bool = False


CASES = [
    Case("public", ["--hosts", "3", "--public-net", "50mbit"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16}", "public network"),
    Case("cluster", ["--hosts", "3", "--cluster-net", "50mbit"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16}", "cluster network"),
    Case("osd-drive", ["--hosts", "3", "--osd-throttle", "osd.1=8MiB/s"],
         "{type: rados_bench, modes: [write], object_size: 1MiB, concurrency: 16}", "disk h2"),
    Case("wal-db", ["--hosts", "3", "--db-device", "1GiB", "--osd-throttle", "osd.1.db=1MiB/s"],
         "{type: rados_bench, modes: [write], object_size: 4KiB, concurrency: 16}", "WAL/DB device h2"),
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


def run_case(case: Case, work: Path) -> tuple[bool, str, str]:
    """(named, the bottleneck, the evidence line that names it or the verdict's reason)."""
    lab = work / f"lab-{case.name}"
    up = subprocess.run([CLI, "lab", "up", "--dir", str(lab), "--no-rgw", "--osd-size", "4GiB", *case.lab],
                        capture_output=True, text=True)
    if up.returncode != 0:
        return False, "-", f"lab up failed: {up.stderr.strip().splitlines()[-1:]}"
    try:
        suite = work / f"{case.name}.yaml"
        suite.write_text(_suite(case))
        out = work / f"run-{case.name}"
        run = subprocess.run([CLI, "run", str(suite), "--lab-dir", str(lab), "--out", str(out)],
                             capture_output=True, text=True)
        lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
        if run.returncode != 0 or not lines:
            return False, "-", f"run failed: {(run.stderr or run.stdout).strip().splitlines()[-1:]}"
        result = json.loads(lines[-1])
        a = result.get("analysis") or {}
        bottleneck = a.get("bottleneck") or "unknown"
        named = bottleneck.startswith(case.expect)
        where = bottleneck.split("(")[-1].rstrip(")").split()[-1]     # h2 clu0 -> clu0, disk h2:loop1 -> h2:loop1
        why = next((ln for ln in a.get("evidence") or [] if where in ln), a.get("reason") or "")
        return named, bottleneck, why
    finally:
        subprocess.run([CLI, "lab", "down", "--dir", str(lab)], capture_output=True, text=True)


def main() -> None:
    want = [n for n in os.environ.get("CEPHBENCH_VERDICT_CASES", "").split(",") if n]
    cases = [c for c in CASES if not want or c.name in want]
    work = Path(tempfile.mkdtemp(prefix="cephbench-verdict-"))
    named = 0
    try:
        for case in cases:
            t0 = time.monotonic()
            ok, bottleneck, why = run_case(case, work)
            named += ok
            print(f"verdict {case.name:12} {'named' if ok else 'MISSED':6} expected {case.expect!r}, got "
                  f"{bottleneck!r} ({time.monotonic() - t0:.0f} s): {why}", flush=True)
    finally:
        if os.environ.get("CEPHBENCH_VERDICT_KEEP"):
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    result_line("verdict", cases=len(cases), named=named)
