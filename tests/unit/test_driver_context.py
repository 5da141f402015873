"""What a driver is given (drivers/base.py): a tool run hands back what was watched with its outputs, and nothing
of it is left on the run's context for the runner to pick up by test id."""

import copy
import dataclasses
import os
from pathlib import Path

from cephbench.cluster.ceph import Cluster, Target
from cephbench.core.resources import Ledger
from cephbench.core.results import Test
from cephbench.drivers.base import RunContext
from cephbench.evidence.rounds import ClusterSeen, Seen
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
