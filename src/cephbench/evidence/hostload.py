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

from ..core.errors import ParseError
from ..core.figures import count
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


USER_HZ = 100          # /proc/stat's ticks per second on Linux (USER_HZ, whatever the kernel's HZ)


def _host_load(host: str, role: str, cpus: int, first: CpuTimes, last: CpuTimes,
               series: list[float], source: str = "proc-stat", machine: str | None = None) -> HostLoad | None:
    """The whole test's figures from its first and last readings; the steady state from the per-second series.
    Its busy CPU-seconds and wall seconds over the same readings (cpuacct counts ns, /proc/stat USER_HZ ticks)."""
    whole = _share(first, last)
    if whole is None:
        return None
    mean = round(whole[0], 4)
    steady = statistics.median(series) if len(series) >= 3 else mean
    unit = 1e9 if source == "cpuacct" else USER_HZ
    return HostLoad(host=host, role=role, cpus=cpus, cpu_busy_mean=mean, cpu_busy_median=steady,
                    cpu_busy_max=max(series, default=mean),
                    iowait_mean=round(whole[1], 4) if whole[1] is not None else None,
                    cpu_busy_series=series, source=source,
                    cpu_s=round(max(0, last.busy - first.busy) / unit, 3),
                    wall_s=round((last.total - first.total) / unit / max(cpus, 1), 3), machine=machine)


def boot_id(path: Path = Path("/proc/sys/kernel/random/boot_id")) -> str | None:
    """This kernel's boot id: hosts that are cgroups of this machine (the multi-host lab's) stream the same one."""
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


# Streamed by a host watched over ssh for as long as a test runs: its CPU count, then once a second either
# /proc/stat's first line or, on a host that is a cpuacct cgroup (CEPHBENCH_CPUACCT), "cpuacct <wall ns> <usage
# ns>". The ssh client is killed when the test ends; sshd then closes the command's output, and the loop ends at
# its next write, which fails. (`while :` did not: a failed `head` is not the loop's condition, and the loops ran
# on every watched host for ever, found in the lab's host groups.)
#
# $4 (issue 35) lists the host's Ceph daemons once ("daemon PID CMDLINE", "cgroup PID PATH" of its cpu controller,
# "quota PID DIR QUOTA PERIOD" of its cpu controller's group: v1 cfs_quota_us and cfs_period_us, v2 cpu.max) and in
# every round each one's "p <its /proc/PID/stat>" and each limited group's "cg DIR k=v ..." (its cpu.stat), read
# with the shell's own `read` (no process per file). Every watch starts with "boot <the kernel's boot id>".
# Its arguments ($1 devices, $2 addresses Ceph uses there, $3 addresses to route to) add the evidence of issue 16,
# read by evidence/hoststream.py: first each address's interface and sysfs speed, the lab's shaped speeds, each
# device's cgroup throttles; then in every round a "t <ns>" line and the devices' /proc/diskstats and interfaces'
# /proc/net/dev lines (one awk for both, and none when nothing is wanted).
# $5: it listens on its standard input. A watch killed at a test's end lost the seconds since its last reading (up
# to one, of a test of a few): a lab test's 3 rounds of 1 s once kept 2 device samples of the 3 the window held. Told
# "stop" there (watch.stop, here or through ssh) it takes a last reading, unless its last is under 0.3 s old (an
# interval that short is noise, not a rate: /proc/stat counts in 10 ms ticks), and exits. An input that ends without
# the word from a pipe or socket (ours, or ssh's carrying ours) means the cephbench that held it is gone: it exits at
# once. An input that is neither (a remote shell that gives its commands /dev/null) changes nothing. And orphaned, it
# ends: every round it compares its parent with the one it started under. So a watch whose cephbench was killed with
# SIGKILL does not read /proc once a second until `cephbench cleanup` (one was still running 15 minutes on).
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
echo "boot $(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
P=; G=
if [ "$4" = 1 ]; then
  if [ -n "$CEPHBENCH_CPUACCT" ]; then L=$(cat "$CEPHBENCH_CPUACCT/cgroup.procs" 2>/dev/null); else L=$(cd /proc && echo [0-9]*); fi
  for p in $L; do { read -r n < "/proc/$p/comm"; } 2>/dev/null || continue
    case $n in ceph-osd|ceph-mon|ceph-mgr|ceph-mds|radosgw) ;; *) continue;; esac
    P="$P $p"; echo "daemon $p $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)"; d=; w=
    while IFS=: read -r i k g; do
      case ",$k," in *,cpu,*) w=$g; for m in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
        [ -f "$m$g/cpu.cfs_quota_us" ] && d="$m$g" && break; done;; esac
      [ "$i" = 0 ] && [ -z "$d" ] && [ -f "/sys/fs/cgroup$g/cpu.max" ] && d="/sys/fs/cgroup$g" && w=$g
    done < "/proc/$p/cgroup"
    echo "cgroup $p $w"
    [ -n "$d" ] || continue
    if [ -f "$d/cpu.max" ]; then q=$(cat "$d/cpu.max"); else q="$(cat "$d/cpu.cfs_quota_us") $(cat "$d/cpu.cfs_period_us")"; fi
    echo "quota $p $d $q"
    case " $q" in " -1 "*|" max "*) ;; *) case " $G " in *" $d "*) ;; *) G="$G $d";; esac;; esac
  done
fi
if [ -n "$CEPHBENCH_CPUACCT" ]; then u="$CEPHBENCH_CPUACCT/cpuacct.usage"; c='echo "cpuacct $(date +%s%N) $(cat "$u")"'
else c='head -n 1 /proc/stat'; fi
r() { L=$(date +%s%N); echo "t $L" && eval "$c" || exit 0
  for p in $P; do { read -r l < "/proc/$p/stat"; } 2>/dev/null && echo "p $l"; done
  for d in $G; do s=; while read -r k v; do s="$s $k=$v"; done < "$d/cpu.stat"; echo "cg $d$s"; done
  [ -n "$D$A$R" ] && awk -v d=" $D " -v i=" $I " 'FNR == 1 { f++ }
    f == 1 && index(d, " " $3 " ") { print "disk " $0 }
    f == 2 && /:/ { n = $0; sub(/:.*/, "", n); gsub(/ /, "", n); if (index(i, " " n " ")) print "net " $0 }' \
    /proc/diskstats /proc/net/dev 2>/dev/null; }
E=; S=
if [ "$5" = 1 ]; then exec 3<&0; trap 'E=1; [ -n "$S" ] && kill $S 2>/dev/null' USR1
  trap '[ -n "$S" ] && kill $S 2>/dev/null; exit 0' USR2
  { read -r x <&3; if [ "$x" = stop ]; then kill -USR1 $$; elif [ -p /dev/fd/3 ] || [ -S /dev/fd/3 ]; then
    kill -USR2 $$; fi; } 2>/dev/null & fi
while :; do r; [ -n "$E" ] && break; sleep 1 & S=$!; wait $S; S=; [ -n "$E" ] && break
  { read -r _ _ _ q _ < /proc/$$/stat; } 2>/dev/null; [ "${q:-$PPID}" = "$PPID" ] || exit 0; done
[ $(($(date +%s%N) - L)) -ge 300000000 ] && r; exit 0'''


def watch_argv(devices: list[str], addresses: list[str], routes: list[str], daemons: bool = False,
               held: bool = True) -> list[str]:
    """The remote command of a host's watch: WATCH_SH with the devices and addresses it is to follow; `daemons`:
    list the host's Ceph daemons (its cgroup's processes on a lab host, else every process named ceph-osd,
    ceph-mon, ceph-mgr, ceph-mds or radosgw) with their cgroups and CPU limits, and read their CPU and their
    cgroups' CFS throttling every round; `held`: its standard input holds it (watch.stop closes it)."""
    return ["sh", "-c", WATCH_SH, "watch", " ".join(devices), " ".join(addresses), " ".join(routes),
            "1" if daemons else "", "1" if held else ""]


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
    boot = next((ln[5:].strip() for ln in lines if ln.startswith("boot ")), None) or None
    return _host_load(host, role, cpus, readings[0], readings[-1], series, source, boot)


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
        return _host_load(self.host, self.role, self.cpus, self._first, end, list(self._series),
                          machine=boot_id())
