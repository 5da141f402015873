"""Does going through cephbench change what rados bench measures?

The same rados bench write and seq at 4 MiB and 4 KiB, run directly (A) and through
cephbench (B) against the same lab. Each round runs A B B A (the next round B A A B), so
that neither side always follows the other onto a cluster still busy removing the last
pool. Prints per metric the median ratio B/A and, as the yardstick, the median
|A/A' - 1| of the two direct runs of a round: the lab's own run-to-run noise, which
bounds how small a difference this benchmark can resolve. Also cephbench's own CPU
time as a share of one core while it ran (its own process only: rados bench and ceph
CLI children are excluded). Goal: ratios within 0.97-1.03, cephbench's CPU below 2 %
of one core. CEPHBENCH_FIDELITY_ROUNDS and CEPHBENCH_FIDELITY_SECONDS override 3 and 8.
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from common import lab, result_line, settle

from cephbench.analysis import RunFacts
from cephbench.cluster.ceph import Cluster, Target
from cephbench.suite.config import parse_suite
from cephbench.drivers import rados_bench as rb
from cephbench.drivers.base import QuietEvents, RunContext
from cephbench.hosts.local import LocalHost
from cephbench.suite.plan import expand
from cephbench.core.resources import Ledger
from cephbench.core.results import RunDir
from cephbench.run.runner import RunOptions, execute
from cephbench.cluster.safety import drop_caches_local

ROUNDS = int(os.environ.get("CEPHBENCH_FIDELITY_ROUNDS", "3"))
DURATION_S = int(os.environ.get("CEPHBENCH_FIDELITY_SECONDS", "8"))
SIZES = {"4MiB": 4 * 1024**2, "4KiB": 4096}


class Events(QuietEvents):
    def test_finished(self, result) -> None:
        pass

    def cleanup(self, left, failures) -> None:
        pass


def direct(cluster: Cluster, size: int, tag: str) -> dict[str, float]:
    """A: what an operator types, on a pool made the same way."""
    host = LocalHost()
    pool = f"fidelity-{tag}"
    cluster.ceph_ok("osd", "pool", "create", pool, "32", "32", "replicated", "--size=3", "--autoscale-mode=off")
    cluster.ceph_ok("osd", "pool", "application", "enable", pool, "rados")
    cluster.wait_active_clean()
    try:
        out = {}
        for mode in ("write", "seq"):
            if mode == "seq":
                drop_caches_local()  # as cephbench does before every read phase
            cmd = rb.RadosBenchCommand(pool=pool, mode=mode, duration_s=DURATION_S, concurrency=16,
                                       object_size=size, run_name=pool)
            res = host.run(cmd.argv(cluster.target.client_args()), timeout_s=300)
            out[mode] = rb.parse(res.stdout, mode).bytes_per_s
        return out
    finally:
        cluster.delete_pool(pool)
        settle(cluster)


def through_cephbench(cluster: Cluster, size: int, workdir: Path) -> tuple[dict[str, float], float, float]:
    """B: the same through runner.execute in this process; returns figures, own CPU s, wall s."""
    suite = parse_suite({"name": "fidelity", "pools": {"p": {"type": "replicated", "size": 3, "pg_num": 32}},
                         "workloads": [{"type": "rados_bench", "pool": "p", "modes": ["write", "seq"],
                                        "object_size": size, "concurrency": 16, "duration": DURATION_S}]},
                        "fidelity")
    plan = expand(suite)
    rundir = RunDir.create(workdir, {"suite_name": "fidelity"})
    ctx = RunContext(cluster=cluster, run_id=f"fid{int(time.time() * 1000) % 100000}", rundir=rundir,
                     ledger=Ledger(), settings=suite.settings, events=Events())
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.monotonic()
    summary = execute(plan, ctx, Events(), RunOptions(), plan.tests, RunFacts())     # no baselines: no ceiling
    wall = time.monotonic() - w0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    figs = {r.test.params["phase"]: r.measurement.bytes_per_s for r in summary.results if r.measurement}
    settle(cluster)
    return figs, cpu, wall


def main() -> None:
    with lab(rgw=False) as lb, tempfile.TemporaryDirectory() as tmp:
        env = lb.env()
        cluster = Cluster(Target(Path(env["CEPH_CONF"]), Path(env["CEPH_KEYRING"]), None, is_lab=True))
        ratios: dict[str, list[float]] = {}
        noise: dict[str, list[float]] = {}
        cpu_total, wall_total = 0.0, 0.0
        for rnd in range(ROUNDS):
            for label, size in SIZES.items():
                a_runs, b_runs = [], []
                for i, side in enumerate("ABBA" if rnd % 2 == 0 else "BAAB"):
                    if side == "A":
                        a_runs.append(direct(cluster, size, f"{label}-{rnd}-{i}".lower()))
                    else:
                        b, cpu, wall = through_cephbench(cluster, size, Path(tmp) / f"{label}-{rnd}-{i}")
                        b_runs.append(b)
                        cpu_total += cpu
                        wall_total += wall
                for mode in ("write", "seq"):
                    a = statistics.fmean(r[mode] for r in a_runs)
                    b = statistics.fmean(r[mode] for r in b_runs)
                    ratios.setdefault(f"{mode}_{label}", []).append(b / a)
                    noise.setdefault(f"{mode}_{label}", []).append(abs(a_runs[1][mode] / a_runs[0][mode] - 1))
                    print(f"round {rnd + 1} {mode} {label}: direct "
                          f"{' '.join(f'{r[mode] / 2**20:.1f}' for r in a_runs)} MiB/s, cephbench "
                          f"{' '.join(f'{r[mode] / 2**20:.1f}' for r in b_runs)} MiB/s: ratio {b / a:.3f}",
                          flush=True)
        figures: dict[str, object] = {}
        for key, values in ratios.items():
            figures[f"ratio_{key}"] = statistics.median(values)
            figures[f"noise_{key}"] = statistics.median(noise[key])
        figures["cephbench_cpu_pct_of_core"] = 100 * cpu_total / wall_total
        figures["goal_ratio"] = "0.97-1.03"
        figures["goal_cpu_pct"] = 2.0
        result_line("fidelity", **figures)


if __name__ == "__main__":
    main()
