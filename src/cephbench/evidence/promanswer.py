"""Prometheus's HTTP API answers -> the hosts' devices and links during a test (pure: no I/O).

node-exporter's counters are read as `irate(...)` over query_range with a step of one second: each step's value
is the rate between the last two scrapes before it, so a series holds one figure per second whatever the scrape
interval, and its resolution is the scrape interval (the reader records both). A node-exporter's series carry
`instance`; cephadm labels it with the host's name, other deployments with `address:port`: a series is a host's
when its instance is the host's name, or that name followed by a port or a domain (instance_host).

The interface behind a Ceph address comes from `node_network_address_info` (node-exporter's
`--collector.netdev.address-info`), else from the interface `ceph osd metadata` names (`front_iface`,
`back_iface`); a link neither names is noted, not guessed.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..core.errors import ParseError
from ..core.results import DEVICE_LIMIT_FIELDS, DEVICE_LIMIT_METRIC, DeviceLoad, HostLoad, LinkLoad
from .hoststream import WantedAddress, WantedDevice, address_of

SOURCE = "prometheus"

# DeviceLoad field <- node-exporter counter (per second through irate); busy and await are derived below
DISK_RATES = {
    "busy": "node_disk_io_time_seconds_total",
    "read_bytes_per_s": "node_disk_read_bytes_total",
    "write_bytes_per_s": "node_disk_written_bytes_total",
    "read_ops_per_s": "node_disk_reads_completed_total",
    "write_ops_per_s": "node_disk_writes_completed_total",
    "read_s_per_s": "node_disk_read_time_seconds_total",
    "write_s_per_s": "node_disk_write_time_seconds_total",
    "reads_merged_per_s": "node_disk_reads_merged_total",
    "writes_merged_per_s": "node_disk_writes_merged_total",
}
NET_RATES = {"rx_bytes_per_s": "node_network_receive_bytes_total",
             "tx_bytes_per_s": "node_network_transmit_bytes_total"}
SPEED = "node_network_speed_bytes"
ADDRESS_INFO = "node_network_address_info"
LIMIT, LIMIT_FIELDS = DEVICE_LIMIT_METRIC, DEVICE_LIMIT_FIELDS     # a published throttle (core/results.py)
# process-exporter's CPU seconds of a group of processes, by mode (user, system); an OSD's group named `osd.N`
PROCESS_CPU = "namedprocess_namegroup_cpu_seconds_total"
# node-exporter's CPU seconds per CPU and mode: busy is every mode but idle and iowait, as /proc/stat's (hostload.py)
HOST_CPU = "node_cpu_seconds_total"
IDLE_MODES = "idle|iowait"


@dataclass(frozen=True)
class Series:
    labels: dict[str, str]
    values: list[tuple[float, float]]       # (unix s, value); a NaN or infinite value is left out


def not_prometheus(body: bytes) -> str:
    """'' when `body` is a Prometheus API's successful answer, else what it is instead, in words: an exporter's
    metrics page (the text exposition format: node-exporter, ceph-exporter, the mgr module), an HTML page, JSON of
    another kind, or its first characters."""
    text = body.lstrip()
    try:
        doc = json.loads(text)
    except ValueError:
        first = text.split(b"\n", 1)[0][:60].decode("utf-8", "replace")
        if text.startswith((b"# HELP ", b"# TYPE ")):
            return ("it serves a metrics page (an exporter's: node-exporter, ceph-exporter, the mgr's prometheus "
                    f"module), not Prometheus's query API; it began {first!r}")
        if text[:15].lower().startswith((b"<!doctype html", b"<html")):
            title = re.search(rb"<title>([^<]{1,80})</title>", text[:4096], re.IGNORECASE)
            named = f" titled {title.group(1).decode('utf-8', 'replace').strip()!r}" if title else ""
            return f"it answered an HTML page{named}, not Prometheus's query API's JSON"
        return f"it answered {first!r}, not JSON" if first else "it answered nothing"
    if isinstance(doc, dict) and doc.get("status") == "success":
        return ""
    return f"its JSON is not a Prometheus answer (no status success): {text[:60].decode('utf-8', 'replace')!r}"


def parse_answer(text: str | bytes, what: str = "Prometheus") -> list[Series]:
    """An /api/v1/query or /api/v1/query_range answer -> its series (a vector's one value each); an error answer
    or one that does not read raises ParseError naming what Prometheus said."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"{what}: the answer is not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ParseError(f"{what}: the answer is not a JSON object")
    if doc.get("status") != "success":
        raise ParseError(f"{what}: {doc.get('errorType', 'error')}: {doc.get('error', 'no reason given')}")
    data = doc.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("result"), list):
        raise ParseError(f"{what}: the answer has no data.result")
    kind = data.get("resultType")
    out = []
    for r in data["result"]:
        if not isinstance(r, dict) or not isinstance(r.get("metric"), dict):
            raise ParseError(f"{what}: a result without its labels")
        points = r.get("values") if kind == "matrix" else [r.get("value")] if kind == "vector" else None
        if not isinstance(points, list):
            raise ParseError(f"{what}: a {kind} result without values")
        values = []
        for p in points:
            if not (isinstance(p, list) and len(p) == 2):
                raise ParseError(f"{what}: a sample that is not [time, value]: {str(p)[:40]}")
            try:
                t, v = float(p[0]), float(p[1])
            except (TypeError, ValueError, OverflowError):      # a time of 1e400 digits is no float
                raise ParseError(f"{what}: a sample that does not read: {str(p)[:40]}") from None
            if math.isfinite(t) and math.isfinite(v):
                values.append((t, v))
        out.append(Series({str(k): str(v) for k, v in r["metric"].items()}, values))
    return out


def parse_duration_s(text: str) -> float | None:
    """A Prometheus duration ("1s", "15s", "1m30s", "500ms") -> seconds; None when it does not read."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    total, num, i = 0.0, "", 0
    text = text.strip()
    while i < len(text):
        c = text[i]
        if c.isdigit():
            num += c
            i += 1
            continue
        unit = "ms" if text.startswith("ms", i) else c
        if not num or unit not in units:
            return None
        total += int(num) * units[unit]
        num, i = "", i + len(unit)
    return total if not num and total > 0 else None


def _active(text: str | bytes) -> list[Any]:
    """/api/v1/targets -> its data.activeTargets; ParseError when the answer has none."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"Prometheus targets: the answer is not JSON ({exc})") from None
    data = doc.get("data") if isinstance(doc, dict) else None
    active = data.get("activeTargets") if isinstance(data, dict) else None
    if not isinstance(doc, dict) or doc.get("status") != "success" or not isinstance(active, list):
        raise ParseError("Prometheus targets: the answer has no data.activeTargets")
    return active


def scrape_intervals(text: str | bytes) -> dict[str, float]:
    """/api/v1/targets -> each active target's instance label -> its scrape interval in seconds."""
    out = {}
    for t in _active(text):
        labels = t.get("labels") if isinstance(t, dict) else None
        inst = labels.get("instance") if isinstance(labels, dict) else None
        s = parse_duration_s(str(t.get("scrapeInterval", ""))) if inst and isinstance(t, dict) else None
        if inst and s:
            out[str(inst)] = s
    return out


def instance_host(instance: str, hosts: Sequence[str]) -> str | None:
    """The host of `hosts` a series' instance label names: the name itself, or followed by ":port" or ".domain"."""
    for h in hosts:
        if instance == h or instance.startswith((f"{h}:", f"{h}.")):
            return h
    return None


def instance_address(instance: str) -> str:
    """An instance label's host part: "10.0.0.1:9100" -> "10.0.0.1", "[fd00::1]:9100" -> "fd00::1"."""
    if instance.startswith("["):
        return instance[1:].split("]", 1)[0]
    return instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance


def host_addresses(metadata: Any) -> dict[str, set[str]]:
    """`ceph osd metadata` -> host name -> the addresses Ceph names there (public, cluster, heartbeats)."""
    out: dict[str, set[str]] = {}
    for m in metadata if isinstance(metadata, list) else []:
        if isinstance(m, dict) and m.get("hostname"):
            addrs = out.setdefault(str(m["hostname"]), set())
            for key in ("front_addr", "back_addr", "hb_front_addr", "hb_back_addr"):
                if ip := address_of(m.get(key)):
                    addrs.add(ip)
    return out


def host_of(instance: str, hosts: Mapping[str, Any]) -> str | None:
    """The host of `hosts` (name -> its addresses) an instance label names: by its name (instance_host), else by
    one of its addresses, with or without a port."""
    by_name = instance_host(instance, sorted(hosts))
    if by_name is not None:
        return by_name
    addr = instance_address(instance)
    return next((h for h, addrs in sorted(hosts.items()) if addr in addrs), None)


def named(series: list[Series], hosts: Mapping[str, Any]) -> list[Series]:
    """`series` with an instance that names a host by one of its addresses relabelled with the host's name, which
    the readers here match series by."""
    out = []
    for s in series:
        inst = s.labels.get("instance", "")
        host = host_of(inst, hosts) if inst and instance_host(inst, sorted(hosts)) is None else None
        out.append(Series({**s.labels, "instance": host}, s.values) if host else s)
    return out


def active_targets(text: str | bytes) -> list[tuple[str, str]]:
    """/api/v1/targets -> each active target's (job, instance)."""
    out = []
    for t in _active(text):
        labels = t.get("labels") if isinstance(t, dict) else None
        if isinstance(labels, dict) and labels.get("instance"):
            out.append((str(labels.get("job", "")), str(labels["instance"])))
    return sorted(set(out))


def targets_line(targets: list[tuple[str, str]], hosts: Mapping[str, Any]) -> str:
    """One line: which of Prometheus' targets (job, instance) were matched to which Ceph host, and which were not."""
    by: dict[str, list[str]] = {}
    unmatched = []
    for job, inst in targets:
        host = host_of(inst, hosts)
        (by.setdefault(host, []) if host else unmatched).append(f"{job or '?'} {inst}")
    line = "Prometheus' targets matched to the Ceph hosts by name or address: " + (
        "; ".join(f"{h} ({', '.join(ts)})" for h, ts in sorted(by.items())) or "none")
    if unmatched:
        line += f"; not a Ceph host's: {', '.join(unmatched)}"
    return line


def _by(series: list[Series], hosts: Sequence[str], key: str) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(host, value of label `key`) -> its samples."""
    out: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for s in series:
        host = instance_host(s.labels.get("instance", ""), hosts)
        if host is not None and key in s.labels:
            out.setdefault((host, s.labels[key]), s.values)
    return out


def iface_of(address_info: list[Series], hosts: Sequence[str]) -> dict[tuple[str, str], str]:
    """node_network_address_info -> (host, address) -> interface."""
    out = {}
    for s in address_info:
        host = instance_host(s.labels.get("instance", ""), hosts)
        if host is not None and s.labels.get("address") and s.labels.get("device"):
            out[(host, s.labels["address"])] = s.labels["device"]
    return out


@dataclass
class PromFigures:
    """Every answer a test's device and link figures come from, parsed (the reader fills it)."""

    start_unix_s: float                                     # the window's start; steps follow one a second
    steps: list[float]                                      # the step times asked for
    resolution_s: dict[str, float]                          # host -> its scrape interval
    disk: dict[str, list[Series]] = field(default_factory=dict)    # DISK_RATES value -> series
    net: dict[str, list[Series]] = field(default_factory=dict)     # NET_RATES value -> series
    speed: list[Series] = field(default_factory=list)
    address_info: list[Series] = field(default_factory=list)
    limits: list[Series] = field(default_factory=list)     # LIMIT, an instant query at the window's end


def _on_steps(samples: list[tuple[float, float]] | None, steps: list[float]) -> list[float] | None:
    """The samples at the asked steps; a step with none (a missed scrape, the series not there yet) holds the last
    value before it, or 0 at the start. None when the series has no sample at all."""
    if not samples or not steps:
        return None
    at = {round(t - steps[0]): v for t, v in samples}          # the steps are one second apart
    out, last = [], 0.0
    for i in range(len(steps)):
        last = at.get(i, last)
        out.append(last)
    return out


def device_loads(host: str, wanted: list[WantedDevice], fig: PromFigures
                 ) -> tuple[list[DeviceLoad], list[str]]:
    """One host's devices as DeviceLoads per second; a note for a device without series."""
    hosts = [host]
    rates = {f: _by(fig.disk.get(m, []), hosts, "device") for f, m in DISK_RATES.items()}
    devs, notes = [], []
    for w in wanted:
        got = {f: _on_steps(r.get((host, w.device)), fig.steps) for f, r in rates.items()}
        if got["busy"] is None and got["write_bytes_per_s"] is None:
            notes.append(f"device {host}:{w.device} ({w.role} of {', '.join(f'osd.{o}' for o in w.osds)}): "
                         f"Prometheus has no node-exporter series of it")
            continue
        zero = [0.0] * len(fig.steps)
        g = {f: (v if v is not None else zero) for f, v in got.items()}
        ops = [r + w_ for r, w_ in zip(g["read_ops_per_s"], g["write_ops_per_s"])]
        waits = [((rs + ws) * 1000 / n) if n > 0 else None
                 for rs, ws, n in zip(g["read_s_per_s"], g["write_s_per_s"], ops)]
        devs.append(DeviceLoad(
            **device_limits(host, w.device, fig.limits),
            host=host, device=w.device, osds=list(w.osds), role=w.role, start_unix_s=fig.start_unix_s,
            busy=[round(min(1.0, max(0.0, b)), 4) for b in g["busy"]],
            read_bytes_per_s=g["read_bytes_per_s"], write_bytes_per_s=g["write_bytes_per_s"], await_ms=waits,
            read_ops_per_s=g["read_ops_per_s"], write_ops_per_s=g["write_ops_per_s"],
            read_requests_per_s=[a + b for a, b in zip(g["read_ops_per_s"], g["reads_merged_per_s"])],
            write_requests_per_s=[a + b for a, b in zip(g["write_ops_per_s"], g["writes_merged_per_s"])],
            source=SOURCE, resolution_s=fig.resolution_s.get(host)))
    return devs, notes


def device_limits(host: str, device: str, limits: list[Series]) -> dict[str, float]:
    """The DeviceLoad limit fields of one host's device from LIMIT's series (its last value of each kind)."""
    out = {}
    for s in limits:
        kind = s.labels.get("kind", "")
        if instance_host(s.labels.get("instance", ""), [host]) == host and s.labels.get("device") == device \
                and kind in LIMIT_FIELDS and s.values and s.values[-1][1] > 0:
            out[LIMIT_FIELDS[kind]] = s.values[-1][1]
    return out


def link_loads(host: str, addresses: list[WantedAddress], ifaces: dict[str, str], fig: PromFigures
               ) -> tuple[list[LinkLoad], list[str]]:
    """One host's links (the interfaces holding Ceph's addresses there) as LinkLoads per second. `ifaces`: address
    -> interface named by `ceph osd metadata`, used when node_network_address_info does not say."""
    hosts = [host]
    by_addr = iface_of(fig.address_info, hosts)
    by_iface: dict[str, list[str]] = {}
    notes = []
    for w in addresses:
        iface = by_addr.get((host, w.address)) or ifaces.get(w.address)
        if iface is None:
            notes.append(f"link of {host} {w.address}: Prometheus does not say which interface holds it "
                         "(node-exporter's --collector.netdev.address-info would)")
            continue
        nets = by_iface.setdefault(iface, [])
        if w.network not in nets:
            nets.append(w.network)
    rx, tx = (_by(fig.net.get(m, []), hosts, "device") for m in NET_RATES.values())
    speeds = _by(fig.speed, hosts, "device")
    links = []
    for iface, nets in by_iface.items():
        r, t = _on_steps(rx.get((host, iface)), fig.steps), _on_steps(tx.get((host, iface)), fig.steps)
        if r is None and t is None:
            notes.append(f"link {host} {iface}: Prometheus has no node-exporter series of it")
            continue
        speed_samples = [v for _, v in speeds.get((host, iface), []) if v > 0]
        speed = speed_samples[-1] * 8 if speed_samples else None
        if speed is None:
            notes.append(f"link {host} {iface}: node-exporter does not report its speed")
        zero = [0.0] * len(fig.steps)
        network = " and ".join(sorted(nets, key=lambda n: (n != "public", n)))
        links.append(LinkLoad(host=host, iface=iface, network=network,
                              speed_bits_per_s=speed, speed_source="node_network_speed_bytes" if speed else None,
                              start_unix_s=fig.start_unix_s, rx_bytes_per_s=r or zero, tx_bytes_per_s=t or zero,
                              source=SOURCE, resolution_s=fig.resolution_s.get(host)))
    return links, notes


def metadata_ifaces(metadata: Any) -> dict[str, dict[str, str]]:
    """`ceph osd metadata` -> host -> address -> the interface Ceph says holds it (front_iface, back_iface)."""
    out: dict[str, dict[str, str]] = {}
    for m in metadata if isinstance(metadata, list) else []:
        if not isinstance(m, dict) or not m.get("hostname"):
            continue
        for addr_key, iface_key in (("front_addr", "front_iface"), ("back_addr", "back_iface")):
            ip, iface = address_of(m.get(addr_key)), m.get(iface_key)
            if ip and isinstance(iface, str) and iface:
                out.setdefault(str(m["hostname"]), {})[ip] = iface
    return out


def osd_cpu_seconds(at_start: list[Series], at_end: list[Series], osd_hosts: Mapping[int, str]
                    ) -> tuple[dict[int, float], list[str]]:
    """`sum by (instance, groupname) (PROCESS_CPU{groupname=~"osd\\.(...)"})` at a test's start and after its end
    -> each OSD's CPU seconds between the two, from the series of the instance that is its host (another host's
    `osd.N` is another cluster's); a note for an OSD with no such series at either end, or whose counter went back
    (its exporter restarted: what the OSD spent is unknown)."""
    def by_osd(series: list[Series]) -> dict[int, float]:
        out: dict[int, float] = {}
        for s in series:
            group, inst = s.labels.get("groupname", ""), s.labels.get("instance", "")
            n = group[4:] if group.startswith("osd.") else ""
            if n.isdigit() and int(n) in osd_hosts and s.values and instance_host(inst, [osd_hosts[int(n)]]):
                out[int(n)] = s.values[-1][1]
        return out
    first, last = by_osd(at_start), by_osd(at_end)
    cpu: dict[int, float] = {}
    notes: list[str] = []
    missing = []
    for n, host in sorted(osd_hosts.items()):
        if n not in first or n not in last:
            missing.append(f"osd.{n} on {host}")
        elif last[n] < first[n]:
            notes.append(f"osd.{n} on {host}: CPU not told: its {PROCESS_CPU} went back during the test")
        else:
            cpu[n] = last[n] - first[n]
    if missing:
        notes.append(f"the CPU of {', '.join(missing)}: Prometheus has no {PROCESS_CPU} of a group `osd.N` on its "
                     "host over the test (a process-exporter that groups each OSD process so: docs/model.md, "
                     "\"CPU per operation\")")
    return cpu, notes


def host_cpu_loads(hosts: Sequence[str], busy: list[Series], cpus: list[Series], steps: list[float],
                   role: str = "OSD host") -> list[HostLoad]:
    """node-exporter's CPU of `hosts` as HostLoads: `busy` the busy cores per step (`sum by (instance)
    (irate(node_cpu_seconds_total{mode!~"idle|iowait"}[...]))` over the steps, one a second), `cpus` each host's
    CPUs (`count by (instance) (node_cpu_seconds_total{mode="idle"})`). Its busy CPU-seconds are the steps' cores
    summed, its wall seconds the steps': whose they were is split as a watched host's (analysis/cpusplit.py), with
    the OSDs' CPU from process-exporter. A host without both series is left out."""
    out = []
    for h in hosts:
        n = next((int(s.values[-1][1]) for s in cpus if instance_host(s.labels.get("instance", ""), [h]) == h
                  and s.values and s.values[-1][1] >= 1), None)
        cores = next((_on_steps(s.values, steps) for s in busy
                      if instance_host(s.labels.get("instance", ""), [h]) == h), None)
        if n is None or not cores:
            continue
        series = [round(min(1.0, max(0.0, c / n)), 4) for c in cores]
        mean = round(sum(series) / len(series), 4)
        med = sorted(series)[len(series) // 2] if len(series) >= 3 else mean
        out.append(HostLoad(host=h, role=role, cpus=n, cpu_busy_mean=mean, cpu_busy_median=med,
                            cpu_busy_max=max(series), cpu_busy_series=series, source=SOURCE,
                            cpu_s=round(sum(min(float(n), max(0.0, c)) for c in cores), 3), wall_s=float(len(steps))))
    return out
