"""`cephbench validate`: a suite checked and its plan printed, with no cluster."""

from __future__ import annotations

from pathlib import Path

import click

from ..suite.config import Suite, load_suite
from ..suite.plan import SEARCH_GOES_ON, Plan, expand, step_run_s, validate_estimates, waits_for_client_hosts
from ..kinds import DISK_BASELINE
from ..kinds.schema import Auto
from ..report.format import seconds
from ..core import loadsearch
from ..core.units import format_size
from .common import out, _print_plan_warnings, estimate_text


def _plan_param(key: str, value: object) -> str:
    """`image_size=256MiB`, `duration=5s`: a figure with its unit, as the suite writes it."""
    if isinstance(value, int) and not isinstance(value, bool) and (key.endswith("size") or key == "total"):
        return f"{key}={format_size(value)}"
    if key.endswith("_s") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{key[:-2]}={value:g}s"
    return f"{key}={value}"


def _unlisted_dd(suite: Suite) -> bool:
    disks = suite.baseline.disks if suite.baseline is not None else None
    return disks is not None and disks.patterns is not None and "dd" not in disks.patterns


def _print_plan(plan: Plan, suite: Suite) -> None:
    dd_added = _unlisted_dd(suite)
    for t in plan.tests:
        # what the suite left unset says nothing; pool_profile is the pool's whole definition, named by `pool`
        p = {k: v for k, v in t.params.items() if k != "pool_profile" and v is not None}
        shown = " ".join(_plan_param(k, v) for k, v in p.items())
        why = dd_added and t.kind == DISK_BASELINE and p.get("pattern") == "dd"
        out.print(f"{t.id:<48} {shown}" + ("  (not listed: always runs first, it writes the file the other "
                                           "patterns read)" if why else ""), markup=False)
    # the workloads whose search of client hosts goes up to the lab's every one, which only the run learns
    to_lab = {w.name or w.type for w in suite.workloads if isinstance(c := getattr(w, "clients", None), Auto)
              and c.max is None} if waits_for_client_hosts(suite) else set()
    for t in {t.group: t for t in plan.tests if t.search is not None}.values():
        bound = f", or the latency passes {t.search.latency_max_s * 1e3:g} ms" if t.search.latency_max_s else ""
        upto = str(t.search.max)
        if t.search.param == "clients" and t.workload in to_lab:
            upto = f"every client host of the lab (planned here to {upto}, the worst case; a run to the lab's own)"
        what = "client hosts" if t.search.param == "clients" else t.search.param
        # each run of a step (its repeats') may stall and run again (loadsearch.STALL_RERUNS): the worst case beyond
        # the estimate, its tool's run and overhead again (not its group's set-up)
        rerun_s = loadsearch.STALL_RERUNS * sum(step_run_s(s) for s in plan.tests if s.group == t.group)
        out.print(f"{t.group} ({t.workload}): a search of {what} from 1 to {upto}, doubling; it "
                  f"stops at the knee{bound} (docs/model.md, \"The search\"): the estimate counts its first "
                  f"{loadsearch.MIN_POINTS} loads, and each one after at {SEARCH_GOES_ON:g} times the chance of the "
                  f"one before; "
                  f"a step that stalls runs again, up to {loadsearch.STALL_RERUNS} times (at worst "
                  f"{seconds(rerun_s)} more)", markup=False)
    groups = len({t.group for t in plan.tests})
    # run's own estimate, for the clusters validate cannot tell apart (it knows no OSD host): run prints the one
    # for the hosts it finds, with the same functions (plan.estimate, common.estimate_text)
    shown = ", ".join(f"{estimate_text(e)} with {where}" for where, e in validate_estimates(plan))
    out.print(f"{len(plan.tests)} tests in {groups} groups; estimated duration {shown}; `run` prints its "
              f"estimate for the OSD hosts it finds (page-cache drops over ssh, network tests between hosts)",
              markup=False)
    _print_plan_warnings(plan)


@click.command()
@click.argument("suite_path", metavar="SUITE", type=click.Path(path_type=Path))
def validate(suite_path: Path) -> None:
    """Check a suite and print the expanded plan, without contacting a cluster."""
    suite = load_suite(suite_path)
    _print_plan(expand(suite), suite)
