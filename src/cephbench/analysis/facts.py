"""The model's ClusterFacts of one result: the cluster facts it ran with (its lab shape's, else the run's) and the
run's disk and network baselines; a test whose load came from client hosts gets their number and their links.
model.py does the arithmetic."""

from __future__ import annotations

import ipaddress
import statistics
from dataclasses import replace
from typing import Any

from ..core.results import Result
from ..hosts.remote import addr_ips
from ..kinds import DISK_BASELINE, NET_BASELINE, level_of, net_baseline
from .disks import usable
from .model import MIB, ClusterFacts, DiskFigures


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
            slowest_host_write_bytes_per_s=slowest[1] if slowest else None,
            slowest_disk=slowest[2] if slowest else None)
    ok = [r for r in osd_bench if r.status == "ok" and r.measurement and r.measurement.bytes_per_s]
    if ok:
        return DiskFigures(write_bytes_per_s=ok[-1].measurement.bytes_per_s, source="ceph tell osd bench (median OSD)",
                           includes_journal=True)
    return None


def facts_from_run(cluster: dict[str, Any], results: list[Result], client_hostname: str | None = None,
                   cpus: int | None = None) -> ClusterFacts | None:
    md = _osd_metadata(cluster)
    own, unused = usable([r for r in results if r.test.kind == DISK_BASELINE])
    disk = disk_figures(own, [r for r in results if level_of(r.test.kind) == "OSD"])
    net = net_baseline.network_figures([r for r in results if r.test.kind == NET_BASELINE], client_hostname)
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
    figures = [net_baseline.network_figures(net, c) for c in clients]
    tx = [f["tx"] for f in figures if f.get("tx")]
    rx = [f["rx"] for f in figures if f.get("rx")]
    return replace(facts, clients=len(clients), client_on_osd_host=False,
                   client_tx_bytes_per_s=statistics.mean(tx) if len(tx) == len(clients) else None,
                   client_rx_bytes_per_s=statistics.mean(rx) if len(rx) == len(clients) else None)
