"""From a run's baselines and cluster facts to ceilings, efficiency and bottleneck on every cluster result.

`RunAnalyzer` is what the runner uses: it remembers the baselines a run has
measured so far (and those of an earlier, resumed part of the run) and gives each
cluster result its `analysis`. `facts_from_run` reads the model's ClusterFacts out
of run.json's cluster facts and the baseline results; model.py does the arithmetic.
"""

from __future__ import annotations

import ipaddress
import logging
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from ..kinds import DISK_BASELINE, NET_BASELINE, direction_of, kinds_where, level_of
from ..hosts.remote import addr_ips
from ..core.results import Analysis, LatencyBreakdown, Result
from ..core.units import exact_size
from . import rgw
from .disks import usable
from .breakdown import breakdown
from .model import MIB, Ceiling, ClusterFacts, DiskFigures, Pool, ceiling, judge, osd_bench_ceiling
from .storesettings import store_settings
from .utilization import from_evidence

log = logging.getLogger(__name__)

MODELLED = kinds_where(modelled=True)
CEILING_SOURCES = kinds_where(ceiling_source=True)
RGW_MODELLED = kinds_where(rgw_model=True)     # RGW's model gives their ceilings
RADOS_RATES = kinds_where(rados_rates=True)    # the RADOS rates RGW's model reads


def op_of(result: Result) -> str | None:
    """write or read, or None for mixed and metadata operations, which the model does not cover."""
    d = direction_of(result.test.kind, result.test.params.get("phase"),
                     result.measurement.op if result.measurement else None)
    return d if d in ("read", "write") else None


def op_size_of(result: Result) -> int | None:
    m, p = result.measurement, result.test.params
    for v in (m.op_size_bytes if m else None, p.get("object_size"), p.get("block_size"), p.get("io_size")):
        if v:
            return int(v)
    return None


def _osd_metadata(cluster: dict[str, Any]) -> list[dict[str, Any]]:
    md = cluster.get("osd_metadata")
    return md if isinstance(md, list) else []


def osd_rotational(cluster: dict[str, Any]) -> dict[int, bool]:
    """Each OSD's rotational flag from its metadata (mClock's hdd or ssd capacity follows it)."""
    out = {}
    for m in _osd_metadata(cluster):
        flag = m.get("bluestore_bdev_rotational", m.get("rotational"))
        if str(m.get("id", "")).isdigit() and flag in ("0", "1"):
            out[int(m["id"])] = flag == "1"
    return out


def _pattern(results: list[Result], name: str) -> dict[str, Any] | None:
    for r in results:
        if r.status == "ok" and r.measurement and r.measurement.extra.get("pattern") == name:
            return r.measurement.extra
    return None


WRITE_PATTERNS = ("write-4MiB", "write-1MiB", "dd")
NOT_USED = ": not used"     # how a disk baseline path not on an OSD's device ends its sentence (osd_devices.check)


def _parallel_else_alone(x: dict[str, Any], key: str) -> float | None:
    par, alone = x.get(f"parallel_median_{key}"), x.get(f"alone_median_{key}")
    v = par if par else alone
    return float(v) if v else None


def _slowest_writer(disk: list[Result]) -> tuple[str, float, str | None] | None:
    """The host whose median disk wrote slowest (same pattern and scope as the write figure), when several ran, and
    the slowest disk of that pattern."""
    for n in WRITE_PATTERNS:
        x = _pattern(disk, n)
        per_host = (x or {}).get("per_host") or {}
        figures = {h: v for h, f in per_host.items() if (v := _parallel_else_alone(f, "bytes_per_s")) is not None}
        if len(figures) > 1:
            host = min(figures, key=figures.__getitem__)
            return host, figures[host], (x or {}).get("slowest_disk")
    return None


def disk_figures(disk: list[Result], osd_bench: list[Result]) -> DiskFigures | None:
    """Per-disk figures: the median disk of every host, measured all at once when the baseline ran on several paths
    (what each disk gives while the others work too), else alone; and the slowest host's median disk. osd bench
    when there is no disk baseline."""
    def pick(names: tuple[str, ...], key: str) -> float | None:
        for n in names:
            x = _pattern(disk, n)
            if x and (v := _parallel_else_alone(x, key)) is not None:
                return v
        return None

    if any(r.status == "ok" for r in disk):
        first = next(r.measurement.extra for r in disk if r.status == "ok" and r.measurement)
        several = len(first.get("paths", [])) > 1
        slowest = _slowest_writer(disk)
        return DiskFigures(
            write_bytes_per_s=pick(WRITE_PATTERNS, "bytes_per_s"),
            write_alone_bytes_per_s=next((float(x["alone_median_bytes_per_s"]) for x in
                                          (_pattern(disk, n) for n in WRITE_PATTERNS)
                                          if x and x.get("alone_median_bytes_per_s")), None),
            read_bytes_per_s=pick(("read-4MiB", "read-1MiB"), "bytes_per_s"),
            write_iops=pick(("randwrite-4KiB-qd32", "randwrite-4KiB-qd1"), "ops_per_s"),
            read_iops=pick(("randread-4KiB-qd32", "randread-4KiB-qd1"), "ops_per_s"),
            source="disk baseline, " + ("each disk while all ran at once" if several else "one disk alone"),
            shared_device=bool(first.get("shared_device")), hosts=max(1, len(first.get("hosts") or [])),
            slowest_host=slowest[0] if slowest else None,
            slowest_host_write_bytes_per_s=slowest[1] if slowest else None, slowest_disk=slowest[2] if slowest else None)
    ok = [r for r in osd_bench if r.status == "ok" and r.measurement and r.measurement.bytes_per_s]
    if ok:
        return DiskFigures(write_bytes_per_s=ok[-1].measurement.bytes_per_s, source="ceph tell osd bench (median OSD)",
                           includes_journal=True)
    return None


def network_figures(net: list[Result], client: str | None) -> dict[str, Any]:
    """Client send (one-to-many when measured), client receive (many-to-one when measured: reads come from every
    OSD host at once), per-host rate (median over ordered pairs, each at its best stream count), the cluster
    network's per-host rate (median of its pairs, when measured), loopback or not."""
    ok = [r for r in net if r.status == "ok" and r.measurement and r.measurement.bytes_per_s]
    if not ok:
        return {}
    pairs = [r for r in ok if r.test.params.get("pattern") == "pair" and r.test.params.get("network") != "cluster"]
    cluster_pairs = [r for r in ok if r.test.params.get("pattern") == "pair"
                     and r.test.params.get("network") == "cluster"]
    fan = [r for r in ok if r.test.params.get("pattern") == "one-to-many"]
    fan_in = [r for r in ok if r.test.params.get("pattern") == "many-to-one"]
    loop = all(r.measurement.extra.get("loopback") for r in ok)
    hosts = ok[0].test.params.get("hosts") or []
    named = {r.test.params.get("sender") for r in ok} | {h for r in ok for h in r.test.params.get("receivers") or []}
    # a client host of the suite is measured in patterns of its own (iperf.patterns), never among `hosts`
    me = client if client in hosts or client in named else (hosts[0] if hosts else None)
    best = lambda rs: max((r.measurement.bytes_per_s for r in rs), default=None)  # noqa: E731
    tx = best([r for r in fan if r.test.params.get("sender") == me]) or \
        best([r for r in pairs if r.test.params.get("sender") == me])
    rx = best([r for r in fan_in if r.test.params.get("receivers") == [me]]) or \
        best([r for r in pairs if me in r.test.params.get("receivers", [])])
    best_pair: dict[tuple[str, str], float] = {}          # each ordered pair at its best stream count
    for r in pairs:
        key = (r.test.params.get("sender"), (r.test.params.get("receivers") or [""])[0])
        best_pair[key] = max(best_pair.get(key, 0.0), r.measurement.bytes_per_s)
    per_host = statistics.median(best_pair.values()) if best_pair else None
    cluster = statistics.median(r.measurement.bytes_per_s for r in cluster_pairs) if cluster_pairs else None
    return {"tx": tx, "rx": rx, "per_host": per_host, "cluster_per_host": cluster, "loopback": loop}


def facts_from_run(cluster: dict[str, Any], results: list[Result], client_hostname: str | None = None,
                   cpus: int | None = None) -> ClusterFacts | None:
    md = _osd_metadata(cluster)
    own, unused = usable([r for r in results if r.test.kind == DISK_BASELINE])
    disk = disk_figures(own, [r for r in results if level_of(r.test.kind) == "OSD"])
    net = network_figures([r for r in results if r.test.kind == NET_BASELINE], client_hostname)
    if disk is None and not net and not unused:
        return None
    osds = len(md) or int(((cluster.get("status") or {}).get("osdmap") or {}).get("num_osds", 0) or 0)
    hosts = {m.get("hostname") for m in md if m.get("hostname")}
    store = "filestore" if md and all(m.get("osd_objectstore") == "filestore" for m in md) else "bluestore"
    dedicated = any(m.get("bluefs_dedicated_db") == "1" or m.get("bluefs_dedicated_wal") == "1" for m in md)
    rotational = any(m.get("bluestore_bdev_rotational", m.get("rotational")) == "1" for m in md) if md else True
    separate_cluster = False
    for m in md:
        front, back = addr_ips(m.get("front_addr", "")), addr_ips(m.get("back_addr", ""))
        if front and back and front != back:
            separate_cluster = True
    notes = list(unused)
    if disk is not None and not disk.shared_device:
        notes.append(f"disk figures: {disk.source}")
    if disk is not None and disk.slowest_host and disk.write_bytes_per_s and disk.slowest_host_write_bytes_per_s:
        notes.append(f"disk figures are the median disk of {disk.hosts} hosts; the slowest host, {disk.slowest_host}, "
                     f"writes {disk.slowest_host_write_bytes_per_s / MIB:,.1f} MiB/s per disk against "
                     f"{disk.write_bytes_per_s / MIB:,.1f} MiB/s"
                     + (f" (the slowest disk: {disk.slowest_disk})" if disk.slowest_disk else ""))
    loopback = bool(net.get("loopback"))
    if separate_cluster and not loopback and net.get("per_host") and not net.get("cluster_per_host"):
        notes.append("the cluster network was not measured (hosts: osd-hosts pairs it): taken as fast as the "
                     "public links")
    if loopback and not all(ipaddress.ip_address(a).is_loopback for m in md for a in addr_ips(m.get("front_addr", ""))):
        notes.append("the network baseline ran on loopback only: it says nothing about the NICs")
    return ClusterFacts(
        osds=osds or 1, osd_hosts=len(hosts) or 1, disk=disk or DiskFigures(), objectstore=store,
        journal="separate" if dedicated else "same-disk", rotational=rotational,
        client_tx_bytes_per_s=net.get("tx"), client_rx_bytes_per_s=net.get("rx"),
        public_bytes_per_s=net.get("per_host"),
        # the cluster network's own pairs when measured (osd-hosts); else assumed like the public links
        cluster_bytes_per_s=(net.get("cluster_per_host") or net.get("per_host")) if separate_cluster and not loopback
        else None,
        clients=1, client_on_osd_host=bool(client_hostname and client_hostname in hosts), loopback=loopback,
        cpus=cpus, notes=tuple(notes))


def shape_clusters(meta: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per variant, the cluster facts of the lab shape it ran on (run.json's `lab_shapes[v].cluster`): a shape
    rebuilds the lab with other hosts, OSDs, devices and networks than the lab the run found."""
    shapes = meta.get("lab_shapes") or {}
    return {name: s["cluster"] for name, s in shapes.items()
            if isinstance(s, dict) and isinstance(s.get("cluster"), dict)}


def cluster_of(result: Result, cluster: dict[str, Any], shapes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The cluster facts a result ran with: its shape's, else the run's (no shapes, or a test without a variant,
    which runs on the build the run's `cluster` describes)."""
    v = result.test.variant
    return shapes.get(v, cluster) if v is not None else cluster


def client_hosts(result: Result) -> list[str]:
    """The client hosts a result's load came from (its instances' hosts); none when it ran on this machine."""
    m = result.measurement
    if m is None:
        return []
    return sorted({i.host for i in m.instances if i.host} or ({m.host} if m.host else set()))


def with_clients(facts: ClusterFacts, net: list[Result], clients: list[str]) -> ClusterFacts:
    """The facts of a test whose load came from `clients`: that many clients, each with the send and receive rate
    the network baseline measured for it (their mean: clients × mean is their sum); unmeasured: no client term."""
    figures = [network_figures(net, c) for c in clients]
    tx = [f["tx"] for f in figures if f.get("tx")]
    rx = [f["rx"] for f in figures if f.get("rx")]
    return replace(facts, clients=len(clients), client_on_osd_host=False,
                   client_tx_bytes_per_s=statistics.mean(tx) if len(tx) == len(clients) else None,
                   client_rx_bytes_per_s=statistics.mean(rx) if len(rx) == len(clients) else None)


def analyse(result: Result, facts: ClusterFacts | None, rados: list[Result] | None = None,
            cluster: dict[str, Any] | None = None) -> Analysis | None:
    """The Analysis of one cluster result (None when the model has nothing to say about it). `rados`: the run's
    rados bench results so far, and `cluster` its cluster facts, for RGW's ceiling."""
    if result.status != "ok" or result.measurement is None:
        return None
    if facts is not None and facts.objectstore == "bluestore":
        st = store_settings(result, cluster or {}, facts.rotational)
        facts = replace(facts, deferred_max_bytes=st.deferred_max_bytes, deferred_text=st.deferred_text,
                        min_alloc_bytes=st.min_alloc_bytes)
    if result.test.kind in RGW_MODELLED:
        return _analyse_rgw(result, facts, rados or [], cluster or {})
    if level_of(result.test.kind) == "OSD" and facts is not None and facts.disk.write_alone_bytes_per_s:
        size = op_size_of(result) or 4 * 1024**2
        v = judge(osd_bench_ceiling(facts, size), result.measurement.bytes_per_s,
                  f"osd bench {_short(size)} (median OSD)")
        return Analysis(ceiling_bytes_per_s=v.ceiling_bytes_per_s, ceiling_ops_per_s=v.ceiling_ops_per_s,
                        efficiency=v.efficiency, bottleneck=v.bottleneck, reason=v.reason)
    if result.test.kind not in MODELLED:
        return None
    op, size = op_of(result), op_size_of(result)
    label = f"{result.test.params.get('phase', result.measurement.op)} {_short(size)}"
    if op is None or size is None:
        return Analysis(bottleneck="unknown", reason=f"{label}: mixed or unknown operation; the model covers "
                                                      "plain reads and writes")
    ev = result.evidence
    b = breakdown(_latency_s(result), ev.osds, op) if ev is not None else None
    if facts is None and ev is None:
        return Analysis(bottleneck="unknown", reason=f"{label}: no ceiling (no disk or network baseline in this "
                                                      "run: add a baseline section to the suite)")
    pool = Pool.from_profile(result.test.params.get("pool_profile"))
    c = ceiling(facts, op, size, pool) if facts is not None else Ceiling(op=op, op_size=size, terms=[],
                                                                          bottleneck="unknown")
    watched = max(result.hosts, key=lambda h: h.cpu_busy_median, default=None)
    measured, lines = _measured(result, c, b, cluster or {})
    v = judge(c, result.measurement.bytes_per_s, label, watched.cpus if watched else (facts.cpus if facts else None),
              watched.cpu_busy_median if watched else None, f"{watched.host} ({watched.role})" if watched else "",
              measured=measured)
    unused = [n for n in (facts.notes if facts is not None else ()) if n.endswith(NOT_USED)]
    if v.ceiling_bytes_per_s is None and unused:     # a ceiling's notes are in its reason; say them without one too
        v = replace(v, reason=f"{v.reason} ({'; '.join(unused)})")
    if facts is None and measured is None:
        v = replace(v, reason=v.reason.replace("(no disk or network baseline in this run)",
                                               "(no disk or network baseline in this run: add a baseline section "
                                               "to the suite)"))
    return Analysis(ceiling_bytes_per_s=v.ceiling_bytes_per_s, ceiling_ops_per_s=v.ceiling_ops_per_s,
                    efficiency=v.efficiency, bottleneck=v.bottleneck, reason=v.reason, breakdown=b, evidence=lines)


def _measured(result: Result, c: Ceiling, b: LatencyBreakdown | None,
              cluster: dict[str, Any]) -> tuple[tuple[str, str] | None, list[str]]:
    """(bottleneck, sentence) the evidence names, or None, and the evidence lines; nothing without evidence."""
    if result.evidence is None:
        return None, []
    bps = result.measurement.bytes_per_s if result.measurement else None
    eff = bps / c.bytes_per_s if c.bytes_per_s and bps else None
    found = from_evidence(result, eff, b, set(client_hosts(result)), osd_rotational(cluster))
    return ((found.bottleneck, found.sentence) if found.bottleneck is not None else None), found.lines


def _analyse_rgw(result: Result, facts: ClusterFacts | None, rados: list[Result],
                 cluster: dict[str, Any]) -> Analysis | None:
    """RGW's verdict: its S3 op as RADOS ops (rgw.py), the RGW host's link and CPU, and the evidence."""
    op, size = op_of(result), op_size_of(result)
    if op is None or size is None:
        return None                   # stat, list, delete, mixed: metadata, which the model does not cover
    piece = min(size, rgw.STRIPE)
    given = result.test.params.get("pool_profile")
    data_pool = Pool.from_profile(given) if given else rgw.rgw_pool(cluster, rgw.DATA_POOL)
    index_pool = rgw.rgw_pool(cluster, rgw.INDEX_POOL) or data_pool
    pool = data_pool or Pool(size=3)

    def figures(like: Pool | None) -> list[rgw.RadosFigure]:
        # only what the verdict counts (ok, no warning), of the same variant, on a pool that stores as RGW's does
        # (either unknown: nothing to compare)
        out = []
        for r in rados:
            prof = r.test.params.get("pool_profile")
            on = Pool.from_profile(prof) if prof else None
            if (counted(r) and r.test.variant == result.test.variant and (like is None or on is None or on == like)
                    and (o := op_of(r)) and (n := op_size_of(r))):
                where = f", {on.describe()}" if on is not None else ""
                out.append(rgw.RadosFigure(o, n, r.measurement.bytes_per_s, r.measurement.ops_per_s,
                                           f"rados bench {r.test.params.get('phase', o)} {_short(n)} of this run{where}"))
        return out
    data_term = rgw.rados_rate(figures(pool), op, piece)
    if data_term is None and facts is not None:
        model = ceiling(facts, op, piece, pool)
        if model.bytes_per_s:
            data_term = (model.bytes_per_s, f"the model's ceiling for {pool.describe()} from the baselines")
    index = rgw.small_write_ops(figures(index_pool))
    if index is None and facts is not None and op == "write":
        small = ceiling(facts, "write", 4096, index_pool or pool)
        if small.ops_per_s:
            index = (small.ops_per_s, "the model's 4 KiB write ceiling")
    names = rgw.rgw_hosts(cluster)
    ev = result.evidence
    speeds = [(lk.speed_bits_per_s / 8, f"{lk.host} {lk.iface} ({lk.speed_bits_per_s / 1e9:g} Gbit/s)")
              for lk in (ev.links if ev else []) if lk.host in names and lk.speed_bits_per_s]
    c = rgw.rgw_ceiling(op, size, data_term, index, min(speeds, default=None))
    b = breakdown(_latency_s(result), ev.osds, op) if ev is not None else None
    measured, lines = _measured(result, c, b, cluster)
    host = rgw.rgw_host_load(result.hosts, names)
    label = f"{result.test.params.get('op', result.measurement.op)} {_short(size)}"
    v = judge(c, result.measurement.bytes_per_s, label, host.cpus if host else None,
              host.cpu_busy_median if host else None, f"{host.host} (RGW host)" if host else "the RGW host",
              measured=measured)
    reason = v.reason
    if c.bytes_per_s is None and measured is None:
        reason = f"{label}: no ceiling (no rados bench of this run in that direction and no baselines: add a rados " \
                 "bench at the object size, or a baseline section, to the suite)"
    return Analysis(ceiling_bytes_per_s=v.ceiling_bytes_per_s, ceiling_ops_per_s=v.ceiling_ops_per_s,
                    efficiency=v.efficiency, bottleneck=v.bottleneck, reason=reason, breakdown=b, evidence=lines)


def counted(result: Result) -> bool:
    """A result the verdict counts: measured, and no warning against its figure."""
    return result.status == "ok" and not result.warnings and result.measurement is not None \
        and bool(result.measurement.bytes_per_s)


def _latency_s(result: Result) -> float | None:
    m = result.measurement
    return m.latency.mean_ns / 1e9 if m and m.latency.mean_ns else None


def _short(size: int | None) -> str:
    return exact_size(size) if size else ""


@dataclass
class RunAnalyzer:
    """Attaches analysis to each result of a run as it finishes; baselines are remembered as they come."""

    cluster: dict[str, Any] = field(default_factory=dict)
    shapes: dict[str, dict[str, Any]] = field(default_factory=dict)    # variant -> its lab shape's cluster facts
    client_hostname: str | None = None
    cpus: int | None = None
    seen: list[Result] = field(default_factory=list)
    rados: list[Result] = field(default_factory=list)      # the run's rados bench results: RGW's RADOS rates

    @classmethod
    def for_run(cls, ctx: Any) -> "RunAnalyzer":
        meta: dict[str, Any] = {}
        earlier: list[Result] = []
        if getattr(ctx, "rundir", None) is not None:
            try:
                meta = ctx.rundir.meta()
                earlier, _ = ctx.rundir.results()
            except Exception as exc:  # noqa: BLE001 - analysis must never stop a run
                log.warning("analysis: cannot read the run directory: %s", exc)
        client = (meta.get("hosts") or {}).get("client") or {}
        return cls(cluster=meta.get("cluster") or {}, shapes=shape_clusters(meta),
                   client_hostname=client.get("hostname"), cpus=client.get("cpu_count"),
                   seen=[r for r in earlier if r.test.kind in CEILING_SOURCES],
                   rados=[r for r in earlier if r.test.kind in RADOS_RATES])

    def attach(self, result: Result) -> Result:
        if result.test.kind in CEILING_SOURCES:
            self.seen.append(result)
            if result.test.kind not in MODELLED:
                return result
        try:
            cluster = cluster_of(result, self.cluster, self.shapes)
            facts = facts_from_run(cluster, self.seen, self.client_hostname, self.cpus)
            clients = client_hosts(result)
            if facts is not None and clients:
                facts = with_clients(facts, [r for r in self.seen if r.test.kind == NET_BASELINE], clients)
            result.analysis = analyse(result, facts, self.rados, cluster)
            if result.test.kind in RADOS_RATES:
                self.rados.append(result)
        except Exception as exc:  # noqa: BLE001 - a model bug must not lose a measured result
            log.warning("analysis of %s failed: %s", result.test.id, exc)
        return result


def attach(result: Result, analyzer: RunAnalyzer) -> Result:
    return analyzer.attach(result)
