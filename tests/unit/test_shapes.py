"""Lab shapes as variants (issue 17, item 3), without a lab: a shape's bad input is one line at its YAML path in
`lab up`'s own words, a shape on a cluster that is not a lab is refused before anything changes, which change
takes the lab from one variant to the next (nothing, a throttle, a rebuild), and the order the plan gives them."""

from __future__ import annotations

import json

import pytest

from cephbench.suite.config import LabShape, parse_suite, read_yaml
from cephbench.lab.throttle import DriveLimit, DriveRef
from cephbench.suite.plan import LAB_PUT_BACK_S, VARIANT_SWITCH_S, expand, rebuild_s
from cephbench.cluster.recovery import how_to_remove
from cephbench.core.resources import Resource
from cephbench.suite.shape_plan import LabBuild, on_release, rebuilds, restore_commands, shape_classes, step, steps
from clirun import cephbench

W = "workloads:\n  - {type: rados_bench, modes: [write], duration: 2s}\n"
BAD = [
    ("{name: a, lab: {hosts: 3, public_net: 1gbps}}",
     "variants[0].lab.public_net: rate '1gbps' is in bytes per second, not bits (a link's rate is in bits: write 1gbit)"),
    ("{name: a, lab: {hosts: 3, cluster_net: fast}}",
     "variants[0].lab.cluster_net: rate 'fast' is not a number with a unit (write e.g. 1gbit, 100mbit or 500kbit)"),
    ("{name: a, lab: {public_net: 1gbit}}",
     "variants[0].lab.public_net: public_net describes a multi-host lab (add hosts N (e.g. hosts 3))"),
    ("{name: a, lab: {hosts: 3, osds: 4}}",
     "variants[0].lab.osds: osds is for the one-host lab; a multi-host lab has hosts x osds_per_host OSDs "
     "(give osds_per_host instead)"),
    ("{name: a, lab: {hosts: 3, osd_throttle: {osd.3: 8MiB/s}}}",
     "variants[0].lab.osd_throttle: osd.3: the lab has no osd.3 (its OSDs are osd.0, osd.1, osd.2)"),
    ("{name: a, lab: {hosts: 3, osd_throttle: {osd.1.db: 8MiB/s}}}",
     "variants[0].lab.osd_throttle: osd.1.db: osd.1 has no separate WAL/DB device (start the lab with db_device, "
     "or throttle its data drive (osd.N))"),
    ("{name: a, lab: {hosts: 3, osd_throttle: {osd.1: 8Mb/s}}}",
     "variants[0].lab.osd_throttle: rate '8Mb/s' is in bits: a drive's rate is in bytes per second "
     "(write e.g. 50MiB/s)"),
    ("{name: a, lab: {hosts: 3, db_device: 2GB}}",
     "variants[0].lab.db_device: '2GB' is ambiguous: GB means 10^9 bytes to some tools and 2^30 to others "
     "(rados bench); write 2GiB"),
    ("{name: a, lab: {hosts: 3, objectstore: filestore, fs: zfs}}",
     "variants[0].lab.fs: FileStore cannot run on zfs here: Debian's ceph-osd is built without ZFS support and "
     "this kernel has no zfs module (use fs xfs, ext4 or btrfs)"),
    ("{name: a, lab: {hosts: 3, fs: xfs}}",
     "variants[0].lab.fs: BlueStore uses its drive raw, with no file system, so fs xfs has no meaning "
     "(use objectstore filestore fs ..., or leave out fs)"),
    ("{name: a, lab: {hosts: 3, objectstore: filstore}}",
     "variants[0].lab.objectstore: 'filstore' is not one of bluestore, filestore (did you mean 'filestore'?)"),
    ("{name: a, lab: {hosts: 3, public_nett: 1gbit}}",
     "variants[0].lab.public_nett: unknown key (did you mean 'public_net'?); the keys here are client_net, clients, "
     "cluster_net, cpu_limit, db_device, fs, host_load, hosts, objectstore, osd_size, osd_throttle, osds, "
     "osds_per_host, public_net, release, rgw"),
    ("{name: a, lab: {release: quincy}}",
     "variants[0].lab.release: release 'quincy' is not offered: offered are pacific, reef, tentacle (choose one of "
     "those)"),
    ("{name: a, lab: {release: reeef}}",
     "variants[0].lab.release: release 'reeef' is not offered: offered are pacific, reef, tentacle (did you mean "
     "reef?)"),
    ("{name: a, lab: {hosts: 3, osd_size: 1GiB}}",
     "variants[0].lab.osd_size: osd_size must be at least 2GiB for BlueStore, got 1GiB"),
    ("{name: a, lab: {hosts: 2}}",
     "variants[0].lab: variant 'a' has 2 hosts, and pool profile 'default' needs 3 (each replica on its own host); "
     "give the shape more, or run that pool in another suite"),
    ("{name: a, lab: {hosts: 3, client_net: 100mbit}}",
     "variants[0].lab.client_net: client_net shapes the client hosts' links, and this lab has none "
     "(add clients N (e.g. clients 2))"),
    ("{name: a, lab: {hosts: 0}}", "variants[0].lab.hosts: hosts must be 1 to 253, got 0 (e.g. hosts 3)"),
    ("{name: a, lab: {osds: 0}}", "variants[0].lab.osds: osds must be at least 1, got 0"),
    ("{name: a, lab: {hosts: 3, cluster_net: 100mbit/2parsecs}}",
     "variants[0].lab.cluster_net: delay '2parsecs' is not a number with a unit (us, ms or s) (write e.g. 0.2ms or "
     "1ms)"),
    ("{name: a, lab: {hosts: 3, cpu_limit: {osd.3: 0.5}}}",
     "variants[0].lab.cpu_limit: osd.3: the lab has no such OSD (its OSDs are osd.0 to osd.2)"),
    ("{name: a, lab: {hosts: 3, host_load: {c1: 1}}}",
     "variants[0].lab.host_load: c1: the lab has no such host (its OSD hosts are h1 to h3, and it has no client "
     "hosts (clients))"),
    ("{sweep: {who: osd, name: osd_max_backfills, values: [1, 2]}, lab: {hosts: 3}}",
     "variants[0].sweep: a sweep names its variants itself (NAME=VALUE); give name, options and lab, or a sweep, "
     "not both"),
]


@pytest.mark.parametrize("variant, expected", BAD)
def test_a_bad_lab_shape_is_one_line_at_its_yaml_path(tmp_path, variant, expected):
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"name: t\nvariants:\n  - {variant}\n{W}")
    res = cephbench("validate", suite)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stderr.strip().splitlines() == [f"cephbench: {suite}: {expected}"]


def test_a_lab_shape_on_a_cluster_that_is_not_a_lab_is_refused_before_anything(tmp_path):
    conf = tmp_path / "cluster" / "ceph.conf"      # no lab.json beside it: not a cephbench lab
    conf.parent.mkdir()
    conf.write_text("[global]\nmon host = 192.0.2.1\n")     # TEST-NET: nothing answers, nothing is asked
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"name: t\nvariants:\n  - {{name: as-is}}\n  - {{name: five, lab: {{hosts: 5}}}}\n{W}")
    out = tmp_path / "runs"
    res = cephbench("run", suite, "-c", conf, "--out", out)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stderr.strip().splitlines()[-1] == (
        f"cephbench: variants[1].lab: variant 'five' has a lab shape, and the target {conf} is not a cephbench lab, "
        "which cephbench could rebuild (run it with --lab or --lab-dir DIR, or drop the variants' lab: keys for "
        "this cluster)")
    assert not out.exists()


def test_a_bad_lab_up_flag_is_refused_in_the_flags_words_by_the_same_checks():
    from cephbench.core.errors import UserError
    from cephbench.lab.multihost import multi_host, parse_values
    for given, line in [
        ({"hosts": 0}, "--hosts: --hosts must be 1 to 253, got 0 (e.g. --hosts 3)"),
        ({"public_net": "1gbit"}, "--public-net: --public-net describes a multi-host lab (add --hosts N (e.g. --hosts "
                                  "3))"),
        ({"hosts": 3, "osd_throttle": ["osd.1.db=8MiB/s"]},
         "--osd-throttle: osd.1.db: osd.1 has no separate WAL/DB device (start the lab with --db-device, or throttle "
         "its data drive (osd.N))"),
        ({"hosts": 3, "fs": "xfs"}, "--fs: BlueStore uses its drive raw, with no file system, so --fs xfs has no "
                                    "meaning (use --objectstore filestore --fs ..., or leave out --fs)")]:
        with pytest.raises(UserError) as e:
            multi_host(parse_values(given))
        assert e.value.one_line() == line


# ---- a shape is parsed once, when the suite is read ---------------------------------------------------------

def test_a_shape_is_typed_when_the_suite_is_read_and_never_parsed_again(monkeypatch):
    """Issue 37: the lab takes the variant's build as it is; variant_specs() parses nothing (it used to turn the
    `lab:` mapping back into `lab up` flags and parse them again, 30 times for seed-han-2012 before it started)."""
    from cephbench.lab import cpulimit, multihost, rates, throttle
    from cephbench.lab.rates import LinkShape
    suite = parse_suite(read_yaml(SUITE.replace("osd.1: 8MiB/s", "osd.1: '8MiB/s,200iops'"), "t"), "t")
    lab = suite.variants[2].lab
    assert lab.public_net == LinkShape(200 * 10**6)
    assert [(str(t.drive), t.limit) for t in lab.osd_throttle] == [("osd.1", DriveLimit(8 * 2**20, 200))]

    def parsed_again(*_a, **_k):
        raise AssertionError("a shape parsed after the suite was read")
    for module, name in ((rates, "parse_link"), (throttle, "parse_throttle_specs"), (multihost, "parse_value"),
                         (multihost, "multi_host"), (cpulimit, "parse_cpu_limits")):
        monkeypatch.setattr(module, name, parsed_again)
    specs = {v.name: v.lab for v in suite.variant_specs()}
    assert specs["slow"] is lab.build and specs["slow"].multi.public == LinkShape(200 * 10**6)
    expand(suite)


def test_a_shape_is_written_back_as_a_suite_gives_it_and_reads_back_the_same():
    """run.json keeps the suite as its models dump it, and a resumed run reads that again."""
    text = SUITE.replace("{hosts: 3, public_net: 200mbit}", "{hosts: 3, public_net: 0.2gbit/200us, osd_size: 4096MiB, "
                         "cpu_limit: {osd.2: 0.08}, host_load: {h2: 1.5}, cluster_net: unshaped, db_device: 2GiB}")
    suite = parse_suite(read_yaml(text, "t"), "t")
    dumped = suite.model_dump(mode="json")
    assert {k: v for k, v in dumped["variants"][0]["lab"].items() if v is not None} == {
        "hosts": 3, "osds_per_host": 1, "clients": 0, "osd_size": "4GiB", "public_net": "200mbit/200us",
        "cluster_net": "unshaped", "cpu_limit": {"osd.2": 0.08}, "host_load": {"h2": 1.5}, "db_device": "2GiB",
        "objectstore": "bluestore", "rgw": True}
    assert dumped["variants"][2]["lab"]["osd_throttle"] == {"osd.1": "8MiB/s"}
    again = parse_suite(json.loads(json.dumps(dumped)), "run.json suite")
    assert [v.lab for v in again.variant_specs()] == [v.lab for v in suite.variant_specs()]
    assert again.model_dump(mode="json") == dumped


def test_lab_up_flags_and_a_suite_shape_make_the_same_spec_and_a_running_labs_record_gives_it_back():
    from cephbench.lab.multihost import multi_host, parse_values, spec_from_topology, topology_json
    from cephbench.lab.netns import plan
    b = shape("{hosts: 3, clients: 1, public_net: 1gbit/0.2ms, cluster_net: 100mbit, client_net: 50mbit, "
              "objectstore: filestore, fs: ext4, db_device: 2GiB, osd_throttle: {osd.1: 8MiB/s, osd.0.db: 200iops}, "
              "cpu_limit: {osd.2: 0.5}, host_load: {c1: 1}}")
    flags = parse_values({"hosts": 3, "clients": 1, "public_net": "1gbit/0.2ms", "cluster_net": "100mbit",
                          "client_net": "50mbit", "objectstore": "filestore", "fs": "ext4", "db_device": "2GiB",
                          "osd_throttle": ("osd.1=8MiB/s", "osd.0.db=200iops"), "cpu_limit": ("osd.2=0.5",),
                          "host_load": ("c1=1",)})
    m = b.multi
    assert multi_host(flags) == m
    topo = plan("ab12cd", 1, m.hosts, m.public, m.cluster, m.separate_cluster, m.clients, m.client)
    recorded = json.loads(json.dumps(topology_json(m, topo, True, {}, None)))
    assert spec_from_topology(recorded, m.throttles) == LabBuild.from_json(b.to_json()).multi
    assert LabBuild.from_json(b.to_json()).multi == m.__class__.from_json(m.to_json())


# ---- which change takes the lab from one build to the next -------------------------------------------------

def shape(text: str) -> LabBuild:
    return LabShape.model_validate(read_yaml(text, "t")).build


BASE = shape("{hosts: 3, public_net: 200mbit}")
SLOW = shape("{hosts: 3, public_net: 200mbit, osd_throttle: {osd.1: 8MiB/s}}")
SLOWER = shape("{hosts: 3, public_net: 200mbit, osd_throttle: {osd.1: 4MiB/s, osd.2: 200iops}}")
PRIVATE = shape("{hosts: 3, public_net: 200mbit, cluster_net: 200mbit}")


def test_throttles_alone_are_a_throttle_and_anything_else_a_rebuild():
    assert step(BASE, shape("{hosts: 3, public_net: 0.2gbit}")).kind == "none"     # the same rate, spelt otherwise
    s = step(BASE, SLOW)
    assert (s.kind, s.clear) == ("throttle", ())
    assert [(t.drive, t.limit) for t in s.set] == [(DriveRef(1), DriveLimit(8 * 2**20, None))]
    s = step(SLOWER, SLOW)
    assert s.kind == "throttle" and s.clear == (DriveRef(2),) and [t.limit.bytes_per_s for t in s.set] == [8 * 2**20]
    assert step(SLOW, BASE).clear == (DriveRef(1),)
    for other in (PRIVATE, shape("{hosts: 3}"), shape("{hosts: 3, public_net: 200mbit, db_device: 2GiB}"),
                  shape("{hosts: 3, public_net: 200mbit, osds_per_host: 2}"),
                  shape("{hosts: 3, public_net: 200mbit, objectstore: filestore}"),
                  shape("{hosts: 3, public_net: 200mbit, osd_size: 4GiB}"), shape("{osds: 3}")):
        assert step(BASE, other).kind == "rebuild", other
    assert step(None, BASE).kind == "up" and step(BASE, None).kind == "down" and step(None, None).kind == "none"


def test_a_run_rebuilds_once_per_change_of_build_and_puts_the_users_lab_back():
    plan = steps(BASE, BASE, [("shared", BASE), ("slow", SLOW), ("shared", BASE), ("private", PRIVATE)])
    assert [(n, s.kind) for n, s in plan] == [("shared", "none"), ("slow", "throttle"), ("shared", "throttle"),
                                             ("private", "rebuild"), ("", "rebuild")]
    assert rebuilds(plan) == 2
    # the run started the lab (nothing to put back): it goes down at the end
    plan = steps(None, PRIVATE, [("private", PRIVATE), ("shared", BASE)])
    assert [(n, s.kind) for n, s in plan] == [("private", "none"), ("shared", "rebuild"), ("", "down")]
    # the same shape twice in a row is not rebuilt; a variant without a shape runs on the user's lab
    assert [s.kind for _, s in steps(PRIVATE, BASE, [("a", PRIVATE), ("b", PRIVATE), ("c", None)])] == \
        ["rebuild", "none", "none", "none"]


def test_a_build_survives_its_ledger_record_and_says_how_to_put_it_back_by_hand():
    b = shape("{hosts: 3, osds_per_host: 2, public_net: 1gbit, cluster_net: unshaped, db_device: 2GiB, "
              "objectstore: filestore, fs: ext4, osd_size: 4GiB, rgw: false, osd_throttle: {osd.1: 8MiB/s}}")
    assert LabBuild.from_json(json.loads(json.dumps(b.to_json()))) == b
    record = json.dumps({"dir": "/tmp/lab", "original": b.to_json()})
    assert how_to_remove(Resource("lab-shape", record)) == (
        "cephbench lab down --dir /tmp/lab && cephbench lab up --dir /tmp/lab --osd-size 4GiB --no-rgw --hosts 3 "
        "--osds-per-host 2 --public-net 1gbit --cluster-net unshaped --objectstore filestore --fs ext4 "
        "--db-device 2GiB --osd-throttle osd.1=8MiB/s")
    assert restore_commands(json.dumps({"dir": "/tmp/lab", "original": None})) == ["cephbench lab down --dir /tmp/lab"]


def test_a_shape_with_a_cpu_limit_and_a_neighbour_is_a_build_of_its_own():
    b = shape("{hosts: 3, cpu_limit: {osd.2: 0.08}, host_load: {h2: 1.5}}")
    assert b.up_flags() == ["--hosts", "3", "--cpu-limit", "osd.2=0.08", "--host-load", "h2=1.5"]
    assert LabBuild.from_json(json.loads(json.dumps(b.to_json()))) == b
    assert step(shape("{hosts: 3}"), b).kind == "rebuild"


# ---- the order of the plan --------------------------------------------------------------------------------

SUITE = """name: t
variants:
  - {name: shared, lab: {hosts: 3, public_net: 200mbit}}
  - {name: private, lab: {hosts: 3, public_net: 200mbit, cluster_net: 200mbit}}
  - {name: slow, lab: {hosts: 3, public_net: 200mbit, osd_throttle: {osd.1: 8MiB/s}}}
  - {name: backfills, options: [{who: osd, name: osd_max_backfills, value: 2}]}
workloads:
  - {type: rados_bench, modes: [write], object_size: [4KiB, 4MiB], duration: 2s, repeat: 2}
"""


def test_the_plan_runs_one_build_after_another_and_interleaves_within_a_build():
    suite = parse_suite(read_yaml(SUITE, "t"), "t")
    specs = suite.variant_specs()
    assert shape_classes([(v.name, v.lab) for v in specs]) == [["shared", "slow"], ["private"], ["backfills"]]
    plan = expand(suite)
    order = [(t.variant, t.params["object_size"], t.repeat) for t in plan.tests]
    k4, m4 = 4096, 4 * 2**20
    assert order == [
        # shared and slow differ only in a throttle: interleaved A B | B A as options are
        ("shared", k4, 1), ("slow", k4, 1), ("slow", k4, 2), ("shared", k4, 2),
        ("shared", m4, 1), ("slow", m4, 1), ("slow", m4, 2), ("shared", m4, 2),
        ("private", k4, 1), ("private", k4, 2), ("private", m4, 1), ("private", m4, 2),
        ("backfills", k4, 1), ("backfills", k4, 2), ("backfills", m4, 1), ("backfills", m4, 2)]
    # each build's first test carries one rebuild in the estimate (the first, the lab's putting back at the run's
    # end too); a change of variant within a build that sets options a switch, one of throttles alone next to
    # nothing (each 4 KiB write of a shape also waits for its 64 KiB in flight: hundredths of a second)
    extra = [t.est_duration_s - plan.tests[-1].est_duration_s for t in plan.tests]
    # (a rebuild of the 3-host build: its 3 OSDs' start, suite/plan.py rebuild_s)
    rebuild = rebuild_s(shape("{hosts: 3, public_net: 200mbit}"))
    assert extra[:3] == pytest.approx([rebuild + LAB_PUT_BACK_S, 0.0, 0.0], abs=0.05)
    assert extra[8] == pytest.approx(rebuild, abs=0.05)
    # backfills runs on the user's lab, whose build the plan does not know: LAB_REBUILD_S, and sets an option
    assert round(extra[12], 3) == round(rebuild_s(None) + VARIANT_SWITCH_S, 3)


def test_without_shapes_the_plan_is_unchanged():
    suite = parse_suite(read_yaml(SUITE.replace("lab: {hosts: 3, public_net: 200mbit, cluster_net: 200mbit}",
                                                "options: []").replace(
        ", lab: {hosts: 3, public_net: 200mbit, osd_throttle: {osd.1: 8MiB/s}}", "").replace(
        ", lab: {hosts: 3, public_net: 200mbit}", ""), "t"), "t")
    variants = [t.variant for t in expand(suite).tests if t.params["object_size"] == 4096]
    assert variants == ["shared", "private", "slow", "backfills", "backfills", "slow", "private", "shared"]


# ---- release against release (issue 27) ---------------------------------------------------------------------

def test_a_shape_of_another_release_is_a_rebuild_with_that_release_and_the_way_back_names_the_labs():
    pacific, reef = shape("{osds: 1, release: pacific}"), shape("{osds: 1, release: reef}")
    assert reef.release == "reef" and step(pacific, reef).kind == "rebuild" and step(reef, reef).kind == "none"
    assert reef.up_flags() == ["--osds", "1", "--release", "reef"]
    assert LabBuild.from_json(reef.to_json()) == reef
    assert "release" not in shape("{osds: 1}").to_json()       # a build without one reads as before
    plan = steps(pacific, pacific, [("pacific", pacific), ("reef", reef), ("pacific", pacific)])
    assert [(n, s.kind, s.build.release if s.build else None) for n, s in plan] == [
        ("pacific", "none", "pacific"), ("reef", "rebuild", "reef"), ("pacific", "rebuild", "pacific"),
        ("", "none", "pacific")]
    record = json.dumps({"dir": "/l", "original": pacific.to_json()})
    assert restore_commands(record)[-1] == "cephbench lab up --dir /l --osds 1 --release pacific"


def test_a_shape_that_names_no_release_keeps_the_labs():
    assert on_release(shape("{osds: 2}"), "reef").release == "reef"
    assert on_release(shape("{osds: 2, release: tentacle}"), "reef").release == "tentacle"
    assert on_release(None, "reef") is None


def test_a_release_variant_on_a_cluster_that_is_not_a_lab_is_refused_before_anything(tmp_path):
    conf = tmp_path / "cluster" / "ceph.conf"
    conf.parent.mkdir()
    conf.write_text("[global]\nmon host = 192.0.2.1\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"name: t\nvariants:\n  - {{name: reef, lab: {{release: reef}}}}\n{W}")
    out = tmp_path / "runs"
    res = cephbench("run", suite, "-c", conf, "--out", out)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stderr.strip().splitlines()[-1].startswith(
        "cephbench: variants[0].lab: variant 'reef' has a lab shape, and the target")
    assert not out.exists()


RELEASES = """name: t
variants:
  - {name: pacific, lab: {osds: 1, release: pacific}}
  - {name: reef, lab: {osds: 1, release: reef}}
  - {name: tentacle, lab: {osds: 1, release: tentacle}}
pools:
  one: {type: replicated, size: 1, pg_num: 8}
workloads:
  - {type: rados_bench, pool: one, modes: [write], object_size: [4KiB, 4MiB], duration: 2s, repeat: 3}
"""


def test_releases_take_turns_repeat_by_repeat_and_each_turn_is_a_rebuild():
    """Issue 27 item 4: release against release interleaved across repeats (A B C | C B A | A B C), so the
    cluster's drift over the hours of a run falls on every release alike; each turn is a rebuild."""
    plan = expand(parse_suite(read_yaml(RELEASES, "t"), "t"))
    order = [(t.repeat, t.variant, t.params["object_size"]) for t in plan.tests]
    k4, m4 = 4096, 4 * 2**20
    turns = [["pacific", "reef", "tentacle"], ["tentacle", "reef", "pacific"], ["pacific", "reef", "tentacle"]]
    assert order == [(r, v, size) for r, names in enumerate(turns, 1) for v in names for size in (k4, m4)]
    assert len({t.id for t in plan.tests}) == len(plan.tests)
    one_osd = rebuild_s(shape("{osds: 1, release: reef}"))     # the lab down and up again with its one OSD
    rebuilt = [t for t in plan.tests if t.est_duration_s - plan.tests[-1].est_duration_s >= one_osd]
    assert len(rebuilt) == 9              # every (repeat, release) block starts with one


def test_releases_one_after_the_other_when_the_suite_says_so():
    text = RELEASES.replace("name: t\n", "name: t\nsettings: {interleave_builds: false}\n")
    order = [(t.variant, t.repeat) for t in expand(parse_suite(read_yaml(text, "t"), "t")).tests]
    assert [v for v, _ in order][:6] == ["pacific"] * 6 and [v for v, _ in order][-6:] == ["tentacle"] * 6


def test_builds_of_one_release_stay_one_after_the_other_unless_the_suite_asks():
    suite = parse_suite(read_yaml(SUITE, "t"), "t")
    assert [t.variant for t in expand(suite).tests][:4] == ["shared", "slow", "slow", "shared"]
    text = SUITE.replace("name: ", "settings: {interleave_builds: true}\nname: ", 1)
    order = [(t.variant, t.repeat) for t in expand(parse_suite(read_yaml(text, "t"), "t")).tests
             if t.params["object_size"] == 4096]
    assert order == [("shared", 1), ("slow", 1), ("private", 1), ("backfills", 1),
                     ("backfills", 2), ("private", 2), ("slow", 2), ("shared", 2)]
