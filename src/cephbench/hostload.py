"""Watching the host while a test runs: how busy its CPUs were, from /proc/stat.

The model needs evidence, not a guess, before it names the CPU as the
bottleneck. /proc/stat's first line counts, since boot and in clock ticks for
all CPUs together, the time spent user, nice, system, idle, iowait, irq,
softirq, steal (guest time is already inside user). Busy is everything but
idle and iowait; iowait is kept apart, as a hint that disks were waited on.
"""

from __future__ import annotations

import os
import re
import socket
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .drivers import ParseError
from .drivers.figures import count
from .results import HostLoad


@dataclass(frozen=True)
class CpuTimes:
    busy: int
    iowait: int
    total: int


def parse_proc_stat(text: str) -> CpuTimes:
    """/proc/stat (or its first line) -> CpuTimes; ParseError when it has no readable aggregate 'cpu ' line."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
            f = [count(x, f"/proc/stat cpu {name}") for name, x in zip(names, line.split()[1:9])]
            f += [0] * (8 - len(f))          # old kernels lack steal
            user, nice, system, idle, iowait, irq, softirq, steal = f
            total = user + nice + system + idle + iowait + irq + softirq + steal
            return CpuTimes(busy=total - idle - iowait, iowait=iowait, total=total)
    raise ParseError("no aggregate 'cpu ' line in /proc/stat")


def _share(a: CpuTimes, b: CpuTimes) -> tuple[float, float] | None:
    """(busy, iowait) as fractions of all CPUs' time between two readings; None when no tick passed."""
    dt = b.total - a.total
    if dt <= 0:
        return None
    return (b.busy - a.busy) / dt, (b.iowait - a.iowait) / dt


def _host_load(host: str, role: str, cpus: int, first: CpuTimes, last: CpuTimes,
               series: list[float]) -> HostLoad | None:
    """The whole test's figures from its first and last readings; the steady state from the per-second series."""
    whole = _share(first, last)
    if whole is None:
        return None
    mean = round(whole[0], 4)
    steady = statistics.median(series) if len(series) >= 3 else mean
    return HostLoad(host=host, role=role, cpus=cpus, cpu_busy_mean=mean, cpu_busy_median=steady,
                    cpu_busy_max=max(series, default=mean), iowait_mean=round(whole[1], 4), cpu_busy_series=series)


# Streamed by a host watched over ssh for as long as a test runs: its CPU count, then /proc/stat's first line
# once a second. The ssh client is killed when the test ends, and the loop dies with its session.
WATCH_SH = "nproc; while :; do head -n 1 /proc/stat; sleep 1; done"


_NPROC_RE = re.compile(r"\s*[1-9][0-9]{0,5}\s*")     # what nproc prints


def _reading(line: str) -> CpuTimes | None:
    """One line of the stream; None for a line garbled in transit (ssh may mix in a warning), so that one bad
    line costs one reading, not the host's whole load."""
    try:
        return parse_proc_stat(line)
    except ParseError:
        return None


def load_from_stream(text: str, host: str, role: str) -> HostLoad | None:
    """A WATCH_SH stream -> HostLoad; None when fewer than two readings arrived (host unreachable, short test)."""
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()                     # cut off mid-line when the watch was stopped
    cpus = next((int(ln) for ln in lines if _NPROC_RE.fullmatch(ln)), 1)
    readings = [r for ln in lines if ln.startswith("cpu ") and (r := _reading(ln)) is not None]
    if len(readings) < 2:
        return None
    series = [round(sh[0], 4) for a, b in zip(readings, readings[1:]) if (sh := _share(a, b)) is not None]
    return _host_load(host, role, cpus, readings[0], readings[-1], series)


class CpuSampler:
    """Reads /proc/stat at start, at every tick and at the end of a test."""

    def __init__(self, read: Callable[[], str] = lambda: Path("/proc/stat").read_text(),
                 host: str | None = None, cpus: int | None = None, role: str = "client") -> None:
        self._read = read
        self.role = role
        self.host = host or socket.gethostname()
        self.cpus = cpus or os.cpu_count() or 1
        self._first = self._last = self._take()
        self._series: list[float] = []

    def _take(self) -> CpuTimes | None:
        try:
            return parse_proc_stat(self._read())
        except (OSError, ValueError):
            return None         # not Linux, or no /proc: the result simply has no host load

    def sample(self) -> None:
        now = self._take()
        if now is not None and self._last is not None:
            share = _share(self._last, now)
            if share is not None:
                self._series.append(round(share[0], 4))
        self._last = now

    def summary(self) -> HostLoad | None:
        """The whole test's figures (first to last reading); the per-second series comes from the ticks."""
        end = self._take()
        if self._first is None or end is None:
            return None
        return _host_load(self.host, self.role, self.cpus, self._first, end, list(self._series))
