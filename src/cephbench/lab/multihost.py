"""What goes where in a multi-host lab: hosts and their roles, which daemons each runs, what lab.json records.

Pure: the lab (lab.py) makes the namespaces (netns.py) and starts the daemons this plan places.

Host h<i> (1-based) carries OSDs (i-1)*K .. i*K-1 for K OSDs per host; the monitor and the manager run on h1, RGW
on the last OSD host (so S3 traffic and the monitor do not share one link when there are several hosts). Client
hosts c<j> run only sshd: load generators are started there over ssh. Each host's name (h1, c1) is also its
Ceph host name (NODE_NAME, which Ceph reads before gethostname()): `ceph osd metadata` and the CRUSH map show it,
and settings.ssh.hosts maps it to the host's address.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UserError
from ..core.units import parse_size
from .cpulimit import CpuLimitSpec, HostLoadSpec, check_cpu_specs, parse_cpu_limits, parse_host_loads
from .drives import LabDrives, StoreChoice, check_objectstore
from .netns import MAX_HOSTS, Topology
from .rates import LinkShape, parse_link
from .throttle import ThrottleSpec, check_drives, parse_throttle_specs

MON, MGR, RGW = "mon.a", "mgr.x", "client.rgw.lab"
MAX_OSDS_PER_HOST = 16


@dataclass(frozen=True)
class MultiHostSpec:
    """`lab up --hosts N --osds-per-host K --clients C --public-net ... --cluster-net ... --client-net ...`."""

    hosts: int
    osds_per_host: int = 1
    clients: int = 0
    public: LinkShape | None = None
    cluster: LinkShape | None = None
    separate_cluster: bool = False          # a cluster network without shaping
    client: LinkShape | None = None         # the client hosts' links (both ways), the cluster side as it is
    store: StoreChoice = StoreChoice("bluestore", None)
    db_size_bytes: int | None = None        # --db-device: BlueStore's WAL/DB (FileStore's journal) on a drive of its own
    throttles: tuple[ThrottleSpec, ...] = ()
    cpu_limits: tuple[CpuLimitSpec, ...] = ()     # --cpu-limit: a daemon's CFS quota
    host_loads: tuple[HostLoadSpec, ...] = ()     # --host-load: a CPU-burning neighbour on a host

    def cpu_quotas(self) -> dict[str, int]:
        """Each cpu group the lab makes (drives.plan): `osd.N` of a limit, `load.hN` of a neighbour, and its quota."""
        return {**{s.daemon: s.quota_us for s in self.cpu_limits},
                **{f"load.{h.host}": h.quota_us for h in self.host_loads}}

    def __post_init__(self) -> None:
        if not 1 <= self.hosts <= MAX_HOSTS:
            raise UserError(f"--hosts must be 1 to {MAX_HOSTS}, got {self.hosts}", "e.g. --hosts 3",
                            where="--hosts")
        if not 1 <= self.osds_per_host <= MAX_OSDS_PER_HOST:
            raise UserError(f"--osds-per-host must be 1 to {MAX_OSDS_PER_HOST}, got {self.osds_per_host}",
                            where="--osds-per-host")
        if not 0 <= self.clients <= MAX_HOSTS - self.hosts:
            raise UserError(f"--clients must be 0 to {MAX_HOSTS - self.hosts}, got {self.clients}",
                            where="--clients")
        if self.client is not None and not self.clients:
            raise UserError("--client-net shapes the client hosts' links, and this lab has none",
                            "add --clients N (e.g. --clients 2)", where="--client-net")

    @property
    def osds(self) -> int:
        return self.hosts * self.osds_per_host

    @property
    def with_cluster_network(self) -> bool:
        return self.cluster is not None or self.separate_cluster


def osd_host(spec: MultiHostSpec, osd_id: int) -> str:
    return f"h{osd_id // spec.osds_per_host + 1}"


def daemon_host(spec: MultiHostSpec, name: str) -> str:
    """The lab host a daemon runs on: mon/mgr on h1, RGW on the last OSD host, osd.N on its host, sshd.<host>."""
    if name in (MON, MGR):
        return "h1"
    if name == RGW:
        return f"h{spec.hosts}"
    if name.startswith("osd."):
        return osd_host(spec, int(name.split(".", 1)[1]))
    if name.startswith(("sshd.", "load.")):
        return name.split(".")[1]
    raise KeyError(name)


def host_daemons(spec: MultiHostSpec, host: str, rgw: bool) -> list[str]:
    names = [f"sshd.{host}"]
    if host.startswith("c"):
        return names
    if host == "h1":
        names += [MON, MGR]
    names += [f"osd.{i}" for i in range(spec.osds) if osd_host(spec, i) == host]
    if rgw and host == f"h{spec.hosts}":
        names.append(RGW)
    return names


def topology_json(spec: MultiHostSpec, topo: Topology, rgw: bool, ssh: dict, drives: LabDrives | None) -> dict:
    """lab.json's `topology`: hosts (role, namespace, addresses, OSDs, daemons), networks with their shapes, which
    network each kind of traffic uses, the drives, and how to reach the hosts over ssh."""
    hosts = []
    for h in topo.hosts:
        daemons = host_daemons(spec, h.name, rgw)
        hosts.append({"name": h.name, "role": "client" if h.name.startswith("c") else "osd", "netns": h.netns,
                      "addresses": {k.network: k.address for k in h.links},
                      "osds": [int(d.split(".")[1]) for d in daemons if d.startswith("osd.")],
                      "daemons": daemons})
    return {"lab_id": topo.lab_id,
            "spec": {"hosts": spec.hosts, "osds_per_host": spec.osds_per_host, "clients": spec.clients},
            "objectstore": spec.store.objectstore, "fs": spec.store.fs, "db_device_bytes": spec.db_size_bytes,
            "networks": [n.to_json() for n in topo.networks], "hosts": hosts,
            "client_link": spec.client.to_json() if spec.client else None,
            "cpu_limits": {c.daemon: c.cores for c in spec.cpu_limits},
            "host_loads": {h.host: h.cores for h in spec.host_loads},
            "traffic": {"client": "public",
                        "replication": "cluster" if spec.with_cluster_network else "public"},
            "drives": drives_json(drives) if drives else None, "ssh": ssh}


def spec_from_topology(topology: dict) -> MultiHostSpec:
    """The placement of a lab that is running, from its lab.json (shapes are in `networks`, not needed here)."""
    sp = topology["spec"]
    return MultiHostSpec(int(sp["hosts"]), int(sp["osds_per_host"]), int(sp["clients"]))


def drives_json(record: LabDrives) -> dict:
    """lab.json's view of the drives: loop devices or plain files (and why), each OSD's data and DB drive."""
    osds: dict[str, dict] = {}
    for d in record.drives:
        osds.setdefault(str(d.osd), {})[d.role] = {"path": d.path, "kind": d.kind, "backing": d.backing,
                                                   "size_bytes": d.size_bytes, "fs": d.fs}
    kinds = sorted({d.kind or "file" for d in record.drives})
    return {"kind": kinds[0] if len(kinds) == 1 else "mixed", "fallback": record.fallback, "osds": osds}


def spec_from_flags(hosts: int | None, osds_per_host: int, clients: int, public_net: str | None,
                    cluster_net: str | None, osds: int | None, drive_flags: dict) -> MultiHostSpec | None:
    """`lab up`'s flags (and a suite's lab shape, whose keys are those flags) -> the multi-host lab they describe;
    None for the one-host loopback lab (no --hosts, or --hosts 1 alone). A bad value is a UserError naming its
    flag (`where`), which a suite turns into its YAML key."""
    multi_flags = {"--public-net": public_net, "--cluster-net": cluster_net,
                   "--clients": clients or None, "--osds-per-host": osds_per_host if osds_per_host != 1 else None,
                   **drive_flags}
    if hosts is None:
        given = [k for k, v in multi_flags.items() if v is not None]
        if given:
            raise UserError(f"{given[0]} describes a multi-host lab", "add --hosts N (e.g. --hosts 3)",
                            where=given[0])
        return None
    if osds is not None:
        raise UserError("--osds is for the one-host lab; a multi-host lab has --hosts x --osds-per-host OSDs",
                        "give --osds-per-host instead", where="--osds")
    if hosts == 1 and all(v is None for v in multi_flags.values()):
        return None
    public = parse_link(public_net, "--public-net") if public_net else None
    unshaped = (cluster_net or "").strip().lower() == "unshaped"
    cluster = parse_link(cluster_net, "--cluster-net") if cluster_net and not unshaped else None
    store = check_objectstore(drive_flags["--objectstore"] or "bluestore", drive_flags["--fs"])
    db_size = size_flag(drive_flags["--db-device"], "--db-device") if drive_flags["--db-device"] else None
    throttles = parse_throttle_specs(list(drive_flags["--osd-throttle"])) if drive_flags["--osd-throttle"] else ()
    client = parse_link(drive_flags["--client-net"], "--client-net") if drive_flags.get("--client-net") else None
    cpu_limits = parse_cpu_limits(list(drive_flags["--cpu-limit"])) if drive_flags.get("--cpu-limit") else ()
    host_loads = parse_host_loads(list(drive_flags["--host-load"])) if drive_flags.get("--host-load") else ()
    spec = MultiHostSpec(hosts, osds_per_host, clients, public, cluster, separate_cluster=unshaped, store=store,
                         db_size_bytes=db_size, throttles=throttles, client=client, cpu_limits=cpu_limits,
                         host_loads=host_loads)
    check_drives([t.drive for t in throttles], range(spec.osds), range(spec.osds) if db_size else ())
    check_cpu_specs(cpu_limits, host_loads, spec.osds, spec.hosts, spec.clients)
    return spec


def size_flag(value: str | int, flag: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise UserError(str(exc), where=flag) from None
