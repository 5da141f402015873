"""An existing pool's writes by this run are this run's (issue 35): other clients are what is left of that pool after
the test's own bytes and ops.

Fixtures (tests/fixtures/other_load_existing/): the multi-host lab of Ceph 16.2.15 (3 hosts), a pool `ext` made by
hand (size 3, 32 PGs), and `cephbench run` of a 6 s rados bench write of 4 KiB objects, 16 in flight, into it as
`pools: {p: {existing: ext}}`; `ceph df detail -f json` read by hand before and after the whole run (`df_*`: the
run alone; `df2_*`: with another client, `rados -p ext bench 14 write -b 65536 -t 4`, started a second before it),
and each run's results.jsonl. Before, the run's own 3,413 objects read as other clients' load (473 ops/s) and the
result was marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.core.results import Result
from cephbench.evidence.otherload import busy, other_load, others_between, pool_counts, without_own
from cephbench.run.runner import own_ops_out

FIX = Path(__file__).parent.parent / "fixtures" / "other_load_existing"
# the seconds between the two `ceph df detail` readings (date +%s.%N around them)
ALONE_S = 1796558878.088369505 - 1796558863.658989425
BESIDE_S = 1796558922.129083281 - 1796558896.004683435
OTHER_BYTES = 3903 * 65536          # the other client's rados bench: "Total writes made: 3903" of 64 KiB


def sampled(name: str, seconds: float):
    before = pool_counts(json.loads((FIX / f"ceph16.2.15_{name}_before.json").read_text()))
    after = pool_counts(json.loads((FIX / f"ceph16.2.15_{name}_after.json").read_text()))
    return other_load(others_between(before, after, seconds, "cephbench-notours-"))


def result(name: str, other) -> Result:
    r = Result.model_validate(json.loads((FIX / f"ceph16.2.15_{name}.jsonl").read_text().splitlines()[-1]))
    r.evidence.other_load = other
    return r


def test_the_runs_own_writes_into_an_existing_pool_are_not_other_clients():
    o = sampled("df", ALONE_S)
    assert busy(o) and o.pools == ["ext"]           # what the result said before: 473 ops/s, 0.9 MiB/s
    r = result("alone", o)
    own_ops_out(r)
    left = r.evidence.other_load
    assert not busy(left) and left.pools == [] and left.own_pools == ["ext"]


def test_another_client_in_the_same_pool_is_still_named_by_what_it_wrote():
    o = sampled("df2", BESIDE_S)
    r = result("beside_other", o)
    own_ops_out(r)
    left = r.evidence.other_load
    assert busy(left) and left.pools == ["ext"]
    # what is left is the other client's bytes, to the 1 KiB rados bench's metadata object adds
    assert left.write_bytes_per_s * BESIDE_S == pytest.approx(OTHER_BYTES, rel=0.005)


def test_a_pool_the_run_did_not_name_existing_is_left_as_it_was():
    o = sampled("df", ALONE_S)
    r = result("alone", o)
    r.test = r.test.with_params({**r.test.params, "pool_profile": {"type": "replicated", "size": 3}})
    own_ops_out(r)
    assert r.evidence.other_load == o


def test_ops_alone_are_taken_out_one_for_one():
    o = sampled("df", ALONE_S).model_copy(update={"by_pool": {"ext": {"read_bytes_per_s": 0.0,
                                                                      "write_bytes_per_s": 0.0, "ops_per_s": 50.0}},
                                                   "ops_per_s": 50.0, "write_bytes_per_s": 0.0})
    assert without_own(o, "ext", 0, 0, 45 * ALONE_S).by_pool["ext"]["ops_per_s"] == 0.0      # under 10: lag
    assert without_own(o, "ext", 0, 0, 20 * ALONE_S).by_pool["ext"]["ops_per_s"] == pytest.approx(30.0)
