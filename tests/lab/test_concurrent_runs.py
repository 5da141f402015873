"""Two runs on one lab at once, overlapping in time (B starts while A runs, A ends first), issue 24: they share the
scrub flags through their markers (A's end leaves them for B; B's end unsets them; a flag the user set before
either run stays set; the cleanup of a run killed leaves them to the run still holding them), and a result measured
while another run had a variant in force says so in a warning."""

import json
import subprocess
import time
from pathlib import Path

from cephbench.core.results import RunDir

from labcli import CLI, write_suite

# A: long enough that B's preflight and first pool land while A is still writing; B: long enough to outlive A
RUN = """
name: {name}
{variants}
pools:
  rep2: {{type: replicated, size: 2, pg_num: 16}}
workloads:
  - {{name: rados, type: rados_bench, pool: rep2, modes: [write], object_size: 64KiB, concurrency: 4,
      duration: {duration}, repeat: {repeat}}}
"""
VARIANT = "variants: [{name: bf, options: [{who: osd, name: osd_max_backfills, value: 2}]}]"


def start(tmp_path: Path, env: dict, name: str, duration: str, repeat: int = 1, variants: str = ""
          ) -> tuple[subprocess.Popen, Path]:
    suite = write_suite(tmp_path, RUN.format(name=name, variants=variants, duration=duration, repeat=repeat),
                        f"{name}.yaml")
    out = tmp_path / name
    return subprocess.Popen([*CLI, "run", str(suite), "--out", str(out)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True), out


def wait_for(what, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def measured(out: Path) -> bool:
    """The run has its first result: it set (or shared) its flags and is measuring."""
    return (out / "results.jsonl").exists() and (out / "results.jsonl").stat().st_size > 0


def flags(mon_json) -> set[str]:
    return set(filter(None, mon_json("osd dump")["flags"].split(",")))


def results_of(out: Path) -> list:
    results, _ = RunDir.open(out).results()
    return results


def test_runs_share_the_scrub_flags_and_the_users_flag_survives(lab, mon_json, cephbench_env, tmp_path,
                                                                lab_cluster):
    """noscrub set by the user first; A sets nodeep-scrub; B starts while A runs and finds both set. A's end leaves
    nodeep-scrub for B, B's end unsets it, and the user's noscrub survives both."""
    assert not {"noscrub", "nodeep-scrub"} & flags(mon_json)
    lab_cluster.set_flag("noscrub", True)
    try:
        pa, a = start(tmp_path, cephbench_env, "a", "8s")
        wait_for(lambda: "nodeep-scrub" in flags(mon_json) or pa.poll() is not None)
        pb, b = start(tmp_path, cephbench_env, "b", "4s", repeat=4)
        wait_for(lambda: measured(b) or pb.poll() is not None)
        _, err_a = pa.communicate(timeout=300)
        assert pa.returncode == 0, err_a
        assert pb.poll() is None, "run B ended before run A: the overlap was not made"
        during_b = flags(mon_json)
        _, err_b = pb.communicate(timeout=300)
        assert pb.returncode == 0, err_b
        after = flags(mon_json)
    finally:
        lab_cluster.set_flag("noscrub", False)
    assert {"noscrub", "nodeep-scrub"} <= during_b, during_b      # A's end left B's flag alone
    assert "noscrub" in after and "nodeep-scrub" not in after, after     # B's end: its flag unset, the user's kept
    assert all(r.status == "ok" for r in results_of(a) + results_of(b))
    assert not [k for k in mon_json("config-key dump", key="cephbench/runs/")], "a run's marker was left"


def markers(mon_json) -> dict[str, dict]:
    return {k: json.loads(v) for k, v in (mon_json("config-key dump", key="cephbench/runs/") or {}).items()}


def test_cleanup_of_a_run_killed_leaves_the_flags_another_run_holds(lab, mon_json, cephbench_env, tmp_path):
    """A is killed (-9) while B shares its flags: `cephbench cleanup A` removes what A left but leaves the flags
    set for B, and B's end unsets them."""
    assert not {"noscrub", "nodeep-scrub"} & flags(mon_json)
    pa, a = start(tmp_path, cephbench_env, "a", "30s")
    wait_for(lambda: {"noscrub", "nodeep-scrub"} <= flags(mon_json) or pa.poll() is not None)
    pb, b = start(tmp_path, cephbench_env, "b", "4s", repeat=4)
    wait_for(lambda: measured(b) or pb.poll() is not None)
    pa.kill()
    pa.communicate(timeout=60)
    res = subprocess.run([*CLI, "cleanup", str(a)], env=cephbench_env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert pb.poll() is None, "run B ended before A's cleanup: the overlap was not made"
    after_cleanup = flags(mon_json)
    _, err_b = pb.communicate(timeout=300)
    assert pb.returncode == 0, err_b
    assert {"noscrub", "nodeep-scrub"} <= after_cleanup, after_cleanup
    assert not {"noscrub", "nodeep-scrub"} & flags(mon_json)
    assert markers(mon_json) == {}
    assert not [p for p in mon_json("osd pool ls") if p.startswith("cephbench-")]


def test_a_result_measured_under_another_runs_variant_says_so(lab, mon_json, cephbench_env, tmp_path):
    """A changes osd_max_backfills; B, with no variants, runs while A's variant is in force: each of B's results
    measured meanwhile carries a warning naming A's run and the option; A's results carry none of B."""
    config_before = mon_json("config dump")
    pa, a = start(tmp_path, cephbench_env, "a", "6s", repeat=2, variants=VARIANT)
    wait_for(lambda: any(c["name"] == "osd_max_backfills" for c in mon_json("config dump")) or pa.poll() is not None)
    pb, b = start(tmp_path, cephbench_env, "b", "2s")
    _, err_b = pb.communicate(timeout=300)
    _, err_a = pa.communicate(timeout=300)
    assert pa.returncode == 0 and pb.returncode == 0, (err_a, err_b)
    [rb] = results_of(b)
    assert rb.status == "ok" and rb.variant is None
    warned = [w for w in rb.warnings if "osd_max_backfills" in w]
    assert len(warned) == 1 and warned[0].startswith("run ") and "while this test ran" in warned[0], rb.warnings
    assert str(a.absolute()) in warned[0], warned      # whose variant: A's run directory
    assert not [w for r in results_of(a) for w in r.warnings if "while this test ran" in w]
    assert mon_json("config dump") == config_before


def test_runs_that_end_or_start_at_one_instant_leave_the_flags_right(lab_target, lab_cluster):
    """The sharing itself, from two runs' contexts on connections of their own, released at one instant by a
    barrier, three times each: two runs that end together leave no flag set (never both keep it for the other);
    a run that starts as the other ends holds the flags, set, until its own end unsets them."""
    import threading
    from cephbench.cluster.ceph import Cluster
    from cephbench.suite.config import Settings
    from cephbench.drivers.base import RunContext
    from cephbench.core.resources import Ledger
    from cephbench.run.runner import mark_run, set_scrub_flags, take_scrub_flags

    scrub = {"noscrub", "nodeep-scrub"}
    assert not scrub & lab_cluster.osd_flags()
    clusters = [Cluster(lab_target), Cluster(lab_target)]

    def begin(ctx: RunContext) -> None:
        taken = take_scrub_flags(ctx)
        set_scrub_flags(ctx, taken, mark_run(ctx))
        ctx.cluster.join()

    def together(*steps) -> None:
        barrier = threading.Barrier(len(steps))
        errors: list[BaseException] = []

        def run(step) -> None:
            barrier.wait()
            try:
                step()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
        threads = [threading.Thread(target=run, args=(s,)) for s in steps]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors

    def end(ctx: RunContext) -> None:
        assert ctx.ledger.release() == []

    for rnd in range(3):
        a, b = (RunContext(cluster=c, run_id=f"5c4b{rnd}{i}", rundir=None, ledger=Ledger(), settings=Settings())
                for i, c in enumerate(clusters))
        begin(a)
        begin(b)
        assert set(b.marker_state.scrub_flags) == scrub                      # shared: B holds A's flags
        together(lambda: end(a), lambda: end(b))
        assert not scrub & lab_cluster.osd_flags(), f"round {rnd}: two ends at one instant kept a flag"

        a, b = (RunContext(cluster=c, run_id=f"5c4c{rnd}{i}", rundir=None, ledger=Ledger(), settings=Settings())
                for i, c in enumerate(clusters))
        begin(a)
        together(lambda: end(a), lambda: begin(b))
        assert scrub <= lab_cluster.osd_flags(), f"round {rnd}: a run that started as another ended lost a flag"
        assert set(b.marker_state.scrub_flags) == scrub, b.marker_state.scrub_flags
        end(b)
        assert not scrub & lab_cluster.osd_flags(), f"round {rnd}: the last run's end kept a flag"
    assert not [k for k in lab_cluster.ceph_json("config-key", "dump", "cephbench/runs/") if "5c4" in k]
