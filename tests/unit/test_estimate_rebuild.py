"""The first lab build is not counted when the lab runs in it already (issue 36 item 4): `run --lab-dir` starts the
lab in the first variant's build before it prints its estimate, and the plan counted a rebuild there too. On the
lab, seed-homelab-2018's first group was estimated at 24 s and took 9.2 s; its filestore block's first group, after
a real rebuild, took 27.9 s against 24."""

from conftest import REPO
from cephbench.suite.config import load_suite
from cephbench.suite.plan import LAB_REBUILD_S, expand, first_build_ready


def test_the_first_build_ready_takes_one_rebuild_off_the_first_variant_test_alone():
    tests = expand(load_suite(REPO / "suites" / "seed-homelab-2018.yaml")).tests
    ready = first_build_ready(tests)
    diffs = [(t.id, a.est_duration_s - t.est_duration_s) for t, a in zip(ready, tests)
             if a.est_duration_s != t.est_duration_s]
    first = next(t for t in tests if t.variant is not None)
    assert diffs == [(first.id, LAB_REBUILD_S)]
    # the later builds' rebuilds stay: filestore's block
    rebuilt = [t for t in ready if t.variant == "filestore" and t.est_duration_s >= LAB_REBUILD_S]
    assert rebuilt


def test_a_suite_without_variants_is_left_as_it_is():
    tests = expand(load_suite(REPO / "suites" / "quick.yaml")).tests
    assert first_build_ready(tests) == tests
