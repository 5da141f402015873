"""Issue 37: a Test carries its kind's model of its parameters (core/planned.py Params, made for each kind by
kinds/schema.py test_params_model from its suite model, or the baselines' params_model), typed, and dumped as the very
mapping it was made from: results.json, match keys and reports of earlier runs stay as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench import kinds
from cephbench.core.planned import Params, Test, params_model
from cephbench.core.results import Result
from cephbench.kinds.schema import KindParams
from cephbench.suite.config import load_suite
from cephbench.suite.plan import expand

from conftest import FIXTURES, REPO

SUITES = sorted((REPO / "suites").glob("*.yaml"))
RESULTS = sorted(FIXTURES.rglob("*.results.jsonl")) + sorted(FIXTURES.rglob("results.jsonl"))


def _test(kind: str, params: dict) -> Test:
    return Test(id="001-x", index=1, workload="x", kind=kind, group="g001", params=params)


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.stem)
def test_every_planned_test_carries_its_kinds_model(path: Path):
    """The plan's parameters are what the kind's model accepts: none falls back to the untyped base."""
    plan = expand(load_suite(path))
    assert plan.tests
    for t in plan.tests:
        assert type(t.params) is params_model(t.kind), (t.id, type(t.params).__name__)
        assert isinstance(t.params, KindParams) and t.params.descriptor is kinds.KINDS[t.kind]
        # dumped as made: the same keys in the same order, the same values
        again = Test.model_validate_json(t.model_dump_json())
        assert list(again.params) == list(t.params) and again.params == t.params
        assert json.dumps(t.model_dump(mode="json")["params"]) == json.dumps(dict(t.params))


def test_every_kind_has_a_model_of_its_parameters():
    for name in kinds.KINDS:
        model = params_model(name)
        assert issubclass(model, KindParams) and model.descriptor is kinds.KINDS[name], name
    assert params_model("not-a-kind") is Params


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_recorded_results_load_and_dump_their_parameters_as_written(path: Path):
    """Run directories of earlier versions (the fixtures) load, and each test's parameters dump as the file has
    them, key order too."""
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        written = json.loads(line)
        if not isinstance(written, dict) or "test" not in written:
            continue
        r = Result.model_validate(written)
        assert json.dumps(r.model_dump(mode="json")["test"]["params"]) == json.dumps(written["test"]["params"])
        assert r.test.match_key() == json.dumps({"kind": written["test"]["kind"],
                                                 "params": written["test"]["params"],
                                                 **({"variant": r.test.variant} if r.test.variant else {})},
                                                sort_keys=True)


def test_typed_by_the_kinds_suite_model():
    t = _test("fio_rbd", {"pool": "default", "block_size": 4096, "iodepth": 32, "numjobs": 1, "phase": "randread",
                          "duration_s": 30, "object_size": 4194304, "clients": "all"})
    p = t.params
    assert type(p) is params_model("fio_rbd") and type(p) is not Params
    assert (p.block_size, p.iodepth, p.numjobs, p.clients) == (4096, 32, 1, "all")
    assert p.duration_s == 30.0 and isinstance(p.duration_s, float)      # typed ...
    assert p["duration_s"] == 30 and isinstance(p["duration_s"], int)      # ... read and dumped as given
    assert t.model_dump()["params"]["duration_s"] == 30
    # its roles, as its descriptor names them
    assert (p.load, p.op_bytes, p.object_bytes) == (32, 4096, 4194304)
    assert p.get("absent") is None and "iodepth" in p and len(p) == 8
    assert p == {**p} and dict(p) == t.model_dump()["params"]


def test_a_kinds_model_refuses_what_its_suite_would():
    """A sweep's element keeps its element's checks: a load of 0 is no test of that kind's, typed or not; its
    parameters are kept as given (a run directory of a cephbench that wrote them so)."""
    t = _test("fio_rbd", {"iodepth": 0, "block_size": 4096, "phase": "read"})
    assert type(t.params) is Params and t.params.iodepth == 0 and t.params["iodepth"] == 0
    assert t.model_dump()["params"] == {"iodepth": 0, "block_size": 4096, "phase": "read"}


def test_foreign_parameters_are_kept_as_given():
    """An import of fio output may give a block size fio took as text (bs=4k-8k): not fio_rbd's model, kept."""
    given = {"ioengine": "rbd", "block_size": "4k-8k", "iodepth": 16, "jobs": 2, "phase": "randread"}
    t = _test("fio_rbd", given)
    assert type(t.params) is Params
    assert t.params.block_size == "4k-8k" and t.params.jobs == 2 and t.params.phase == "randread"
    assert t.model_dump()["params"] == given and list(t.model_dump()["params"]) == list(given)
    # not even the plan's keys as the plan writes them: kept, and read by attribute as given
    odd = _test("rados_bench", {"phase": 3, "duration_s": "long"})
    assert odd.params.phase == 3 and odd.params["duration_s"] == "long"
    assert odd.model_dump()["params"] == {"phase": 3, "duration_s": "long"}


def test_with_params_types_the_new_parameters_as_the_old():
    t = _test("rados_bench", {"pool": "default", "object_size": 4096, "concurrency": 16, "phase": "write",
                              "duration_s": 10.0})
    other = t.with_params({**t.params, "concurrency": 32})
    assert type(other.params) is type(t.params) and other.params.concurrency == 32 and t.params.concurrency == 16
    assert other.match_key() != t.match_key()


def test_the_baselines_models_type_their_own_parameters():
    net = _test("net_baseline", {"pattern": "pair", "sender": "h1", "receivers": ["h2"], "streams": 4,
                                 "hosts": ["h1", "h2"], "duration_s": 5.0, "port": None})
    assert type(net.params) is params_model("net_baseline") and net.params.receivers == ["h2"]
    assert kinds.net_baseline.route(net.params) == "h1 -> h2"
    assert kinds.concurrency_of("net_baseline", net.params) == 4
    disk = _test("disk_baseline", {"paths": "lab-osds", "hosts": None, "size": 1 << 30, "runtime_s": 2.0,
                                   "allow_raw_device": False, "pattern": "dd"})
    assert type(disk.params) is params_model("disk_baseline") and disk.params.runtime_s == 2.0
