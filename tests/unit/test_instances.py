"""drivers/instances.py: a test's instances, here or on client hosts, made one Outcome (rbd bench of Ceph 16.2.15).
The messages and the merge are what the drivers' own forks made before (measure, clients_outcome)."""

import pytest

from conftest import FIXTURES
from cephbench.drivers.instances import Ran, instances_outcome
from cephbench.drivers.rbd_bench_tool import parse
from cephbench.evidence.rounds import Seen
from cephbench.hosts.fanout import TimedResult
from cephbench.hosts.local import CommandResult
from cephbench.core.merge import merge_instances
from cephbench.core.results import Test

TEXT = (FIXTURES / "rbd_bench" / "ceph16.2.15_write_rand_4K.txt").read_text()
TEST = Test(id="t1", index=0, group="g", workload="w", kind="rbd_bench", params={"phase": "randwrite"})


def result(rc: int = 0, stdout: str = TEXT, stderr: str = "") -> CommandResult:
    return CommandResult(["rbd", "bench"], rc, stdout, stderr, 1.0)


def outcome(ran: Ran):
    return instances_outcome(TEST, (100.0, 0.0), ran, lambda _i, r: parse(r.stdout), tool="rbd bench randwrite",
                             latency="mean-max", raw=["raw/t1/a.txt"], notes=["n"])


def test_here_two_instances_merge_and_carry_what_was_seen():
    seen = Seen()
    got = outcome(Ran([result(), result()], None, seen))
    assert got.error is None and got.seen is seen
    assert got.measurement.model_dump() == merge_instances([parse(TEXT), parse(TEXT)], latency="mean-max").model_dump()
    assert got.commands == ["rbd bench", "rbd bench"] and got.raw == ["raw/t1/a.txt"] and got.notes == ["n"]


def test_here_one_instance_is_its_own_figure_and_a_failure_is_the_first():
    assert outcome(Ran([result()], None, Seen())).measurement.model_dump() == parse(TEXT).model_dump()
    got = outcome(Ran([result(), result(1, stderr="boom")], None, Seen()))
    assert got.measurement is None and got.error.startswith("rbd bench randwrite failed: ") and "boom" in got.error


def test_on_clients_each_instance_has_its_host_and_a_parse_error_names_it():
    timed = [TimedResult(result(), "c1", 1000.0, 1005.0, 0.1), TimedResult(result(), "c2", 1000.2, 1005.1, 0.1)]
    got = outcome(Ran([t.result for t in timed], timed, Seen()))
    assert [i.host for i in got.measurement.instances] == ["c1", "c2"]
    assert got.commands == ["on c1: rbd bench", "on c2: rbd bench"]
    bad = [timed[0], TimedResult(result(stdout="nothing"), "c2", 1000.2, 1005.1, 0.1)]
    err = outcome(Ran([t.result for t in bad], bad, Seen())).error
    assert err.startswith("c2: ")


def test_on_clients_a_failed_host_is_named():
    timed = [TimedResult(result(), "c1", 1000.0, 1005.0, 0.1), TimedResult(result(1, stderr="boom"), "c2", None,
                                                                            None, 0.1)]
    err = outcome(Ran([t.result for t in timed], timed, Seen())).error
    assert err.startswith("rbd bench randwrite failed: ") and "c2" in err


@pytest.mark.parametrize("accept_124", [True, False])
def test_accept_says_which_exits_succeed(accept_124):
    ran = Ran([result(124)], None, Seen())
    got = instances_outcome(TEST, (0.0, 0.0), ran, lambda _i, r: parse(r.stdout), tool="t", latency="mean-max",
                            raw=[], notes=[], accept=lambda r: r.ok or (accept_124 and r.returncode == 124))
    assert (got.error is None) is accept_124
