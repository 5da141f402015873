"""cAdvisor's container CPU series in Prometheus -> each OSD's CPU and CFS throttling over a test (issue 35). Pure.

What a toolbox run (no ssh) has of a daemon's CPU limit: cAdvisor (Rook's kubelet, or one run beside cephadm's or
the lab's daemons) exports per container, i.e. per cgroup,

  container_cpu_usage_seconds_total               CPU seconds used (summed over its `cpu` label where it has one)
  container_cpu_cfs_periods_total                 CFS periods it ran in            (v1 cpu.stat nr_periods)
  container_cpu_cfs_throttled_periods_total       ... of them throttled            (nr_throttled)
  container_cpu_cfs_throttled_seconds_total       time throttled                   (throttled_time)
  container_spec_cpu_quota / container_spec_cpu_period    its CFS limit, in µs     (cpu.cfs_quota_us, _period_us)

each read at the test's start and after its end (counters: the difference). A series is a Ceph daemon's by its
labels (daemon_of): Rook's `pod="rook-ceph-osd-2-<hash>"` with `container="osd"` (the pod's other containers and
its pod-level cgroup are not the daemon), a `ceph_daemon` or `daemon` label `osd.2`, a podman/cephadm container
name `ceph-<fsid>-osd-2` or `ceph-<fsid>-osd.2`, or a cgroup path (`id`) ending in cephadm's unit
`ceph-<fsid>@osd.2.service` or in the lab's `--cpu-limit` group `/cephbench-<lab id>/osd.2` (lab/cgroups.py).
Its host: the `node` or `instance` label when it names one of the cluster's OSD hosts (a series whose label names
another OSD host than the daemon's is another daemon of that name, and left out); a series whose labels name no
OSD host (the lab's one cAdvisor for the machine) is taken for the daemon of its name when it is the only one.

The figures are the same a host's ssh watch gives from cgroup files (HostLoad.processes), so the same rules
(analysis/cpusplit.py held_daemons, analysis/slowstore.py) name a daemon held by its CPU limit from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from ..core.results import ProcessCpu
from .promanswer import Series, instance_host

USAGE = "container_cpu_usage_seconds_total"
PERIODS = "container_cpu_cfs_periods_total"
THROTTLED = "container_cpu_cfs_throttled_periods_total"
THROTTLED_S = "container_cpu_cfs_throttled_seconds_total"
QUOTA = "container_spec_cpu_quota"
PERIOD = "container_spec_cpu_period"
METRICS = (USAGE, PERIODS, THROTTLED, THROTTLED_S, QUOTA, PERIOD)
SOURCE = "cAdvisor's container series in Prometheus"     # analysis/cpusplit.py's CADVISOR
MATCHED = "cAdvisor's series of "      # a note saying which series were taken for a daemon (not a gap)
# the labels a series is matched by; the rest (job, image, cpu, ...) do not tell one container from another here
_IDENTITY = ("id", "name", "pod", "container", "namespace", "ceph_daemon", "daemon", "instance", "node")

_DAEMON = re.compile(r"osd\.(\d+)")
_ROOK_POD = re.compile(r"rook-ceph-osd-(\d+)-.*")
_CEPHADM_NAME = re.compile(r"ceph-[0-9a-f-]{36}-osd[.-](\d+)")
_ID_TAIL = re.compile(r"(?:ceph-[0-9a-f-]{36}@osd\.(\d+)\.service|osd\.(\d+))")


def daemon_of(labels: Mapping[str, str]) -> str | None:
    """The Ceph daemon (`osd.N`) a container's series belongs to by its labels (the module's rules), else None."""
    for key in ("ceph_daemon", "daemon"):
        if m := _DAEMON.fullmatch(labels.get(key, "")):
            return f"osd.{m.group(1)}"
    if m := _ROOK_POD.fullmatch(labels.get("pod", "")):
        return f"osd.{m.group(1)}" if labels.get("container") == "osd" else None
    if m := _CEPHADM_NAME.fullmatch(labels.get("name", "")):
        return f"osd.{m.group(1)}"
    tail = labels.get("id", "").rstrip("/").rpartition("/")[2]
    if m := _ID_TAIL.fullmatch(tail):
        return f"osd.{m.group(1) or m.group(2)}"
    return None


def _key(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((k, labels[k]) for k in _IDENTITY if labels.get(k))


def _shown(key: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f'{k}="{v}"' for k, v in key if k in ("id", "name", "pod", "container", "ceph_daemon",
                                                               "daemon", "instance", "node"))


@dataclass
class _Container:
    key: tuple[tuple[str, str], ...]
    daemon: str
    host: str
    named_host: bool                         # its node or instance label names the host
    first: dict[str, float] = field(default_factory=dict)
    last: dict[str, float] = field(default_factory=dict)

    def grew(self, metric: str) -> float | None:
        if metric not in self.first or metric not in self.last:
            return None
        return self.last[metric] - self.first[metric]


def _gather(at_start: list[Series], at_end: list[Series], osd_hosts: Mapping[int, str]
            ) -> dict[tuple[tuple[str, str], ...], _Container]:
    hosts = sorted(set(osd_hosts.values()))
    got: dict[tuple[tuple[str, str], ...], _Container] = {}
    for which, series in (("first", at_start), ("last", at_end)):
        for s in series:
            metric = s.labels.get("__name__", "")
            daemon = daemon_of(s.labels)
            if metric not in METRICS or daemon is None or not s.values:
                continue
            n = int(daemon.split(".")[1])
            if n not in osd_hosts:
                continue
            named = instance_host(s.labels.get("node", ""), hosts) or instance_host(s.labels.get("instance", ""), hosts)
            if named is not None and named != osd_hosts[n]:
                continue                     # another host's osd.N: another cluster's
            key = _key(s.labels)
            c = got.setdefault(key, _Container(key, daemon, osd_hosts[n], named is not None))
            values = getattr(c, which)
            values[metric] = values.get(metric, 0.0) + s.values[-1][1]     # a usage counter per `cpu`: summed
    return got


def without_usage(series: list[Series]) -> bool:
    """Whether a daemon's container has CFS counters but no usage series (daemon_cpu's `used_s` is then wanted)."""
    def keys(metric: str) -> set:
        return {_key(s.labels) for s in series if s.labels.get("__name__") == metric and daemon_of(s.labels)}
    return bool(keys(PERIODS) - keys(USAGE))


def daemon_cpu(at_start: list[Series], at_end: list[Series], osd_hosts: Mapping[int, str], wall_s: float,
               used_s: Mapping[int, float] | None = None) -> tuple[dict[str, list[ProcessCpu]], list[str]]:
    """METRICS' series (an instant query at the test's start, and one after its end) -> OSD host -> its OSDs' CPU
    and throttling over the `wall_s` seconds between the two queries, as ProcessCpu a host's watch gives; notes:
    which series were matched to which daemon, and a daemon whose series are missing, ambiguous or went back.
    A container with CFS counters but no usage (cgroup v1 with the cpu and cpuacct controllers mounted apart, as on
    the lab, whose OSD's cpuacct group is its host's) takes its CPU seconds from `used_s` (process-exporter's, by OSD
    id) where it has them; else its usage is not told (cpu_s 0, wall_s None) and a note says so."""
    chosen: dict[str, _Container] = {}
    notes: list[str] = []
    by_daemon: dict[str, list[_Container]] = {}
    for c in _gather(at_start, at_end, osd_hosts).values():
        if c.grew(USAGE) is not None or c.grew(PERIODS) is not None:
            by_daemon.setdefault(c.daemon, []).append(c)
    for daemon, cs in sorted(by_daemon.items()):
        # a daemon has one container; several series of its name: those whose labels name its host, then those
        # that carry a CFS limit (the lab's blkio-only groups of the same path have neither)
        named = [c for c in cs if c.named_host] or cs
        limited = [c for c in named if (c.last.get(QUOTA) or 0) > 0] or named
        if len(limited) > 1:
            notes.append(f"cAdvisor: {len(limited)} containers of {daemon} in Prometheus ("
                         + "; ".join(_shown(c.key) for c in limited) + "): its CPU and limit are not told")
            continue
        chosen[daemon] = limited[0]
    out: dict[str, list[ProcessCpu]] = {}
    for daemon, c in sorted(chosen.items(), key=lambda d: int(d[0].split(".")[1])):
        grew = {m: c.grew(m) for m in (USAGE, PERIODS, THROTTLED, THROTTLED_S)}
        if any(v is not None and v < 0 for v in grew.values()):
            notes.append(f"cAdvisor: {daemon} on {c.host}: its counters went back during the test (its container "
                         "restarted): its CPU is not told")
            continue
        quota, period = c.last.get(QUOTA), c.last.get(PERIOD)
        limit = round(quota / period, 4) if quota and period and quota > 0 and period > 0 else None
        labels = dict(c.key)
        container = labels.get("name") or (f"{labels['pod']}/{labels['container']}" if labels.get("pod") else None)
        periods, throttled = grew[PERIODS], grew[THROTTLED]
        usage, wall, n = grew[USAGE], round(wall_s, 3), int(daemon.split(".")[1])
        if usage is None:
            usage = (used_s or {}).get(n)
            if usage is None:
                wall = None
                notes.append(f"cAdvisor: {daemon} on {c.host}: its container has no {USAGE} (its cgroup's cpuacct "
                             "is not the cpu controller's): what it used is not told")
        out.setdefault(c.host, []).append(ProcessCpu(
            who=daemon, host=c.host, cpu_s=round(usage or 0.0, 4), source=SOURCE, wall_s=wall,
            cgroup=labels.get("id") or None, container=container, limit_cores=limit,
            periods=round(periods) if periods is not None else None,
            throttled_periods=round(throttled) if throttled is not None else None,
            throttled_s=round(grew[THROTTLED_S], 3) if grew[THROTTLED_S] is not None else None))
        what = (f"limit {limit:g} cores, throttled in {throttled:.0f} of {periods:.0f} periods" if limit and periods
                else "no CFS limit")
        notes.append(f"{MATCHED}{daemon} on {c.host}: the container {{{_shown(c.key)}}} "
                     f"({'' if usage is None else f'{usage:.2f} CPU-s over {wall_s:.1f} s'}"
                     f"{'' if grew[USAGE] is not None or usage is None else ' by process-exporter'}"
                     f"{', ' if usage is not None else ''}{what})")
    missing = sorted(set(f"osd.{n}" for n in osd_hosts) - set(chosen), key=lambda d: int(d.split(".")[1]))
    if missing and (chosen or by_daemon):
        notes.append(f"cAdvisor: no container series of {', '.join(missing)} in Prometheus")
    return out, notes
