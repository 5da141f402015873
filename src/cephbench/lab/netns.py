"""The multi-host lab's network: one network namespace per host, veth links to a bridge per network, tc shaping.

A lab's topology is planned in pure code (names, addresses), written to JSON, and only then made with `ip`
and `tc`. Every object carries the lab's id, and destroy removes exactly the objects of that plan, never by
a name pattern, so another lab beside it is never touched. The JSON is written before the first object is
made: a lab killed half-way through create is destroyed from it like a whole one.

Layout for lab id `ab12cd` in slot S, host i (1-based):
  namespace  cb-ab12cd-h<i>            inside it: `lo`, `pub0` 198.18.S.i/24 and, with a cluster network,
                                         `clu0` 198.19.S.i/24
  veth       cb-ab12cd-h<i>p / ...c    the root-namespace ends, enslaved to
  bridges    cbp-ab12cd / cbc-ab12cd   the public bridge carries 198.18.S.254, cephbench's own address
Addresses come from 198.18.0.0/15 (RFC 2544, set aside for benchmarking networks): public networks from
198.18.0.0/16 and cluster networks from 198.19.0.0/16, one /24 of each per lab, the lab's slot choosing which.

Shaping: both ends of a host's veth get a tbf at the link's rate, so the host's sending (namespace end's
egress) and receiving (root end's egress) are each limited. Client hosts' public links may have a shape of their
own (`client_shape`, from `lab up --client-net`): then the client side is the bottleneck and the cluster side is not. A delay is a netem under the tbf; a round trip
between two hosts crosses four such queues, so each gets a quarter of the delay asked for.
"""

from __future__ import annotations

import fcntl
import hashlib
import ipaddress
import json
import os
import re
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from ..core.errors import OperationFailed, UserError
from ..hosts.local import CommandResult, LocalHost
from .rates import LinkShape, tbf_burst_bytes, tc_delay, tc_rate
from .shapekeys import MAX_HOSTS        # the address plan's bound on hosts

PUBLIC_BASE = ipaddress.IPv4Network("198.18.0.0/16")
CLUSTER_BASE = ipaddress.IPv4Network("198.19.0.0/16")
SLOTS = 256                      # one /24 of each base per lab
GATEWAY_HOST = 254
IFNAMSIZ = 15                    # the kernel's limit on a link name (16 bytes with the NUL)
LAB_ID_RE = re.compile(r"[a-z0-9]{1,6}")
NS_PUBLIC_IF, NS_CLUSTER_IF = "pub0", "clu0"
DESTROY_SETTLE_S = 5.0            # how long destroy keeps removing what is still there
TBF_LATENCY = "50ms"             # how long a packet may wait in the tbf before it is dropped
COMMAND_TIMEOUT_S = 20.0
# Serialises slot choice between labs started at the same moment (the bridge address is the claim).
SLOT_LOCK = Path("/run/cephbench-netns.lock")


@dataclass(frozen=True)
class Network:
    """One of the lab's networks: its bridge, subnet, the address cephbench has on it (if any) and its shape."""

    kind: str                    # "public" or "cluster"
    bridge: str
    subnet: str
    gateway: str | None
    shape: LinkShape | None

    def to_json(self) -> dict:
        return {"kind": self.kind, "bridge": self.bridge, "subnet": self.subnet, "gateway": self.gateway,
                "shape": self.shape.to_json() if self.shape else None}

    @classmethod
    def from_json(cls, d: dict) -> Network:
        return cls(d["kind"], d["bridge"], d["subnet"], d.get("gateway"),
                   LinkShape.from_json(d["shape"]) if d.get("shape") else None)


@dataclass(frozen=True)
class HostLink:
    """A host's link to one network: the root-namespace end of its veth and the address inside the namespace."""

    network: str                 # "public" or "cluster"
    veth: str                    # root-namespace end
    inner: str                   # the end inside the namespace
    address: str


@dataclass(frozen=True)
class NetHost:
    name: str                    # h1, h2, ...
    netns: str
    links: tuple[HostLink, ...]

    def address(self, network: str = "public") -> str:
        return next(link.address for link in self.links if link.network == network)

    def to_json(self) -> dict:
        return {"name": self.name, "netns": self.netns,
                "links": [{"network": k.network, "veth": k.veth, "inner": k.inner, "address": k.address}
                          for k in self.links]}

    @classmethod
    def from_json(cls, d: dict) -> NetHost:
        return cls(d["name"], d["netns"], tuple(HostLink(k["network"], k["veth"], k["inner"], k["address"])
                                                  for k in d["links"]))


@dataclass(frozen=True)
class Topology:
    lab_id: str
    slot: int
    networks: tuple[Network, ...]
    hosts: tuple[NetHost, ...] = field(default=())
    client_shape: LinkShape | None = None     # client hosts' public links, instead of the public network's shape

    def link_shape(self, host: str, network: str) -> LinkShape | None:
        """The shape of one host's link to one network."""
        if network == "public" and host.startswith("c") and self.client_shape is not None:
            return self.client_shape
        net = self.network(network)
        return net.shape if net else None

    def network(self, kind: str) -> Network | None:
        return next((n for n in self.networks if n.kind == kind), None)

    def host(self, name: str) -> NetHost:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def link_names(self) -> list[str]:
        """Every link this lab makes in the root namespace: veth ends first, then bridges."""
        return [k.veth for h in self.hosts for k in h.links] + [n.bridge for n in self.networks]

    def to_json(self) -> dict:
        return {"lab_id": self.lab_id, "slot": self.slot, "networks": [n.to_json() for n in self.networks],
                "hosts": [h.to_json() for h in self.hosts],
                "client_shape": self.client_shape.to_json() if self.client_shape else None}

    @classmethod
    def from_json(cls, d: dict) -> Topology:
        return cls(d["lab_id"], int(d["slot"]), tuple(Network.from_json(n) for n in d["networks"]),
                   tuple(NetHost.from_json(h) for h in d["hosts"]),
                   LinkShape.from_json(d["client_shape"]) if d.get("client_shape") else None)

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Topology:
        return cls.from_json(json.loads(path.read_text()))


# ---- planning (pure) ---------------------------------------------------------------------------

def lab_id_for(lab_dir: Path) -> str:
    """A lab's id from its directory: stable across restarts, so a half-made lab is found again."""
    return hashlib.sha256(str(lab_dir.resolve()).encode()).hexdigest()[:6]


def subnet(base: ipaddress.IPv4Network, slot: int) -> ipaddress.IPv4Network:
    return list(base.subnets(new_prefix=24))[slot]


def plan(lab_id: str, slot: int, hosts: int, public: LinkShape | None,
         cluster: LinkShape | None = None, separate_cluster: bool = False, clients: int = 0,
         client: LinkShape | None = None) -> Topology:
    """Names and addresses of a lab of `hosts` hosts (h1, h2, ...) and `clients` client hosts (c1, ...); a cluster
    network, which client hosts are not on, when `cluster` or `separate_cluster`; `client`: the client hosts'
    links shaped so, whatever the public network's shape."""
    if not LAB_ID_RE.fullmatch(lab_id):
        raise ValueError(f"lab id {lab_id!r} must be 1-6 of [a-z0-9]")
    if not 0 <= slot < SLOTS:
        raise ValueError(f"slot {slot} outside 0..{SLOTS - 1}")
    if not 1 <= hosts <= MAX_HOSTS:
        raise UserError(f"a multi-host lab has 1 to {MAX_HOSTS} hosts, not {hosts}", where="--hosts")
    if not 0 <= clients <= MAX_HOSTS - hosts:
        raise UserError(f"a lab of {hosts} hosts has 0 to {MAX_HOSTS - hosts} client hosts, not {clients}",
                        where="--clients")
    pub_net = subnet(PUBLIC_BASE, slot)
    networks = [Network("public", f"cbp-{lab_id}", str(pub_net), str(pub_net[GATEWAY_HOST]), public)]
    with_cluster = cluster is not None or separate_cluster
    if with_cluster:
        networks.append(Network("cluster", f"cbc-{lab_id}", str(subnet(CLUSTER_BASE, slot)), None, cluster))
    out = []
    names = [f"h{i}" for i in range(1, hosts + 1)] + [f"c{j}" for j in range(1, clients + 1)]
    for i, name in enumerate(names, start=1):
        links = [HostLink("public", f"cb-{lab_id}-{name}p", NS_PUBLIC_IF, str(pub_net[i]))]
        if with_cluster and name.startswith("h"):
            links.append(HostLink("cluster", f"cb-{lab_id}-{name}c", NS_CLUSTER_IF,
                                  str(subnet(CLUSTER_BASE, slot)[i])))
        out.append(NetHost(name, f"cb-{lab_id}-{name}", tuple(links)))
    if client is not None and not clients:
        raise UserError("--client-net shapes the client hosts' links, and this lab has none", "add --clients N",
                        where="--client-net")
    topo = Topology(lab_id, slot, tuple(networks), tuple(out), client)
    assert all(len(n) <= IFNAMSIZ for n in topo.link_names()), topo.link_names()
    return topo


def free_slot(used: set[int]) -> int:
    for s in range(SLOTS):
        if s not in used:
            return s
    raise UserError(f"all {SLOTS} lab network slots of 198.18.0.0/15 are in use",
                    "take a multi-host lab down with `cephbench lab down --dir DIR`")


def slots_in_use(addresses: Sequence[str]) -> set[int]:
    """Slots claimed by the addresses of this (root) namespace, i.e. by other labs' public bridges."""
    used = set()
    for a in addresses:
        ip = ipaddress.IPv4Address(a)
        if ip in PUBLIC_BASE:
            used.add(int(ip) - int(PUBLIC_BASE.network_address) >> 8)
    return used


def exec_argv(netns: str, argv: Sequence[str]) -> list[str]:
    """The command line running `argv` inside a lab host's network namespace.

    nsenter, not `ip netns exec`: that one also gives the process a mount namespace with a fresh /sys, which
    hides /sys/fs/cgroup (the host's CPU accounting and the drives' throttles). Only the network differs here.
    The command is exec'd: its PID is the one this argv starts."""
    return ["nsenter", f"--net=/run/netns/{netns}", "--", *[str(a) for a in argv]]


def _tbf_args(shape: LinkShape) -> str:
    return (f"tbf rate {tc_rate(shape.rate_bits_per_s)} burst {tbf_burst_bytes(shape.rate_bits_per_s)} "
            f"latency {TBF_LATENCY}")


def _netem_args(shape: LinkShape) -> str:
    return f"netem delay {tc_delay(shape.delay_s / 4)}"


def _qdisc_lines(dev: str, shape: LinkShape) -> list[str]:
    """`tc -batch` lines shaping the egress of `dev`: tbf at the rate, netem below it for the delay."""
    lines = [f"qdisc add dev {dev} root handle 1: {_tbf_args(shape)}"]
    if shape.delay_s > 0:
        lines.append(f"qdisc add dev {dev} parent 1:1 handle 10: {_netem_args(shape)}")
    return lines


@dataclass(frozen=True)
class QdiscProbe:
    """One queue discipline a lab's shapes need, tried once on `lo` of a throwaway network namespace."""

    kind: str                    # tc's name: tbf, netem
    module: str                  # the kernel's module for it, named in the refusal
    flag: str                    # the first flag that needs it
    args: str                    # tc's arguments, as the lab will give them

    def argv(self) -> list[str]:
        # `unshare --net`: the namespace has only `lo` and goes away with the process, so the probe leaves
        # nothing behind even when killed
        return ["unshare", "--net", "--", "tc", "qdisc", "add", "dev", "lo", "root", *self.args.split()]

    def refusal(self) -> UserError:
        if self.kind == "netem":
            return UserError(f"this kernel has no netem queue discipline ({self.module}), so a link delay cannot "
                             "be made", "give the rate alone, e.g. 100mbit instead of 100mbit/0.2ms",
                             where=self.flag)
        return UserError(f"this kernel has no {self.kind} queue discipline ({self.module}), so a link cannot be "
                         "shaped", f"leave out {self.flag} for an unshaped lab", where=self.flag)


def shaping_probes(shapes: dict[str, LinkShape | None]) -> list[QdiscProbe]:
    """The queue disciplines that `shapes` (flag -> shape, None for an unshaped link) need, one probe per kind."""
    probes: dict[str, QdiscProbe] = {}
    for flag, shape in shapes.items():
        if shape is None:
            continue
        probes.setdefault("tbf", QdiscProbe("tbf", "sch_tbf", flag, _tbf_args(shape)))
        if shape.delay_s > 0:
            probes.setdefault("netem", QdiscProbe("netem", "sch_netem", flag, _netem_args(shape)))
    return list(probes.values())


def check_shaping(shapes: dict[str, LinkShape | None]) -> None:
    """Refuse, in one line naming the kernel's missing queue discipline and the flag that needs it, a shape this
    kernel cannot make: before the lab makes anything, rather than half-way through making its network."""
    for probe in shaping_probes(shapes):
        res = _run(probe.argv())
        if not res.ok:
            if "qdisc kind is unknown" in res.stderr:
                raise probe.refusal()
            raise OperationFailed(f"{res.cmdline} failed: {res.error_text()}")


def create_commands(topo: Topology) -> list[tuple[list[str], str | None]]:
    """The commands that make `topo`, in order: (argv, stdin for -batch or None)."""
    cmds: list[tuple[list[str], str | None]] = []
    for n in topo.networks:
        cmds.append((["ip", "link", "add", n.bridge, "type", "bridge"], None))
        if n.gateway:
            prefix = ipaddress.IPv4Network(n.subnet).prefixlen
            cmds.append((["ip", "addr", "add", f"{n.gateway}/{prefix}", "dev", n.bridge], None))
        cmds.append((["ip", "link", "set", n.bridge, "up"], None))
    nets = {n.kind: n for n in topo.networks}
    for h in topo.hosts:
        cmds.append((["ip", "netns", "add", h.netns], None))
        inner = ["link set lo up"]
        root_tc: list[str] = []
        inner_tc: list[str] = []
        for k in h.links:
            net, shape = nets[k.network], topo.link_shape(h.name, k.network)
            prefix = ipaddress.IPv4Network(net.subnet).prefixlen
            cmds.append((["ip", "link", "add", k.veth, "type", "veth", "peer", "name", k.inner,
                          "netns", h.netns], None))
            cmds.append((["ip", "link", "set", k.veth, "master", net.bridge, "up"], None))
            inner += [f"addr add {k.address}/{prefix} dev {k.inner}", f"link set {k.inner} up"]
            if shape:
                root_tc += _qdisc_lines(k.veth, shape)
                inner_tc += _qdisc_lines(k.inner, shape)
        cmds.append((["ip", "-n", h.netns, "-batch", "-"], "\n".join(inner) + "\n"))
        if root_tc:
            cmds.append((["tc", "-batch", "-"], "\n".join(root_tc) + "\n"))
        if inner_tc:
            cmds.append((["tc", "-n", h.netns, "-batch", "-"], "\n".join(inner_tc) + "\n"))
    return cmds


# ---- making and removing -----------------------------------------------------------------------

def check_tools() -> None:
    missing = [t for t in ("ip", "tc", "nsenter", "unshare") if shutil.which(t) is None]
    if missing:
        raise UserError(f"{' and '.join(missing)} not found (iproute2, util-linux): the multi-host lab needs them",
                        "run scripts/setup.sh")
    if os.geteuid() != 0:
        raise UserError("the multi-host lab needs root (network namespaces, veth links and tc)",
                        "run it as root, or use the one-host lab (no --hosts)")


def _run(argv: list[str], stdin: str | None = None) -> CommandResult:
    return LocalHost().run(argv, COMMAND_TIMEOUT_S, input_text=stdin)


def _must(argv: list[str], stdin: str | None = None) -> None:
    res = _run(argv, stdin)
    if not res.ok:
        what = res.cmdline + (f" <<< {stdin.strip()!r}" if stdin else "")
        raise OperationFailed(f"{what} failed: {res.error_text()}")


def existing_netns() -> set[str]:
    res = _run(["ip", "netns", "list"])
    return {line.split()[0] for line in res.stdout.splitlines() if line.strip()}


def existing_links() -> set[str]:
    res = _run(["ip", "-j", "link", "show"])
    return {link["ifname"] for link in json.loads(res.stdout or "[]")}


def root_ipv4_addresses() -> list[str]:
    res = _run(["ip", "-j", "-4", "addr", "show"])
    return [a["local"] for link in json.loads(res.stdout or "[]") for a in link.get("addr_info", [])]


def leftovers(topo: Topology) -> list[str]:
    """The objects of `topo` that exist now (namespaces and root-namespace links); empty when it is all gone."""
    ns = existing_netns()
    links = existing_links()
    return [h.netns for h in topo.hosts if h.netns in ns] + [n for n in topo.link_names() if n in links]


@contextmanager
def _slot_lock() -> Iterator[None]:
    with open(SLOT_LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def create(lab_id: str, hosts: int, public: LinkShape | None, record: Path,
           cluster: LinkShape | None = None, separate_cluster: bool = False, clients: int = 0,
           client: LinkShape | None = None) -> Topology:
    """Plan a free slot, record the plan at `record`, then make it. Any failure (or signal) removes what was made."""
    check_tools()
    check_shaping({"--public-net": public, "--cluster-net": cluster, "--client-net": client})
    with _slot_lock():
        topo = plan(lab_id, free_slot(slots_in_use(root_ipv4_addresses())), hosts, public, cluster,
                    separate_cluster, clients, client)
        present = leftovers(topo)
        if present:
            raise UserError(f"lab network {lab_id} already exists ({', '.join(present[:3])})",
                            "take that lab down first with `cephbench lab down --dir DIR`")
        topo.save(record)
        try:
            for argv, stdin in create_commands(topo):
                _must(argv, stdin)
        except BaseException:
            destroy(topo)
            raise
    return topo


def destroy(topo: Topology) -> list[str]:
    """Remove every namespace and link of `topo` that exists (qdiscs and addresses go with them).

    Idempotent: what is already gone is skipped. Returns what was removed. Raises when something of the lab
    is still there afterwards, naming it.
    """
    removed: list[str] = []
    # Passes until nothing is left, for a few seconds: an `ip` that a killed creator started outlives it and may
    # add a link after the first pass looked (CI: cb-...-h2p, made after destroy had listed the links).
    deadline = time.monotonic() + DESTROY_SETTLE_S
    while True:
        _destroy_pass(topo, removed)
        left = leftovers(topo)
        if not left:
            return removed
        if time.monotonic() > deadline:
            raise OperationFailed(f"lab network {topo.lab_id}: could not remove {', '.join(left)}")
        time.sleep(0.2)


def _destroy_pass(topo: Topology, removed: list[str]) -> None:
    # Root ends first: deleting one removes its peer at once, while a deleted namespace's links go away
    # later, in the kernel's own time.
    links = existing_links()
    for name in topo.link_names():
        if name in links:
            _run(["ip", "link", "delete", name])
            if name not in removed:
                removed.append(name)
    ns = existing_netns()
    for h in topo.hosts:
        if h.netns in ns:
            _run(["ip", "netns", "delete", h.netns])
            if h.netns not in removed:
                removed.append(h.netns)
