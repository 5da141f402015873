"""The OSD hosts' devices and links from the operator's Prometheus (settings.prometheus), over its HTTP API.

One query_range per node-exporter counter over the test's window (promanswer.py says how it is read), for the
hosts and devices `ceph osd metadata` names. A URL may carry credentials (https://user:pass@host/): they go in
an Authorization header and nowhere else; everything that is shown or written names the URL without them
(names.shown_url).
"""

from __future__ import annotations

import logging
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Collection, Mapping

from ..core.errors import ParseError
from ..core.errors import UserError
from ..core.fetch import fetch
from ..core.names import shown_url, split_url
from ..core.results import DeviceLoad, HostLoad, LinkLoad, ProcessCpu
from . import cadvisor
from . import promanswer as pa
from .proccpu import PROMETHEUS as PROCESS_CPU_SOURCE
from .source import Ask, Found, Reach, What
from .hoststream import NOT_WATCHED, SSH_REACHES, UNMEASURED, WHAT_WATCHES, watch_targets
from .watch import Watched

log = logging.getLogger(__name__)

TIMEOUT_S = 10.0            # to connect, and for each read
# The whole answer, headers to last byte: a read's timeout restarts with every byte, so a server that sends one a
# second would hold a request (and the preflight, and the run) forever.
DEADLINE_S = 60.0
# A query_range of 10 hosts' devices over an hour, one step a second, is a few MiB
MAX_ANSWER_BYTES = 256 * 1024**2
# the last scrape of a test's window reaches Prometheus up to one interval after its end: waited for, up to this
MAX_WAIT_S = 5.0


@dataclass
class Prometheus:
    url: str                    # as the suite gives it (credentials included)
    timeout_s: float = TIMEOUT_S
    deadline_s: float = DEADLINE_S

    @property
    def shown(self) -> str:
        return shown_url(self.url)

    def get(self, path: str, params: dict[str, Any] | None = None) -> bytes:
        """The answer's body; an error answer's body too (Prometheus says why in it). OSError when it cannot be
        reached, or its whole answer has not come within deadline_s (core/fetch.py)."""
        bare, creds = split_url(self.url)
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        status, reason, body = fetch(f"{bare}{path}{query}", {"Authorization": f"Basic {creds}"} if creds else {},
                                     self.timeout_s, self.deadline_s, MAX_ANSWER_BYTES)
        if status >= 400 and not body.lstrip().startswith(b"{"):
            raise OSError(f"HTTP {status} {reason}")
        return body

    def check(self, where: str = "settings.prometheus") -> None:
        """Preflight: the URL answers as a Prometheus does (/api/v1/status/buildinfo), else a UserError. A URL that
        answers as something else (an exporter's metrics page, another web server) is named as such: its JSON
        error ("Expecting value: line 1 column 1") said nothing of what was wrong."""
        try:
            body = self.get("/api/v1/status/buildinfo")
        except OSError as exc:
            if str(exc).startswith("HTTP "):        # an answer, without the API's JSON: no Prometheus answers so
                raise UserError(f"{self.shown} answers, but is not Prometheus: {exc} for its build information "
                                "(/api/v1/status/buildinfo)", _NOT_PROMETHEUS_HINT, where=where) from None
            raise UserError(f"Prometheus at {self.shown} does not answer: {exc}",
                            "give the URL of a running Prometheus (as its web UI is reached, e.g. "
                            "http://host:9090), or remove settings.prometheus", where=where) from None
        what = pa.not_prometheus(body)
        if what:
            raise UserError(f"{self.shown} answers, but is not Prometheus: {what}", _NOT_PROMETHEUS_HINT,
                            where=where) from None

    def query_range(self, query: str, start: float, end: float) -> list[pa.Series]:
        body = self.get("/api/v1/query_range", {"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                                "step": "1"})
        return pa.parse_answer(body, query.split("{", 1)[0])

    def query(self, query: str, at: float) -> list[pa.Series]:
        return pa.parse_answer(self.get("/api/v1/query", {"query": query, "time": f"{at:.3f}"}),
                               query.split("{", 1)[0])


_NOT_PROMETHEUS_HINT = ("give Prometheus's own URL, as its web UI is reached (cephadm's listens on port 9095, a "
                        "package's on 9090), not an exporter's (node-exporter 9100, ceph-exporter 9926)")


# a host's instance label: its name, or followed by ":port" or ".domain" (promanswer.instance_host); the regex as a
# PromQL string holds it, its backslashes doubled
_HOST_SUFFIX = "(:.*|\\\\..*)?"


def _escaped(values: list[str]) -> list[str]:
    return sorted({v.replace("\\", "\\\\\\\\").replace(".", "\\\\.") for v in values})


def _regex(values: list[str]) -> str:
    return "|".join(_escaped(values))


def _instances(hosts: list[str], addrs: Mapping[str, Collection[str]]) -> str:
    """The instance labels of `hosts` as a PromQL regex: each one's name (with a port or a domain), or one of its
    addresses (with a port: an operator's Prometheus labels a target by address:port unless relabelled)."""
    ips = [a for h in hosts for a in addrs.get(h, ())]
    named = [f"{h}{_HOST_SUFFIX}" for h in _escaped(hosts)]
    by_ip = [(f"\\\\[{a}\\\\]" if ":" in a else a) + "(:.*)?" for a in _escaped(ips)]
    return "|".join(named + by_ip)


def read_hosts(prom: Prometheus, metadata: Any, hosts: list[str], start: float, end: float
               ) -> tuple[list[DeviceLoad], list[LinkLoad], list[str]]:
    """The devices and links of `hosts` (OSD hosts as `ceph osd metadata` names them) over [start, end], one
    figure a second; notes for what Prometheus does not hold. An answer that fails is a note, not the run's end."""
    targets = watch_targets(metadata)
    addrs = pa.host_addresses(metadata)
    try:
        intervals = pa.scrape_intervals(prom.get("/api/v1/targets"))
    except (OSError, ParseError) as exc:
        intervals = {}
        log.info("Prometheus %s targets unknown: %s", prom.shown, exc)
    resolution = {h: s for h in hosts for inst, s in intervals.items()
                  if pa.host_of(inst, {h: addrs.get(h, set())}) == h}
    slowest = max(resolution.values(), default=1.0)
    # One step a second, as many as whole seconds in the window: a step's rate is that of the last two scrapes
    # before it, which are waited for (one interval, at most MAX_WAIT_S), so the steps together span the window's
    # length. Steps past the end add what the OSDs did after the test (a replica's late flush: 21 MiB more on one
    # host of the lab, one step more), which the test's watch does not see.
    steps = [start + 1 + i for i in range(max(1, round(end - start)))]
    wait = steps[-1] + min(MAX_WAIT_S, slowest) + 0.25 - time.time()
    if wait > 0:
        time.sleep(wait)
    notes: list[str] = []
    inst = _instances(hosts, addrs)
    devices = sorted({d.device for h in hosts for d in targets.get(h, ([], []))[0]})
    window = f"{max(4, int(slowest * 4))}s"
    fig = pa.PromFigures(start_unix_s=start, steps=steps, resolution_s=resolution)
    try:
        if devices:
            sel = f'{{instance=~"{inst}",device=~"{_regex(devices)}"}}'
            for metric in pa.DISK_RATES.values():
                fig.disk[metric] = prom.query_range(f"irate({metric}{sel}[{window}])", steps[0], steps[-1])
        sel = f'{{instance=~"{inst}"}}'
        for metric in pa.NET_RATES.values():
            fig.net[metric] = prom.query_range(f"irate({metric}{sel}[{window}])", steps[0], steps[-1])
        fig.speed = prom.query_range(f"{pa.SPEED}{sel}", steps[0], steps[-1])
        fig.address_info = prom.query(f"{pa.ADDRESS_INFO}{sel}", steps[-1])
        if devices:
            fig.limits = prom.query(f'{pa.LIMIT}{{instance=~"{inst}",device=~"{_regex(devices)}"}}', steps[-1])
    except (OSError, ParseError) as exc:
        return [], [], [f"Prometheus at {prom.shown}: the hosts' devices and links were not read: {exc}"]
    # a series labelled with its host's address is that host's, under its name from here on
    fig.disk = {m: pa.named(v, addrs) for m, v in fig.disk.items()}
    fig.net = {m: pa.named(v, addrs) for m, v in fig.net.items()}
    fig.speed, fig.address_info, fig.limits = (pa.named(v, addrs) for v in (fig.speed, fig.address_info, fig.limits))
    ifaces = pa.metadata_ifaces(metadata)
    devs: list[DeviceLoad] = []
    links: list[LinkLoad] = []
    for h in hosts:
        wanted_devs, wanted_addrs = targets.get(h, ([], []))
        if not any(pa.instance_host(s.labels.get("instance", ""), [h]) for series in fig.net.values()
                   for s in series):
            notes.append(f"{h}: Prometheus at {prom.shown} has no node-exporter series of this OSD host: its devices "
                         "and links were not measured")
            continue
        d, n1 = pa.device_loads(h, wanted_devs, fig)
        k, n2 = pa.link_loads(h, wanted_addrs, ifaces.get(h, {}), fig)
        devs += d
        links += k
        notes += n1 + n2
    res = max(resolution.values(), default=None)
    if res is not None and end - start < 3 * res:
        notes.append(f"Prometheus scrapes every {res:g} s: this test of {end - start:.1f} s holds fewer than three "
                     "scrapes, its device and link figures are coarse")
    return devs, links, notes


def read_host_cpu(prom: Prometheus, hosts: list[str], start: float, end: float,
                  addrs: Mapping[str, Collection[str]] | None = None) -> tuple[list[HostLoad], list[str]]:
    """`hosts`' CPU from node-exporter over [start, end], one figure a second (the steps read_hosts asked, whose wait
    for the scrapes after the end it follows); a note when it fails. `addrs`: each host's addresses, which its
    series' instance may name instead."""
    steps = [start + 1 + i for i in range(max(1, round(end - start)))]
    addrs = addrs or {}
    inst = _instances(hosts, addrs)
    try:
        intervals = pa.scrape_intervals(prom.get("/api/v1/targets"))
    except (OSError, ParseError):
        intervals = {}
    window = f"{max(4, int(max(intervals.values(), default=1.0) * 4))}s"
    try:
        busy = prom.query_range(f'sum by (instance) (irate({pa.HOST_CPU}{{instance=~"{inst}",mode!~"{pa.IDLE_MODES}"}}'
                                f'[{window}]))', steps[0], steps[-1])
        cpus = prom.query(f'count by (instance) ({pa.HOST_CPU}{{instance=~"{inst}",mode="idle"}})', steps[-1])
    except (OSError, ParseError) as exc:
        return [], [f"Prometheus at {prom.shown}: the OSD hosts' CPU was not read: {exc}"]
    return pa.host_cpu_loads(hosts, pa.named(busy, addrs), pa.named(cpus, addrs), steps), []


def read_osd_cpu(prom: Prometheus, osd_hosts: dict[int, str], start: float, end: float
                 ) -> tuple[dict[int, float], list[str]]:
    """Each OSD's CPU seconds over [start, end] from a process-exporter that groups it as `osd.N` on its host
    (docs/model.md, "CPU per operation"): the group's counter at the last scrape before the start and at the last
    one a scrape interval after the end, so the window holds the whole test (and at most one interval of its
    host's quiet either side). Called after read_hosts, which waited for the scrapes after the end."""
    ids = "|".join(str(n) for n in sorted(osd_hosts))
    query = f'sum by (instance, groupname) ({pa.PROCESS_CPU}{{groupname=~"osd\\\\.({ids})"}})'
    try:
        intervals = pa.scrape_intervals(prom.get("/api/v1/targets"))
    except (OSError, ParseError):
        intervals = {}
    interval = max((s for i, s in intervals.items() if pa.instance_host(i, list(osd_hosts.values()))), default=1.0)
    after = min(end + interval, time.time())
    try:
        cpu, notes = pa.osd_cpu_seconds(prom.query(query, start), prom.query(query, after), osd_hosts)
    except (OSError, ParseError) as exc:
        return {}, [f"Prometheus at {prom.shown}: the OSDs' CPU was not read: {exc}"]
    if cpu and after < end + interval:
        # read_hosts waits at most MAX_WAIT_S for the scrape after the end: a longer interval was not waited for
        notes.append(f"the OSDs' CPU from Prometheus: its scrape after the test's end (every {interval:g} s) had not "
                     "come, so the figures may miss the test's last seconds")
    return cpu, notes


def in_place_of_watch(seen: Watched, osd_hosts: list[str], devs: list[DeviceLoad], links: list[LinkLoad],
                      notes: list[str]) -> None:
    """Prometheus's devices, links and notes of the OSD hosts in `seen` in place of what their watch gave. A host
    ssh did not reach (a toolbox) misses its CPU alone: its note says no more (Prometheus's own notes name a host
    it has no series of)."""
    ours = set(osd_hosts)
    seen.devices = [d for d in seen.devices if d.host not in ours] + devs
    seen.links = [k for k in seen.links if k.host not in ours] + links
    theirs = tuple(p for h in ours for p in (f"device {h}:", f"link of {h} ", f"link {h} "))
    unwatched = tuple(f"{h}: {NOT_WATCHED} (" for h in ours)
    cpu_only = f"its CPU is not measured (its devices and links are Prometheus's); {SSH_REACHES}"
    seen.notes = [n.replace(f"{UNMEASURED}; {WHAT_WATCHES}", cpu_only) if n.startswith(unwatched) else n
                  for n in seen.notes if not n.startswith(theirs)] + notes


def read_daemon_cpu(prom: Prometheus, osd_hosts: dict[int, str], start: float, end: float
                    ) -> tuple[dict[str, list[ProcessCpu]], list[str]]:
    """Each OSD's CPU and CFS throttling over [start, end] from cAdvisor's container series (evidence/cadvisor.py):
    its counters at the test's start and after its end (as read_osd_cpu), per OSD host; notes say which series were
    matched to which daemon, or that Prometheus has none. Called after read_hosts, which waited for the scrapes."""
    names = "|".join(cadvisor.METRICS)
    # the containers that may be a Ceph daemon's (cadvisor.daemon_of tells which): a query for every container of
    # a Kubernetes cluster would bring back thousands
    query = " or ".join(f'{{__name__=~"{names}",{sel}}}' for sel in (
        'pod=~"rook-ceph-osd-.*"', 'name=~".*osd.*"', 'id=~".*osd.*"', 'ceph_daemon=~"osd.*"', 'daemon=~"osd.*"'))
    try:
        intervals = pa.scrape_intervals(prom.get("/api/v1/targets"))
    except (OSError, ParseError):
        intervals = {}
    after = min(end + min(MAX_WAIT_S, max(intervals.values(), default=1.0)), time.time())
    try:
        first, last = prom.query(query, start), prom.query(query, after)
    except (OSError, ParseError) as exc:
        return {}, [f"Prometheus at {prom.shown}: the OSDs' container CPU (cAdvisor) was not read: {exc}"]
    used: dict[int, float] = {}
    used_notes: list[str] = []
    if cadvisor.without_usage(last):
        used, used_notes = read_osd_cpu(prom, osd_hosts, start, end)   # CFS counters without usage: process-exporter's
    procs, notes = cadvisor.daemon_cpu(first, last, osd_hosts, after - start, used)
    if any(p.wall_s is None for ps in procs.values() for p in ps):
        notes += used_notes
    if not procs and not notes:
        notes = [f"Prometheus at {prom.shown} has no cAdvisor series of the OSDs' containers "
                 f"({cadvisor.USAGE}, {cadvisor.THROTTLED}): a CPU limit on them is not measured"]
    return procs, notes


# ---- the exporters as evidence sources (source.py; their order: sources.py) ------------------------------------

@dataclass(frozen=True)
class _Exporter:
    name: str
    reads: frozenset[What]

    def reachable(self, reach: Reach) -> bool:
        return reach.prometheus is not None


class NodeExporter(_Exporter):
    """The OSD hosts' devices and links, and the CPU of those no watch read."""

    def read(self, ask: Ask) -> Found:
        found = Found()
        addrs = pa.host_addresses(ask.metadata)
        if ask.hosts:
            found.devices, found.links, found.notes = read_hosts(ask.prom, ask.metadata, ask.hosts, ask.start, ask.end)
            try:
                found.notes.append(pa.targets_line(pa.active_targets(ask.prom.get("/api/v1/targets")), addrs))
            except (OSError, ParseError) as exc:
                log.info("Prometheus %s targets unknown: %s", ask.prom.shown, exc)
        if ask.unwatched:
            found.hosts, notes = read_host_cpu(ask.prom, ask.unwatched, ask.start, ask.end, addrs)
            found.notes += notes
        return found


class Cadvisor(_Exporter):
    """Each OSD's container on a host no watch read: its CPU, limit and throttling, as a watch's cgroup files."""

    def read(self, ask: Ask) -> Found:
        ids = {int(m["id"]): str(m["hostname"]) for m in ask.metadata
               if isinstance(m, dict) and isinstance(m.get("id"), int) and m.get("hostname") in ask.unwatched}
        if not ids:
            return Found()
        procs, notes = read_daemon_cpu(ask.prom, ids, ask.start, ask.end)
        return Found(processes=procs, notes=notes)


class ProcessExporter(_Exporter):
    """Each OSD's CPU seconds, from a process-exporter that groups it as `osd.N` on its host."""

    def read(self, ask: Ask) -> Found:
        if not ask.cpu_osds:
            return Found()
        seconds, notes = read_osd_cpu(ask.prom, ask.cpu_osds, ask.start, ask.end)
        return Found(cpu_s=seconds, sources={n: PROCESS_CPU_SOURCE for n in seconds}, notes=notes)


NODE_EXPORTER = NodeExporter("node-exporter", frozenset({What.HOST_CPU, What.DEVICES, What.LINKS}))
CADVISOR = Cadvisor("cAdvisor", frozenset({What.DAEMON_CPU}))
PROCESS_EXPORTER = ProcessExporter("process-exporter", frozenset({What.OSD_CPU}))
