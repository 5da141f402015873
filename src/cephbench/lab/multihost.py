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
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..core.errors import UserError
from ..core.units import parse_size
from .cpulimit import CpuLimitSpec, HostLoadSpec, check_cpu_specs, parse_cpu_limits, parse_host_loads
from .rates import LinkShape, parse_link
from .shapekeys import FLAGS, MAX_HOSTS, Names
from .stores import StoreChoice, check_objectstore
from .throttle import DriveLimit, ThrottleSpec, check_drives, drive_ref, parse_throttle_specs

if TYPE_CHECKING:       # the lab's drives and namespaces themselves: not what a plan (or `validate`) needs to import
    from .drives import LabDrives
    from .netns import Topology

MON, MGR, RGW = "mon.a", "mgr.x", "client.rgw.lab"
MAX_OSDS_PER_HOST = 16


@dataclass(frozen=True)
class MultiHostSpec:
    """`lab up --hosts N --osds-per-host K --clients C --public-net ... --cluster-net ... --client-net ...`, or a
    suite's `lab:` shape: made from what a person gave by `multi_host` (checked, each refusal named as its source
    names it), and from what a lab or a run recorded by `from_json`."""

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

    def to_json(self) -> dict[str, Any]:
        """The spec as run.json's `lab_shapes` and a run's ledger record it (from_json reads it back)."""
        return {"hosts": self.hosts, "osds_per_host": self.osds_per_host, "clients": self.clients,
                "public": self.public.to_json() if self.public else None,
                "cluster": self.cluster.to_json() if self.cluster else None,
                "separate_cluster": self.separate_cluster, "client": self.client.to_json() if self.client else None,
                "objectstore": self.store.objectstore, "fs": self.store.fs, "db_device_bytes": self.db_size_bytes,
                "throttles": {str(t.drive): t.limit.to_json() for t in self.throttles},
                **({"cpu_limits": {c.daemon: c.cores for c in self.cpu_limits}} if self.cpu_limits else {}),
                **({"host_loads": {h.host: h.cores for h in self.host_loads}} if self.host_loads else {})}

    @classmethod
    def from_json(cls, m: Mapping[str, Any]) -> MultiHostSpec:
        """A spec recorded by to_json (or a running lab's lab.json: spec_from_topology), made by multi_host as
        a spec given is."""
        link = lambda x: LinkShape.from_json(x) if x else None      # noqa: E731
        spec = multi_host({
            "hosts": int(m["hosts"]), "osds_per_host": int(m["osds_per_host"]), "clients": int(m["clients"]),
            "public_net": link(m.get("public")),
            "cluster_net": link(m.get("cluster")) or (UNSHAPED if m.get("separate_cluster") else None),
            "client_net": link(m.get("client")), "objectstore": m.get("objectstore"), "fs": m.get("fs"),
            "db_device": m.get("db_device_bytes"),
            "osd_throttle": tuple(sorted((ThrottleSpec(drive_ref(name), DriveLimit.from_json(lim))
                                          for name, lim in (m.get("throttles") or {}).items()),
                                         key=lambda t: t.drive)),
            "cpu_limit": tuple(CpuLimitSpec(d, float(c)) for d, c in sorted((m.get("cpu_limits") or {}).items())),
            "host_load": tuple(HostLoadSpec(h, float(c)) for h, c in sorted((m.get("host_loads") or {}).items()))})
        if spec is None:
            raise ValueError(f"{dict(m)!r} describes no multi-host lab")
        return spec

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


def spec_from_topology(topology: Mapping[str, Any], throttles: Sequence[ThrottleSpec] = ()) -> MultiHostSpec:
    """The spec of a lab that is running, from its lab.json's `topology` (topology_json) and the throttles its
    drives record holds now (`lab throttle` changes them without a rebuild)."""
    nets = {n["kind"]: n for n in topology.get("networks", [])}
    sp = topology["spec"]
    return MultiHostSpec.from_json({
        **sp, "public": nets.get("public", {}).get("shape"), "cluster": nets.get("cluster", {}).get("shape"),
        "separate_cluster": "cluster" in nets and not nets["cluster"].get("shape"),
        "client": topology.get("client_link"), "objectstore": topology.get("objectstore"), "fs": topology.get("fs"),
        "db_device_bytes": topology.get("db_device_bytes"),
        "throttles": {str(t.drive): t.limit.to_json() for t in throttles},
        "cpu_limits": topology.get("cpu_limits"), "host_loads": topology.get("host_loads")})


def drives_json(record: LabDrives) -> dict:
    """lab.json's view of the drives: loop devices or plain files (and why), each OSD's data and DB drive."""
    osds: dict[str, dict] = {}
    for d in record.drives:
        osds.setdefault(str(d.osd), {})[d.role] = {"path": d.path, "kind": d.kind, "backing": d.backing,
                                                   "size_bytes": d.size_bytes, "fs": d.fs}
    kinds = sorted({d.kind or "file" for d in record.drives})
    return {"kind": kinds[0] if len(kinds) == 1 else "mixed", "fallback": record.fallback, "osds": osds}


# ---- a shape as a person gives it ----------------------------------------------------------------------------

UNSHAPED = "unshaped"       # --cluster-net unshaped: a cluster network of its own, not shaped
# the values that describe a multi-host lab, in the order a refusal names the first one given without --hosts
_MULTI_ONLY = ("public_net", "cluster_net", "clients", "osds_per_host", "client_net", "osd_throttle", "db_device",
               "objectstore", "fs", "cpu_limit", "host_load")
_DEFAULTS = {"osds_per_host": 1, "clients": 0, "objectstore": "bluestore"}


def parse_value(key: str, raw: Any, names: Names = FLAGS) -> Any:
    """One value of a shape as given (a flag's text, a repeated flag's texts, a suite's scalar or mapping) -> its
    typed value (_PARSERS: a LinkShape, ThrottleSpecs, CpuLimitSpecs, HostLoadSpecs, bytes, a release's name; the
    others as they are). A bad value is a UserError at `names[key]` (its flag, or its suite key)."""
    parser = _PARSERS.get(key)
    if parser is None:
        return raw
    if key in ("osd_throttle", "cpu_limit", "host_load"):      # several specs: flags repeated, a suite's mapping
        return parser(raw if isinstance(raw, (str, Mapping)) else list(raw), names[key]) if raw else ()
    return parser(raw, names[key])


def parse_values(given: Mapping[str, Any], names: Names = FLAGS) -> dict[str, Any]:
    """parse_value for each value given (None: not given)."""
    return {k: parse_value(k, v, names) for k, v in given.items() if v is not None}


def multi_host(values: Mapping[str, Any], names: Names = FLAGS) -> MultiHostSpec | None:
    """A shape's typed values (parse_value's, keyed as `names` is; missing or None: not given) -> the multi-host
    lab they describe, checked as a whole; None for the one-host loopback lab (no hosts, or one host alone). A
    refusal names the flag or the suite key it is about, from `names` (`where` too)."""
    def given(key: str) -> bool:
        v = values.get(key)
        return v is not None and v != () and v != _DEFAULTS.get(key)
    hosts = values.get("hosts")
    if hosts is None:
        first = next((k for k in _MULTI_ONLY if given(k)), None)
        if first is not None:
            raise UserError(f"{names[first]} describes a multi-host lab",
                            f"add {names['hosts']} N (e.g. {names['hosts']} 3)", where=names[first])
        return None
    if values.get("osds") is not None:
        raise UserError(f"{names['osds']} is for the one-host lab; a multi-host lab has {names['hosts']} x "
                        f"{names['osds_per_host']} OSDs", f"give {names['osds_per_host']} instead",
                        where=names["osds"])
    if hosts == 1 and not any(given(k) for k in _MULTI_ONLY):
        return None
    osds_per_host, clients = values.get("osds_per_host", 1), values.get("clients", 0)
    cluster, client = values.get("cluster_net"), values.get("client_net")
    store = check_objectstore(values.get("objectstore") or "bluestore", values.get("fs"), names)
    if not 1 <= hosts <= MAX_HOSTS:
        raise UserError(f"{names['hosts']} must be 1 to {MAX_HOSTS}, got {hosts}", f"e.g. {names['hosts']} 3",
                        where=names["hosts"])
    if not 1 <= osds_per_host <= MAX_OSDS_PER_HOST:
        raise UserError(f"{names['osds_per_host']} must be 1 to {MAX_OSDS_PER_HOST}, got {osds_per_host}",
                        where=names["osds_per_host"])
    if not 0 <= clients <= MAX_HOSTS - hosts:
        raise UserError(f"{names['clients']} must be 0 to {MAX_HOSTS - hosts}, got {clients}", where=names["clients"])
    if client is not None and not clients:
        raise UserError(f"{names['client_net']} shapes the client hosts' links, and this lab has none",
                        f"add {names['clients']} N (e.g. {names['clients']} 2)", where=names["client_net"])
    spec = MultiHostSpec(hosts, osds_per_host, clients, values.get("public_net"),
                         cluster if cluster != UNSHAPED else None, cluster == UNSHAPED, client, store,
                         values.get("db_device"), tuple(values.get("osd_throttle") or ()),
                         tuple(values.get("cpu_limit") or ()), tuple(values.get("host_load") or ()))
    check_drives([t.drive for t in spec.throttles], range(spec.osds), range(spec.osds) if spec.db_size_bytes else (),
                 where=names["osd_throttle"], db_device=names["db_device"])
    check_cpu_specs(spec.cpu_limits, spec.host_loads, spec.osds, spec.hosts, spec.clients, names)
    return spec


def lab_release(name: object, where: str) -> str:
    """A release `lab up --release` offers and a lab can run."""
    from . import roots         # here: its package versions and builds are for a lab of another release only
    rel = roots.release(str(name), where=where)
    if rel.no_lab:
        raise UserError(f"a lab of {rel.name} is not yet supported: {rel.no_lab}",
                        f"choose one of {', '.join(n for n, r in roots.RELEASES.items() if not r.no_lab)}",
                        where=where)
    return rel.name


def size_flag(value: str | int, flag: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise UserError(str(exc), where=flag) from None


def _link(text: object, where: str) -> LinkShape:
    return parse_link(str(text), where)


def _cluster_link(text: object, where: str) -> LinkShape | str:
    return UNSHAPED if str(text).strip().lower() == UNSHAPED else _link(text, where)


_PARSERS: dict[str, Callable[[Any, str], Any]] = {
    "public_net": _link, "cluster_net": _cluster_link, "client_net": _link, "osd_throttle": parse_throttle_specs,
    "cpu_limit": parse_cpu_limits, "host_load": parse_host_loads, "db_device": size_flag, "osd_size": size_flag,
    "release": lab_release}
