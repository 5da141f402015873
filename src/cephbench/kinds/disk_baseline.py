"""The disk baseline: fio on the OSDs' drives or given paths (not a suite workload: the model reads its figures by
name); hooks in drivers/disk_baseline.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..core.resources import remote_file_parts
from ..core.planned import Test
from .kind import RW_DIRECTIONS, Kind, ResourceType
from .schema import KindParams


def _disk_file_by_hand(name: str) -> str:
    address, path = remote_file_parts(name)
    return (f"{'' if address == 'localhost' else f'ssh {address} '}rm -f {path} {path}.pid  (once the fio writing it "
            "has ended)")


# a test file on a host, "<address or localhost>:<path>", with fio's PID file beside it: always named
# cephbench-<run id>-baseline.dat
DISK_FILE = ResourceType("disk-file", "disk_baseline:remove_file_entry", _disk_file_by_hand,
                         owned_name=lambda name: remote_file_parts(name)[1].rsplit("/", 1)[-1],
                         only_name=lambda run: f"cephbench-{run}-baseline.dat", on_cluster=False)
KIND = Kind("disk_baseline", "Baselines", "Disk baseline", "baseline", None, dict(RW_DIRECTIONS),
            ceiling_source=True, cluster=False, test_overhead_s=1.0, resources=(DISK_FILE,),
            # `paths`, `hosts`, `size` and `pattern` are words of the core too: not its own
            own_params=("runtime_s", "allow_raw_device"))
DRIVER = "disk_baseline"
MODEL = None


def params_model() -> type[KindParams]:
    """The model of one test's parameters, made when a test of this kind is first made (core/planned.py PARAMS_OF:
    two models' classes cost every start that imports the kinds about 8 M instructions, issue 39)."""
    class DiskBaselineParams(KindParams):
        """One test's parameters (make_tests): its pattern (PATTERNS), the paths and hosts it measures, the size of its
        test files and each fio step's seconds."""
        descriptor: ClassVar[Kind] = KIND
        pattern: str | None = None
        paths: list[str] | dict[str, list[str]] | str | None = None       # "lab-osds": the lab's OSD directories
        hosts: list[str] | str | None = None
        size: int | None = None
        runtime_s: float | None = None
        allow_raw_device: bool | None = None

    return DiskBaselineParams

KIB, MIB = 1024, 1024**2
SEQ_IODEPTH = 16


@dataclass(frozen=True)
class Pattern:
    name: str
    rw: str
    bs: int | None          # None: the whole file in one write (dd-equivalent)
    iodepth: int
    time_based: bool = True

    @property
    def op(self) -> str:
        return "write" if "write" in self.rw else "read"


PATTERNS: dict[str, Pattern] = {p.name: p for p in (
    Pattern("dd", "write", None, 1, time_based=False),
    Pattern("write-1MiB", "write", MIB, SEQ_IODEPTH),
    Pattern("write-4MiB", "write", 4 * MIB, SEQ_IODEPTH),
    Pattern("read-1MiB", "read", MIB, SEQ_IODEPTH),
    Pattern("read-4MiB", "read", 4 * MIB, SEQ_IODEPTH),
    Pattern("randread-4KiB-qd1", "randread", 4 * KIB, 1),
    Pattern("randread-4KiB-qd32", "randread", 4 * KIB, 32),
    Pattern("randwrite-4KiB-qd1", "randwrite", 4 * KIB, 1),
    Pattern("randwrite-4KiB-qd32", "randwrite", 4 * KIB, 32),
)}
DEFAULT_PATTERNS = list(PATTERNS)


def steps_for(patterns: list[str]) -> list[Pattern]:
    """The patterns in run order. dd always runs first: it writes the whole file, so reads read real data."""
    names = ["dd"] + [n for n in DEFAULT_PATTERNS if n in patterns and n != "dd"]
    return [PATTERNS[n] for n in names]


_NO_HOSTS = object()


def test_params(paths: Any, size: int, runtime_s: float, allow_raw_device: bool, hosts: Any = _NO_HOSTS
                ) -> dict[str, Any]:
    """The parameters of each of its tests (without `hosts`, as `cephbench baseline disk` has always recorded
    them: it measures this host only)."""
    return {"paths": paths, **({} if hosts is _NO_HOSTS else {"hosts": hosts}), "size": size,
            "runtime_s": runtime_s, "allow_raw_device": allow_raw_device}


def runtime_of(params: dict[str, Any]) -> float:
    """Seconds each of its fio steps runs (at least 1: an estimate's divisor)."""
    return max(float(params.get("runtime_s") or 1.0), 1.0)


def section_tests(section: Any, start_index: int) -> list[Test]:
    """The tests of a suite's baseline.disks section (suite/config.py DiskBaselineConfig): their estimate counts
    every path it measures, and once more all of them at once when there are several."""
    n = estimated_paths(section.paths, section.hosts)
    return make_tests(section.patterns or DEFAULT_PATTERNS,
                      test_params(section.paths, section.size, section.runtime, section.allow_raw_device,
                                  section.hosts),
                      start_index=start_index, est_scopes=n + (n > 1))


def make_tests(patterns: list[str], params: dict[str, Any], start_index: int = 1, group: str = "b001",
               workload: str = "baseline-disk", est_scopes: int = 1) -> list[Test]:
    """One test per pattern, in run order; dd always (it writes the file the reads read, and it is the
    dd-equivalent line to compare with published figures)."""
    out = []
    for n, name in enumerate(steps_for(patterns)):
        index = start_index + n
        out.append(Test(id=f"{index:03d}-{workload}-{name.name}", index=index, workload=workload,
                        kind="disk_baseline", group=group, params={**params, "pattern": name.name},
                        est_duration_s=float(params.get("runtime_s") or 0) * est_scopes))
    return out


def estimated_paths(paths: Any, hosts: Any) -> int:
    """How many paths a baseline.disks section measures, for the plan's duration (the lab's three OSDs and three
    OSD hosts when they are only known once the run starts)."""
    if isinstance(paths, dict):
        return sum(len(p) for p in paths.values())
    per_host = len(paths) if isinstance(paths, list) else 3
    return per_host * (len(hosts) if isinstance(hosts, list) else 3 if hosts == "osd-hosts" else 1)
