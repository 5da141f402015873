"""Every registered kind has every hook the core calls, and every phase a direction.

A kind added without the rest fails here, not at run time (no cache drop, no efficiency, a table under "Other", a
client without cephbench-loadgen).
"""

import typing

import pytest

from cephbench.suite.config import WORKLOAD_MODELS, parse_suite
from cephbench.drivers.registry import DRIVERS, PREFLIGHT, driver_module
from cephbench.kinds import KINDS, PLUGINS, WORKLOAD_KINDS, Kind, direction_of
from cephbench.suite.plan import expand


def _literal_values(model, field):
    ann = model.model_fields[field].annotation
    found = set()

    def walk(t):
        if typing.get_origin(t) is typing.Literal:
            found.update(typing.get_args(t))
        for a in typing.get_args(t):
            walk(a)
    walk(ann)
    return found


SCHEMA_KINDS = {next(iter(_literal_values(m, "type"))): m for m in WORKLOAD_MODELS}


@pytest.mark.parametrize("kind", sorted(SCHEMA_KINDS))
def test_every_schema_kind_has_a_descriptor_and_a_driver(kind):
    assert kind in KINDS, f"{kind} is in the suite schema but has no descriptor in its kind module"
    assert kind in DRIVERS, f"{kind} has no driver in drivers/registry.py"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_descriptor_has_a_driver(kind):
    assert kind in DRIVERS


@pytest.mark.parametrize("kind", sorted(SCHEMA_KINDS))
def test_every_kind_that_runs_for_a_duration_runs_in_steady_state_rounds(kind):
    """drivers/rounds.py runs any kind's phases in rounds: a kind with a duration names the phases that may."""
    desc, model = KINDS[kind], SCHEMA_KINDS[kind]
    if "duration" in model.model_fields:
        assert desc.steady_phases, f"{kind} runs for a duration but names no steady_phases"
        assert desc.steady_phases <= set(desc.directions), f"{kind}: steady_phases that are no phases"
    else:
        assert not desc.steady_phases, f"{kind} has no duration to make rounds of"


@pytest.mark.parametrize("kind", sorted(SCHEMA_KINDS))
def test_a_kind_without_phases_that_runs_in_rounds_names_its_one_phase(kind):
    """The plan gives a phaseless kind's tests its only_phase: without it they would have no direction (the cluster
    watch's capacity stop is for writing tests) and steady_state would be dropped from every test."""
    desc = KINDS[kind]
    if desc.phase_field is not None:
        assert desc.only_phase is None, f"{kind} has phases of its own ({desc.phase_field}) and an only_phase"
        return
    if desc.steady_phases:
        assert desc.only_phase in desc.steady_phases, f"{kind} runs in rounds but names no only_phase among them"
    if desc.only_phase is not None:
        assert direction_of(kind, desc.only_phase) is not None


@pytest.mark.parametrize("kind", sorted(SCHEMA_KINDS))
def test_the_fields_a_kind_names_for_the_core_are_fields_of_its_model(kind):
    """cluster/limits.py checks object_size_params against osd_max_object_size, and the plan labels test ids by
    `labels`: a misspelt field would silently escape both."""
    desc, fields = KINDS[kind], SCHEMA_KINDS[kind].model_fields
    named = set(desc.object_size_params) | set(desc.labels)
    assert named <= set(fields), f"{kind} names {sorted(named - set(fields))}, which its model lacks"


@pytest.mark.parametrize("kind", sorted(SCHEMA_KINDS))
def test_every_phase_of_the_schema_has_a_direction(kind):
    desc = KINDS[kind]
    if desc.phase_field is None:
        return
    phases = _literal_values(SCHEMA_KINDS[kind], desc.phase_field)
    assert phases, f"{kind}.{desc.phase_field} lists no phases"
    missing = sorted(p for p in phases if direction_of(kind, p) is None)
    assert not missing, f"{kind}: phases without a direction in its KIND: {missing}"


def test_workload_kinds_are_exactly_the_schema_kinds():
    assert set(WORKLOAD_KINDS) == set(SCHEMA_KINDS)


def test_a_kind_without_a_descriptor_fails_validation_not_the_run():
    from cephbench.core.errors import UserError
    with pytest.raises(UserError, match="unknown type 'fio_cephfs'"):
        parse_suite({"name": "t", "workloads": [{"type": "fio_cephfs"}]}, "s.yaml")


def test_plan_uses_the_descriptor_phase_fields_and_repeats():
    suite = parse_suite({"name": "t", "workloads": [
        {"type": "rados_bench", "modes": ["write", "seq"], "duration": {"write": "10s", "seq": "3s"}, "repeat": 2},
        {"type": "osd_bench", "repeat": 3}]}, "s.yaml")
    plan = expand(suite)
    rados = [t for t in plan.tests if t.kind == "rados_bench"]
    assert [(t.params["phase"], t.params["duration_s"], t.repeat) for t in rados] == [
        ("write", 10.0, 1), ("seq", 3.0, 1), ("write", 10.0, 2), ("seq", 3.0, 2)]
    [osd] = [t for t in plan.tests if t.kind == "osd_bench"]      # repeats are rounds inside one test
    assert osd.params["repeat"] == 3 and osd.repeat == 1
    # one estimate: the plan's is the run's own start and end plus its tests', each holding its group's set-up once
    from cephbench.suite.plan import RUN_OVERHEAD_S, estimate_s
    assert plan.est_duration_s == pytest.approx(RUN_OVERHEAD_S + sum(t.est_duration_s for t in plan.tests))
    assert estimate_s(plan.tests) == plan.est_duration_s
    # the write holds the group's set-up; the seq, besides its 3 s, the top-up its 10 s write will not feed it
    from cephbench.kinds.rados_bench import topup_estimate_s
    topup = topup_estimate_s(4 * 1024**2, 16, 10.0, 3.0)
    assert topup > 0
    assert rados[0].est_duration_s > rados[1].est_duration_s - topup - 3.0 + 10.0 - 1e-9


def test_validate_warns_where_a_seq_would_run_out():
    from cephbench.suite.plan import warnings
    short = expand(parse_suite({"name": "t", "workloads": [{"type": "rados_bench", "duration": "5s"}]}, "s.yaml"))
    [w] = warnings(short)
    assert w.startswith("002-rados_bench-seq-4MiB-t16: seq reads only the 4MiB objects the 5 s write made")
    assert "duration: {write: 30s, seq: 5s" in w
    long = expand(parse_suite({"name": "t", "workloads": [
        {"type": "rados_bench", "duration": {"write": "30s", "seq": "5s", "rand": "5s"}}]}, "s.yaml"))
    assert warnings(long) == []
    from pathlib import Path
    from cephbench.suite.config import load_suite
    quick = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
    assert warnings(expand(load_suite(quick))) == []


@pytest.mark.parametrize("size,write_s", [("4MiB", 8), ("4KiB", 8), ("128KiB", 12)])
def test_the_old_quarter_rule_warns_because_seqs_following_it_ran_out(size, write_s):
    """Write 8 s, seq 2 s (the old rule: a seq at most a quarter of its write) ran out of objects in 10 of 36 seq
    results: a seq reads at most the objects its write made, and reads of them ran more than 4x faster (4 MiB seqs
    at 4.5x, 64 KiB at 8.5x, 4 KiB at 7.8x on the lab). The warning counts in objects at those rates."""
    from cephbench.suite.plan import warnings
    plan = expand(parse_suite({"name": "t", "workloads": [
        {"type": "rados_bench", "modes": ["write", "seq"], "object_size": size,
         "duration": {"write": f"{write_s}s", "seq": "2s"}}]}, "s.yaml"))
    [w] = warnings(plan)
    assert "objects" in w and "seq: 2s" in w


@pytest.mark.parametrize("kind", sorted(SCHEMA_KINDS))
def test_every_kind_that_accepts_clients_says_what_a_client_needs(kind):
    """hosts/fanout.py starts a tool on a client through cephbench-loadgen's `at`: a kind that accepts `clients:` but
    whose needs lack loadgen got no copy of it there, and the run raised ValueError ("no cephbench-loadgen path")."""
    from cephbench.hosts.clients import needs_of
    from cephbench.core.results import Test
    if "clients" not in SCHEMA_KINDS[kind].model_fields:
        return
    test = Test(id="t", index=0, workload="w", kind=kind, group="g", params={"clients": 1})
    assert needs_of(test).loadgen, f"{kind} accepts clients: but says nothing of what a client host needs"


def missing_hooks(plugin) -> list[str]:
    """What the core reads of a kind module that `plugin` lacks: its descriptor, its schema model (or None), its
    client needs when its model accepts `clients:`, its driver's run_group, and a callable preflight if it has one."""
    missing = []
    if not isinstance(getattr(plugin, "KIND", None), Kind):
        return ["KIND"]
    if not hasattr(plugin, "MODEL"):
        missing.append("MODEL")
    elif plugin.MODEL is not None:
        if plugin.MODEL.descriptor is not plugin.KIND:
            missing.append("MODEL.descriptor")
        if "clients" in plugin.MODEL.model_fields and not callable(getattr(plugin, "needs", None)):
            missing.append("needs")
    try:
        driver = driver_module(plugin)
    except (AttributeError, ImportError):
        return missing + ["DRIVER"]
    if not callable(getattr(driver, "run_group", None)):
        missing.append("run_group")
    if hasattr(driver, "preflight") and not callable(driver.preflight):
        missing.append("preflight")
    return missing


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.KIND.name)
def test_every_registered_kind_has_every_hook_the_core_calls(plugin):
    assert missing_hooks(plugin) == [], f"kinds/{plugin.KIND.name}.py lacks {missing_hooks(plugin)}"
    assert plugin.KIND.name in DRIVERS
    assert (plugin.MODEL is None) == (plugin.KIND.level == "Baselines")


def test_a_kind_accepting_clients_without_its_client_hook_is_caught():
    import types
    from cephbench.kinds import rbd_bench
    stripped = types.ModuleType("kinds.rbd_bench_without_needs")
    stripped.__dict__.update({k: v for k, v in vars(rbd_bench).items() if k != "needs"})
    assert missing_hooks(stripped) == ["needs"]
    stripped.DRIVER = "no_such_driver"
    assert missing_hooks(stripped) == ["needs", "DRIVER"]


def test_the_preflight_hooks_are_the_drivers_own():
    assert set(PREFLIGHT) == {"rbd_bench", "fio_rbd", "qemu_rbd", "rgw", "disk_baseline", "net_baseline"}


def test_kind_modules_import_no_driver_and_no_config():
    """Drivers and config import kinds: a kind module that imported either would close a cycle (it names its
    driver in DRIVER instead)."""
    from test_module_graph import imports_of, module_files
    modules = module_files()
    for name, path in modules.items():
        if name == "cephbench.kinds" or name.startswith("cephbench.kinds."):
            above = sorted(m for m in imports_of(name, path, modules)
                           if m.startswith(("cephbench.drivers", "cephbench.suite.config", "cephbench.hosts.clients")))
            assert not above, f"{name} imports {above}"


def test_kinds_are_in_report_order_by_level_then_as_registered():
    """The terminal's tables follow KINDS: the baselines first, whatever the registry's order."""
    from cephbench.kinds import LEVEL_ORDER
    levels = [LEVEL_ORDER.index(k.level) for k in KINDS.values()]
    assert levels == sorted(levels)
    assert list(KINDS) == ["disk_baseline", "net_baseline", "rados_bench", "fio_rados", "rados_load_gen", "osd_bench",
                           "rbd_bench", "fio_rbd", "qemu_rbd", "rgw"]
