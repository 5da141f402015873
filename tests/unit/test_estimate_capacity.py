"""The writes the capacity guard stops early, counted in the estimate (issue 36 item 4: seed-argonaut-bobtail-now's 20 s
writes of 4 MiB stopped after 0-4.4 s, search-rados' 1 MiB steps after 1.3-2.5 s of 5, and estimates that assumed
whole writes ran 1.16x and 1.5x past the runs): each write may add what fits below max_raw_used, less the guard's
margin, a search's step its share among the steps its search may still run, as drivers/rados_bench.py gives it."""

import pytest

from cephbench.cluster.safety import CapacityBudget
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import (WRITE_OSD_BYTES_PER_S, Room, capacity_cut, estimate, expand, write_rate_raw)

GiB = 1024**3


def _suite(workload, **extra):
    return parse_suite({"name": "t", "pools": {"p": {"type": "replicated", "size": 3, "pg_num": 32}},
                        "workloads": [{"type": "rados_bench", "pool": "p", **workload}], **extra}, "t")


def test_a_search_step_writes_its_share_of_the_room_among_the_steps_left():
    suite = _suite({"modes": ["write"], "object_size": "1MiB", "concurrency": {"auto": {"max": 256}}, "duration": "5s"})
    tests = expand(suite).tests
    room = Room(18 * GiB, GiB, 3)          # search-rados' lab: 3 OSDs of 6 GiB, 0.9 GiB used
    cut = capacity_cut(tests, suite, room)
    rate = write_rate_raw(1 << 20, [float(WRITE_OSD_BYTES_PER_S)] * 3)
    # the first of 9 steps: the guard's raw bytes for it (CapacityBudget, amplification 1) over the rate
    share = CapacityBudget(room.total_raw, room.used_raw, 0.75).client_bytes(1.0) / 9
    assert tests[0].est_duration_s - cut[0].est_duration_s == pytest.approx(5.0 - share / rate, rel=0.01)
    # every step but the last, whose share is all the room its search leaves (at this rate 5 s of it fit)
    assert all(c.est_duration_s < t.est_duration_s for c, t in zip(cut[:-1], tests[:-1]))
    assert cut[-1].est_duration_s == tests[-1].est_duration_s
    # the room of an unknown cluster cuts nothing; a large one nothing either
    assert capacity_cut(tests, suite, None) == tests
    assert capacity_cut(tests, suite, Room(100 * 1024 * GiB, GiB, 30)) == tests


def test_small_objects_and_a_shapes_links_bound_the_rate_and_a_write_from_client_hosts_of_unknown_links_is_not_cut():
    # 4 KiB objects write at 1/65 of the OSDs' bytes (measured on the lab: 12-24 MiB/s raw of 3 OSDs): never cut
    assert write_rate_raw(4096, [400.0 * 2**20] * 3) / 2**20 == pytest.approx(18.5, abs=0.1)
    small = _suite({"modes": ["write"], "object_size": "4KiB", "concurrency": 16, "duration": "20s"})
    assert capacity_cut(expand(small).tests, small, Room(12 * GiB, GiB, 3)) == expand(small).tests
    # 4 OSD hosts on 200 Mbit/s public links, no cluster network (seed-centerdevice-2014's shape): 12 s of 4 MiB
    # objects from 4 client hosts at 3 copies ran 45 MiB/s, the cluster links' 4 x 25 MB/s / 2; 4 GiB OSDs hold it
    shaped = _suite({"modes": ["write"], "object_size": "4MiB", "concurrency": 16, "duration": "12s",
                     "clients": [1, 4]},
                    clients=[f"c{i}" for i in range(1, 5)],
                    variants=[{"name": "net", "lab": {"hosts": 4, "clients": 4, "public_net": "200mbit",
                                                      "osd_size": "4GiB"}}])
    tests = expand(shaped).tests
    assert capacity_cut(tests, shaped, None) == tests
    # the same write on the one-host lab of 3 OSDs of 4 GiB, its OSDs the bound: 12 s would add 10 GiB raw, and
    # the 6.4 GiB it may add take 7.7 s
    bare = _suite({"modes": ["write"], "object_size": "4MiB", "concurrency": 16, "duration": "12s"})
    cut = capacity_cut(expand(bare).tests, bare, Room(12 * GiB, GiB, 3))
    assert cut[0].est_duration_s == pytest.approx(expand(bare).tests[0].est_duration_s - (12 - 7.7), abs=0.1)
    assert estimate(cut).expected_s < estimate(expand(bare).tests).expected_s


def test_a_write_on_all_the_client_hosts_is_planned_not_a_traceback():
    """`clients: all` (the suite's every client host) reached int('all') in the capacity cut's in-flight bytes and
    in a shape's client links: `cephbench run` of such a suite on a cluster with little room was a traceback (CI at
    d5d3239: four multi-host lab tests). With a shape its client hosts count; without one, a host."""
    clients = {"clients": ["c1", "c2"]}
    for shape in ({}, {"variants": [{"name": "v", "lab": {"hosts": 3, "clients": 2, "client_net": "200mbit"}}]}):
        suite = _suite({"modes": ["write"], "object_size": "4MiB", "concurrency": 16, "duration": "20s",
                        "clients": "all"}, **clients, **shape)
        tests = expand(suite).tests
        assert tests and all(t.params["clients"] == "all" for t in tests)
        cut = capacity_cut(tests, suite, Room(12 * GiB, 10 * GiB, 3))
        assert all(c.est_duration_s <= t.est_duration_s for c, t in zip(cut, tests))
