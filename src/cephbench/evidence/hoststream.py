"""A host's devices and links during a test, from the lines its watch streams (hostload.WATCH_SH); pure.

The watch is told which block devices hold the host's OSDs and which addresses Ceph uses there. It answers once,
at its start:

  iface ADDR IFACE SPEED     the interface holding ADDR (`ip -o addr show to ADDR`) and /sys/class/net/IFACE/speed
  route ADDR IFACE SPEED     the interface this host reaches ADDR by (a client: the route to a monitor)
  shaped IFACE=BITS ...      speeds the lab set by shaping (CEPHBENCH_LINK_SPEEDS), which sysfs does not know
  limit DEV FILE:MAJ:MIN N   a cgroup throttle on the device (blkio.throttle.*_device, or io.max on cgroup v2)

and then once a second a round: `t <ns>`, the CPU line, and the devices' /proc/diskstats lines and the interfaces'
/proc/net/dev lines, prefixed `disk ` and `net `. A throttled device is slowed before the block layer counts it
busy (a loop device held at 8 MiB/s by blkio showed 1 % busy), so its throttle is its capacity: the model reads
its bytes/s against the limit, as a link's against its speed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..core.results import DeviceLoad, LinkLoad, ProcessCpu
from .procfs import DiskCounters, NetCounters, device_load, link_load, parse_diskstats, parse_link_speed, parse_net_dev

_LIMIT_KEYS = {"read_bps_device": "read_bytes_per_s", "write_bps_device": "write_bytes_per_s",
               "read_iops_device": "read_iops", "write_iops_device": "write_iops"}
_IO_MAX_KEYS = {"rbps": "read_bytes_per_s", "wbps": "write_bytes_per_s", "riops": "read_iops", "wiops": "write_iops"}


# a remote host whose watch streamed nothing (evidence.watch.not_watched), and what would measure it
NOT_WATCHED = "not watched"
SSH_REACHES = "settings.ssh (hosts, user, identity_file) reaches it"
WHAT_WATCHES = f"{SSH_REACHES}, or settings.prometheus reads its devices and links from node-exporter"
UNMEASURED = "its devices, links and CPU are not measured"


@dataclass
class HostStream:
    ifaces: dict[str, tuple[str, float | None]] = field(default_factory=dict)   # address -> (iface, sysfs speed)
    shaped: dict[str, float] = field(default_factory=dict)                      # iface -> bits/s
    limits: dict[str, dict[str, float]] = field(default_factory=dict)           # device -> {kind: limit}
    disks: list[tuple[int, dict[str, DiskCounters]]] = field(default_factory=list)
    nets: list[tuple[int, dict[str, NetCounters]]] = field(default_factory=list)
    # issue 35: the kernel's boot id; the host's Ceph daemons (PID -> command line), each one's cpu cgroup path and
    # (group directory, quota µs or None, period µs); per round each daemon's /proc/PID/stat and each limited
    # group's cpu.stat
    boot: str | None = None
    daemons: dict[int, str] = field(default_factory=dict)
    cgroups: dict[int, str] = field(default_factory=dict)
    quotas: dict[int, tuple[str, int | None, int]] = field(default_factory=dict)
    procs: list[tuple[int, dict[int, str]]] = field(default_factory=list)
    cpustats: list[tuple[int, dict[str, dict[str, int]]]] = field(default_factory=list)


def _limit(line: str) -> tuple[str, str, float] | None:
    """`limit DEV FILE:MAJ:MIN VALUE` (v1) or `limit DEV FILE:MAJ:MIN rbps=N wbps=max ...` (v2) -> the first
    limit it sets as (device, kind, value); the caller takes every kind from a v2 line through _io_max."""
    f = line.split()
    if len(f) < 4:
        return None
    name = f[2].split(":", 1)[0].rsplit("/", 1)[-1]
    for suffix, kind in _LIMIT_KEYS.items():
        if name.endswith(suffix) and f[3].isdigit() and int(f[3]) > 0:
            return f[1], kind, float(f[3])
    return None


def _io_max(line: str) -> list[tuple[str, str, float]]:
    f = line.split()
    if len(f) < 4 or not f[2].split(":", 1)[0].endswith("io.max"):
        return []
    out = []
    for kv in f[3:]:
        k, _, v = kv.partition("=")
        if k in _IO_MAX_KEYS and v.isdigit() and int(v) > 0:
            out.append((f[1], _IO_MAX_KEYS[k], float(v)))
    return out


def parse_stream(text: str) -> HostStream:
    """The watch's output -> its answers and its rounds. Lines that do not read are skipped: ssh may mix in a
    warning, and the last line may be cut where the watch was stopped."""
    out = HostStream()
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()
    t: int | None = None
    disk: list[str] = []
    net: list[str] = []
    procs: dict[int, str] = {}
    stats: dict[str, dict[str, int]] = {}

    def close_round() -> None:
        if t is not None:
            out.disks.append((t, parse_diskstats("\n".join(disk))))
            out.nets.append((t, parse_net_dev("\n".join(net))))
            if procs or stats:
                out.procs.append((t, procs))
                out.cpustats.append((t, stats))

    for line in lines:
        if line.startswith("t "):
            close_round()
            t = int(line[2:]) if line[2:].strip().isdigit() else None
            disk, net, procs, stats = [], [], {}, {}
        elif line.startswith("p "):
            pid = line[2:].split(" ", 1)[0]
            if pid.isdigit():
                procs[int(pid)] = line[2:]
        elif line.startswith("cg "):
            f = line[3:].split(" ")
            stats[f[0]] = {k: int(v) for kv in f[1:] for k, _, v in [kv.partition("=")] if v.isdigit()}
        elif line.startswith(("daemon ", "cgroup ", "quota ")):
            kind, _, rest = line.partition(" ")
            pid, _, rest = rest.partition(" ")
            if not pid.isdigit():
                continue
            if kind == "daemon":
                out.daemons[int(pid)] = rest.strip()
            elif kind == "cgroup":
                out.cgroups[int(pid)] = rest.strip()
            else:
                q = rest.split()
                if len(q) == 3 and q[2].isdigit() and int(q[2]) > 0:
                    out.quotas[int(pid)] = (q[0], int(q[1]) if q[1].isdigit() else None, int(q[2]))
        elif line.startswith("boot "):
            out.boot = line[5:].strip() or None
        elif line.startswith("disk "):
            disk.append(line[5:])
        elif line.startswith("net "):
            net.append(line[4:])
        elif line.startswith(("iface ", "route ")):
            f = line.split()
            if len(f) >= 3 and f[2] != "?":
                out.ifaces[f[1]] = (f[2], parse_link_speed(f[3]) if len(f) > 3 else None)
        elif line.startswith("shaped "):
            for kv in line[7:].replace(",", " ").split():
                k, _, v = kv.partition("=")
                if k and v.isdigit() and int(v) > 0:
                    out.shaped[k] = float(v)
        elif line.startswith("limit "):
            for dev, kind, value in ([x] if (x := _limit(line)) else _io_max(line)):
                out.limits.setdefault(dev, {})[kind] = value
    close_round()
    return out


@dataclass(frozen=True)
class WantedDevice:
    device: str           # kernel name, e.g. sdb, loop3
    osds: tuple[int, ...]
    role: str             # data, db, wal, journal


@dataclass(frozen=True)
class WantedAddress:
    address: str
    network: str          # public, cluster, "public and cluster", or "public" for a client's route


def loads(host: str, stream: HostStream, devices: list[WantedDevice], addresses: list[WantedAddress]
          ) -> tuple[list[DeviceLoad], list[LinkLoad], list[str]]:
    """Per-second device and link loads of one host, and a note for each one that could not be measured."""
    devs, links, notes = [], [], []
    for w in devices:
        d = device_load(host, w.device, stream.disks, list(w.osds), w.role)
        if d is None:
            notes.append(f"device {host}:{w.device} ({w.role} of {', '.join(f'osd.{o}' for o in w.osds)}): "
                         f"no /proc/diskstats entry")
            continue
        lim = stream.limits.get(w.device, {})
        d.limit_read_bytes_per_s = lim.get("read_bytes_per_s")
        d.limit_write_bytes_per_s = lim.get("write_bytes_per_s")
        d.limit_read_iops = lim.get("read_iops")
        d.limit_write_iops = lim.get("write_iops")
        devs.append(d)
    by_iface: dict[str, list[str]] = {}
    for w in addresses:
        iface = stream.ifaces.get(w.address)
        if iface is None:
            notes.append(f"link of {host} {w.address}: its interface is unknown (`ip` found none)")
            continue
        nets = by_iface.setdefault(iface[0], [])
        if w.network not in nets:
            nets.append(w.network)
    for iface, nets in by_iface.items():
        sysfs = next((s for a, (i, s) in stream.ifaces.items() if i == iface and s), None)
        speed, source = ((stream.shaped[iface], "lab shaping") if iface in stream.shaped
                         else (sysfs, "sysfs") if sysfs else (None, None))
        network = " and ".join(sorted(nets, key=lambda n: (n != "public", n)))
        link = link_load(host, iface, stream.nets, network, speed, source)
        if link is None:
            notes.append(f"link {host} {iface}: no /proc/net/dev entry")
            continue
        if speed is None:
            notes.append(f"link {host} {iface}: the kernel does not report its speed")
        links.append(link)
    return devs, links, notes


def address_of(addrvec: Any) -> str | None:
    """"[v2:198.18.0.1:6800/9832,v1:198.18.0.1:6801/9832]" (or "198.18.0.1:6801/9832", or an IPv6 "[v2:[::1]:6800/0]")
    -> "198.18.0.1"; None when it does not read."""
    if not isinstance(addrvec, str):
        return None
    first = addrvec.strip("[]").split(",")[0]
    first = first.split(":", 1)[1] if first.startswith(("v1:", "v2:")) else first
    if first.startswith("["):
        return first[1:].split("]", 1)[0] or None
    host = first.rsplit(":", 1)[0] if ":" in first else first
    return host or None


def _names(value: Any) -> list[str]:
    return [n for n in str(value or "").split(",") if n] if isinstance(value, str) else []


def watch_targets(metadata: Any) -> dict[str, tuple[list[WantedDevice], list[WantedAddress]]]:
    """`ceph osd metadata` -> for each OSD host, the block devices behind its OSDs (data, DB, WAL, journal) and the
    addresses Ceph uses there (front: public, back: cluster). Device names are the kernel's (`*_devices`, which
    name the whole disk beneath a partition or an LVM volume: what /proc/diskstats counts). A file-backed OSD has
    none: the caller notes it."""
    out: dict[str, tuple[list[WantedDevice], list[WantedAddress]]] = {}
    roles: dict[str, dict[str, tuple[str, list[int]]]] = {}      # host -> device -> (role, osds)
    for m in metadata if isinstance(metadata, list) else []:
        if not isinstance(m, dict) or not isinstance(m.get("id"), int) or not m.get("hostname"):
            continue
        host, osd = str(m["hostname"]), m["id"]
        devs, addrs = out.setdefault(host, ([], []))
        by_dev = roles.setdefault(host, {})
        filestore = m.get("osd_objectstore") == "filestore"
        data = _names(m.get("bluestore_bdev_devices"))
        if filestore and m.get("backend_filestore_dev_node"):
            data = [str(m["backend_filestore_dev_node"]).rsplit("/", 1)[-1]]
        db = _names(m.get("bluefs_db_devices")) if m.get("bluefs_dedicated_db") == "1" else []
        wal = _names(m.get("bluefs_wal_devices")) if m.get("bluefs_dedicated_wal") == "1" else []
        rest = [d for d in _names(m.get("devices")) if d not in data + db + wal]
        for role, names in (("data", data), ("db", db), ("wal", wal), ("journal" if filestore else "db", rest)):
            for d in names:
                by_dev.setdefault(d, (role, []))[1].append(osd)
        for key, network in (("front_addr", "public"), ("back_addr", "cluster")):
            ip = address_of(m.get(key))
            if ip and not any(a.address == ip for a in addrs):
                addrs.append(WantedAddress(ip, network))
    for host, by_dev in roles.items():
        out[host][0].extend(WantedDevice(d, tuple(sorted(osds)), role) for d, (role, osds) in sorted(by_dev.items()))
    return out


def file_backed(metadata: Any) -> list[tuple[str, int, str | None]]:
    """(host, osd, the disk its file is on or None) of OSDs whose store is a file (BlueStore's access mode
    "file", as the one-host lab's) or that name no device at all: their device's figures are the whole disk's."""
    out = []
    for m in metadata if isinstance(metadata, list) else []:
        if not isinstance(m, dict) or not isinstance(m.get("id"), int) or not m.get("hostname"):
            continue
        devices = _names(m.get("bluestore_bdev_devices") or m.get("devices"))
        if m.get("bluestore_bdev_access_mode") == "file" or not devices:
            out.append((str(m["hostname"]), m["id"], devices[0] if devices else None))
    return out


# ---- issue 35: the host's Ceph daemons, by PID, cgroup and container ----------------------------------------------

USER_HZ = 100               # /proc/PID/stat's unit on Linux whatever the kernel's HZ (sysconf's SC_CLK_TCK)
_NAME_ARGS = {"-i": "id", "--id": "id", "-n": "name", "--name": "name"}
_TYPES = {"ceph-osd": "osd", "ceph-mon": "mon", "ceph-mgr": "mgr", "ceph-mds": "mds", "radosgw": "client"}
_CONTAINER_RE = re.compile(r"(?:docker|libpod|crio|cri-containerd|containerd)[-/:]([0-9a-f]{12,64})"
                           r"|/([0-9a-f]{64})(?:\.scope)?$")


def daemon_name(cmdline: str) -> str:
    """"ceph-osd -i 2 --conf …" -> "osd.2" (also --id N, -n osd.N, --name=osd.N; radosgw -n client.rgw.x); the
    program's name when the command line names no id."""
    words = cmdline.split()
    if not words:
        return "?"
    prog = words[0].rsplit("/", 1)[-1]
    kind = _TYPES.get(prog)
    for i, w in enumerate(words[1:], 1):
        flag, eq, value = w.partition("=")
        what = _NAME_ARGS.get(flag)
        if what is None:
            continue
        value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
        if not value:
            continue
        if what == "name":
            return value
        return f"{kind}.{value}" if kind else f"{prog}.{value}"
    return prog


def container_of(cgroup: str | None) -> str | None:
    """The container id a cgroup path names (docker, podman as cephadm runs it, CRI-O and containerd under
    Kubernetes as Rook's pods are), its first 12 hex digits; None for a path of no container."""
    m = _CONTAINER_RE.search(cgroup or "")
    return (m.group(1) or m.group(2))[:12] if m else None


def _stat(line: str) -> tuple[int, int] | None:
    """(start ticks, utime + stime ticks) of a /proc/PID/stat line; None when it does not read."""
    fields = line.rpartition(")")[2].split()
    if len(fields) < 20 or not all(f.isdigit() for f in fields[11:13] + [fields[19]]):
        return None
    return int(fields[19]), int(fields[11]) + int(fields[12])


def daemon_cpu(host: str, stream: HostStream, source: str) -> list[ProcessCpu]:
    """Each Ceph daemon the watch listed: its CPU from its first to its last reading (the same rounds as the host's
    own CPU), its cgroup, container and CFS limit, and over the same rounds the periods its group ran and those
    throttled. A daemon whose start time changed (restarted) or read fewer than twice is left out."""
    out = []
    for pid, cmdline in stream.daemons.items():
        seen = [(t, st) for t, procs in stream.procs if pid in procs and (st := _stat(procs[pid])) is not None]
        if len(seen) < 2 or seen[0][1][0] != seen[-1][1][0]:
            continue
        (t0, (_, a)), (t1, (_, b)) = seen[0], seen[-1]
        cpu = ProcessCpu.of(daemon_name(cmdline), max(0, b - a) / USER_HZ, None, None, source, host, pid)
        cpu.wall_s = round((t1 - t0) / 1e9, 3)
        cpu.cgroup = stream.cgroups.get(pid) or None
        cpu.container = container_of(cpu.cgroup)
        quota = stream.quotas.get(pid)
        if quota is not None and quota[1] is not None:
            group, q, period = quota
            cpu.limit_cores = round(q / period, 4)
            stats = [(t, st[group]) for t, st in stream.cpustats if group in st and t0 <= t <= t1]
            if len(stats) >= 2:
                first, last = stats[0][1], stats[-1][1]
                d = {k: last.get(k, 0) - first.get(k, 0) for k in last}
                cpu.periods, cpu.throttled_periods = d.get("nr_periods"), d.get("nr_throttled")
                cpu.throttled_s = (d["throttled_time"] / 1e9 if "throttled_time" in d
                                   else d["throttled_usec"] / 1e6 if "throttled_usec" in d else None)
        out.append(cpu)
    return sorted(out, key=lambda c: (c.who, c.pid or 0))


DEFAULT_CONF = "/etc/ceph/ceph.conf"


def of_conf(cmdline: str, conf: str | None) -> bool:
    """Whether a daemon's command line names the cluster configuration `conf` (`--conf PATH`, `--conf=PATH`, `-c
    PATH`), or names none while `conf` is Ceph's default (or not given): on a machine that runs another cluster's
    daemons too (the development VM's labs), those of the run's own cluster."""
    words = cmdline.split()
    named = next((v for i, w in enumerate(words)
                  for v in ([w.split("=", 1)[1]] if w.startswith("--conf=") else
                            [words[i + 1]] if w in ("--conf", "-c") and i + 1 < len(words) else [])), None)
    if named is None:
        return conf in (None, DEFAULT_CONF)
    return conf is not None and os.path.realpath(named) == os.path.realpath(conf)
