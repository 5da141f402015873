"""`cephbench run`: a suite against a cluster or the lab."""

from __future__ import annotations

import logging
import sys
from itertools import groupby
from pathlib import Path

import click

from ..cluster.ceph import CONNECT_TIMEOUT_S
from .common import out, err, _catalog, _print_plan_warnings, estimate_text, start_up


@click.command()
@click.argument("suite_path", metavar="SUITE", type=click.Path(path_type=Path), required=False)
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Run directory "
              "(default ./cephbench-runs/<UTC timestamp>-<suite name>).")
@click.option("--resume", "resume_dir", type=click.Path(path_type=Path),
              help="Complete an earlier run: run exactly the tests that have no result.")
@click.option("-c", "--conf", type=click.Path(path_type=Path), help="ceph.conf of the target cluster "
              "(default: CEPH_CONF).")
@click.option("-k", "--keyring", type=click.Path(path_type=Path), help="Keyring (default: CEPH_KEYRING).")
@click.option("--id", "client_id", help="Client id, e.g. admin.")
@click.option("--lab", "use_lab", is_flag=True, help="Target the local lab (started when none runs).")
@click.option("--lab-dir", type=click.Path(path_type=Path), help="Target the lab in this directory.")
@click.option("--force", is_flag=True, help="Run even on a HEALTH_ERR cluster, or with a client's clock more than "
              "1 s off (the offset is recorded and corrected for).")
@click.option("--keep", is_flag=True, help="Keep the pools and objects the run created.")
@click.option("--dry-run", is_flag=True, help="Print every cluster-changing command; change nothing.")
@click.option("--allow-pool-delete", is_flag=True, help="On a cluster whose monitors refuse to delete pools "
              "(mon_allow_pool_delete false, Ceph's default): set it true for the run, and put it back at its end.")
@click.option("--connect-timeout", type=click.IntRange(min=1), default=CONNECT_TIMEOUT_S, show_default=True,
              help="Seconds to wait for a monitor to answer.")
@click.option("--prometheus", "prometheus", metavar="URL", default=None,
              help="The operator's Prometheus (http[s]://[user:password@]host:port), in place of the suite's "
                   "settings.prometheus (default: that, else CEPHBENCH_PROMETHEUS, which `lab env` exports).")
def run(suite_path: Path | None, out_dir: Path | None, resume_dir: Path | None, conf: Path | None,
        keyring: Path | None, client_id: str | None, use_lab: bool, lab_dir: Path | None, force: bool, keep: bool,
        dry_run: bool, connect_timeout: int, allow_pool_delete: bool, prometheus: str | None) -> None:
    """Run a suite against a cluster (-c, CEPH_CONF, the suite's target:) or the local lab (--lab)."""
    with start_up():    # here, not at the top: `run --help` needs none of the run's machinery
        from ..run.launch import RunRequest, prepare, start
        from ..rundirs.progress import ConsoleEvents
    prep = prepare(RunRequest(suite_path, resume_dir, out_dir, conf, keyring, client_id, lab_dir, force, keep,
                              dry_run, connect_timeout, lab=use_lab, allow_pool_delete=allow_pool_delete,
                              prometheus=prometheus),
                   say=lambda m: err.print(m, markup=False))
    for line in prep.unreadable:
        err.print(f"cephbench: {prep.rundir.results_jsonl if prep.rundir else resume_dir}:{line.line_no}: unreadable "
                  f"result ({line.reason}); that test runs again", markup=False)
    if not prep.todo:
        out.print(f"every test of {prep.rundir.path if prep.rundir else prep.suite.name} has a result: nothing to run")
        return
    _print_plan_warnings(prep.plan)
    events = ConsoleEvents(err, prep.todo, quiet=dry_run,
                           run_dir=prep.rundir.path if prep.rundir else None)
    if dry_run:
        out.print(f"dry run against {prep.target.conf} (health {prep.status.get('health', {}).get('status')}); "
                  f"{len(prep.todo)} tests")
        if prep.shapes is not None:
            _print_shape_steps(prep.shapes, prep.todo)
        out.print("these commands would change the cluster:")
    else:
        from ..suite.plan import estimate       # the estimate validate prints for these hosts (estimate_text)
        out.print(f"run {prep.rundir.path}: {len(prep.todo)} of {len(prep.plan.tests)} tests, "
                  f"{estimate_text(estimate(prep.todo))}", markup=False)
    with events:
        summary = start(prep, events)
    if dry_run:
        for line in summary.planned:
            out.print(f"  {line}", markup=False)
        return
    from ..report.terminal import print_results, print_verdict     # a dry run prints no tables
    rundir = prep.rundir
    all_results, _ = rundir.results()
    print_results(out, all_results)
    print_verdict(out, all_results)
    try:
        from ..report.write import write_report     # only when a report is written: start-up stays light
        html_path, md_path, _ = write_report(rundir)
        out.print(f"report: {html_path}  (and {md_path.name} for tickets)")
    except Exception as exc:  # noqa: BLE001 - results are safe on disk; a report problem must not hide them
        logging.getLogger(__name__).debug("report failed", exc_info=True)
        err.print(f"cephbench: the report could not be written ({exc}); 'cephbench report {rundir.path}' retries",
                  markup=False)
    out.print(f"results: {rundir.path}  (print again with: cephbench show {rundir.path})")
    _catalog(rundir.path)
    if summary.lost:
        left = ", ".join(f"{r.kind} {r.name}" for r in summary.left_behind) or "nothing"
        err.print(f"cephbench: the run ended early: {summary.lost}; finished results are kept; left on the "
                  f"cluster: {left} (once it answers: cephbench cleanup {rundir.path})", markup=False)
        sys.exit(1)
    if summary.interrupted:
        err.print(f"interrupted: finished results are kept; complete the run with "
                  f"'cephbench run --resume {rundir.path}'")
        sys.exit(130)
    if summary.cleanup_failed:
        from ..core.resources import Refusal
        for r, why in summary.cleanup_failed:
            err.print(f"cephbench: {why}" if isinstance(why, Refusal) else f"cephbench: could not remove {r.kind} "
                      f"{r.name}: {why} (listed in {rundir.path}/resources.json)", markup=False)
    if summary.failed or summary.cleanup_failed:
        sys.exit(1)


def _print_shape_steps(keeper, todo: list) -> None:
    """Each lab shape a dry run would enter, in order, and what each costs: a rebuild, a throttle, nothing."""
    from ..suite.shape_plan import rebuilds, steps
    entered = [name for name, _ in groupby(t.variant for t in todo if t.variant is not None)]
    plan = steps(keeper.original, keeper.current, [(n, keeper.want(n)) for n in entered])
    out.print(f"lab {keeper.lab.dir}: {rebuilds(plan)} rebuild(s) "
              f"and {sum(1 for _, st in plan if st.kind == 'throttle')} throttle change(s):")
    for name, st in plan:
        what = {"none": "as it is", "throttle": "throttled: " + " ".join(
                    [t.text() for t in st.set] + [f"{r} unthrottled" for r in st.clear]),
                "rebuild": "rebuilt: lab up " + " ".join(st.build.up_flags() if st.build else []),
                "up": "started: lab up " + " ".join(st.build.up_flags() if st.build else []),
                "down": "taken down (the run started it)"}[st.kind]
        out.print(f"  {'variant ' + name if name else 'at the end'}: {what}", markup=False)
