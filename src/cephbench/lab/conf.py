"""ceph.conf for a lab: everything under one directory, loopback only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.units import format_size


# The modules of Ceph 16.2's mgr that are neither "always on" (balancer, crash, devicehealth, orchestrator,
# pg_autoscaler, progress, rbd_support, status, telemetry, volumes: not loading one of those is a health
# error) nor `iostat` (a human command, cheap to load).
MGR_DISABLED_MODULES = (
    "alerts", "cephadm", "dashboard", "diskprediction_local", "influx", "insights", "k8sevents", "localpool",
    "mds_autoscaler", "mirroring", "nfs", "osd_perf_query", "osd_support", "prometheus", "restful", "rook",
    "selftest", "snap_schedule", "stats", "telegraf", "test_orchestrator", "zabbix",
)


@dataclass(frozen=True)
class LabPorts:
    mon_v2: int
    mon_v1: int
    rgw: int


@dataclass(frozen=True)
class LabNet:
    """Where the daemons listen. The one-host lab: loopback, free ports. A multi-host lab: each host is a network
    namespace of its own, so Ceph's standard ports, and CRUSH places replicas on different hosts."""

    mon_ip: str = "127.0.0.1"
    rgw_ip: str = "127.0.0.1"
    public_network: str = "127.0.0.0/8"
    cluster_network: str | None = None
    multi_host: bool = False

    @property
    def chooseleaf_type(self) -> int:
        return 1 if self.multi_host else 0          # 1: host, 0: osd


def mon_addrs(ip: str, ports: LabPorts) -> str:
    return f"[v2:{ip}:{ports.mon_v2},v1:{ip}:{ports.mon_v1}]"


# an idle BlueStore aio thread's poll: while the lab starts (each device close waits up to one poll), and after
AIO_POLL_START_MS = 2
AIO_POLL_MS = 20

# What a fresh lab's sparse OSD files take on disk (3.6-3.7 MiB each after mkfs, the whole lab 53 MiB: `du` on a
# lab just up, Pacific 16.2.15), with room for RocksDB's first compactions; and what its logs, mon store and run
# directories may take beside them.
OSD_FILE_START_BYTES = 64 << 20
LAB_OTHER_BYTES = 1 << 30
CEPH_FULL_RATIO = 0.95          # Ceph's default mon_osd_full_ratio
LEAST_FULL_RATIO = 0.5          # below it, the lab would call itself full at under half its size: refused


@dataclass(frozen=True)
class DiskRoom:
    """What the lab's disk holds of its sparse OSD files: they take a few MiB each when made and grow as the
    cluster is written, up to their size. `full_ratio` (None: Ceph's default) is lowered so that Ceph calls the
    cluster full before this disk is, instead of refusing a lab whose files' sizes add up to more than is free."""

    free_bytes: int
    nominal_bytes: int
    full_ratio: float | None
    refusal: str | None = None

    def note(self) -> str | None:
        if self.full_ratio is None or self.refusal:
            return None
        return (f"the OSD files are sparse: {format_size(self.free_bytes)} free holds {self.full_ratio:.0%} of their "
                f"{format_size(self.nominal_bytes)}, so the lab's full ratio is {self.full_ratio:.2f} (Ceph calls the "
                "cluster full before this disk is)")


def disk_room(free_bytes: int, osds: int, osd_size_bytes: int) -> DiskRoom:
    nominal = osds * osd_size_bytes
    usable = free_bytes - LAB_OTHER_BYTES - osds * OSD_FILE_START_BYTES
    ratio = usable / nominal if nominal else 1.0
    if ratio >= CEPH_FULL_RATIO:
        return DiskRoom(free_bytes, nominal, None)
    if ratio < LEAST_FULL_RATIO:
        return DiskRoom(free_bytes, nominal, None, refusal=(
            f"not enough free disk for the lab: its {osds} sparse OSD files of {format_size(osd_size_bytes)} may grow "
            f"to {format_size(nominal)} as the cluster is written, and {format_size(free_bytes)} free holds "
            f"{max(ratio, 0):.0%} of that (half is needed, after {format_size(LAB_OTHER_BYTES)} for logs and runs)"))
    return DiskRoom(free_bytes, nominal, int(ratio * 100) / 100)


def render_conf(d: Path, fsid: str, ports: LabPorts, pool_size: int, osd_size_bytes: int,
                net: LabNet = LabNet(), extra_osd: str = "", osd_sections: dict[int, list[str]] | None = None,
                mgr_modules: tuple[str, ...] = (), full_ratio: float | None = None) -> str:
    """`extra_osd`: lines for [osd] (the object store's); `osd_sections`: lines of each OSD's own section (its
    CRUSH host and drives in a multi-host lab); `mgr_modules`: modules the mgr loads beside iostat (prometheus
    for `lab up --monitoring`); `full_ratio`: the initial OSD map's full ratio when the disk holds less than Ceph's
    default of the OSD files (`disk_room`), the nearfull and backfillfull ratios below it in Ceph's default steps."""
    disabled = ",".join(m for m in MGR_DISABLED_MODULES if m not in mgr_modules)
    mon_host = mon_addrs(net.mon_ip, ports)
    per_osd = "".join(f"\n[osd.{i}]\n" + "".join(f"{line}\n" for line in lines)
                      for i, lines in sorted((osd_sections or {}).items()))
    # Why each unusual setting is here:
    # - one host, so CRUSH must place replicas across OSDs, not hosts (chooseleaf type 0); a multi-host lab
    #   goes back to hosts (1);
    # - auth_allow_insecure_global_id_reclaim=false: otherwise a permanent HEALTH_WARN;
    # - mon_data_avail_warn lowered: a developer disk at 70% use is not a lab problem;
    # - osd_memory_target ~1 GiB so three OSDs fit beside RGW on a small machine;
    # - the autoscaler off: it would change pg_num under a running benchmark;
    # - beast with tcp_nodelay: without it every small GET waits ~40 ms (Nagle against delayed ACK);
    # start-up speed (docs/lab.md has the measurements):
    # - paxos propose interval: the mon batches map changes for 1 s by default; a lab makes a few dozen in a
    #   row while it starts (OSDs booting, pools, PG creation);
    # - mgr stats/tick period: PG states reach `ceph status` from the OSDs through the mgr, every 5 + 2 s
    #   by default;
    # - mgr disabled modules: the mgr imports every module it finds at start, seconds of CPU beside OSDs
    #   starting;
    # - bdev aio poll ms: an idle BlueStore aio thread notices it should stop only after this, and mkfs
    #   and mount open and close the device four times, an OSD's start nine (one per op shard); the lab puts
    #   its OSDs back to AIO_POLL_MS once healthy (an idle thread's wake-ups cost CPU: three idle OSDs took 5.0-5.3 %
    #   of a core at 2 ms, 1.8-2.0 % at 20 ms).
    # space:
    # - osd delete sleep hdd/hybrid/ssd: a removed pool's PGs are deleted with a pause (5 s on a rotational
    #   device, as a lab's OSD file counts) between steps, so its space came back over a minute or more, and
    #   the capacity guard saw less room than there was (a lab test waited up to 2 min for `ceph df` to settle).
    return f"""\
[global]
fsid = {fsid}
mon host = {mon_host}
public network = {net.public_network}
{f"cluster network = {net.cluster_network}" + chr(10) if net.cluster_network else ""}auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 2
mon data avail crit = 1
osd crush chooseleaf type = {net.chooseleaf_type}
osd pool default size = {pool_size}
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
{_full_ratios(full_ratio)}paxos propose interval = 0.1
mgr stats period = 1
mgr tick period = 1
mgr initial modules = {" ".join(("iostat", *mgr_modules))}
run dir = {d}/run
admin socket = {d}/run/$cluster-$name.asok
pid file = {d}/run/$name.pid
log file = {d}/log/$cluster-$name.log
crash dir = {d}/crash
mon cluster log file = {d}/log/$cluster.log
keyring = {d}/keyring/$cluster.$name.keyring
ms bind ipv6 = false

[mon]
mon data = {d}/mon/$id
keyring = {d}/mon/$id/keyring
mon initial members = a
mon cluster log to file = false

[mgr]
mgr data = {d}/mgr/$id
keyring = {d}/mgr/$id/keyring
mgr disabled modules = {disabled}

[osd]
osd data = {d}/osd/$id
keyring = {d}/osd/$id/keyring
osd objectstore = bluestore
bluestore block create = true
bluestore block size = {osd_size_bytes}
bluestore fsck on mkfs = false
bluestore fsck on mount = false
bdev aio poll ms = {AIO_POLL_START_MS}
osd memory target = 1073741824
osd max object size = 134217728
osd delete sleep hdd = 0
osd delete sleep hybrid = 0
osd delete sleep ssd = 0
{extra_osd}
[client]
# Clients (rados bench, fio) run many at once, and nothing reads their sockets: none (a tool stopped by a signal
# never removes its own, and a lab's run/ filled with them), and no log files.
admin socket =
log file = /dev/null

[client.rgw.lab]
admin socket = {d}/run/$cluster-$name.asok
rgw data = {d}/rgw
rgw frontends = beast endpoint={net.rgw_ip}:{ports.rgw} tcp_nodelay=1
rgw dns name = localhost
log file = {d}/log/$cluster-$name.log
{per_osd}"""


def _full_ratios(full: float | None) -> str:
    if full is None:
        return ""
    # Ceph's defaults keep nearfull 0.10 and backfillfull 0.05 below full; the mon reads them once, when it makes
    # the first OSD map
    return (f"mon osd full ratio = {full:.2f}\nmon osd backfillfull ratio = {full - 0.05:.2f}\n"
            f"mon osd nearfull ratio = {full - 0.10:.2f}\n")
