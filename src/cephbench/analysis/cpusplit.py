"""Whose a host's CPU time was over a test, and a daemon held by its CPU limit (issue 35). Pure.

A host's busy CPU-seconds (`HostLoad.cpu_s`, between its watch's first and last readings) are split by consumer:

  Ceph daemons     each daemon its watch listed (by PID, with its cgroup and container; `HostLoad.processes`), and
                   the OSDs read beside their counters on it (`Evidence.cpu`, the one-host lab's on this machine)
  client tools     the test's tools when they ran there (`Evidence.cpu`'s "client" of that host)
  other processes  the rest: whatever else ran on the host, another tenant's work, another cluster's daemons

A host that is a cgroup of a machine (the multi-host lab's hosts: `source` cpuacct, the machine's boot id) is part
of that machine: the machine's split counts each such host's daemons, tools and other processes as its own (a
neighbour burning on lab host h2 is other processes on the machine too, and said to be on h2).

A daemon held by its CPU limit: its cgroup's CFS quota (v1 cpu.cfs_quota_us ÷ cpu.cfs_period_us, v2 cpu.max) and
over the test's readings the periods it ran in and those it was throttled in (cpu.stat nr_periods, nr_throttled):
throttled in HELD_THROTTLED of its periods or more, the daemon waited for CPU time its limit did not give, whatever
the host's CPUs did (osd.2 at 0.08 cores, issue 35: 412 of 508 periods, 81 %, while the machine's CPUs were 100 %
busy with everything else).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.results import HostLoad, ProcessCpu

CADVISOR = "cAdvisor's container series in Prometheus"      # evidence/cadvisor.py's SOURCE: the same words

HELD_THROTTLED = 0.5     # of its CFS periods a daemon's group was throttled in: held by its limit
ALONE_WORDS = "the cluster was not measured alone"
ALONE_SHARE = 0.10       # other processes' CPU time, of the host's CPUs' time, above which the cluster was not alone
TOP_DAEMONS = 4          # daemons named in the split's line
MIN_PERIODS = 10         # CFS periods a daemon must have run in for its throttled share to count (1 s of them)


@dataclass
class Split:
    host: HostLoad
    busy_s: float
    wall_s: float
    daemons: list[ProcessCpu] = field(default_factory=list)
    tools_s: float = 0.0
    others_s: float = 0.0
    others_on: list[tuple[str, float]] = field(default_factory=list)   # a contained host's other processes
    # an OSD host whose watch saw no Ceph daemon: a watch inside a container's own PID namespace (a toolbox without
    # --pid host) sees the host's CPUs but not the daemons' processes, so their time would read as other processes'
    daemons_unseen: bool = False

    @property
    def daemons_s(self) -> float:
        return sum(d.cpu_s for d in self.daemons)

    def cores(self, cpu_s: float) -> float:
        return cpu_s / self.wall_s if self.wall_s else 0.0

    def parts(self) -> list[tuple[str, float]]:
        """(consumer, CPU-s), the largest first."""
        return sorted([("Ceph daemons", self.daemons_s), ("client tools", self.tools_s),
                       ("other processes", self.others_s)], key=lambda p: -p[1])

    def alone(self) -> bool:
        """Whether the cluster had the host to itself: other processes under ALONE_SHARE of its CPUs' time."""
        return self.others_s < ALONE_SHARE * self.host.cpus * self.wall_s

    def line(self) -> str:
        h = self.host
        if self.daemons_unseen:
            return (f"CPU of {h.host} over {self.wall_s:.1f} s ({h.cpus} CPUs, {self.cores(self.busy_s):.2f} cores "
                    f"busy): client tools {self.cores(self.tools_s):.2f} cores, the rest "
                    f"{self.cores(self.busy_s - self.tools_s):.2f} not split: {UNSEEN.format(host=h.host)}")
        top = sorted(self.daemons, key=lambda d: -d.cpu_s)
        named = ", ".join(f"{d.who}{'' if d.host in (None, h.host) else f' on {d.host}'} {self.cores(d.cpu_s):.2f}"
                          for d in top[:TOP_DAEMONS]) + (", …" if len(top) > TOP_DAEMONS else "")
        on = "; ".join(f"{where} {self.cores(s):.2f}" for where, s in self.others_on if s > 0)
        return (f"CPU of {h.host} by consumer over {self.wall_s:.1f} s ({h.cpus} CPUs, {self.cores(self.busy_s):.2f} "
                f"cores busy): Ceph daemons {self.cores(self.daemons_s):.2f} cores" + (f" ({named})" if named else "")
                + f", client tools {self.cores(self.tools_s):.2f}, other processes {self.cores(self.others_s):.2f}"
                + (f" (of them on {on})" if on else "") + "; /proc/PID/stat and the host's CPU over the same readings")


UNSEEN = ("no Ceph daemon's process was seen on {host}, an OSD host (a watch in a container's own PID namespace "
          "sees the host's CPUs but not its processes: run the toolbox with --pid host, or give cephbench ssh to the "
          "host)")


def _tools(host: str, cpu: list[ProcessCpu]) -> float:
    return sum(c.cpu_s for c in cpu if c.who == "client" and c.host == host)


def split(host: HostLoad, hosts: list[HostLoad], cpu: list[ProcessCpu]) -> Split | None:
    """Whose `host`'s CPU time was (the module's rules); None when its CPU-seconds were not recorded."""
    if host.cpu_s is None or not host.wall_s:
        return None
    out = Split(host, host.cpu_s, host.wall_s, list(host.processes), _tools(host.host, cpu))
    listed = {d.pid for d in out.daemons if d.pid}
    named = {d.who for d in out.daemons if not d.pid}      # listed by name alone (cAdvisor's containers)
    out.daemons += [c for c in cpu if c.who.startswith("osd.") and c.host == host.host and c.pid not in listed
                    and c.who not in named]
    if host.source == "proc-stat" and host.machine:
        for part in hosts:
            if part is host or part.source != "cpuacct" or part.machine != host.machine:
                continue
            inner = split(part, [], cpu)
            if inner is None:
                continue
            # its readings span other seconds than the machine's: its rates over the machine's seconds
            k = host.wall_s / inner.wall_s
            out.daemons += [d.model_copy(update={"cpu_s": round(d.cpu_s * k, 4)}) for d in inner.daemons]
            out.tools_s += inner.tools_s * k
            out.others_on.append((part.host, inner.others_s * k))
    known = out.daemons_s + out.tools_s + sum(s for _, s in out.others_on)
    out.others_s = sum(s for _, s in out.others_on) + max(0.0, out.busy_s - known)
    out.daemons_unseen = host.role != "client" and not out.daemons and not out.others_on
    return out


def whose(host: HostLoad, hosts: list[HostLoad], cpu: list[ProcessCpu]) -> tuple[str, str, str | None]:
    """(bottleneck, sentence, the split's evidence line) for a host whose CPUs were busy: the consumer that used
    most of them, and, when other processes used ALONE_SHARE of its CPUs or more, by how much the cluster was not
    measured alone. Without the split (a result from before it): "CPU", and the sentence says whose is unknown."""
    busy = f"the CPUs of {host.host} were {host.cpu_busy_median:.0%} busy"
    s = split(host, hosts, cpu)
    if s is None:
        return "CPU", f"measured: {busy} (whose CPU time it was: not measured)", None
    if s.daemons_unseen:
        return "CPU", f"measured: {busy} (whose CPU time it was: not measured: {UNSEEN.format(host=host.host)})", \
            s.line()
    name, top = s.parts()[0]
    sentence = f"measured: {busy}, most of it {name} ({s.cores(top):.2f} of {host.cpus} cores)"
    if not s.alone():
        sentence += f"; {alone_part(s)}"
    return f"CPU ({name} on {host.host})", sentence, s.line()


def whose_part(host: HostLoad, hosts: list[HostLoad], cpu: list[ProcessCpu]) -> tuple[str, str | None]:
    """Whose busy CPUs were, as a part of another sentence (" (most of it Ceph daemons, 1.21 of 2 cores)"), and the
    split's line: where the CPUs are named beside another cause ("cannot tell", one op in flight)."""
    s = split(host, hosts, cpu)
    if s is None:
        return " (whose CPU time it was: not measured)", None
    if s.daemons_unseen:
        return f" (whose CPU time it was: not measured: {UNSEEN.format(host=host.host)})", s.line()
    name, top = s.parts()[0]
    # where the other processes ran, as a verdict of CPU alone says (alone_part): a "cannot tell" said only "other
    # processes 0.95" with 0.53 of them on h2, the neighbour's host
    alone = "" if s.alone() else f"; other processes {s.cores(s.others_s):.2f}{_where(s)}: {ALONE_WORDS}"
    return f" (most of it {name}, {s.cores(top):.2f} of {host.cpus} cores{alone})", s.line()


def not_alone(hosts: list[HostLoad], cpu: list[ProcessCpu]) -> list[Split]:
    """The hosts where other processes used ALONE_SHARE of the CPUs' time or more, whatever the verdict: each machine
    once (a lab host that is a cgroup of a watched machine is in the machine's split, by name), the most first."""
    machines = {h.machine for h in hosts if h.source == "proc-stat" and h.machine}
    tops = [h for h in hosts if not (h.source == "cpuacct" and h.machine in machines)]
    got = [s for h in tops if (s := split(h, hosts, cpu)) is not None and not s.daemons_unseen and not s.alone()]
    return sorted(got, key=lambda s: -s.others_s / (s.host.cpus * s.wall_s))


def alone_part(s: Split) -> str:
    """"the cluster was not measured alone: other processes used 1.13 of vm's 2 cores (56% of its CPU time, 0.26
    of them on h2)"."""
    h = s.host
    return (f"{ALONE_WORDS}: other processes used {s.cores(s.others_s):.2f} of {h.host}'s "
            f"{h.cpus} cores ({s.others_s / (h.cpus * s.wall_s):.0%} of its CPU time{_where(s)})")


def _where(s: Split) -> str:
    """", 0.26 of them on h2": the host of a watched machine's lab hosts whose other processes used the most."""
    on = max(s.others_on, key=lambda p: p[1], default=None)
    return f", {s.cores(on[1]):.2f} of them on {on[0]}" if on is not None and on[1] > 0 else ""


@dataclass(frozen=True)
class Held:
    daemon: ProcessCpu
    share: float            # throttled periods ÷ periods
    line: str

    @property
    def name(self) -> str:
        d = self.daemon
        return f"{d.who} ({d.host})" if d.host else d.who


def _relevant(who: str) -> bool:
    """A daemon the clients' I/O goes through: an OSD, or an RGW."""
    return who.startswith(("osd.", "client.rgw")) or who == "radosgw"


def held_daemons(hosts: list[HostLoad]) -> list[Held]:
    """Each OSD or RGW throttled by its cgroup's CPU limit in HELD_THROTTLED of its CFS periods or more, the most
    throttled first."""
    out = []
    for h in hosts:
        for d in h.processes:
            if not (_relevant(d.who) and d.limit_cores and (d.periods or 0) >= MIN_PERIODS
                    and d.throttled_periods is not None):
                continue
            share = d.throttled_periods / d.periods
            if share < HELD_THROTTLED:
                continue
            used = d.cpu_s / d.wall_s if d.wall_s else None
            source = d.source if d.source == CADVISOR else "cgroup cpu.stat and /proc/PID/stat"
            where = ", ".join(x for x in (d.host, f"PID {d.pid}" if d.pid else "",
                                          f"container {d.container}" if d.container else "",
                                          f"cgroup {d.cgroup}" if d.cgroup else "") if x)
            throttled = f", {d.throttled_s:.1f} s throttled" if d.throttled_s is not None else ""
            usage = (f"; it used {used:.3f} cores = {used / d.limit_cores:.0%} of its limit" if used is not None
                     else "")
            out.append(Held(d, share, f"{d.who} ({where}): held by its CPU limit, {d.limit_cores:g} cores, throttled "
                                      f"in {share:.0%} of periods ({d.throttled_periods:,} of {d.periods:,}"
                                      f"{throttled}){usage}; {source}"))
    return sorted(out, key=lambda x: -x.share)
