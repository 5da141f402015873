"""The first lab build is not counted when the lab runs in it already (issue 36 item 4): `run --lab-dir` starts the
lab in the first variant's build before it prints its estimate, and the plan counted a rebuild there too. On the
lab, seed-homelab-2018's first group was estimated at 24 s and took 9.2 s; its filestore block's first group, after
a real rebuild, took 27.9 s against 24."""

from conftest import REPO
from cephbench.suite.config import load_suite
import pytest

from cephbench.suite.plan import LAB_REBUILD_S, REBUILD_PER_OSD_S, expand, first_build_ready, rebuild_s


def test_the_first_build_ready_takes_one_rebuild_off_the_first_variant_test_alone():
    suite = load_suite(REPO / "suites" / "seed-homelab-2018.yaml")
    tests = expand(suite).tests
    first = next(t for t in tests if t.variant is not None)
    build = {v.name: v.lab for v in suite.variant_specs()}[first.variant]
    ready = first_build_ready(tests, build)
    diffs = [(t.id, a.est_duration_s - t.est_duration_s) for t, a in zip(ready, tests)
             if a.est_duration_s != t.est_duration_s]
    # its 4 BlueStore OSDs' rebuild (the build not known: LAB_REBUILD_S)
    assert diffs == [(first.id, pytest.approx(rebuild_s(build)))] and rebuild_s(build) == 4 * REBUILD_PER_OSD_S
    assert [t.est_duration_s for t in first_build_ready(tests)] != [t.est_duration_s for t in tests]
    # the later builds' rebuilds stay: filestore's block
    rebuilt = [t for t in ready if t.variant == "filestore" and t.est_duration_s >= LAB_REBUILD_S]
    assert rebuilt


def test_a_suite_without_variants_is_left_as_it_is():
    tests = expand(load_suite(REPO / "suites" / "quick.yaml")).tests
    assert first_build_ready(tests) == tests


def test_a_rebuild_is_counted_for_the_build_it_makes():
    # seed-han-2012: 3 OSDs, then 6 (hdd-6osd), each block's first test carrying its build's rebuild; homelab's
    # FileStore block more per OSD than BlueStore's (its file systems made and mounted)
    suite = load_suite(REPO / "suites" / "seed-han-2012.yaml")
    shapes = {v.name: v.lab for v in suite.variant_specs()}
    assert rebuild_s(shapes["hdd-6osd"]) == 2 * rebuild_s(shapes["ssd-private"]) == 6 * REBUILD_PER_OSD_S
    homelab = {v.name: v.lab for v in load_suite(REPO / "suites" / "seed-homelab-2018.yaml").variant_specs()}
    assert rebuild_s(homelab["filestore"]) > rebuild_s(homelab["bluestore"])
    assert rebuild_s(None) == LAB_REBUILD_S
