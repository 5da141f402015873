"""Sweep expansion: Suite -> Plan, a list of fully resolved Tests.

Every list-valued workload parameter is a sweep dimension and the plan is their
product, in the order the parameters are declared, times `repeat`. A workload's
phase field (rados bench modes, fio rw) is not a dimension: its values are the
tests of one group, run in order on the same pool and objects.
"""

from __future__ import annotations

import functools
import itertools
import math
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Mapping

from .config import Suite
from ..core.errors import UserError
from ..kinds import (KINDS, Kind, disk_baseline, in_flight_per_process, kinds_where, load_of, net_baseline,
                     object_size_of)
from ..kinds.schema import AUTO, Auto, searched
from ..core import loadsearch
from ..core.planned import Search, Test
from ..core.units import format_size
from .shape_plan import LabBuild, shape_classes
from ..core.variant_plan import variant_order

_FIXED = {"name", "type", "repeat", "variants"}
ASSUMED_OSDS = 3            # the estimate of a per-OSD test when the cluster is not known yet (validate)
# A run's own start and end around its groups (preflight, the cluster's facts for run.json, the report): measured
# (bench estimates, 2026-12-06) 0.5-1.7 s from the run's start to its first test and from its last test's end to its
# own, a group's pool or images made and removed in them, on the one-host lab (the quick suite, rados bench's
# searches, a toolbox with Prometheus) and on 3 OSD hosts (`clients: auto`)
RUN_OVERHEAD_S = 1.0
# ... and a run that shapes the lab puts it back as the user had it at its end (down, when the run started it):
# seed-homelab-2018 and seed-centerdevice-2014 (4 OSD hosts) 2.9 and 2.7 s from their last test's end to the run's,
# seed-argonaut-bobtail-now and seed-bobtail-2012 (3 OSDs) 4.2-4.4 and 3.6 s
LAB_PUT_BACK_S = 3.0
VARIANT_SWITCH_S = 2.0      # `ceph config set` of a variant's options and every daemon reporting them
LAB_REBUILD_S = 10.0        # a lab shape whose build is not known: the lab down and up again (3 OSDs)
# A lab shape's rebuild, per OSD it starts (each made, started and waited for; 2 shared cores), and per FileStore OSD
# more (its file system made and mounted): measured on the seed suites (bench estimates), the gap before a rebuilt
# block's first group less its set-up: 3 BlueStore OSDs 9.4 and 11.5 s, 6 BlueStore OSDs 19.8 s, 4 FileStore OSDs on
# xfs 17.8 s
REBUILD_PER_OSD_S = 3.3
REBUILD_PER_FILESTORE_OSD_S = 1.2
# More tests than anyone runs (at a few seconds each, days): a larger plan is a typo such as `repeat: 100000000`,
# and expanding it would take minutes and all the memory before anything is said.
MAX_TESTS = 10_000


@dataclass(frozen=True)
class Plan:
    suite: Suite
    tests: list[Test]

    @property
    def est_duration_s(self) -> float:
        return estimate_s(self.tests)


# A search stops where its curve bends (core/loadsearch.py), which no plan knows: it always runs its first
# loadsearch.MIN_POINTS loads, and each load after them with SEARCH_GOES_ON times the chance of the one before. Measured
# on the lab: 15 rados bench searches of 4 KiB writes to 64 beside a CPU burner (bench knee_noise), the quick suite's
# two of fio's queue depth to 32 and two of rados bench's 4 KiB concurrency to 64 (bench estimates): of those that
# ran a load, 17 of 19 went on to 8, 14 of 17 to 16, 10 of 14 to 32, 5 of 8 to 64: 46 of 58 doublings, 0.79. (Behind
# a drive's throttle the knee is at 1: 9 of 10 stopped at 4, as early as a search can.)
SEARCH_GOES_ON = 0.8


# A search step whose seconds stall runs again (drivers/rounds.py, up to loadsearch.STALL_RERUNS times): counted at
# the share of the steps' runs that did on the lab (bench estimates, 2026-12-06: 3 reruns in 45 steps of the quick
# suite's searches, rados bench's concurrency to 64 and 256, and 2 client hosts)
STALL_RERUN_SHARE = 0.07


def step_run_s(test: Test) -> float:
    """One run of a search step again: its tool's run and overhead, each of its repeats (not its group's set-up)."""
    repeats = test.search.repeats if test.search is not None else 1
    kind = KINDS[test.kind]
    return (_tool_s(kind, test.params, test.params.duration_s) + kind.test_overhead_s) * repeats


def _tool_s(kind: Kind, params: Mapping[str, Any], measured_s: float | None) -> float:
    """The seconds a test's tool runs, for the seconds it measures (None: no duration of its own): the kind's own
    account (Kind.tool_s) where it has one, else those seconds, else the kind's default."""
    if kind.tool_s is not None:
        return kind.tool_s(params, measured_s)
    return float(measured_s if measured_s is not None else kind.default_test_s)


def run_share(test: Test, goes_on: float = SEARCH_GOES_ON) -> float:
    """The chance that `test` runs: 1, save a search's steps past its first MIN_POINTS loads (SEARCH_GOES_ON per
    doubling; goes_on 0: the search stops as early as it can, 1: it runs to its max)."""
    if test.search is None:
        return 1.0
    load = test.params.get(test.search.param)
    steps = loadsearch.loads(test.search.max)
    at = steps.index(load) if load in steps else len(steps) - 1
    return goes_on ** max(0, at + 1 - loadsearch.MIN_POINTS) if goes_on else float(at < loadsearch.MIN_POINTS)


def estimate_s(tests: list[Test], goes_on: float = SEARCH_GOES_ON) -> float:
    """The one estimate of how long a run of these tests takes: validate, run and the progress line all use it.
    Each test's est_duration_s holds what it takes when it runs: its tool's run time, its overhead and, for a
    group's first test, the group's set-up (pools, images, users); a search's steps past its first loads count at
    the chance that they run (run_share: the expected run), each with its expected reruns after a stall, and each
    search its steps measured again in pairs (pairs_s); the run adds its own start and end."""
    if not tests:
        return 0.0
    steps = sum(run_share(t, goes_on) * (t.est_duration_s + (STALL_RERUN_SHARE * step_run_s(t) if t.search else 0.0))
                for t in tests)
    return RUN_OVERHEAD_S + steps + pairs_s(tests, goes_on)


def pairs_s(tests: list[Test], goes_on: float = SEARCH_GOES_ON) -> float:
    """What measuring a step again beside the one before it, by turns, adds to the searches (drivers/search.py,
    loadsearch.pairs_extra_s): a search that stops by the knee rule before its max has its last step so measured, at
    the chance that it stops so (1 - run_share of its last step; goes_on 0: every search that can); one that runs to
    its max (goes_on 1), at worst PAIR_CHECKS_MAX steps. On the lab, 10 searches measured 3 steps so where this
    expects 2.9: the quick suite's two of fio's queue depth to 32, 1 and 2 on their way to it; three of rados bench's
    concurrency to 64 and 256, none; five of 2 client hosts, none (their second host paid). Each of those runs may
    stall and run again as a step's (STALL_RERUN_SHARE)."""
    total = 0.0
    for steps in _searches(tests):
        expected, worst = loadsearch.pairs_extra_s([step_run_s(t) for t in steps])
        stops_early = 1.0 - run_share(steps[-1], goes_on)
        total += (worst if goes_on >= 1.0 else stops_early * expected) * (1 + STALL_RERUN_SHARE)
    return total


@dataclass(frozen=True)
class Estimate:
    """A run's estimate: its expected length, and where a search may stop, the shortest (every search as short as
    it can be: least_s) and the longest (every search runs to its max)."""
    expected_s: float
    shortest_s: float
    longest_s: float

    @property
    def ranged(self) -> bool:
        return self.longest_s - self.shortest_s >= 1.0


def estimate(tests: list[Test]) -> Estimate:
    return Estimate(estimate_s(tests), least_s(tests), estimate_s(tests, 1.0))


def _searches(tests: list[Test]) -> list[list[Test]]:
    """Each search's steps (one group's one phase), in load order."""
    out: dict[tuple[str, str], list[Test]] = {}
    for t in tests:
        if t.search is not None:
            out.setdefault((t.group, str(t.params.phase)), []).append(t)
    return [sorted(steps, key=lambda t: int(t.params[t.search.param]) if t.search else 0) for steps in out.values()]


def least_s(tests: list[Test]) -> float:
    """The shortest the run can be: no step stalls, and each search the shorter of its two least ways: stopped
    after its first MIN_POINTS loads, its last step measured again beside the one before (a step stops a search
    only once so judged: loadsearch.PAIR_RERUNS runs of each), or run to its max with every step paying, none so
    measured. Measured: searches of rados bench's 4 KiB concurrency to 64 that ran every step took 7 runs of a
    step each, as many as a stop after 3 loads and its pairs."""
    if not tests:
        return 0.0
    total = RUN_OVERHEAD_S + sum(t.est_duration_s for t in tests if t.search is None)
    k = loadsearch.MIN_POINTS
    for steps in _searches(tests):
        every = sum(t.est_duration_s for t in steps)
        early = sum(t.est_duration_s for t in steps[:k]) + loadsearch.PAIR_RERUNS * sum(
            step_run_s(t) for t in steps[k - 2:k]) if len(steps) > k else every
        total += min(every, early)
    return total


def as_run_s(tests: list[Test], ran: set[str], stalls: dict[str, int], paired: set[str]) -> float:
    """The estimate of a run whose searches' course is known (bench estimates, the unit tests: what the model says
    of each step apart from the chance of its running): the tests that ran (`ran`; the rest were a search's
    skipped steps), each step's reruns after a stall, and each step measured again in pairs with the one before."""
    total = RUN_OVERHEAD_S + sum(t.est_duration_s + stalls.get(t.id, 0) * step_run_s(t) for t in tests if t.id in ran)
    for steps in _searches(tests):
        for a, b in zip(steps, steps[1:]):
            if b.id in paired:
                total += loadsearch.PAIR_RERUNS * (step_run_s(a) + step_run_s(b))
    return total


def warnings(plan: Plan) -> list[str]:
    """What is likely to go wrong in a valid suite, said before anything runs (validate and run print these)."""
    out = []
    groups: dict[str, list[Test]] = {}
    for t in plan.tests:
        groups.setdefault(t.group, []).append(t)
    for tests in groups.values():
        kind = KINDS[tests[0].kind]
        write = next((t for t in tests if kind.direction(t.params.phase) == "write"), None)
        said: set[str] = set()
        for read in (t for t in tests if t.params.phase in kind.exhaustible_reads):
            if write is None or kind.read_write_ratio is None or read.params.phase in said:
                continue
            if read.search is not None:         # the steps of one search read alike: said once
                said.add(read.params.phase)
            w, r = write.params.duration_s, read.params.duration_s
            size = object_size_of(read.kind, read.params)
            ratio = kind.read_write_ratio(size)
            if w < ratio * r:
                what = f"{format_size(size)} " if size else ""
                out.append(f"{read.id}: {read.params['phase']} reads only the {what}objects the {w:g} s write made, "
                           f"once each, and reads of them run up to {ratio}x as many objects per second as the "
                           f"write: it will likely run out before {r:g} s; give the write at least {ratio}x its "
                           f"time, e.g. duration: {{write: {ratio * r:g}s, {read.params['phase']}: {r:g}s, ...}}")
    return out


# What the plan cannot know before the cluster names its hosts, measured on the lab with the cephbench of
# 2026-12-06 21:00 (bench estimates, the 2-core VM, load average 1.7-7.6; each test's start, its tool's start and end
# in its raw output and its watches' first and last readings). A test on the cluster's hosts is watched over ssh on
# each other OSD host (its devices, links, CPU, OSDs' counters: started before it, read after), all at once: 0.15 s a
# host (seed-homelab-2018 on 4 OSD hosts: fio's RBD writes 0.8-2.1 s past their duration, median 1.1, against 0.5
# on the one-host lab). Dropping the page cache before a read costs 0.3 s here (the quick suite's fio randread on the
# one-host lab 0.5-0.8 s past its duration, its randwrite 0.4-0.5 s, median; rados bench's rand after a write 0.3 s,
# median) and 0.2 s more over ssh, every other OSD host at once (seed-homelab-2018's reads and randrw 1.0-2.8 s
# past, median 1.3, its writes 1.1; `clients: auto` on 3 hosts: its 4 KiB rand's tool began 0.73-0.79 s into the
# test, its 4 KiB write's 1.0-1.7 s, the capacity guard's reservation in it). The 2.5 s a drop over ssh and 0.5 s a
# host counted before were made from the seed suites as the cephbench of 13:00 ran them (tests 1.2-7.6 s past their
# duration, median). A network baseline's part between hosts ran 0.14-0.15 s past its duration (a pair),
# 1.1 s (one host to 3), 0.5 s (3 to one) (seed-centerdevice-2014, 16 parts, mean 0.4), 0.1 s on loopback; a disk
# baseline's fio step 0.6 s more on another host. A group's set-up (pools, images, users: kinds.group_setup_s,
# measured with OSDs on other hosts) took about half of it with every OSD on this machine.
LOCAL_SETUP_SHARE = 0.5
READ_PREP_LOCAL_S = 0.3
# ... and after a read of the same group (a search's read steps, a read phase after another) next to nothing: its
# `sync` has nothing to write back (bench estimates, the steps of 6 searches of reads on the one-host lab: rados
# bench's rand 1.5 s and fio's randread 0.6 s shorter past their duration than their group's writes' steps, median)
READ_PREP_AFTER_READ_LOCAL_S = 0.1
READ_PREP_REMOTE_S = 0.2
NET_PART_REMOTE_S = 0.4
NET_PART_LOCAL_S = 0.1
DISK_STEP_REMOTE_S = 0.6
WATCH_REMOTE_S = 0.15
# A run that reads its evidence from Prometheus (settings.prometheus, --prometheus) waits after each test for the
# scrape that covers its last second (evidence/prometheus.py: node-exporter's interval, at most NODE_WAIT_MAX_S, and
# 0.25 s), and where a ceph-exporter serves the OSDs' counters, for its stats period and a scrape more
# (evidence/cephexporter.py, at most EXPORTER_WAIT_MAX_S). The wait follows the tools' end and comes before the
# OSDs' counters are read again (drivers/base.py _watched), so nothing of the test's own end overlaps it. Measured
# (bench estimates, two toolbox runs on the lab's 1 s scrapes, 3 OSD hosts): fio's RBD tests ran 2.8-3.0 s past their
# duration, 1.8-1.9 s more than the same on 3 hosts watched over ssh (`clients: auto`, 1.0-1.1 s), and 4 KiB rados
# bench writes 1.4-2.5 s past theirs against 1.7-2.0 s: the wait of 1.25 s and its queries.
NODE_WAIT_MAX_S = 5.0
EXPORTER_WAIT_MAX_S = 30.0
EXPORTER_STATS_PERIOD_S = 5.0
ASSUMED_SCRAPE_S = 10.0     # validate, which knows no Prometheus: cephadm's scrape interval


def prometheus_test_s(scrape_s: float = ASSUMED_SCRAPE_S, exporter: bool = False) -> float:
    """What reading a test's evidence from Prometheus adds to it, for its slowest scrape interval and whether a
    ceph-exporter serves the OSDs' counters there."""
    wait = min(NODE_WAIT_MAX_S, scrape_s) + 0.25
    if exporter:
        wait = max(wait, min(EXPORTER_WAIT_MAX_S, EXPORTER_STATS_PERIOD_S + scrape_s))
    return wait


def _drops_before(test: Test, drop_caches: bool) -> bool:
    """The page caches are dropped before this test (Kind.drops_caches_before), not before any test of a kind that
    reads somewhere."""
    return drop_caches and KINDS[test.kind].drops_caches_before(test.params.phase)


def drops_caches(plan: Plan) -> bool:
    """Some test of the plan drops the OSD hosts' page caches before it (preflight checks it can)."""
    return any(_drops_before(t, plan.suite.settings.drop_caches) for t in plan.tests)


def for_cluster(tests: list[Test], osd_hosts: list[str], here: str, drop_caches: bool = True,
                prometheus_s: float = 0.0, watched: list[str] | None = None) -> list[Test]:
    """The tests with their estimates for the cluster the run found (its CRUSH hosts with OSDs; `here`, this
    machine's name, is one of them on the one-host lab): the network baseline's tests between this machine and
    every OSD host counted, the page-cache drops and ssh round trips the other hosts add, and where the run reads
    its evidence from Prometheus what each test waits for it (prometheus_s: prometheus_test_s). `watched`: the other
    OSD hosts ssh reaches (None: every one; a toolbox reaches none, and watches none)."""
    remote = [h for h in osd_hosts if h != here]
    names = [here, *remote]
    out = []
    seen_groups: set[str] = set()
    prev: Test | None = None
    for t in tests:
        kind, p, est = KINDS[t.kind], t.params, t.est_duration_s
        if t.group not in seen_groups and not remote and t.kind not in POOL_PER_INSTANCE_KINDS:
            est = max(est - (1 - LOCAL_SETUP_SHARE) * group_setup_s(kind, p), 0.0)
        seen_groups.add(t.group)
        if t.kind == net_baseline.KIND.name and p.get("hosts") == net_baseline.OSD_HOSTS:
            parts = net_baseline.parts(names, p)
            est = parts * (p["duration_s"] + (NET_PART_REMOTE_S if remote else NET_PART_LOCAL_S))
        elif t.kind == net_baseline.KIND.name and isinstance(p.get("hosts"), list):
            # one part of a baseline between the hosts it names
            est = p["duration_s"] + (NET_PART_REMOTE_S if set(p["hosts"]) - {here} else NET_PART_LOCAL_S)
        elif t.kind == disk_baseline.KIND.name and remote:
            est += DISK_STEP_REMOTE_S * est / disk_baseline.runtime_of(p)
        else:
            if _drops_before(t, drop_caches):
                after_read = prev is not None and prev.group == t.group and _drops_before(prev, drop_caches)
                est += (READ_PREP_AFTER_READ_LOCAL_S if after_read else READ_PREP_LOCAL_S) + \
                    (READ_PREP_REMOTE_S if remote else 0.0)
            if kind.cluster and not kind.repeat_within_test:
                est += WATCH_REMOTE_S * len(remote if watched is None else watched) + prometheus_s
        out.append(t if est == t.est_duration_s else t.model_copy(update={"est_duration_s": est}))
        prev = t
    return out


def cluster_estimate(plan: Plan, osd_hosts: list[str], here: str, prometheus_s: float = 0.0,
                     room: Room | None = None) -> Estimate:
    """The estimate `run` prints ("about ..."), for the OSD hosts it found and the room it found on them:
    for_cluster's tests, capacity_cut's writes, estimate's sums."""
    tests = for_cluster(plan.tests, osd_hosts, here, plan.suite.settings.drop_caches, prometheus_s)
    return estimate(capacity_cut(tests, plan.suite, room, remote=bool(set(osd_hosts) - {here})))


HERE = "this machine"


def validate_estimates(plan: Plan) -> list[tuple[str, Estimate]]:
    """What `validate` prints without a cluster: run's own estimate (cluster_estimate) for the two clusters it
    cannot tell apart, every OSD on this machine (the one-host lab as `lab up` makes it, run's default) and
    ASSUMED_OSDS OSD hosts reached over ssh (a multi-host lab, most clusters: their room not known, no write cut);
    `run` gives the one for the hosts and the room it finds."""
    from .shape_plan import DEFAULT_OSDS, DEFAULT_OSD_SIZE
    prom = prometheus_test_s() if plan.suite.settings.prometheus is not None else 0.0
    remote = [f"osd-host-{i + 1}" for i in range(ASSUMED_OSDS)]
    return [("every OSD on this machine (the one-host lab)",
             cluster_estimate(plan, [HERE], HERE, prom, Room.fresh_lab(DEFAULT_OSDS, DEFAULT_OSD_SIZE))),
            (f"{ASSUMED_OSDS} OSD hosts over ssh", cluster_estimate(plan, remote, HERE, prom))]


# An unthrottled lab OSD's bench of `total` bytes. On the one-host lab (its OSDs on files) it is the host's page
# cache's and disk's: the quick suite's 9 benches of 256 MiB took 14.0 s at 190-370 MiB/s an OSD (2026-12-06 21:10,
# load 7.6; estimated 11.3 s), 3.4 and 4.1 s in two runs before (2.4-3.0 GiB/s in a run of 2026-11-26); the
# multi-host lab's loop devices 175 MiB/s (its quick suite, 2026-11-23). No one rate holds them; 400 MiB/s lies between.
OSD_BENCH_BYTES_PER_S = 400 * 1024**2


# The capacity guard (drivers/rados_bench.py) lets a rados bench write add what fits below settings.max_raw_used, less
# a fifth (safety.CapacityBudget.client_bytes's margin), a search's step its share of that among the steps its search
# may still run (drivers/search.py steps_left); the write stops when it has written that. On a cluster of a few GiB
# (the lab's) a write of large objects gets there in seconds, and what it takes is its room over its rate, not its
# duration. The rate: the OSDs' raw bytes per second (each at WRITE_OSD_BYTES_PER_S, REMOTE_OSD_BYTES_PER_S on other
# hosts, or its throttle when lower), of which objects of WRITE_HALF_SIZE_BYTES get half (each operation's cost takes
# the rest). Measured on the lab (2 shared cores, 3 BlueStore OSDs; raw MiB/s of every copy, and this rule's at 400
# MiB/s an OSD): 4 MiB objects 840-1040 (1130), 1 MiB at 16-256 in flight 700-860 (960), 128 KiB 230-520 (400), 64
# KiB 180 (240), 4 KiB 12-24 (18); with 8 instances, below (WRITE_OSD_BYTES_PER_S). What a group wrote still counts
# at the next group's writes (its pools are removed as it ends, and the OSDs free their space over tens of seconds:
# seed-argonaut-bobtail-now on Pacific, raw used 0.36 at each group's first write after one that wrote 4.6 GiB, 0.05
# before any had); a rebuilt lab starts with FRESH_OSD_USED_BYTES per OSD (BlueStore's own: 870 MiB and 1.16 GiB
# raw used on the labs of 3 and 4 OSDs just up).
CAPACITY_CUT_KINDS = kinds_where(capacity_cut=True)
WRITE_HALF_SIZE_BYTES = 256 * 1024
FRESH_OSD_USED_BYTES = 290 * 1024**2
GUARD_MARGIN = 0.8
# OSDs on other hosts write at their drives' rate, not this host's page cache's: on the multi-host lab (loop devices
# with direct I/O) a toolbox run's 12 s of 4 MiB objects at 3 copies ran 103 MiB/s (2026-12-06 21:35, load 7.2), 310
# MiB/s raw, and no run of it (3, at load 2.8-7.2) was stopped by the guard where 400 MiB/s an OSD said it would be
# after 5.7 s. Those 310 MiB/s are this rule's at 110 MiB/s an OSD. (A real cluster of other hosts has the room no
# write fills; a lab shape's writes are bound by its links or throttles in every seed suite.)
REMOTE_OSD_BYTES_PER_S = 110 * 1024**2
# An unthrottled OSD under a rados bench write, on this host or in a lab shape: less than its bench's
# (OSD_BENCH_BYTES_PER_S: the client, 8 instances of it in the seed suites, shares the 2 cores). Measured
# (seed-argonaut-bobtail-now, 8 instances, 2026-12-07, load 8-16): the writes the guard cut ran 272-477 MiB/s raw at
# 4 MiB (this rule's at 400 MiB/s an OSD: 1,130), 200-206 at 128 KiB (400). At 300 every recorded run made since the
# guard waits for room holds within 0.87-1.15 (tests/unit/test_estimate_runs.py); at 400 the two seed suites whose
# writes it cuts fell to 0.84-0.87, at 200 the searches of 1 MiB steps rose to 1.17-1.20.
WRITE_OSD_BYTES_PER_S = 300 * 1024**2
# A write with less room than the least it asks for waits while the cluster frees the space of the pools removed
# before it (cluster/safety.py Freeing: while `ceph df`'s raw used falls, at most FREEING_MAX_S), and writes into what
# was freed. Measured (e204d4d, the lab on Pacific, 3 x 4 GiB OSDs): 5.4 GiB written and its pool removed just before,
# the write waited 2 s. `make bench NAME=freeing` (2026-12-07, a one-host lab of 3 x 4 GiB OSDs a release): `ceph df`
# showed a removed pool's 2.1-3.3 GiB of raw space freed in one step 2.7-4.4 s after `ceph osd pool rm` on Pacific,
# Reef and Tentacle alike (0.52-0.83 GiB/s over that time): the releases do not differ in it. The guard looks again
# once a second (FREEING_POLL_S).
FREE_BYTES_PER_S = 2.7 * 1024**3
FREEING_POLL_S = 1.0
FREEING_MAX_S = 90.0


@dataclass(frozen=True)
class Room:
    """The cluster's raw space as the run finds it (`ceph df`) and its OSDs: what the capacity guard shares out."""
    total_raw: int
    used_raw: int
    osds: int

    @classmethod
    def fresh_lab(cls, osds: int, osd_size_bytes: int) -> "Room":
        return cls(osds * osd_size_bytes, osds * FRESH_OSD_USED_BYTES, osds)


def write_rate_raw(object_size: int, osd_rates: list[float], links: tuple[float, float] | None = (math.inf, 1.0)
                   ) -> float:
    """Raw bytes per second a rados bench write of `object_size` objects adds at most (CAPACITY_CUT_KINDS' rule),
    and no more than its links carry (`links`: client bytes per second and copies, _links_bound; None: not known,
    0 returned: no cut counted)."""
    if links is None:
        return 0.0
    size = max(object_size, 1)
    return min(sum(osd_rates) * size / (size + WRITE_HALF_SIZE_BYTES), links[0] * links[1])


def _links_bound(test: Test, shape: LabBuild | None) -> tuple[float, float] | None:
    """(client bytes per second the write's links carry at most, copies of each byte) in a lab shape: its client
    hosts' links (each its shape's client link, else its public one), the OSD hosts' public links (each client
    byte to its primary) and their cluster links (each copy past the first; the public one without a cluster
    network). Measured (seed-centerdevice-2014, 4 OSD hosts and 4 client hosts on 200 Mbit/s): 22-23 MiB/s from one
    client host, 45 from 4 at 3 copies (the cluster links: 4 x 23.8 MiB/s / 2). A write from client hosts whose
    links no shape gives: None (not known: a 200 Mbit/s client link ran 23 MiB/s, no cut)."""
    copies = _copies(test.params)
    clients = test.params.get("clients")
    m = shape.multi if shape is not None else None
    if m is None:
        return None if clients else (math.inf, copies)
    bound = math.inf
    per_client = m.client or m.public
    if clients and per_client is not None:
        bound = min(bound, _client_hosts(test, shape) * per_client.rate_bits_per_s / 8)
    elif clients and per_client is None:
        return None
    if m.public is not None:
        bound = min(bound, m.hosts * m.public.rate_bits_per_s / 8)
    back = m.cluster if m.cluster is not None else (None if m.separate_cluster else m.public)
    if back is not None and copies > 1:
        bound = min(bound, m.hosts * back.rate_bits_per_s / 8 / (copies - 1))
    return bound, copies


def capacity_cut(tests: list[Test], suite: Suite, room: Room | None, remote: bool = False) -> list[Test]:
    """The tests with each rados bench write that the capacity guard stops early counted at the time it takes to
    fill its share of the room (and the seq after it with the top-up that its fewer objects need); `room`: the
    cluster as the run found it (None: not known, no write cut), a variant with a lab shape in its own build's;
    `remote`: its OSDs are on other hosts (REMOTE_OSD_BYTES_PER_S each)."""
    shapes = {v.name: v.lab for v in suite.variant_specs()}
    limit = suite.settings.max_raw_used
    out = list(tests)
    build: str | None = None
    each = float(REMOTE_OSD_BYTES_PER_S if remote else WRITE_OSD_BYTES_PER_S)
    total, used, rates = (room.total_raw, room.used_raw, [each] * room.osds) if room is not None else (0, 0, [])
    before = 0.0            # raw bytes the group before wrote, not freed yet
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(tests):
        groups.setdefault(t.group, []).append(i)
    for idx in groups.values():
        first = tests[idx[0]]
        shape = shapes.get(first.variant) if first.variant else None
        if shape is not None and shape.key() != build:
            if build is not None or room is None:       # a rebuild (or no cluster known): the shape's fresh lab
                n = shape.multi.hosts * shape.multi.osds_per_host if shape.multi is not None else shape.osds
                fresh = Room.fresh_lab(n, shape.osd_size_bytes)
                total, used = fresh.total_raw, fresh.used_raw
                before = 0.0
            build, rates = shape.key(), [min(r, each) for r in _osd_rates(shape) or rates]
        if not total or first.kind not in CAPACITY_CUT_KINDS:
            continue
        written = 0.0
        cut_write: tuple[float, float] | None = None      # (its duration, the time it is expected to write)
        for i in idx:
            t = tests[i]
            d = t.params.duration_s
            if t.params.phase != "write" or d is None or t.params.get("steady_state"):
                if cut_write is not None and t.params.phase in KINDS[t.kind].exhaustible_reads:
                    out[i] = _topup_after_cut(out[i], *cut_write)
                    cut_write = None
                continue
            left = sum(1 for j in idx if tests[j].search is not None and tests[j].params.phase == "write"
                       and int(tests[j].params[t.search.param]) >= int(t.params[t.search.param])) \
                if t.search is not None else 1
            size = int(object_size_of(t.kind, t.params) or 0)
            room = max(0.0, total * limit - used - before - written) * GUARD_MARGIN
            # the least the write asks for (a load of objects for each step its search may still run, on every
            # client host and instance); with less room, the guard waits while the group before's space is freed
            least = _in_flight_bytes(t, shape) * left * _copies(t.params)
            waited = 0.0
            if room < least and before > 0:
                freed = min(before, (least - room) / GUARD_MARGIN)
                waited = min(FREEING_MAX_S, FREEING_POLL_S + freed / FREE_BYTES_PER_S)
                before -= freed
                room += freed * GUARD_MARGIN
            share = room / max(left, 1)
            rate = write_rate_raw(size, rates, _links_bound(t, shape))
            took = min(float(d), share / rate) if rate > 0 else float(d)
            written += run_share(t) * took * rate
            if took < d or waited:
                repeats = t.search.repeats if t.search is not None else 1
                out[i] = out[i].model_copy(update={"est_duration_s": out[i].est_duration_s - (d - took) * repeats
                                                   + waited})
                cut_write = (float(d), took)
            else:
                cut_write = None
        before = written
    return out


def _topup_after_cut(seq: Test, planned_s: float, took_s: float) -> Test:
    """A seq after a write the capacity guard cut: the top-up its fewer objects need (kinds' read_topup_s) instead of
    the one expand counted for the whole write."""
    kind = KINDS[seq.kind]
    if kind.read_topup_s is None or seq.params.duration_s is None:
        return seq
    size, seq_s = int(object_size_of(seq.kind, seq.params) or 0), float(seq.params.duration_s)
    load = load_of(seq.kind, seq.params)
    load = load if isinstance(load, int) else 16
    n = int(seq.params.get("instances") or 1)
    extra = kind.read_topup_s(size, load, took_s, seq_s, n) - kind.read_topup_s(size, load, planned_s, seq_s, n)
    return seq.model_copy(update={"est_duration_s": seq.est_duration_s + extra}) if extra else seq


def rebuild_s(lab: LabBuild | None) -> float:
    """The lab down and up again in `lab`'s build (None: not known, LAB_REBUILD_S)."""
    if lab is None:
        return LAB_REBUILD_S
    n = lab.multi.hosts * lab.multi.osds_per_host if lab.multi is not None else lab.osds
    filestore = lab.multi is not None and lab.multi.store.objectstore == "filestore"
    return n * (REBUILD_PER_OSD_S + (REBUILD_PER_FILESTORE_OSD_S if filestore else 0.0))


def _osd_rates(lab: LabBuild | None) -> list[float] | None:
    """Each OSD's bench rate in a variant's lab shape (its OSDs, each at its throttle's bytes per second, else
    OSD_BENCH_BYTES_PER_S); None: no shape, the OSDs not known (ASSUMED_OSDS). Measured (seed-han-2012): 10
    rounds of 16 MiB on 3 OSDs throttled to 15 MiB/s took 52.7 s, on 6 such OSDs 120 s, estimated 29 s each."""
    if lab is None:
        return None
    n = lab.multi.hosts * lab.multi.osds_per_host if lab.multi is not None else lab.osds
    rates = [float(OSD_BENCH_BYTES_PER_S)] * n
    for drive, limit in lab.throttles.items():
        if drive.role == "data" and limit.bytes_per_s and drive.osd < n:
            rates[drive.osd] = min(rates[drive.osd], float(limit.bytes_per_s))
    return rates


def _copies(params: dict[str, Any]) -> float:
    """Raw bytes per client byte in a test's pool: its replicas, or (k+m)/k of an erasure code."""
    pool = params.get("pool_profile") or {}
    if pool.get("type") == "erasure" and pool.get("k"):
        return (pool["k"] + pool["m"]) / pool["k"]
    return float(pool.get("size") or 3)


def _prefill_s(params: dict[str, Any], rates: list[float] | None) -> float:
    """The prefill of a group's RBD images on a shape whose drives are throttled: every byte written its pool's
    copies (replicas, or (k+m)/k of an erasure code) spread over the OSDs, the slowest OSD's throttle bounding it
    (kind.group_setup_s holds an unthrottled lab's, CPU-bound). Measured: seed-homelab-2018's 256 MiB prefills on 4
    OSDs at 30 MiB/s and one at 10 MiB/s took 12-24 s before their group's first test, against the 6 s set-up."""
    if not params.get("prefill") or not rates or min(rates) >= OSD_BENCH_BYTES_PER_S:
        return 0.0
    written = float(params.get("images") or 1) * float(params.get("image_size") or 0) * _copies(params)
    return written / len(rates) / min(rates)


def _test_estimate(kind: Kind, params: dict[str, Any], first_of_group: bool,
                   osd_rates: list[float] | None = None) -> float:
    run = params.get("duration_s")
    if params.get("steady_state"):             # rounds until steady: at most its max
        run = params["steady_state"]["max"]
    if run is None and kind.repeat_within_test:       # per OSD and round: a bench of `total` bytes
        rates = osd_rates or [float(OSD_BENCH_BYTES_PER_S)] * ASSUMED_OSDS
        run = int(params.get("repeat", 1)) * sum(kind.default_test_s + float(params.get("total", 0)) / r
                                                 for r in rates)
    else:
        run = _tool_s(kind, params, run)
    if not first_of_group:
        return float(run) + kind.test_overhead_s
    prefill = _prefill_s(params, osd_rates)
    setup = IMAGES_SETUP_S + PREFILL_START_S + prefill if prefill else group_setup_s(kind, params)
    if not prefill and params.get("prefill") and params.get("image_size"):
        # unthrottled, a large image's prefill passes the kind's set-up: its raw bytes at the lab's rate
        raw = float(params.get("images") or 1) * float(params["image_size"]) * _copies(params)
        setup = max(setup, IMAGES_SETUP_S + PREFILL_START_S + raw / PREFILL_RAW_BYTES_PER_S)
    return float(run) + kind.test_overhead_s + setup


# rados bench's driver makes a pool for each instance of a group and removes them at its end: measured (bench
# estimates, the gap from a group's last test to the next one's first, less nothing else), 0.2-0.5 s for one pool on
# the one-host lab and on 3 OSD hosts alike (12 groups), 3.6-5.3 s for 8 (seed-argonaut-bobtail-now, 6 groups): not
# the 3 s a group the kind's set-up says.
POOL_SETUP_S = 0.5
POOL_PER_INSTANCE_KINDS = kinds_where(pool_per_instance=True)


# A group of images not prefilled (`prefill: false`) is its pool and images made and removed: measured (bench
# estimates, seed-homelab-2018 on 4 OSD hosts, 2026-12-06 21:17, load 5.8) 0.7-1.3 s from a group's last test to the
# next one's first, the variant's throttles set between them; not the kind's set-up, which holds an unthrottled
# prefill. A prefill a throttle bounds (_prefill_s) is that and the prefill's own start besides its bytes: the 6 groups
# of 256 MiB images there took 1.6-4.0 s (median 2.5) more than their bytes at their slowest OSD's throttle.
IMAGES_SETUP_S = 1.3
PREFILL_START_S = 1.2
# An unthrottled prefill's raw bytes a second (bench estimates, suites/vm-disk.yaml on the one-host lab, 2026-12-07:
# 1 GiB images on 3 replicas in 11.5-12.9 s, 240-270 MiB/s raw; suites/rbd.yaml's on 2 and 3 replicas and EC 2+1 in
# 3.6-8.2 s): the slower, for a group of large images set up longer than the kind's set-up says
PREFILL_RAW_BYTES_PER_S = 256 * 1024**2


def group_setup_s(kind: Kind, params: dict[str, Any]) -> float:
    """A group's set-up and removal: its pools for a kind that makes one per instance; a kind's images not
    prefilled, IMAGES_SETUP_S; else the kind's."""
    if kind.name in POOL_PER_INSTANCE_KINDS:
        return POOL_SETUP_S * int(params.get("instances") or 1)
    if params.get("prefill") is False:
        return min(kind.group_setup_s, IMAGES_SETUP_S)
    return kind.group_setup_s


def _search_of(kind: Kind, data: dict[str, Any], client_hosts: int | None) -> Search | None:
    """The search a workload asks for (`auto` in a load its kind searches), as its tests record it. A search of
    client hosts without a max goes up to every one (`client_hosts`; not known yet: DEFAULT_MAX, the worst case)."""
    for param in searched(kind):
        dumped = data.get(param)
        if isinstance(dumped, dict):
            auto = dumped[AUTO]         # schema.Auto's dump: {auto: {max, latency_max}}, as the suite writes it
            most = auto["max"] if auto["max"] is not None else client_hosts or loadsearch.DEFAULT_MAX
            return Search(param=param, max=most, latency_max_s=auto.get("latency_max"),
                          repeats=auto.get("repeats") or 1)
    return None


def client_hosts_of(suite: Suite) -> int | None:
    """The client hosts a suite names, when it lists them (`clients: lab`: the run learns them from the lab)."""
    return len(suite.clients) if isinstance(suite.clients, list) else None


def waits_for_client_hosts(suite: Suite) -> bool:
    """Some workload searches its client hosts up to every one, and the suite names the lab's, whose number only
    the run learns (it expands the plan again with them: expand's `client_hosts`)."""
    return suite.clients == "lab" and any(isinstance(c := getattr(w, "clients", None), Auto) and c.max is None
                                          for w in suite.workloads)


def _label(kind: Kind, key: str, value: Any) -> str:
    """A parameter's value in a test id: as its kind names it (kind.label), else by the rules every kind shares."""
    own = kind.label(key, value)
    if own is not None:
        return own
    if key == "instances":
        return f"x{value}"
    if key == "clients":
        return f"clients-{value}"
    if key == "duration":
        return f"{value:g}s"
    return str(value)


def baseline_tests(suite: Suite) -> list[Test]:
    """The suite's disk and network baselines: the first tests of the plan, one group each."""
    b = suite.baseline
    tests: list[Test] = []
    if b is not None and b.disks is not None:
        tests += disk_baseline.section_tests(b.disks, start_index=len(tests) + 1)
    if b is not None and b.network is not None:
        tests += net_baseline.section_tests(b.network, start_index=len(tests) + 1)
    return tests


def _sizes(suite: Suite, client_hosts: int | None = None) -> list[tuple[int, list[tuple[str, int]]]]:
    """Each workload's number of tests and the YAML paths that multiply it (path, factor), counted as expand()
    would make them, without making them."""
    specs = suite.variant_specs()
    classes = [list(c) for c in shape_classes([(v.name, v.lab) for v in specs])] if specs else [[None]]
    out = []
    for i, w in enumerate(suite.workloads):
        data = w.model_dump()
        kind = KINDS[data["type"]]
        phase_field = kind.phase_field
        per_build = [len([v for v in c if w.variants is None or v in w.variants]) for c in classes]
        factors = [(f"workloads[{i}].{k}", len(v)) for k, v in data.items()
                   if isinstance(v, list) and k not in _FIXED and k != phase_field]
        if not kind.repeat_within_test:
            factors.append((f"workloads[{i}].repeat", w.repeat))
        if phase_field:
            factors.append((f"workloads[{i}].{phase_field}", len(data[phase_field])))
        if (search := _search_of(kind, data, client_hosts)) is not None:
            factors.append((f"workloads[{i}].{search.param}.auto.max", len(loadsearch.loads(search.max))))
        if specs:
            factors.append(("variants", sum(per_build)))
        n = sum(per_build) if not specs else 1
        for _, f in factors:
            n *= f
        out.append((n, factors))
    return out


def check_size(suite: Suite, client_hosts: int | None = None) -> None:
    """UserError when the plan would hold more than MAX_TESTS tests, naming the YAML path that multiplies it."""
    sizes = _sizes(suite, client_hosts)
    total = sum(n for n, _ in sizes)
    if total <= MAX_TESTS:
        return
    n, factors = max(sizes, key=lambda s: s[0])
    path, f = max(factors, key=lambda pf: pf[1])
    product = " x ".join(f"{p} {v}" for p, v in factors if v != 1) or "1"
    raise UserError(f"the plan would have {total:,} tests, more than the {MAX_TESTS:,} a suite may have "
                    f"({product})", f"lower {path}, or split the suite", where=path)


def ceiling_sources_first(workloads: list[Any]) -> list[Any]:
    """The workloads in the suite's order, save those whose results feed the model's ceilings (osd bench, where no
    disk baseline ran) first: each result is analysed as it comes, so a rados bench before the osd bench it needs
    would have none (docs/model.md, Inputs: osd bench feeds the RADOS ceilings whatever the workloads' order)."""
    return sorted(workloads, key=lambda w: not KINDS[w.type].ceiling_source)


def expand(suite: Suite, client_hosts: int | None = None, unbuilt: frozenset[str] | None = None) -> Plan:
    """Baselines, then every workload's groups; with variants, each group once per variant, the variants' order
    turning round from one block to the next (variant_plan.variant_order: A B | B A | ...). With lab shapes, the
    variants of one lab build (shape_plan.shape_classes) run all their groups before the next build's: a rebuild
    costs seconds, so shapes are not interleaved, while throttles and options within a build are; unless the builds
    take turns repeat by repeat (build_blocks: by default when they differ in release).

    `client_hosts`: the client hosts the run has, where the suite does not list them (`clients: lab`): a search
    of them without a max goes up to every one (waits_for_client_hosts). `unbuilt`: the releases whose roots the
    run builds at their first build (ROOT_BUILD_S each; None: those of this machine's cache, unbuilt_roots).

    A plan of more than MAX_TESTS tests is refused before any is made (check_size)."""
    client_hosts = client_hosts or client_hosts_of(suite)
    to_build = set(unbuilt_roots(suite) if unbuilt is None else unbuilt)
    check_size(suite, client_hosts)
    tests: list[Test] = baseline_tests(suite)
    group_no = 0
    block = 0
    last_variant: str | None = None
    specs = suite.variant_specs()
    # variants that share a lab build run one class after the other (shape_plan.shape_classes); without lab
    # shapes all variants are one class
    classes: list[list[str | None]] = [list(c) for c in shape_classes([(v.name, v.lab) for v in specs])] \
        if specs else [[None]]
    shaped = any(v.lab is not None for v in specs)
    shapes = {v.name: v.lab for v in specs}
    options = {v.name: v.options for v in specs}
    put_back = LAB_PUT_BACK_S if shaped else 0.0     # at the run's end; counted with the first block's rebuild
    for variants, only_repeat in build_blocks(suite, classes):
        lab = shapes.get(variants[0]) if variants[0] else None
        rebuild = rebuild_s(lab) + put_back if shaped else 0.0
        put_back = 0.0
        if lab is not None and lab.release in to_build:         # its root built once, before its first block
            rebuild += ROOT_BUILD_S
            to_build.discard(lab.release)
        for w in ceiling_sources_first(suite.workloads):
            data = w.model_dump()
            kind = KINDS[data["type"]]
            name = w.name or kind.name
            phase_field = kind.phase_field
            phases = data[phase_field] if phase_field else [kind.only_phase]
            per_phase = data.get("duration") if isinstance(data.get("duration"), dict) else None
            dims = [k for k, v in data.items() if isinstance(v, list) and k not in _FIXED and k != phase_field]
            search = _search_of(kind, data, client_hosts)
            fixed = {k: v for k, v in data.items() if k not in dims and k not in _FIXED and k != phase_field
                     and not (k == "duration" and per_phase is not None)
                     and not (search is not None and k == search.param)}
            # a search's steps run each phase at every load it may reach, one phase after the other
            steps = [(phase, load) for phase in phases
                     for load in (loadsearch.loads(search.max) if search is not None else [None])]
            repeats = 1 if kind.repeat_within_test else w.repeat
            reps = list(range(1, repeats + 1)) if only_repeat is None else \
                ([only_repeat] if only_repeat <= repeats else [])
            if kind.repeat_within_test:
                fixed["repeat"] = w.repeat
            # a workload limited to some variants runs under those of this build alone (none: not in this build)
            mine = [v for v in variants if w.variants is None or v in w.variants]
            if not mine or not reps:
                continue
            for combo in itertools.product(*(data[k] for k in dims)):
                params_base = dict(zip(dims, combo))
                order = ((r, v) for r in reps for v in variant_order(mine, block + r - 1))
                for rep, variant in order:
                    group_no += 1
                    group = f"g{group_no:03d}"
                    switch_s = (_switch_s(options.get(last_variant), options.get(variant))
                                if variant != last_variant else 0.0) + rebuild
                    rebuild = 0.0
                    last_variant = variant
                    for pi, (phase, load) in enumerate(steps):
                        params = {**fixed, **params_base}
                        if search is not None:
                            params[search.param] = load
                        if phase is not None:
                            params["phase"] = phase
                        if params.get("steady_state") is None or phase not in kind.steady_phases:
                            params.pop("steady_state", None)     # absent unless it applies: as before
                        if per_phase is not None:
                            params["duration"] = per_phase[phase]
                        if "pool" in params:
                            params["pool_profile"] = suite.pools[params["pool"]].model_dump()
                        if params.get("metadata_pool"):
                            params["metadata_profile"] = suite.pools[params["metadata_pool"]].model_dump()
                        if "duration" in params:
                            params["duration_s"] = params.pop("duration")
                        if search is not None and params.get("duration_s") is not None:
                            # a step needs seconds past its tool's warm-up to be judged: its median, its spread, a
                            # stall (core/loadsearch.py); a shorter one is lengthened to that
                            params["duration_s"] = max(params["duration_s"], loadsearch.min_step_s(kind.warmup_s))
                        if params.get("clients") is None:
                            params.pop("clients", None)      # this machine alone: the parameters of every run before
                        labels = [_label(kind, k, params_base[k]) for k in dims
                                  if k in kind.id_params or len(data[k]) > 1]
                        if search is not None:
                            labels.append(_label(kind, search.param, load))
                        named_phase = [str(phase)] if phase_field else []      # only_phase: not in ids
                        parts = ([name] + named_phase + labels + ([variant] if variant else [])
                                 + ([f"r{rep}"] if repeats > 1 else []))
                        index = len(tests) + 1
                        tests.append(Test(
                            id=f"{index:03d}-" + "-".join(parts),
                            index=index,
                            workload=name,
                            kind=kind.name,
                            group=group,
                            params=params,
                            repeat=rep,
                            est_duration_s=_test_estimate(kind, params, pi == 0, _osd_rates(shapes.get(variant)))
                            * (search.repeats if search else 1)
                            + (switch_s if pi == 0 else 0.0),
                            variant=variant,
                            search=search,
                        ))
                    _count_drain(tests, group, shapes.get(variant))
                    _count_topup(kind, tests, group)
                block += len(reps) if only_repeat is None else 0
    return Plan(suite=suite, tests=tests)


def _switch_s(before: tuple | None, after: tuple | None) -> float:
    """From one variant to the next in one lab build: their options set (and the ones before put back) and every
    daemon reporting them, VARIANT_SWITCH_S; between variants without options (the lab's throttles alone, set
    through its cgroups: seed-homelab-2018's groups on 4 hosts were 0.7-1.3 s apart with their set-up) next to
    nothing."""
    return VARIANT_SWITCH_S if before or after else 0.0


# A lab shape of a release other than this machine's own Ceph runs from a root built once and cached
# (lab/roots.py); a run whose release has none builds it before that build's first group. Measured
# (seed-argonaut-bobtail-now, 2026-12-06 21:35, load 6-7, the machine's first run of those releases): reef's root
# built in 70.3 s, tentacle's in 64.2 s (their manifests' build_s); the gap before each build's first group 98.4 and
# 93.4 s, against 11.2-14.0 s with the roots cached (the runs before): 86 and 81 s more.
ROOT_BUILD_S = 83.0


def unbuilt_roots(suite: Suite) -> frozenset[str]:
    """The releases of the suite's lab shapes that run from a root this machine has not built yet: neither the
    release of its own Ceph nor one in its roots cache (lab/roots.py roots_dir)."""
    wanted = {v.lab.release for v in suite.variant_specs() if v.lab is not None and v.lab.release}
    if not wanted:
        return frozenset()
    from ..lab import roots      # here: a suite without releases imports nothing of the lab
    own = _own_release()
    return frozenset(r for r in wanted if r != own and roots.read_root(roots.roots_dir() / r) is None)


@functools.lru_cache(maxsize=1)
def _own_release() -> str:
    """The release of this machine's own Ceph daemons ('' when it has none), as the lab reads it."""
    from ..core.releases import release_of_version
    if shutil.which("ceph-osd") is None:
        return ""
    try:
        done = subprocess.run(["ceph-osd", "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return release_of_version(done.stdout) if done.returncode == 0 else ""


def first_build_ready(tests: list[Test], build: LabBuild | None = None) -> list[Test]:
    """The tests' estimates when the lab already runs in the first variant's build (`build`; None: not known) as the
    run starts (the run made it so before it printed its estimate, or found it so): expand counts a rebuild at every
    block's start, and the first one is not made. Measured: seed-homelab-2018's first group, estimated 24 s with the
    rebuild, took 9.2 s; its filestore block's, after a real rebuild, 27.9 s."""
    at = next((i for i, t in enumerate(tests) if t.variant is not None), None)
    made = rebuild_s(build)
    if at is None or tests[at].est_duration_s < made:
        return tests
    return [*tests[:at], tests[at].model_copy(update={"est_duration_s": tests[at].est_duration_s - made}),
            *tests[at + 1:]]


def planned_for(suite: Suite, osd_hosts: list[str], here: str, client_hosts: int | None = None,
                build_ready: bool = False, scrape_s: float = 1.0, watched: list[str] | None = None,
                room: Room | None = None, unbuilt: frozenset[str] = frozenset()) -> list[Test]:
    """The suite's tests as `run` estimates them for a cluster of these OSD hosts (launch.prepare: the plan for the
    lab's client hosts, for_cluster, capacity_cut for the cluster's `room`, and first_build_ready when the lab
    already runs in the first variant's build): what bench estimates and the unit tests hold recorded runs against
    (with the lab's Prometheus, `scrape_s`; `unbuilt`: the releases whose roots the run built)."""
    prom = prometheus_test_s(scrape_s) if suite.settings.prometheus is not None else 0.0
    tests = for_cluster(expand(suite, client_hosts or None, unbuilt).tests, osd_hosts, here,
                        suite.settings.drop_caches, prom, watched)
    tests = capacity_cut(tests, suite, room, remote=bool(set(osd_hosts) - {here}))
    if build_ready:
        first = next((t.variant for t in tests if t.variant is not None), None)
        tests = first_build_ready(tests, {v.name: v.lab for v in suite.variant_specs()}.get(first))
    return tests


def _count_drain(tests: list[Test], group: str, shape: LabBuild | None) -> None:
    """A write the capacity model knows the rate of (CAPACITY_CUT_KINDS) stops starting operations at its duration
    and waits for those in flight: on a lab shape whose links or throttles bound it, their bytes (every instance's
    load of objects, on each client host) at the write's rate (write_rate_raw over its copies). Measured (bench
    estimates, seed-han-2012: 4 MiB objects, 16 in flight, over 200 Mbit/s links and drives throttled to 15 MiB/s)
    its writes of 12 s ran 13.9-16.3 s, 1.9-4.3 s past the tool's start and its run (drained 1.5-3.0 s here)."""
    m = shape.multi if shape is not None else None
    rates = _osd_rates(shape)
    if not rates or not (shape.throttles or (m is not None and (m.public or m.cluster or m.client))):
        return      # nothing bounds it: a fraction of a second, in the kind's overhead
    for i, t in enumerate(tests):
        if t.group != group or t.kind not in CAPACITY_CUT_KINDS or KINDS[t.kind].direction(
                t.params.phase) != "write" or t.params.duration_s is None:
            continue
        in_flight = _in_flight_bytes(t, shape)
        rate = write_rate_raw(int(object_size_of(t.kind, t.params) or 0), rates, _links_bound(t, shape)) / \
            _copies(t.params)
        if in_flight and rate > 0:
            repeats = t.search.repeats if t.search is not None else 1
            tests[i] = t.model_copy(update={"est_duration_s": t.est_duration_s + repeats * in_flight / rate})


def _client_hosts(test: Test, shape: LabBuild | None) -> int:
    """How many client hosts a test runs on: its `clients:` count; `all`, the lab shape's client hosts where one
    says (else one: the plan does not know the suite's list here); none, this machine alone (1)."""
    count = test.params.get("clients")
    if count == "all":
        m = shape.multi if shape is not None else None
        return max(m.clients if m is not None else 1, 1)
    return max(int(count or 1), 1)


def _in_flight_bytes(test: Test, shape: LabBuild | None = None) -> int:
    """Client bytes a write keeps in flight: each process's load of objects, on every instance and client host."""
    return (in_flight_per_process(test.kind, test.params) or 0) * int(object_size_of(test.kind, test.params) or 0) * \
        int(test.params.get("instances") or 1) * _client_hosts(test, shape)


def _count_topup(kind: Kind, tests: list[Test], group: str) -> None:
    """A seq reads each object its write made once: when they would not last it, rados bench's driver writes
    more first (drivers/rados_bench.py top_up), which the seq's estimate counts (once: the steps after it find
    them). Measured: seed-centerdevice-2014's 2 s seq of 4 MiB objects took 25.3 s, estimated 3 s without it."""
    if kind.read_topup_s is None:
        return
    mine = [i for i, t in enumerate(tests) if t.group == group]
    write = next((tests[i] for i in mine if tests[i].params.phase == "write"), None)
    at = next((i for i in mine if tests[i].params.phase in kind.exhaustible_reads), None)
    if write is None or at is None or None in (write.params.duration_s, tests[at].params.duration_s):
        return
    seq = tests[at]
    load = load_of(seq.kind, seq.params)
    extra = kind.read_topup_s(int(object_size_of(seq.kind, seq.params) or 0), load if isinstance(load, int) else 16,
                             float(write.params.duration_s), float(seq.params.duration_s),
                             int(seq.params.get("instances") or 1))
    if extra:
        tests[at] = seq.model_copy(update={"est_duration_s": seq.est_duration_s + extra})


def interleaves_builds(suite: Suite) -> bool:
    """Whether the lab's builds take turns repeat by repeat (settings.interleave_builds; by default when the builds
    differ in their Ceph release: release against release is the comparison the hours between the builds would
    otherwise confound with the cluster's drift)."""
    if suite.settings.interleave_builds is not None:
        return suite.settings.interleave_builds
    return len({v.lab.release for v in suite.variant_specs() if v.lab is not None}) > 1


def build_blocks(suite: Suite, classes: list[list[str | None]]) -> list[tuple[list[str | None], int | None]]:
    """The plan's blocks: the variants of one lab build each, and the one repeat a block runs (None: every repeat).
    Builds one after the other (a rebuild each), or, interleaved, every build once per repeat, the builds' order
    turning round from one repeat to the next (A B | B A), as variants of one build take turns."""
    if len(classes) < 2 or not interleaves_builds(suite):
        return [(c, None) for c in classes]
    most = max((w.repeat for w in suite.workloads), default=1)
    return [(c, r) for r in range(1, most + 1) for c in (classes if r % 2 else classes[::-1])]
