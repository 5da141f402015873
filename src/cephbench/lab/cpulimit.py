"""CPU causes a lab can be built with: `--cpu-limit osd.N=CORES` and `--host-load hN=CORES` (issue 35).

  osd.2=0.08      osd.2 runs in a cgroup of its own whose CFS quota is 0.08 of a core per period (cpu.cfs_quota_us
                  8000 of cpu.cfs_period_us 100000): what a container's CPU limit does (Rook's and cephadm's
                  resources.limits.cpu)
  h2=1.5          a neighbour that burns 1.5 cores on lab host h2 (or a client host, c1): ceil(1.5) busy loops in h2's cpuacct group (they
                  are h2's processes, as another tenant's are a shared host's), held together to 1.5 cores by a
                  cgroup quota of their own

Several specs may share one flag value (comma or space separated) or come in repeated flags. Pure: nothing here
touches the system; lab.py makes the groups (recorded in drives.json before they are made) and starts the loops
(recorded by their PID files, stopped by PID by `lab down`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from ..core.errors import UserError
from .shapekeys import FLAGS, Names

PERIOD_US = 100_000            # the CFS period the lab's quotas are set over (Linux's default)
MIN_CORES = 0.01               # below it a daemon does not answer its heartbeats: marked down, not slow
MAX_LOAD_CORES = 64.0

_DAEMON_RE = re.compile(r"osd\.(\d+)")
_HOST_RE = re.compile(r"[hc](\d+)")
_CORES_RE = re.compile(r"\d+(?:\.\d+)?|\.\d+")
T = TypeVar("T")


@dataclass(frozen=True)
class CpuLimitSpec:
    daemon: str            # "osd.2"
    cores: float

    @property
    def quota_us(self) -> int:
        return max(1000, round(self.cores * PERIOD_US))

    def text(self) -> str:
        return f"{self.daemon}={self.cores:g}"


@dataclass(frozen=True)
class HostLoadSpec:
    host: str              # "h2"
    cores: float

    @property
    def quota_us(self) -> int:
        return round(self.cores * PERIOD_US)

    @property
    def loops(self) -> int:
        """Busy loops it takes: one per core begun."""
        return math.ceil(self.cores - 1e-9)

    def names(self) -> list[str]:
        """The lab's names of its loops (their PID files are run/<name>.pid): load.h2.0, load.h2.1."""
        return [f"load.{self.host}.{i}" for i in range(self.loops)]

    def text(self) -> str:
        return f"{self.host}={self.cores:g}"


def _pairs(values: Sequence[str] | str | Mapping[str, object], where: str, example: str) -> list[tuple[str, str]]:
    if isinstance(values, Mapping):         # a suite's {osd.2: 0.08}
        return [(str(k), str(v)) for k, v in values.items()]
    if isinstance(values, str):
        values = [values]
    out = []
    for tok in (t for v in values for t in re.split(r"[,\s]+", v) if t):
        name, eq, value = tok.partition("=")
        if not eq or not name or not value:
            raise UserError(f"{tok!r} is not NAME=CORES", f"write e.g. {example}", where=where)
        out.append((name, value))
    if not out:
        raise UserError("nothing given", f"write e.g. {example}", where=where)
    return out


def _cores(value: str, name: str, where: str, example: str, high: float) -> float:
    v = value.strip().lower().removesuffix("cores").removesuffix("core").strip()
    if not _CORES_RE.fullmatch(v):
        raise UserError(f"{name}={value}: {value!r} is not a number of cores", f"write e.g. {example}", where=where)
    cores = float(v)
    if not MIN_CORES <= cores <= high:
        raise UserError(f"{name}={value}: {cores:g} cores is outside {MIN_CORES:g} to {high:g}",
                        f"write e.g. {example}", where=where)
    return cores


def _specs(values: Sequence[str] | str | Mapping[str, object], where: str, example: str, name_re: re.Pattern, what: str, twice: str,
           make: Callable[[str, float], T]) -> tuple[T, ...]:
    out: list[T] = []
    names: list[str] = []
    for name, value in _pairs(values, where, example):
        if not name_re.fullmatch(name):
            raise UserError(f"{name!r} is not {what}", f"write e.g. {example}", where=where)
        if name in names:
            raise UserError(f"{name} is {twice} twice", "give each once", where=where)
        names.append(name)
        out.append(make(name, _cores(value, name, where, example, MAX_LOAD_CORES)))
    return tuple(out)


def parse_cpu_limits(values: Sequence[str] | str | Mapping[str, object], where: str = "--cpu-limit") -> tuple[CpuLimitSpec, ...]:
    return _specs(values, where, "osd.2=0.08 (8 % of a core)", _DAEMON_RE, "an OSD", "limited", CpuLimitSpec)


def parse_host_loads(values: Sequence[str] | str | Mapping[str, object], where: str = "--host-load") -> tuple[HostLoadSpec, ...]:
    return _specs(values, where, "h2=1.5 (1.5 cores busy on h2)", _HOST_RE, "a host of the lab (hN, cN)", "loaded",
                  HostLoadSpec)


def check_cpu_specs(limits: Iterable[CpuLimitSpec], loads: Iterable[HostLoadSpec], osds: int, hosts: int,
                    clients: int = 0, names: Names = FLAGS) -> None:
    """Refuse an OSD or host the lab does not have (OSD hosts h1..hN, client hosts c1..cC), named as `names` says
    (`lab up`'s flags, or a suite's keys)."""
    for s in limits:
        if int(s.daemon.split(".")[1]) >= osds:
            raise UserError(f"{s.daemon}: the lab has no such OSD", f"its OSDs are osd.0 to osd.{osds - 1}",
                            where=names["cpu_limit"])
    for h in loads:
        most = hosts if h.host[0] == "h" else clients
        if not 1 <= int(h.host[1:]) <= most:
            have = f"its OSD hosts are h1 to h{hosts}" + (f" and its client hosts c1 to c{clients}" if clients else
                                                          f", and it has no client hosts ({names['clients']})")
            raise UserError(f"{h.host}: the lab has no such host", have, where=names["host_load"])
