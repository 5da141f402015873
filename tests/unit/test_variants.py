"""Variants before any cluster: the suite's form (named and swept), the plan's interleaving, values checked against
Ceph's own description of an option, the restore plan and its ledger record.

The `ceph config help` documents below are what the 3-OSD lab's monitor (Ceph 16.2.15) answered to
`ceph config help NAME -f json`, copied whole."""

import json

import pytest

from cephbench.suite.config import parse_suite
from cephbench.core.errors import UserError
from cephbench.suite.plan import RUN_OVERHEAD_S, VARIANT_SWITCH_S, expand
from cephbench.core.results import Test
from cephbench.core.variant_plan import (Restore, checked_value, needs_restart, previous_value, restore_argv, switch,
                                    variant_order)
from cephbench.run.options import same_value

HELP = {h["name"]: h for h in map(json.loads, [
    '{"name":"osd_max_backfills","type":"uint","level":"advanced","desc":"Maximum number of concurrent local and '
    'remote backfills or recoveries per OSD ","long_desc":"","default":1,"daemon_default":"","tags":[],'
    '"services":[],"see_also":[],"min":"","max":"","can_update_at_runtime":true,"flags":["runtime"]}',
    '{"name":"osd_op_queue","type":"str","level":"advanced","desc":"which operation priority queue algorithm to '
    'use","long_desc":"","default":"wpq","daemon_default":"","tags":[],"services":[],'
    '"see_also":["osd_op_queue_cut_off"],"enum_values":["wpq","mclock_scheduler","debug_random"],"min":"","max":"",'
    '"can_update_at_runtime":false,"flags":[]}',
    '{"name":"osd_recovery_sleep","type":"float","level":"advanced","desc":"Time in seconds to sleep before next '
    'recovery or backfill op","long_desc":"","default":0,"daemon_default":"","tags":[],"services":[],"see_also":[],'
    '"min":"","max":"","can_update_at_runtime":true,"flags":["runtime"]}',
    '{"name":"bluestore_throttle_bytes","type":"size","level":"advanced","desc":"Maximum bytes in flight before we '
    'throttle IO submission","long_desc":"","default":"67108864","daemon_default":"","tags":[],"services":[],'
    '"see_also":[],"min":"","max":"","can_update_at_runtime":true,"flags":["runtime"]}',
    '{"name":"osd_op_num_shards","type":"int","level":"advanced","desc":"","long_desc":"","default":0,'
    '"daemon_default":"","tags":[],"services":[],"see_also":[],"min":"","max":"","can_update_at_runtime":false,'
    '"flags":["startup"]}',
    '{"name":"osd_pool_default_size","type":"uint","level":"advanced","desc":"the number of copies of an object for '
    'new replicated pools","long_desc":"","default":3,"daemon_default":"","tags":[],"services":["mon"],'
    '"see_also":[],"min":0,"max":10,"can_update_at_runtime":true,"flags":["runtime"]}',
    '{"name":"bluestore_cache_autotune","type":"bool","level":"dev","desc":"Automatically tune the ratio of caches '
    'while respecting min values.","long_desc":"","default":true,"daemon_default":"","tags":[],"services":[],'
    '"see_also":["bluestore_cache_size","bluestore_cache_meta_ratio"],"min":"","max":"","can_update_at_runtime":true,'
    '"flags":[]}',
])}

SUITE = {"name": "v", "workloads": [{"type": "rados_bench", "modes": ["write", "seq"], "repeat": 2,
                                      "object_size": ["4KiB", "4MiB"], "duration": {"write": 8, "seq": 2}}]}


def suite(**extra):
    return parse_suite({**SUITE, **extra}, "s.yaml")


# ---- the plan ----------------------------------------------------------------------------------------------

def test_without_variants_the_plan_is_what_it_was():
    plan = expand(suite())
    assert all(t.variant is None for t in plan.tests)
    assert [t.id for t in plan.tests][:2] == ["001-rados_bench-write-4KiB-t16-r1", "002-rados_bench-seq-4KiB-t16-r1"]
    # the key that matches tests across runs is the one every run before variants had
    t = plan.tests[0]
    assert t.match_key() == json.dumps({"kind": t.kind, "params": dict(t.params)}, sort_keys=True)
    assert "steady_state" not in t.params


def test_every_group_runs_under_every_variant_turning_round_from_block_to_block():
    plan = expand(suite(variants=[{"name": "a", "options": [{"who": "osd", "name": "osd_max_backfills", "value": 2}]},
                                  {"name": "b"}]))
    groups = list(dict.fromkeys((t.group, t.variant, t.params["object_size"], t.repeat) for t in plan.tests))
    # 2 sizes x 2 repeats x 2 variants; A B | B A | A B | B A: each pair of blocks meets on one variant
    assert [v for _, v, _, _ in groups] == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert [(s, r) for _, _, s, r in groups] == ([(4096, 1)] * 2 + [(4096, 2)] * 2
                                                 + [(4 << 20, 1)] * 2 + [(4 << 20, 2)] * 2)
    assert len({g for g, *_ in groups}) == 8                   # a group per variant: its own pool
    ids = [t.id for t in plan.tests]
    assert ids[:4] == ["001-rados_bench-write-4KiB-t16-a-r1", "002-rados_bench-seq-4KiB-t16-a-r1",
                       "003-rados_bench-write-4KiB-t16-b-r1", "004-rados_bench-seq-4KiB-t16-b-r1"]
    # tests of two variants never match each other, here or across runs
    a, b = plan.tests[0], plan.tests[2]
    assert a.params == b.params and a.match_key() != b.match_key()
    # a change of variant is in the estimate, once per change: a b | b a | a b | b a changes 5 times
    plain = expand(suite())
    assert plan.est_duration_s - 2 * plain.est_duration_s + RUN_OVERHEAD_S == pytest.approx(5 * VARIANT_SWITCH_S)


def test_variant_order_alternates():
    assert [variant_order(["a", "b", "c"], i) for i in range(3)] == [["a", "b", "c"], ["c", "b", "a"],
                                                                     ["a", "b", "c"]]


def test_a_sweep_is_one_variant_per_value_named_from_it():
    s = suite(variants={"sweep": {"who": "osd", "name": "osd_recovery_sleep", "values": [0, 0.5, "1"]}})
    specs = s.variant_specs()
    assert [v.name for v in specs] == ["osd_recovery_sleep=0", "osd_recovery_sleep=0.5", "osd_recovery_sleep=1"]
    assert [v.value_path(v.options[0]) for v in specs] == [f"variants[0].sweep.values[{i}]" for i in range(3)]
    assert {t.variant for t in expand(s).tests} == {v.name for v in specs}


def test_a_named_variant_without_options_is_the_cluster_as_it_is():
    s = suite(variants=[{"name": "as-is"}, {"name": "two", "options": [
        {"who": "osd.1", "name": "osd_max_backfills", "value": 2}]}])
    assert [(v.name, len(v.options)) for v in s.variant_specs()] == [("as-is", 0), ("two", 1)]


def test_a_test_of_a_variant_reads_back_from_json():
    t = expand(suite(variants=[{"name": "a"}])).tests[0]
    assert Test.model_validate_json(t.model_dump_json()) == t


@pytest.mark.parametrize("variants, where, what", [
    ([{"name": "a"}, {"name": "a"}], "variants[1].name", "variant 'a' is given twice (first as variants[0])"),
    ([{"sweep": {"who": "osd", "name": "x", "values": [1]}}, {"name": "x=1"}], "variants[1].name",
     "variant 'x=1' is given twice (first as variants[0].sweep.values[0])"),
    ([{"name": "a", "lab": {"hosts": 2}}], "variants[0].lab", "variant 'a' has 2 hosts, and pool profile 'default' "
     "needs 3"),
    ([{"name": "a", "options": [{"who": "osdd", "name": "x", "value": 1}]}], "variants[0].options[0].who",
     "'osdd' is not a target of ceph config set"),
    ([{"name": "a", "options": [{"who": "osd", "name": "x", "value": 1}, {"who": "osd", "name": "x", "value": 2}]}],
     "variants[0].options[1]", "x for osd is set twice in this variant"),
    ({"sweep": {"who": "osd", "name": "x", "values": [1, 1]}}, "variants[0].sweep.values[1]", "1 is given twice"),
    ([{"name": "a", "sweep": {"who": "osd", "name": "x", "values": [1]}}], "variants[0].sweep",
     "a sweep names its variants itself"),
    ([{"name": "a b"}], "variants[0].name", "should match pattern"),
])
def test_bad_variants_are_one_line_at_their_path(variants, where, what):
    with pytest.raises(UserError) as exc:
        suite(variants=variants)
    line = exc.value.one_line()
    assert line.startswith(f"s.yaml: {where}: "), line
    assert what in line


# ---- values against `ceph config help` -------------------------------------------------------------------------

@pytest.mark.parametrize("name, value, sent", [
    ("osd_max_backfills", 2, "2"), ("osd_max_backfills", "3", "3"), ("osd_recovery_sleep", 0.25, "0.25"),
    ("osd_recovery_sleep", 1, "1.0"), ("bluestore_throttle_bytes", "32MiB", str(32 << 20)),
    ("bluestore_throttle_bytes", 65536, "65536"), ("osd_op_queue", "mclock_scheduler", "mclock_scheduler"),
    ("bluestore_cache_autotune", False, "false"), ("bluestore_cache_autotune", "yes", "true"),
    ("osd_pool_default_size", 10, "10"),
])
def test_a_value_the_option_takes_is_sent_as_ceph_reads_it(name, value, sent):
    assert checked_value(HELP[name], value) == sent


@pytest.mark.parametrize("name, value, why", [
    ("osd_max_backfills", "abc", "'abc' is not a whole number, which osd_max_backfills takes"),
    ("osd_max_backfills", 2.5, "2.5 is not a whole number"),
    ("osd_max_backfills", -1, "-1 is negative"),
    ("osd_max_backfills", True, "true is not a number"),
    ("osd_pool_default_size", 11, "11 is above osd_pool_default_size's maximum 10"),
    ("osd_op_queue", "wpqq", "'wpqq' is not one of wpq, mclock_scheduler, debug_random (did you mean 'wpq'?)"),
    ("bluestore_throttle_bytes", "32MB", "is not a size in bytes"),
    ("bluestore_cache_autotune", "maybe", "'maybe' is not true or false"),
    ("osd_recovery_sleep", "soon", "'soon' is not a number"),
])
def test_a_value_the_option_refuses_says_why(name, value, why):
    with pytest.raises(ValueError) as exc:
        checked_value(HELP[name], value)
    assert why in str(exc.value)


def test_options_read_only_at_start_need_a_restart():
    assert needs_restart(HELP["osd_op_num_shards"]) and needs_restart(HELP["osd_op_queue"])
    assert not needs_restart(HELP["osd_max_backfills"]) and not needs_restart(HELP["bluestore_cache_autotune"])


# ---- the restore plan ------------------------------------------------------------------------------------------

DUMP = [{"section": "mgr", "name": "mgr/devicehealth/enable_monitoring", "value": "false", "level": "advanced",
         "can_update_at_runtime": True, "mask": ""},
        {"section": "osd", "name": "osd_max_backfills", "value": "4", "level": "advanced",
         "can_update_at_runtime": True, "mask": "host:nohost", "location_type": "host", "location_value": "nohost"},
        {"section": "osd", "name": "osd_recovery_sleep", "value": "0.500000", "level": "advanced",
         "can_update_at_runtime": True, "mask": ""}]


def test_the_previous_value_is_exactly_the_targets_own():
    assert previous_value(DUMP, "osd", "osd_recovery_sleep") == "0.500000"
    assert previous_value(DUMP, "osd", "osd_max_backfills") is None          # only under a mask
    assert previous_value(DUMP, "osd/host:nohost", "osd_max_backfills") == "4"
    assert previous_value(DUMP, "osd.0", "osd_recovery_sleep") is None


def test_restore_puts_back_the_value_or_removes_the_setting():
    assert restore_argv("osd", "osd_recovery_sleep", "0.500000") == ["ceph", "config", "set", "osd",
                                                                      "osd_recovery_sleep", "0.500000"]
    assert restore_argv("osd", "osd_max_backfills", None) == ["ceph", "config", "rm", "osd", "osd_max_backfills"]


def test_the_ledger_record_holds_everything_a_cleanup_needs():
    for r in (Restore("osd", "osd_max_backfills", None), Restore("osd/class:ssd", "x", "a b", restart=True)):
        assert Restore.decode(r.encode()) == r
    assert json.loads(Restore("osd", "n", None).encode()) == {"who": "osd", "name": "n", "previous": None}
    with pytest.raises(ValueError):
        Restore.decode('["osd"]')


def test_switching_variants_restores_what_the_next_leaves_alone():
    a = {("osd", "x"): "1", ("osd", "y"): "2"}
    b = {("osd", "x"): "3"}
    assert switch({}, a) == ([], [("osd", "x"), ("osd", "y")])
    assert switch(a, b) == ([("osd", "y")], [("osd", "x")])
    assert switch(b, b) == ([], [])
    assert switch(b, {}) == ([("osd", "x")], [])


def test_a_daemons_value_equals_the_stored_one_as_text_or_number():
    assert same_value("0.250000", "0.25") and same_value("2", "2") and same_value("wpq", "wpq")
    assert not same_value("1", "2") and not same_value(None, "2") and not same_value("wpq", "mclock_scheduler")


# ---- a workload under some variants only -----------------------------------------------------------------------

def test_a_workload_limited_to_some_variants_runs_under_those_alone():
    s = suite(pools={"rep": {"type": "replicated", "size": 2}, "ec": {"type": "erasure", "k": 2, "m": 1}},
              variants=[{"name": "blue", "lab": {"hosts": 3}},
                        {"name": "file", "lab": {"hosts": 3, "objectstore": "filestore", "fs": "xfs"}},
                        {"name": "blue-slow", "lab": {"hosts": 3, "osd_throttle": {"osd.0": "10MiB/s"}}}],
              workloads=[{"type": "rados_bench", "name": "rep", "pool": "rep", "modes": ["write"], "duration": 5},
                         {"type": "rados_bench", "name": "ec", "pool": "ec", "modes": ["write"], "duration": 5,
                          "variants": ["blue", "blue-slow"]}])
    ran = [(t.workload, t.variant) for t in expand(s).tests]
    # the filestore build runs the replicated workload alone; each build's variants still turn round
    assert ran == [("rep", "blue"), ("rep", "blue-slow"), ("ec", "blue-slow"), ("ec", "blue"), ("rep", "file")]
    # the restriction is not a parameter: the tests match the unrestricted ones across runs
    assert "variants" not in expand(s).tests[2].params


@pytest.mark.parametrize("extra, where, what", [
    ({"variants": [{"name": "a"}, {"name": "b"}]}, "workloads[0].variants[1]",
     "the suite has no variant 'c' (variants: a, b)"),
    ({}, "workloads[0].variants[0]", "the suite has no variant 'a' (variants: none: the suite has no variants)"),
])
def test_a_workload_naming_a_variant_the_suite_lacks_is_one_line(extra, where, what):
    names = ["a", "c"] if extra else ["a"]
    with pytest.raises(UserError) as exc:
        suite(workloads=[{**SUITE["workloads"][0], "variants": names}], **extra)
    line = exc.value.one_line()
    assert line.startswith(f"s.yaml: {where}: "), line
    assert what in line


def test_baselines_run_on_the_first_lab_build_not_on_the_lab_as_found():
    from cephbench.run.launch import shape_parts
    s = suite(baseline={"network": {"hosts": ["h1", "h2"], "duration": 1}},
              variants=[{"name": "four", "lab": {"hosts": 4, "clients": 4}}, {"name": "three", "lab": {"hosts": 3}}])
    builds = {v.name: v.lab for v in s.variant_specs()}

    class Wants:            # what shape_parts asks of the run's Keeper
        def want(self, name):
            return builds[name]

    parts = shape_parts(expand(s).tests, Wants())
    # the baselines go with the first build's tests (a suite of `clients: lab` whose shape brings the client hosts)
    assert parts[0][0].variant is None and parts[0][-1].variant == "four"
    assert [{t.variant for t in p} for p in parts] == [{None, "four"}, {"three"}]
