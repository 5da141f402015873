"""Where the knee search finds the knee, against a limit the lab knows (issue 29, item 5).

Two multi-host labs (3 hosts, replica 3), each with one known limit, searched with `concurrency: auto` by
`cephbench run`, the knee then found by analysis/curves.py's rule on the search's steps:

- throttle: every OSD's data drive held at T = 16 MiB/s by its blkio throttle; every client byte of a size-3 pool
  lands on all three drives, so 1 MiB writes cannot pass T (the throttle counts BlueStore's own writes too, so the
  curve may bend a little below it);
- link: every OSD host's public link shaped to 200 Mbit/s (this machine's end of the bridge is not), 4 MiB seq
  reads: each object is read from its primary, so the reads stop growing when the host that serves the largest
  share of the bytes fills its link: 200 Mbit/s x 1448/1514 (what TCP carries of a tbf-shaped Ethernet link) over
  that share, the shares from each OSD's op_out_bytes (Ceph's counters, not the link figures the verdict reads).
  An even spread (the three links together) is printed beside it: 32 PGs over 3 OSDs are far from even.

For each: the throughput at the knee (or at the highest load, when the curve never bent), the known limit, their
ratio (the goal: within 15 %), the load at the knee and the bottleneck the evidence named there. One run each on
a shared machine; CEPHBENCH_KNEE_CASES=throttle picks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import result_line

from cephbench.analysis.curves import knees
from cephbench.core.results import RunDir

CLI = [sys.executable, "-m", "cephbench.cli"]
MiB = 2**20
TCP_SHARE = 1448 / 1514
THROTTLE = 16 * MiB
LINK_BITS = 200e6

CASES = {
    "throttle": (["--hosts", "3", "--no-rgw", *[x for i in range(3) for x in ("--osd-throttle", f"osd.{i}=16MiB/s")]],
                 "{type: rados_bench, pool: rep, modes: [write], object_size: 1MiB, "
                 "concurrency: {auto: {max: 64}}, duration: 5s}",
                 "write", THROTTLE),
    "link": (["--hosts", "3", "--no-rgw", "--public-net", "200mbit"],
             "{type: rados_bench, pool: rep, modes: [write, seq], object_size: 4MiB, "
             "concurrency: {auto: {max: 32}}, duration: {write: 8s, seq: 3s}}",
             "seq", 3 * LINK_BITS / 8 * TCP_SHARE),
}


def one(name: str, env: dict[str, str]) -> None:
    flags, workload, phase, limit = CASES[name]
    d = Path(tempfile.mkdtemp(prefix=f"cephbench-bench-knee-{name}-"))
    lab_dir = d / "lab"
    try:
        subprocess.run([*CLI, "lab", "up", "--dir", str(lab_dir), "--osd-size", "6GiB", *flags], env=env, check=True,
                       capture_output=True, text=True)
        suite = d / "suite.yaml"
        suite.write_text("name: knee\nsettings: {drop_caches: false}\n"
                         "pools:\n  rep: {type: replicated, size: 3, pg_num: 32}\n"
                         f"workloads:\n  - {workload}\n")
        run = subprocess.run([*CLI, "run", str(suite), "--lab-dir", str(lab_dir), "--out", str(d / "run")],
                             env=env, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{name}: the run failed (exit {run.returncode}): {run.stderr.strip()[-500:]}", flush=True)
        results, _ = RunDir(d / "run").results()
        found = [(c, k) for c, k in knees([r for r in results if r.test.params.get("phase") == phase])]
        if not found:
            print(f"{name}: no curve of the {phase} steps ({len(results)} results)", flush=True)
            return
        curve, k = found[0]
        for p in curve.points:
            print(f"  {name} {phase} {p.label:>6}: {(p.bytes_per_s or 0) / MiB:7.1f} MiB/s, "
                  f"mean {(p.mean_ns or 0) / 1e6:8.1f} ms, {p.bottleneck}", flush=True)
        at = k.point or curve.points[-1]
        got = at.bytes_per_s or 0.0
        if name == "link":
            limit = _link_limit(results, phase, limit)
        result_line(f"knee-{name}", state=k.state.replace(" ", "_"), knee_load=at.load,
                    knee_mib_s=got / MiB, limit_mib_s=limit / MiB, ratio=got / limit,
                    within_15pct=abs(got / limit - 1) <= 0.15, bottleneck=str(at.bottleneck).replace(" ", "_"))
    finally:
        subprocess.run([*CLI, "lab", "down", "--dir", str(lab_dir)], env=env, capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def _link_limit(results: list, phase: str, even: float) -> float:
    """What three links allow the seq reads, given how Ceph spread them: each object is read from its primary, so
    the links fill when the host serving the largest share of the bytes (each OSD's op_out_bytes, Ceph's own
    counters, not the link figures the verdict reads) fills its own link. With 32 PGs over 3 OSDs the primaries
    are far from even (one host served 49 % of the bytes in the first run), and `even` (a third each) overstates
    the limit by half."""
    served: dict[str, float] = {}
    for r in results:
        if r.test.params.get("phase") == phase and r.evidence is not None:
            for o in r.evidence.osds:
                served[o.host or f"osd.{o.osd}"] = served.get(o.host or f"osd.{o.osd}", 0.0) + (o.op_out_bytes or 0.0)
    total = sum(served.values())
    if not total:
        print("  link: no OSD counters: the limit assumes an even spread", flush=True)
        return even
    shares = {h: b / total for h, b in sorted(served.items())}
    print("  link: share of the bytes each host served as primary: "
          + ", ".join(f"{h} {s:.0%}" for h, s in shares.items())
          + f"; an even spread would allow {even / MiB:.1f} MiB/s", flush=True)
    return LINK_BITS / 8 * TCP_SHARE / max(shares.values())


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}
    for name in os.environ.get("CEPHBENCH_KNEE_CASES", ",".join(CASES)).split(","):
        one(name, env)
