"""Issue 37: a kind's resources are declared by the kind (kinds/kind.py ResourceType, in its KIND.resources), and
the ledger, the run's removal (run/launch.py removers) and a killed run's cleanup (cluster/recovery.py: its proof
of ownership, the cluster's fsid, its place in the order, the command by hand) all read that one declaration. Each
test here changes a declaration in the registry and sees the reader follow it: a reader with a table of its own
would not."""

import inspect
import json
from dataclasses import replace
from pathlib import Path

import pytest

from cephbench import kinds
from cephbench.cluster import recovery
from cephbench.cluster.ceph import Cluster, Target
from cephbench.cluster.recovery import Ownership, how_to_remove, leftovers, remove_leftovers, save
from cephbench.core.errors import UserError
from cephbench.core.resources import KINDS as CORE_KINDS, Ledger, Resource
from cephbench.drivers import rbd_images
from cephbench.drivers.base import DriverContext, RunContext
from cephbench.drivers.registry import remover_of
from cephbench.kinds.disk_baseline import DISK_FILE
from cephbench.kinds.rbd_images import RBD_IMAGE, RBD_MAPPING
from cephbench.run import launch
from cephbench.suite.config import Settings


def _ctx() -> RunContext:
    return RunContext(cluster=Cluster(Target(Path("/dev/null"), None, None)), run_id="recovery", rundir=None,
                      ledger=Ledger(None), settings=Settings())


def _declare(monkeypatch, declared) -> None:
    monkeypatch.setitem(kinds.RESOURCE_TYPES, declared.name, declared)


def test_each_resource_is_declared_once_and_its_remover_is_a_drivers_function_of_an_entry():
    seen: dict[str, object] = {}
    for k in kinds.KINDS.values():
        for r in k.resources:
            # one declaration however many kinds make it (the RBD kinds' images): the same object
            assert seen.setdefault(r.name, r) is r, (k.name, r.name)
            assert kinds.RESOURCE_TYPES[r.name] is r
    assert set(seen) == set(kinds.RESOURCE_TYPES) and not set(seen) & set(CORE_KINDS)
    for r in kinds.RESOURCE_TYPES.values():
        remove = remover_of(r)
        assert remove.__module__.startswith("cephbench.drivers."), r.remover
        assert list(inspect.signature(remove).parameters)[:2] == ["ctx", "entry"], r.remover


def test_the_runs_removal_calls_the_remover_the_declaration_names(monkeypatch):
    calls = []
    monkeypatch.setattr(rbd_images, "probe", lambda ctx, entry: calls.append((type(ctx), entry)), raising=False)
    entry = Resource(RBD_IMAGE.name, "cephbench-abc123-g1/cephbench-abc123-g1-img0")
    # as declared: rbd_images.remove_image, given the driver's context and the entry
    real = []
    monkeypatch.setattr(rbd_images, "remove_image", lambda ctx, e: real.append((type(ctx), e)))
    launch.removers(_ctx())[RBD_IMAGE.name](entry)
    assert real == [(DriverContext, entry)]
    # the declaration names another: removal follows it
    _declare(monkeypatch, replace(RBD_IMAGE, remover="rbd_images:probe"))
    launch.removers(_ctx())[RBD_IMAGE.name](entry)
    assert calls == [(DriverContext, entry)] and len(real) == 1
    # a resource type a kind declares anew is removed with no table of the core's changed
    _declare(monkeypatch, replace(RBD_IMAGE, name="rbd-snapshot", remover="rbd_images:probe"))
    launch.removers(_ctx())["rbd-snapshot"](Resource("rbd-snapshot", "p/i@s"))
    assert calls[-1] == (DriverContext, Resource("rbd-snapshot", "p/i@s"))


def test_the_proof_of_ownership_reads_the_declared_name(tmp_path, monkeypatch):
    owned = Ownership(("abc123",), str(tmp_path), {"abc123": {"run_dir": str(tmp_path)}},
                      image_of={"/dev/rbd0": "cephbench-abc123-g1-img0", "/dev/rbd1": "userimg"}.get)
    in_users_pool = Resource(RBD_IMAGE.name, "rbd/cephbench-abc123-g1-img0")
    assert owned.refusal(in_users_pool) is None                    # the image's own name is the run's
    _declare(monkeypatch, replace(RBD_IMAGE, owned_name=lambda spec: spec))
    assert "is not named cephbench-<run id>-" in owned.refusal(in_users_pool)     # the whole spec is not
    # a device's proof is the image mapped there, as its declaration says
    assert owned.refusal(Resource(RBD_MAPPING.name, "/dev/rbd0")) is None
    assert owned.refusal(Resource(RBD_MAPPING.name, "/dev/rbd1")) is not None
    _declare(monkeypatch, replace(RBD_MAPPING, maps_image=False))
    assert owned.refusal(Resource(RBD_MAPPING.name, "/dev/rbd0")) is not None
    # the one name a run gives a disk baseline's file
    mine = Resource(DISK_FILE.name, "localhost:/o/cephbench-abc123-baseline.dat")
    other = Resource(DISK_FILE.name, "localhost:/o/cephbench-abc123-thesis.tex")
    assert owned.refusal(mine) is None and owned.refusal(other) is not None
    _declare(monkeypatch, replace(DISK_FILE, only_name=None))
    assert owned.refusal(other) is None
    # a ledger kind nobody declares has no proof at all
    monkeypatch.delitem(kinds.RESOURCE_TYPES, RBD_IMAGE.name)
    assert "knows no proof" in owned.refusal(in_users_pool)


def test_the_fsid_check_follows_the_declaration(tmp_path, monkeypatch):
    owned = Ownership(("abc123",), str(tmp_path), {}, fsids=("aaaa-1",), cluster_fsid="bbbb-2")
    file = Resource(DISK_FILE.name, "localhost:/o/cephbench-abc123-baseline.dat")
    image = Resource(RBD_IMAGE.name, "cephbench-abc123-g1/cephbench-abc123-g1-img0")
    assert "this is cluster bbbb-2" in owned.refusal(image)
    assert owned.refusal(file) is None
    launch.check_cleanable(tmp_path, owned, [file])
    with pytest.raises(UserError, match="this is cluster bbbb-2"):
        launch.check_cleanable(tmp_path, owned, [file, image])
    _declare(monkeypatch, replace(DISK_FILE, on_cluster=True))
    assert "this is cluster bbbb-2" in owned.refusal(file)
    with pytest.raises(UserError, match="this is cluster bbbb-2"):
        launch.check_cleanable(tmp_path, owned, [file])
    _declare(monkeypatch, replace(RBD_IMAGE, on_cluster=False))
    assert "bbbb-2" not in (owned.refusal(image) or "")
    # a baseline's cleanup reaches no cluster: what the kinds that run against none make, by their declaration
    assert launch._clusterless() == {DISK_FILE.name}


def test_a_dead_runs_leftovers_go_in_their_declared_order(tmp_path, monkeypatch):
    listed = [Resource("pool", "cephbench-1-g1"), Resource(RBD_IMAGE.name, "rbd/cephbench-1-g1-img0"),
              Resource(RBD_MAPPING.name, "/dev/rbd0"), Resource("remote-dir", "h:/tmp/cephbench-1-c1")]
    order: list[str] = []

    def run() -> list[str]:
        order.clear()
        save(tmp_path, listed)
        remove_leftovers(tmp_path, {r.kind: (lambda r: order.append(r.kind)) for r in listed}, passes=1)
        assert leftovers(tmp_path) == []
        return list(order)
    # work directories, then what the kinds made (a mapping before its image), then pools
    assert run() == ["remote-dir", RBD_MAPPING.name, RBD_IMAGE.name, "pool"]
    _declare(monkeypatch, replace(RBD_MAPPING, order=RBD_IMAGE.order + 1))
    assert run() == ["remote-dir", RBD_IMAGE.name, RBD_MAPPING.name, "pool"]


def test_an_image_goes_with_the_runs_pool_where_its_declaration_says_so(tmp_path, monkeypatch):
    listed = [Resource("pool", "cephbench-1-g1"), Resource(RBD_IMAGE.name, "cephbench-1-g1/cephbench-1-g1-img0")]
    removed: list[str] = []
    table = {"pool": lambda r: removed.append(r.kind), RBD_IMAGE.name: lambda r: removed.append(r.kind)}
    save(tmp_path, listed)
    done, _ = remove_leftovers(tmp_path, table, passes=1)
    assert removed == ["pool"] and set(done) == set(listed)     # the image went with its pool
    _declare(monkeypatch, replace(RBD_IMAGE, goes_with_pool=False))
    removed.clear()
    save(tmp_path, listed)
    remove_leftovers(tmp_path, table, passes=1)
    assert removed == [RBD_IMAGE.name, "pool"]


def test_the_command_by_hand_and_a_record_that_does_not_decode_are_the_declarations(tmp_path, monkeypatch):
    for r in kinds.RESOURCE_TYPES.values():
        assert how_to_remove(Resource(r.name, "p/n")) == r.by_hand("p/n")
    _declare(monkeypatch, replace(RBD_IMAGE, by_hand=lambda spec: f"rbd trash mv {spec}"))
    assert how_to_remove(Resource(RBD_IMAGE.name, "p/i")) == "rbd trash mv p/i"
    # a namespace's record must name its pool: resources.json that does not is refused whole, in one line
    (tmp_path / "resources.json").write_text(json.dumps([{"kind": "rados-namespace", "name": "nopool"}]))
    with pytest.raises(UserError, match="not a record cephbench wrote"):
        leftovers(tmp_path)


def test_a_runs_ledger_takes_what_the_kinds_declare_and_proves_it_by_the_declaration(monkeypatch):
    ledger = launch.run_ledger(None, "abc123")
    removed: list[str] = []
    for r in kinds.RESOURCE_TYPES.values():
        ledger.add(Resource(r.name, "cephbench-abc123-1"), lambda: None)
    assert len(ledger) == len(kinds.RESOURCE_TYPES)
    with pytest.raises(ValueError, match="not a ledger kind"):
        ledger.add(Resource("rbd-snapshot", "cephbench-abc123-1"), lambda: None)
    _declare(monkeypatch, replace(RBD_IMAGE, name="rbd-snapshot"))
    assert recovery.proof_of("rbd-snapshot") is Ownership._named
    # its guard proves an entry the run's by its declared name before the entry's remover runs
    ledger = launch.run_ledger(None, "abc123")
    ledger.add(Resource(RBD_IMAGE.name, "rbd/cephbench-abc123-img"), lambda: removed.append("ours"))
    ledger.add(Resource(RBD_IMAGE.name, "cephbench-abc123-g1/userimg"), lambda: removed.append("theirs"))
    failures = ledger.release()
    assert removed == ["ours"] and [r.name for r, _ in failures] == ["cephbench-abc123-g1/userimg"]
