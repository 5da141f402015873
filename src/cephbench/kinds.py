"""Every kind of test described once: config, plan, runner, analysis and report read this table.

A kind is what a driver runs (drivers/registry.py maps each to its driver). Its descriptor says which field of a
workload holds the phases of a group, which level of the stack it measures, what each phase does to the cluster's
data (read, write, mixed or metadata), whether the efficiency model analyses it, the title of its report table and what its operations per second are
called (ops_unit).
Nothing here imports a driver, so drivers may import it.

Adding a kind: its driver module, one line in drivers/registry.py, one descriptor here, its schema model in config.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

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
    # phases that may run in rounds until steady (a workload's steady_state); none: the kind refuses it
    steady_phases: frozenset[str] = frozenset()

    def direction(self, phase: str | None) -> Direction | None:
        return self.directions.get(str(phase)) if phase is not None else None

    @property
    def reads_cluster(self) -> bool:
        """Some phase reads data from the cluster: caches are dropped before it."""
        return self.cluster and any(d in ("read", "mixed") for d in self.directions.values())

    def read_phases(self) -> frozenset[str]:
        return frozenset(p for p, d in self.directions.items() if d in ("read", "mixed"))


# estimates measured on the 2-core lab (`make bench NAME=demo` prints the estimate next to the actual duration):
# group set-up is pool creation, the wait for active+clean and the pool's removal (RBD adds the image and its
# prefill, RGW the run user and buckets)

# the baselines are not suite workloads: the model reads their figures by name
DISK_BASELINE, NET_BASELINE = "disk_baseline", "net_baseline"

_RW = {"write": "write", "randwrite": "write", "read": "read", "randread": "read"}

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind(DISK_BASELINE, "Baselines", "Disk baseline", "baseline", None, dict(_RW),
         ceiling_source=True, cluster=False, test_overhead_s=1.0),
    Kind(NET_BASELINE, "Baselines", "Network baseline", "baseline", None, {"send": "write"},
         ceiling_source=True, cluster=False, test_overhead_s=1.5, ops_counted=False),
    # rados bench's operation is a whole object written or read
    Kind("rados_bench", "RADOS", "rados bench", "rados", "modes", {"write": "write", "seq": "read", "rand": "read"},
         modelled=True, group_setup_s=3.0, exhaustible_reads=frozenset({"seq"}), ops_name="objects/s",
         steady_phases=frozenset({"write", "rand"})),
    Kind("fio_rados", "RADOS", "fio (rados engine)", "fio", "rw", dict(_RW), modelled=True, group_setup_s=3.0),
    # osd bench writes block_size blocks straight into the OSD's object store and reports them as "iops"
    Kind("osd_bench", "OSD", "ceph tell osd.N bench", "osd", None, {"write": "write"}, modelled=True,
         ceiling_source=True, repeat_within_test=True, default_test_s=0.5),
    # an imported random rbd bench is named as fio names it (randwrite, ...): importer.py
    Kind("rbd_bench", "RBD", "rbd bench", "fio", "io_type", {"write": "write", "read": "read", "readwrite": "mixed",
                                                             "randwrite": "write", "randread": "read",
                                                             "randrw": "mixed"},
         modelled=True, group_setup_s=6.0),
    Kind("fio_rbd", "RBD", "fio (rbd)", "fio", "rw", {**_RW, "randrw": "mixed"}, modelled=True, group_setup_s=6.0),
    Kind("rgw", "RGW", "RGW (cephbench-loadgen)", "rgw", "op",
         {"put": "write", "get": "read", "stat": "metadata", "list": "metadata", "delete": "metadata",
          "mixed": "mixed"}, group_setup_s=4.0, test_overhead_s=1.0, ops_name="req/s"),   # S3 or Swift requests
)}

WORKLOAD_KINDS: tuple[str, ...] = tuple(k for k in KINDS if KINDS[k].level != "Baselines")


def direction_of(kind: str, phase: str | None, op: str | None = None) -> Direction | None:
    """What a test does to the cluster's data: from its phase, else from the op its tool reported."""
    k = KINDS.get(kind)
    if k is None:
        return None
    return k.direction(phase) or k.direction(op)


def ops_unit(kind: str) -> str | None:
    """What a kind's operations per second are called: "IOPS" (block I/O: fio, rbd bench, osd bench, the disk
    baseline), "objects/s" (rados bench), "req/s" (RGW's S3 and Swift requests); None when its tool counts no
    operations (iperf3), "ops/s" for a kind this table does not know. Terminal, report.md and report.html all
    name the column and the figure with it."""
    k = KINDS.get(kind)
    if k is None:
        return "ops/s"
    return k.ops_name if k.ops_counted else None


def level_of(kind: str) -> Level | None:
    k = KINDS.get(kind)
    return k.level if k else None


def kinds_where(**flags: bool) -> frozenset[str]:
    """Kinds whose descriptor fields equal the given values, e.g. kinds_where(modelled=True)."""
    return frozenset(k.name for k in KINDS.values() if all(getattr(k, f) == v for f, v in flags.items()))
