"""What a driver is given (drivers/base.py, issue 26 item 3): a DriverContext made from the run's RunContext, with
the tool runner, the capacity guard and the ledger, and none of the run-level state (the marker, the client hosts'
set-up, the OSD facts, the reservation); a tool run hands back what was watched with its outputs, and nothing of it
is left on the run's context for the runner to pick up by test id."""

import ast
import copy
import dataclasses
import os
from pathlib import Path

import pytest

from cephbench.cluster.ceph import Cluster, Target
from cephbench.core.resources import Ledger
from cephbench.core.results import Test
from cephbench.core.results import HostLoad
from cephbench.drivers.base import DriverContext, Outcome, RunContext
from cephbench.evidence.rounds import ClusterSeen, Seen
from cephbench.run.runner import _run_group
from cephbench.suite.config import Settings

TEST = Test(id="001-baseline-disk-dd", index=1, group="b001", workload="baseline-disk", kind="disk_baseline",
            params={"pattern": "dd"})


def run_context() -> RunContext:
    return RunContext(cluster=Cluster(Target(Path(os.devnull), None, None)), run_id="r1", rundir=None,
                      ledger=Ledger(None), settings=Settings(), has_cluster=False)


def test_a_baseline_tool_run_returns_what_was_watched_beside_its_result():
    ctx = run_context()
    before = {k: copy.copy(v) if isinstance(v, (dict, list)) or dataclasses.is_dataclass(v) else v
              for k, v in vars(ctx).items()}
    ticks = []

    def tools(tick, started):
        started([])
        ticks.append(tick())        # a baseline's watch never stops its tools
        return "fio's results"

    got, seen = ctx.run_baseline_tools([TEST], [], tools)
    assert got == "fio's results" and ticks == [False]
    assert isinstance(seen, Seen) and seen.evidence is None and seen.cluster == ClusterSeen()   # no cluster read
    assert vars(ctx) == before      # nothing keyed by test id stays behind
    assert ctx.ledger.pending() == []


DRIVERS = Path(__file__).resolve().parents[2] / "src" / "cephbench" / "drivers"
RUN_LEVEL = ("marker_state", "client_hosts", "osds", "reservation", "write_marker", "marker_value", "_seen",
             "restart_lab_osds", "has_cluster", "started_unix")


def test_a_driver_is_called_with_what_it_needs_and_none_of_the_run_level_state():
    ctx = run_context()
    given = []
    load = HostLoad(host="here", cpus=2, cpu_busy_mean=0.5, cpu_busy_median=0.5, cpu_busy_max=0.9)
    seen = Seen(hosts=[load], evidence=None)

    def driver(dctx, group, todo):
        given.append(dctx)
        yield Outcome(group[0], 100.0, 1.0, error="x", seen=seen)

    [result] = list(_run_group(driver, ctx, [TEST], {TEST.id}))
    [dctx] = given
    assert isinstance(dctx, DriverContext)
    assert [a for a in RUN_LEVEL if hasattr(dctx, a)] == []
    assert dctx.ledger is ctx.ledger and dctx.settings is ctx.settings and dctx.name("p") == "cephbench-r1-p"
    with pytest.raises(AttributeError):
        dctx.settings = ctx.settings        # a driver reads the run's settings, never replaces them
    with pytest.raises(AttributeError):
        dctx.marker_state = ctx.marker_state
    assert result.hosts == seen.hosts       # what the tools saw came back on the outcome, the one way


def ctx_attributes(path: Path) -> set[str]:
    """Every `ctx.<name>` a module reads or sets."""
    return {n.attr for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "ctx"}


@pytest.mark.parametrize("path", sorted(p for p in DRIVERS.rglob("*.py") if p.name != "base.py"),
                         ids=lambda p: str(p.relative_to(DRIVERS)))
def test_drivers_use_only_what_a_driver_context_has(path):
    has = {n for n in dir(DriverContext) if not n.startswith("_")}
    assert ctx_attributes(path) - has == set()
    assert not set(RUN_LEVEL) & has


def ctx_assignments(path: Path) -> set[str]:
    """Every `ctx.<name>` a module assigns to, `+=` included (which reads, then assigns)."""
    out = set()
    for n in ast.walk(ast.parse(path.read_text())):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        out |= {t.attr for t in targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "ctx"}
    return out


@pytest.mark.parametrize("path", sorted(p for p in DRIVERS.rglob("*.py") if p.name != "base.py"),
                         ids=lambda p: str(p.relative_to(DRIVERS)))
def test_drivers_assign_nothing_to_their_context(path):
    """A DriverContext refuses assignment: `ctx.planned += [...]` in the RGW driver's dry run failed a lab test with
    "property 'planned' of 'DriverContext' object has no setter"."""
    assert ctx_assignments(path) == set()

