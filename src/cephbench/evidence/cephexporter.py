"""The OSDs' counters from Prometheus: ceph-exporter's series (one per host, Reef and later, port 9926), else the
mgr's prometheus module's (port 9283; Reef excludes them unless mgr/prometheus/exclude_perf_counters is false).

Both name a daemon's perf counter `ceph_<section>_<name>` with its daemon in `ceph_daemon`: the mgr module "osd.2",
ceph-exporter its socket's file name less `.asok` ("ceph-osd.2" in cephadm's layout); a count or a gauge as its
value, a latency as `_sum` (seconds) and `_count` (ceph-exporter's DaemonMetricCollector, the mgr module's perf
counters). Each OSD's series at the test's start and after its end become two `perf dump`s
(`dumps`), which counters.deltas reads as it reads an admin socket's.

Whose a series is: a ceph-exporter runs on the OSD's own host, so its `instance` (or the host part of it, before a
port or a domain) is that host's name or one of its addresses in `ceph osd metadata`; the mgr module's is the URL
`ceph mgr services` gives (which may name the host where Prometheus has its address), or any on the module's port
9283 (cephadm relabels it `ceph_cluster`). A series of `osd.N` from any other instance is another cluster's osd.N
(one Prometheus may scrape many clusters) and is left out; the note says which series were matched to which host,
and which were not.

Both serve what they last collected, not what the OSD holds now: ceph-exporter reads the sockets every
`--stats-period` (5 s by default), the mgr module its reports (mgr_stats_period) every
mgr/prometheus/scrape_interval. The end of a test is read once that much and a scrape interval have passed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..core.errors import ParseError
from .counters import read_names
from .promanswer import Series, host_addresses, host_of, scrape_intervals
from .source import Ask, Found, Reach, What

CEPH_EXPORTER_PORT = 9926
MGR_PORT = 9283                     # the mgr module's default: its series are the module's whatever its URL says
EXPORTER_STATS_PERIOD_S = 5.0       # ceph-exporter's --stats-period default
MGR_SCRAPE_INTERVAL_S = 15.0        # mgr/prometheus/scrape_interval's default
MAX_WAIT_S = 30.0                   # the longest a test's end waits for the exporters' next figures
EXPORTER = "ceph-exporter"
MGR = "the mgr's prometheus module"
CLUSTER_INSTANCE = "ceph_cluster"   # cephadm's relabelling of the mgr module's instance
_DAEMON = re.compile(r"(?:.*-)?osd\.(\d+)")    # "osd.2", or ceph-exporter's socket name "ceph-osd.2"


def metric_name(section: str, name: str) -> str:
    """A counter's series name, as both exporters make it: `ceph_` + section + `_` + name, every character a
    Prometheus name may not hold made `_` (`+` is `_plus`, as the mgr module writes it)."""
    return "ceph_" + re.sub(r"[^a-zA-Z0-9_:]", "_", f"{section}_{name}".replace("+", "_plus"))


def metrics() -> dict[str, tuple[str, str, str]]:
    """Series name -> (section, counter, "" | "sum" | "count") of every counter counters.deltas reads."""
    out: dict[str, tuple[str, str, str]] = {}
    for section, name, latency in read_names():
        base = metric_name(section, name)
        for part in (("sum", "count") if latency else ("",)):
            out[f"{base}_{part}" if part else base] = (section, name, part)
    return out


def query(osds: Sequence[int]) -> str:
    """The one query of every counter read, for these OSDs."""
    ids = "|".join(str(n) for n in sorted(osds))
    return f'{{__name__=~"{"|".join(sorted(metrics()))}",ceph_daemon=~"(.*-)?osd\\\\.({ids})"}}'


@dataclass(frozen=True)
class Origin:
    """Where a series came from."""
    job: str
    instance: str

    @property
    def shown(self) -> str:
        return f"job {self.job or '?'}, instance {self.instance or '?'}"


def mgr_instances(services: Mapping[str, str]) -> set[str]:
    """`ceph mgr services` -> the instance labels the mgr module's series may carry: its host:port from the URL,
    and cephadm's `ceph_cluster`."""
    url = str(services.get("prometheus") or "")
    hostport = url.split("://", 1)[-1].split("/", 1)[0]
    return {CLUSTER_INSTANCE} | ({hostport} if hostport else set())


def by_origin(series: list[Series]) -> dict[tuple[Origin, int], dict[str, dict[str, Any]]]:
    """Series -> (origin, OSD) -> its counters as a `perf dump` ({section: {name: value | {avgcount, sum}}})."""
    names = metrics()
    out: dict[tuple[Origin, int], dict[str, dict[str, Any]]] = {}
    for s in series:
        known = names.get(s.labels.get("__name__", ""))
        daemon = _DAEMON.fullmatch(s.labels.get("ceph_daemon", ""))
        if known is None or daemon is None or not s.values:
            continue
        section, name, part = known
        dump = out.setdefault((Origin(s.labels.get("job", ""), s.labels.get("instance", "")), int(daemon.group(1))),
                              {})
        value = s.values[-1][1]
        if part:
            dump.setdefault(section, {}).setdefault(name, {})["avgcount" if part == "count" else "sum"] = value
        else:
            dump.setdefault(section, {})[name] = value
    return out


def exporter_of(origin: Origin, osd_host: str, hosts: Mapping[str, set[str]], mgr: set[str]) -> str | None:
    """EXPORTER when `origin` is a ceph-exporter on the OSD's host, MGR when it is this cluster's mgr module, else
    None (another cluster's, or a host this cluster does not have)."""
    if origin.instance in mgr or origin.instance.endswith(f":{MGR_PORT}"):
        return MGR
    return EXPORTER if host_of(origin.instance, hosts) == osd_host else None


@dataclass
class Matched:
    dumps: dict[int, tuple[dict[str, Any], dict[str, Any]]]     # OSD -> (at the start, after the end)
    origins: dict[int, tuple[str, Origin]]                      # OSD -> (EXPORTER or MGR, its series' origin)
    unmatched: dict[Origin, list[int]]                          # series no host of the cluster claims


def match(first: list[Series], last: list[Series], osds: Mapping[int, str], hosts: Mapping[str, set[str]],
          mgr: set[str], kinds: Sequence[str] = (EXPORTER, MGR)) -> Matched:
    """Each OSD's counters at both ends from the first origin of `kinds` that has them at both (ceph-exporter on
    its host before the mgr module)."""
    a, b = by_origin(first), by_origin(last)
    dumps: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    origins: dict[int, tuple[str, Origin]] = {}
    unmatched: dict[Origin, list[int]] = {}
    for (origin, n) in sorted(set(a) | set(b), key=lambda k: (k[1], k[0].job, k[0].instance)):
        kind = exporter_of(origin, osds[n], hosts, mgr) if n in osds else None
        if kind is None:
            unmatched.setdefault(origin, []).append(n)
            continue
        if kind not in kinds or (origin, n) not in a or (origin, n) not in b:
            continue
        if n not in origins or kinds.index(kind) < kinds.index(origins[n][0]):
            dumps[n], origins[n] = (a[(origin, n)], b[(origin, n)]), (kind, origin)
    return Matched(dumps, origins, unmatched)


def source_of(kind: str, origin: Origin, osd_host: str) -> str:
    """An OSD's OsdCounters.source: which exporter, through Prometheus, and where."""
    return f"{kind} via Prometheus ({origin.instance or '?'})" if kind == MGR else \
        f"{kind} via Prometheus ({osd_host})"


def matched_line(m: Matched, osds: Mapping[int, str], hosts: Mapping[str, set[str]]) -> str:
    """One line: which series were matched to which host, and which were not."""
    parts = []
    by: dict[tuple[str, Origin], list[int]] = {}
    for n, key in sorted(m.origins.items()):
        by.setdefault(key, []).append(n)
    for (kind, origin), ns in sorted(by.items(), key=lambda kv: kv[1]):
        host = host_of(origin.instance, hosts)
        where = f"{host}" if host else "the cluster's mgr"
        parts.append(f"{', '.join(f'osd.{n}' for n in ns)} from {kind} ({origin.shown}: {where})")
    line = "OSD counters from Prometheus: " + ("; ".join(parts) if parts else "none matched")
    if m.unmatched:
        line += "; not matched to a host of this cluster: " + "; ".join(
            f"{origin.shown} ({', '.join(f'osd.{n}' for n in ns)})" for origin, ns in sorted(
                m.unmatched.items(), key=lambda kv: (kv[0].job, kv[0].instance)))
    return line


def _float(text: str | None, default: float) -> float:
    try:
        value = float(str(text))
    except (TypeError, ValueError):
        return default
    return value if value > 0 else default


@dataclass(frozen=True)
class ExporterCounters:
    """A window source of the OSDs' counters: those of `kinds` (EXPORTER, MGR) in Prometheus."""
    name: str
    kinds: tuple[str, ...]
    reads: frozenset[What] = frozenset({What.OSD_COUNTERS})

    def reachable(self, reach: Reach) -> bool:
        return reach.prometheus is not None

    def lag_s(self, ask: Ask) -> float:
        """How long after a test its counters may take to reach the exporter (not counting Prometheus' scrape)."""
        if MGR in self.kinds and EXPORTER not in self.kinds:
            return _float(ask.config("mgr", "mgr_stats_period"), 5.0) + \
                _float(ask.config("mgr", "mgr/prometheus/scrape_interval"), MGR_SCRAPE_INTERVAL_S)
        return EXPORTER_STATS_PERIOD_S

    def read(self, ask: Ask) -> Found:
        if not ask.osds:
            return Found()
        prom, q = ask.prom, query(list(ask.osds))
        try:
            intervals = scrape_intervals(prom.get("/api/v1/targets"))
        except (OSError, ParseError):
            intervals = {}
        at_end = ask.end
        if ask.end > ask.start:
            # the counters of the test's last second reach the exporter within its lag, Prometheus one scrape later
            at_end = ask.end + self.lag_s(ask) + max(intervals.values(), default=1.0)
            wait = min(at_end, ask.end + MAX_WAIT_S) - time.time()
            if wait > 0:
                time.sleep(wait)
            at_end = min(at_end, time.time())
        try:
            first, last = prom.query(q, ask.start), prom.query(q, at_end)
        except (OSError, ParseError) as exc:
            return Found(notes=[f"Prometheus at {prom.shown}: the OSDs' counters ({self.name}) were not read: {exc}"])
        hosts = host_addresses(ask.metadata)
        m = match(first, last, ask.osds, hosts, mgr_instances(ask.mgr_services), self.kinds)
        found = Found(counters=m.dumps, sources={n: source_of(kind, o, ask.osds[n])
                                                 for n, (kind, o) in m.origins.items()})
        if ask.end > ask.start and (m.origins or m.unmatched):
            found.notes.append(matched_line(m, ask.osds, hosts))
        if ask.end > ask.start and EXPORTER in self.kinds and not any(k == EXPORTER for k, _ in m.origins.values()):
            found.notes.append(f"Prometheus at {prom.shown} has no ceph-exporter series of the OSDs (Reef and later "
                               f"run one on each host, port {CEPH_EXPORTER_PORT})")
        return found


CEPH_EXPORTER = ExporterCounters("ceph-exporter", (EXPORTER,))
MGR_MODULE = ExporterCounters("the mgr's prometheus module", (MGR,))
