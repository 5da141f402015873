"""Watching the host while a test runs: how busy its CPUs were, from /proc/stat or the host's cpuacct cgroup.

The model needs evidence, not a guess, before it names the CPU as the
bottleneck. /proc/stat's first line counts, since boot and in clock ticks for
all CPUs together, the time spent user, nice, system, idle, iowait, irq,
softirq, steal (guest time is already inside user). Busy is everything but
idle and iowait; iowait is kept apart, as a hint that disks were waited on.

A host that is a cgroup of a machine rather than the machine (the multi-host
lab: each host's processes in a cpuacct cgroup) says so in its ssh session's
CEPHBENCH_CPUACCT (the cgroup's directory). Its busy share is then the cgroup's
CPU time (cpuacct.usage, ns) against wall time x CPUs; /proc/stat would count
every host of the machine together. A cgroup has no idle or iowait of its own.
"""

from __future__ import annotations

import os
import re
import socket
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..drivers import ParseError
from ..drivers.figures import count
from ..core.results import HostLoad


@dataclass(frozen=True)
class CpuTimes:
    busy: int
    iowait: int | None        # None: not known (a cgroup)
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


def _share(a: CpuTimes, b: CpuTimes) -> tuple[float, float | None] | None:
    """(busy, iowait) as fractions of all CPUs' time between two readings; None when no tick passed. A cgroup's
    share is capped at 1: its usage and the wall clock are read a moment apart."""
    dt = b.total - a.total
    if dt <= 0:
        return None
    iowait = (b.iowait - a.iowait) / dt if a.iowait is not None and b.iowait is not None else None
    return min(1.0, (b.busy - a.busy) / dt), iowait


def _host_load(host: str, role: str, cpus: int, first: CpuTimes, last: CpuTimes,
               series: list[float], source: str = "proc-stat") -> HostLoad | None:
    """The whole test's figures from its first and last readings; the steady state from the per-second series."""
    whole = _share(first, last)
    if whole is None:
        return None
    mean = round(whole[0], 4)
    steady = statistics.median(series) if len(series) >= 3 else mean
    return HostLoad(host=host, role=role, cpus=cpus, cpu_busy_mean=mean, cpu_busy_median=steady,
                    cpu_busy_max=max(series, default=mean),
                    iowait_mean=round(whole[1], 4) if whole[1] is not None else None,
                    cpu_busy_series=series, source=source)


# Streamed by a host watched over ssh for as long as a test runs: its CPU count, then once a second either
# /proc/stat's first line or, on a host that is a cpuacct cgroup (CEPHBENCH_CPUACCT), "cpuacct <wall ns> <usage
# ns>". The ssh client is killed when the test ends; sshd then closes the command's output, and the loop ends at
# its next write, which fails. (`while :` did not: a failed `head` is not the loop's condition, and the loops ran
# on every watched host for ever, found in the lab's host groups.)
#
# Its arguments ($1 devices, $2 addresses Ceph uses there, $3 addresses to route to) add the evidence of issue 16,
# read by evidence/hoststream.py: first each address's interface and sysfs speed, the lab's shaped speeds, each
# device's cgroup throttles; then in every round a "t <ns>" line and the devices' /proc/diskstats and interfaces'
# /proc/net/dev lines (one awk for both, and none when nothing is wanted).
WATCH_SH = r'''D=$1; A=$2; R=$3; I=
nproc
sp() { s=$(cat "/sys/class/net/$1/speed" 2>/dev/null); echo "${s:--1}"; }
for a in $A; do i=$(ip -o addr show to "$a" 2>/dev/null | awk '{print $2; exit}'); I="$I ${i:-?}"
  echo "iface $a ${i:-?} $(sp "$i")"; done
for a in $R; do i=$(ip -o route get "$a" 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p'); I="$I ${i:-?}"
  echo "route $a ${i:-?} $(sp "$i")"; done
echo "shaped $CEPHBENCH_LINK_SPEEDS"
for d in $D; do m=$(cat "/sys/class/block/$d/dev" 2>/dev/null) && [ -n "$m" ] &&
  grep -rs "^$m " /sys/fs/cgroup --include='blkio.throttle.*_device' --include=io.max | sed "s|^|limit $d |"; done
if [ -n "$CEPHBENCH_CPUACCT" ]; then u="$CEPHBENCH_CPUACCT/cpuacct.usage"; c='echo "cpuacct $(date +%s%N) $(cat "$u")"'
else c='head -n 1 /proc/stat'; fi
while echo "t $(date +%s%N)" && eval "$c"; do
  [ -n "$D$A$R" ] && awk -v d=" $D " -v i=" $I " 'FNR == 1 { f++ }
    f == 1 && index(d, " " $3 " ") { print "disk " $0 }
    f == 2 && /:/ { n = $0; sub(/:.*/, "", n); gsub(/ /, "", n); if (index(i, " " n " ")) print "net " $0 }' \
    /proc/diskstats /proc/net/dev 2>/dev/null
  sleep 1; done'''


def watch_argv(devices: list[str], addresses: list[str], routes: list[str]) -> list[str]:
    """The remote command of a host's watch: WATCH_SH with the devices and addresses it is to follow."""
    return ["sh", "-c", WATCH_SH, "watch", " ".join(devices), " ".join(addresses), " ".join(routes)]


_NPROC_RE = re.compile(r"\s*[1-9][0-9]{0,5}\s*")     # what nproc prints


_CPUACCT_RE = re.compile(r"cpuacct ([0-9]{1,30}) ([0-9]{1,30})")


def parse_cpuacct(line: str, cpus: int) -> CpuTimes:
    """"cpuacct <wall ns> <usage ns>" -> CpuTimes: busy is the cgroup's CPU time, total the wall time x CPUs."""
    m = _CPUACCT_RE.fullmatch(line.strip())
    if m is None:
        raise ParseError(f"not a cpuacct reading: {line[:100]!r}")
    return CpuTimes(busy=int(m.group(2)), iowait=None, total=int(m.group(1)) * cpus)


def _reading(line: str, cpus: int) -> CpuTimes | None:
    """One line of the stream; None for a line garbled in transit (ssh may mix in a warning), so that one bad
    line costs one reading, not the host's whole load."""
    try:
        return parse_cpuacct(line, cpus) if line.startswith("cpuacct ") else parse_proc_stat(line)
    except ParseError:
        return None


def load_from_stream(text: str, host: str, role: str) -> HostLoad | None:
    """A WATCH_SH stream -> HostLoad; None when fewer than two readings arrived (host unreachable, short test).
    A stream with cgroup readings is read from those alone (source "cpuacct")."""
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()                     # cut off mid-line when the watch was stopped
    cpus = next((int(ln) for ln in lines if _NPROC_RE.fullmatch(ln)), 1)
    source = "cpuacct" if any(ln.startswith("cpuacct ") for ln in lines) else "proc-stat"
    prefix = "cpuacct " if source == "cpuacct" else "cpu "
    readings = [r for ln in lines if ln.startswith(prefix) and (r := _reading(ln, cpus)) is not None]
    if len(readings) < 2:
        return None
    series = [round(sh[0], 4) for a, b in zip(readings, readings[1:]) if (sh := _share(a, b)) is not None]
    return _host_load(host, role, cpus, readings[0], readings[-1], series, source)


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
