"""What a kind of test is (its descriptor) and what its tool needs on a client host: the types every kind module fills.

A descriptor says which field of a workload holds the phases of a group, which level of the stack it measures, what
each phase does to the cluster's data (read, write, mixed or metadata), whether the efficiency model analyses it,
the title of its report table and what its operations per second are called (ops_unit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from ..core.units import format_size

Direction = Literal["read", "write", "mixed", "metadata"]
Level = Literal["Baselines", "RADOS", "OSD", "RBD", "RGW"]
Layout = Literal["baseline", "rados", "fio", "osd", "rgw"]   # the report table a kind's results go into

LEVEL_ORDER: tuple[Level, ...] = ("Baselines", "RADOS", "OSD", "RBD", "RGW")
DIRECTION_ORDER: tuple[Direction, ...] = ("write", "read", "mixed", "metadata")


@dataclass(frozen=True)
class Kind:
    name: str
    level: Level
    title: str                                  # the report's table title
    layout: Layout                              # and its columns
    phase_field: str | None                     # workload field whose values are the tests of one group, in order
    directions: Mapping[str, Direction]         # phase (or the tool's op when there are no phases) -> direction
    modelled: bool = False                      # the efficiency model gives its results a ceiling
    ceiling_source: bool = False                # its results feed the model's ceilings (baselines, osd bench)
    cluster: bool = True                        # runs against the cluster (baselines measure hosts only)
    repeat_within_test: bool = False            # `repeat` is rounds inside one test, not separate tests
    group_setup_s: float = 0.0                  # estimate: pool/image/user set-up and removal per group
    test_overhead_s: float = 1.0                # estimate: per test, beyond its duration (start-up, cache drop)
    default_test_s: float = 10.0                # estimate: a test without a duration of its own (osd bench: one
                                                # OSD's start-up, plus its bytes at 400 MiB/s)
    ops_counted: bool = True                    # the tool counts operations (iperf3 does not: no IOPS)
    ops_name: str = "IOPS"                      # what its operations per second are called in every report
    # read phases that read each object the group's write phase made once, then stop (rados bench seq)
    exhaustible_reads: frozenset[str] = frozenset()
    # its tool writes what a read phase reads in the same run (RGW's loadgen fills its key space first): the caches
    # are not dropped before such a phase (a drop would reach nothing it reads), nor counted in its estimate
    prefills_in_run: bool = False
    # object size -> how many times such a read's duration its write needs for the read to last (plan.warnings)
    read_write_ratio: Callable[[int | None], int] | None = None
    # (object size, load, write s, read s, instances) -> seconds its driver writes more before such a read, planned
    # (plan.expand)
    read_topup_s: Callable[[int, int, float, float, int], float] | None = None
    # (a test's params, the seconds it measures: its duration, else None) -> the seconds its tool runs (the plan's
    # estimate; None: the duration, else default_test_s): RGW's loadgen warms up, fills a read's key space first
    # and deletes what it wrote at its end, around the phase it measures
    tool_s: Callable[[Mapping[str, Any], float | None], float] | None = None
    # phases that may run in rounds until steady (a workload's steady_state); none: the kind refuses it
    steady_phases: frozenset[str] = frozenset()
    rados_rates: bool = False                   # its results are the RADOS rates RGW's model builds a ceiling from
    rgw_model: bool = False                     # RGW's model (analysis/rgw.py) gives its ceiling, not the cluster's
    search_param: str | None = None             # the load a search (`auto`, core/loadsearch.py) may double; None: none
    warmup_s: float = 1.0                       # seconds its per-second series carries before its load is steady (the
                                                # connection, the first ops): a search step's shortest length follows
    # its driver takes each test's client hosts from the test, not once for its group: `clients: auto` may search them
    searches_clients: bool = False
    # a kind whose workload names no phases (phase_field None) but whose every test is one: its name, which the
    # plan puts in each test's `phase` (its direction, whether it runs in rounds); None: the tool's op tells
    only_phase: str | None = None
    # the workload fields that are sizes of the RADOS objects its tool writes, which the OSDs' osd_max_object_size
    # bounds (cluster/limits.py)
    object_size_params: tuple[str, ...] = ()
    # its tool's objects may go in a pool cephbench did not create (`existing:`): in a namespace of the run's own,
    # removed whole (suite/config.py refuses an existing pool to any other kind)
    existing_pools: bool = False
    # how a swept field of its own names its value in test ids, where the plan's common table has no rule for it
    labels: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)
    # its writes run for their time and leave their objects: the capacity guard may shorten them (suite/plan.py)
    capacity_cut: bool = False
    pool_per_instance: bool = False             # its driver makes a pool for each instance of a group (estimate)
    # Its parameters by role, so that the core (the plan, the search, the analysis, the report, the export) reads a
    # test's parameters through its kind and never names one (tests/unit/test_kind_names.py):
    # the parameters whose product is one process's operations in flight (iodepth x numjobs), each with its name in
    # a curve's load ("qd=32 jobs=2"); the first is its load, the figure a search doubles where it searches
    # (search_param) and the tables' "in flight"
    load_params: Mapping[str, str] = field(default_factory=dict)
    load_tag: str = ""                          # its load in test ids ("t16", "qd32") and tables ("t=16")
    op_size_param: str | None = None            # the size of one operation, in bytes; None: no one size
    # the size of the objects its tests write (RADOS objects, RBD's objects, S3's), or of the blocks an OSD or a
    # disk writes as such: the export's object_size column
    object_size_param: str | None = None
    size_params: tuple[str, ...] = ()           # parameters in bytes: ids, tables and charts show them as sizes
    id_params: tuple[str, ...] = ()             # parameters its test ids name even when not swept
    shown_params: tuple[str, ...] = ()          # parameters the terminal's params column shows, in this order
    swept_charts: tuple[str, ...] = ()          # parameters the HTML report draws throughput against, when swept
    table_params: tuple[str, ...] = ()          # columns of its own in its report table, after the test's id
    # the parameters of a kind no suite workload model declares (the baselines: MODEL None), which its plan puts in
    # its tests: only its modules name them, as a model's fields are (tests/unit/test_kind_names.py)
    own_params: tuple[str, ...] = ()
    # a kind without a load (load_params) whose tests run this many streams at once (iperf3's -P): the export's
    # concurrency column (kinds.concurrency_of)
    parallel_param: str | None = None
    # what its driver makes on the cluster or a host that the core does not make for every kind (pools, ec
    # profiles, processes, work directories are the core's, core/resources.py KINDS): its images, users, buckets,
    # files, each declared once (ResourceType below) and shared by the kinds that make it
    resources: tuple["ResourceType", ...] = ()

    def direction(self, phase: str | None) -> Direction | None:
        return self.directions.get(str(phase)) if phase is not None else None

    @property
    def reads_cluster(self) -> bool:
        """Some phase reads data from the cluster that was there before it: caches are dropped before it."""
        return self.cluster and not self.prefills_in_run and any(d in ("read", "mixed")
                                                                 for d in self.directions.values())

    def drops_caches_before(self, phase: str | None) -> bool:
        """The page caches are dropped before this phase (the drivers' lifecycle, and the plan's estimate of it): a
        read or a mix of a kind whose reads read what was there before them."""
        return self.reads_cluster and self.direction(phase) in ("read", "mixed")

    def read_phases(self) -> frozenset[str]:
        return frozenset(p for p, d in self.directions.items() if d in ("read", "mixed"))

    @property
    def load_param(self) -> str | None:
        return next(iter(self.load_params), None)

    def label(self, key: str, value: Any) -> str | None:
        """How a parameter of its own names its value in a test id; None: not one the kind formats."""
        if key in self.labels:
            return self.labels[key](value)
        if key in self.size_params:
            return format_size(value)
        if key == self.load_param and self.load_tag:
            return f"{self.load_tag}{value}"
        return None


def _whole(name: str) -> str:
    return name


@dataclass(frozen=True)
class ResourceType:
    """A kind of thing a kind's driver makes, declared once, in the modules of the kinds that make it (their
    KIND.resources): what its ledger entries are called, how one is proved to be the run's, how it is removed and
    in which order. Everything else reads this declaration through the kinds' registry (kinds.RESOURCE_TYPES):
    the run's ledger admits its entries (kinds.LEDGER_KINDS), the run's removal of what a dead part of it left and
    a killed run's `cephbench cleanup` remove them by `remover` (run/launch.py removers, through
    drivers/registry.py remover_of), and cluster/recovery.py proves each the run's, checks the cluster's fsid for
    it and orders it by this declaration. The core names none (tests/unit/test_kind_names.py)."""

    name: str                               # its ledger kind: resources.json's "kind" of each entry
    # "<module under drivers/>:<function>": the function (ctx: DriverContext, entry: core.resources.Resource) that
    # removes it knowing only its ledger entry, and accepts what is gone already; named, not imported, as a kind
    # names its DRIVER (kinds import no driver)
    remover: str
    by_hand: Callable[[str], str]           # its ledger name -> the command a person runs to remove it
    # The proof of ownership (cluster/recovery.py Ownership._named) reads the name that must read
    # cephbench-<run id>-... for one of the run's ids, whose marker on the cluster names no other run directory:
    # its ledger name -> that name (the image of "<pool>/<image>", the file of "<host>:<path>")
    owned_name: Callable[[str], str] = _whole
    # run id -> the one name a run gives it (the disk baseline's file): another, even with the run's id, is refused
    only_name: Callable[[str], str] | None = None
    # its ledger name is a krbd device (/dev/rbdN), which carries no name: the name proved is the image's mapped
    # there now (sysfs), and a device with nothing mapped is nothing to remove
    maps_image: bool = False
    on_cluster: bool = True                 # on the cluster: removed only from the cluster the run ran on (fsid)
    # named "<pool>/...": when that pool is the run's too, a killed run's cleanup removes the pool, which takes it
    # with it (`rbd rm` of an image would first wait out the watch of the client killed with the run)
    goes_with_pool: bool = False
    # its place among what the kinds made, which a killed run's cleanup removes after the run's processes and work
    # directories and before its pools: lower first, so what uses another goes before it (a mapping before its
    # image, the buckets before their user)
    order: int = 0


@dataclass(frozen=True)
class Needs:
    """What a kind's tool needs on a client: commands, fio engines, a key for the cluster, cephbench-loadgen."""
    tools: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    key: bool = True
    loadgen: bool = False
    # the Debian packages of a tool whose package is not named as it is (tool, packages)
    packages: tuple[tuple[str, str], ...] = (("rados", "ceph-common"), ("rbd", "ceph-common"))

    def __or__(self, other: "Needs") -> "Needs":
        return Needs(tuple(dict.fromkeys(self.tools + other.tools)),
                     tuple(dict.fromkeys(self.engines + other.engines)),
                     self.key or other.key, self.loadgen or other.loadgen,
                     tuple(dict.fromkeys(self.packages + other.packages)))

    def package_of(self, tool: str) -> str:
        """What to apt-get install for a tool that is missing."""
        return dict(self.packages).get(tool, tool)


# fio's (and the disk baseline's) rw values
RW_DIRECTIONS: Mapping[str, Direction] = {"write": "write", "randwrite": "write", "read": "read", "randread": "read"}

# estimates (group_setup_s, test_overhead_s) are measured on the 2-core lab (`make bench NAME=demo` prints the
# estimate next to the actual duration): group set-up is pool creation, the wait for active+clean and the pool's
# removal (RBD adds the image and its prefill, RGW the run user and buckets)
