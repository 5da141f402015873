"""What a run waits for beside its tools, in the estimate (issue 36 item 4): a write with less room than it asks for
waits while the cluster frees the space of the group before (cluster/safety.py Freeing), a write on a lab shape
whose links or throttles bound it waits at its end for the operations it has in flight, and a lab shape of a release
whose root this machine has not built waits for its build."""

import pytest

from cephbench.suite import plan
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import (FREE_BYTES_PER_S, FREEING_POLL_S, GUARD_MARGIN, ROOT_BUILD_S, Room, capacity_cut,
                                  expand, unbuilt_roots, write_rate_raw)

GiB = 1024**3
MiB = 1024**2


def _suite(workloads, **extra):
    return parse_suite({"name": "t", "pools": {"p": {"type": "replicated", "size": 3, "pg_num": 32}},
                        "workloads": [{"type": "rados_bench", "pool": "p", **w} for w in workloads], **extra}, "t")


def test_a_write_without_the_room_it_asks_for_waits_while_the_group_before_is_freed():
    # two groups of 20 s writes of 4 MiB objects on the default lab's 3 x 4 GiB, 8.5 GiB of it used (as seed suites
    # found it after the groups before): the first fills its share of the room; the second finds less than its 16
    # objects x 3 copies and waits for the first's space to come back
    big = {"modes": ["write"], "object_size": "4MiB", "concurrency": 16, "duration": "20s"}
    suite = _suite([big, big])
    tests = expand(suite).tests
    room = Room(12 * GiB, int(8.5 * GiB), 3)
    cut = capacity_cut(tests, suite, room)
    first, second = (t.est_duration_s - c.est_duration_s for t, c in zip(tests, cut))
    assert first > 10                       # cut: its room over its rate
    # the first's bytes, which `ceph df` still counts at the second's start
    rate = write_rate_raw(4 * MiB, [400.0 * MiB] * 3)
    wrote = (20 - first) * rate
    left = (12 * GiB * 0.75 - room.used_raw - wrote) * GUARD_MARGIN
    least = 16 * 4 * MiB * 3
    assert left < least
    freed = (least - left) / GUARD_MARGIN
    waited = FREEING_POLL_S + freed / FREE_BYTES_PER_S
    # the second waits, then writes into what was freed: its share is the least it asked for
    assert second == pytest.approx(20 - least / rate - waited, rel=0.01)
    # a cluster with the room for both: no wait, no cut
    assert capacity_cut(tests, suite, Room(200 * GiB, GiB, 3)) == tests


def test_a_write_waits_for_its_operations_in_flight_where_a_shape_bounds_its_rate():
    w = {"modes": ["write"], "object_size": "4MiB", "concurrency": 16, "duration": "12s"}
    plain = expand(_suite([w])).tests[0]
    shaped = _suite([w], variants=[{"name": "net", "lab": {"hosts": 3, "public_net": "200mbit"}}])
    unbound = _suite([w], variants=[{"name": "big", "lab": {"hosts": 3}}])
    t, u = expand(shaped).tests[0], expand(unbound).tests[0]
    # 16 objects of 4 MiB at the 3 hosts' cluster-side links over 200 Mbit/s (each byte twice more over them)
    rate = 3 * 25e6 / 2
    assert t.est_duration_s - u.est_duration_s == pytest.approx(16 * 4 * MiB / rate)
    # unshaped links and drives: nothing counted past the kind's overhead; nor without a shape
    assert u.est_duration_s - plain.est_duration_s == pytest.approx(t.est_duration_s - plain.est_duration_s
                                                                    - 16 * 4 * MiB / rate)


RELEASES = {"name": "t", "pools": {"p": {"type": "replicated", "size": 1, "pg_num": 8}},
            "variants": [{"name": "pacific", "lab": {"osds": 1, "release": "pacific"}},
                         {"name": "reef", "lab": {"osds": 1, "release": "reef"}}],
            "workloads": [{"type": "rados_bench", "pool": "p", "modes": ["write"], "object_size": "4KiB",
                           "duration": "2s", "repeat": 2}]}


def test_a_release_whose_root_is_not_built_counts_its_build_once(tmp_path, monkeypatch):
    suite = parse_suite(RELEASES, "t")
    built = expand(suite, unbuilt=frozenset()).tests
    first = expand(suite, unbuilt=frozenset({"reef"})).tests
    extra = [a.est_duration_s - b.est_duration_s for a, b in zip(first, built)]
    # the releases take turns repeat by repeat (pacific reef | reef pacific): reef's first block builds its root
    assert [t.variant for t in built] == ["pacific", "reef", "reef", "pacific"]
    assert extra == [0.0, ROOT_BUILD_S, 0.0, 0.0]
    # by default the machine's cache says: a release of the machine's own Ceph has none to build, another's root
    # is built unless cached
    monkeypatch.setenv("CEPHBENCH_ROOTS_DIR", str(tmp_path))
    monkeypatch.setattr(plan, "_own_release", lambda: "pacific")
    assert unbuilt_roots(suite) == {"reef"}
    assert expand(suite).tests == first
    monkeypatch.setattr(plan, "_own_release", lambda: "")
    assert unbuilt_roots(suite) == {"pacific", "reef"}
