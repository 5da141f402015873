"""Network baseline with iperf3: every ordered pair of hosts with one and with N streams, one sender to
all others at once (the pattern that showed CenterDevice's bonding limit), and all others to the first host
(the client) at once: what a client can receive while every OSD host sends to it, as reads do.

cephbench starts each iperf3 server itself, on a free port (or the --port given),
for one test (`--one-off`), and stops it afterwards. Hosts other than this one
are reached with `ssh -o BatchMode=yes` and the suite's `settings.ssh`; a host
named in `settings.ssh.hosts` is reached at the address given there, and its
server listens, and its client sends, on that address. On the one-host lab the
only host is this one and the pair is loopback. The parser of `iperf3 -J` is pure.

`hosts: osd-hosts` names the hosts only when the run starts: this machine (the client, at the address it uses
towards the cluster) and every host `ceph osd metadata` names (at its OSDs' public address, reached through
settings.ssh). The plan then holds one test standing for the baseline; the tests it becomes say so in
`part_of` (the runner counts them for it).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import socket
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..core.errors import UserError
from ..core.userfiles import read_output
from ..core.interrupts import held
from ..hosts.fanout import run_started_together
from ..hosts.local import CommandResult, LocalHost, Spawn, run_together
from ..core.settings import SshSettings
from ..hosts.remote import HostRef, back_ips, front_ips, host_ref, is_local_address, require_tools, source_address
from ..core.results import Measurement, RunDir, Sample, Test
from ..core.errors import ParseError
from ..core.figures import array, checked, count, mapping, number, optional
from .base import BaselineWatch, DriverContext, Outcome
from ..kinds.net_baseline import OSD_HOSTS, flows, make_tests     # the plan of a network baseline
from ..lab import Lab
from ..lab.chroot import InRoot

log = logging.getLogger(__name__)

SERVER_START_TIMEOUT_S = 10
# how often a server reports what it received: flows sharing a link are summed over the seconds they shared it
RECEIVED_INTERVAL_S = 0.1
CONNECT_TIMEOUT_MS = 3000
# an interval shorter than this share of the longest is one iperf3 cut short (its last, when the test ended)
FULL_INTERVAL_SHARE = 0.95


@dataclass(frozen=True)
class NetHost:
    name: str           # as the user gave it
    address: str        # what clients connect to
    local: bool         # this machine (no SSH needed)
    ssh: SshSettings = field(default_factory=SshSettings)
    bind: bool = False  # the address is the host's own (given in settings.ssh.hosts, or this machine's): servers
                        # listen and clients send on it, so each test crosses exactly that host's link
    cluster_address: str | None = None   # an OSD host's address on a separate cluster network
    in_root: InRoot | None = None        # this machine as a one-host lab of another release: its iperf3 is the root's

    @property
    def ref(self) -> HostRef:
        return HostRef(self.name, None if self.local else self.ssh.hosts.get(self.name, self.name))

    def here(self, argv: list[str]) -> list[str]:
        """The command as this host runs it once reached: from the lab's root, or as is."""
        return self.in_root.argv(argv) if self.in_root is not None else argv

    def wrap(self, argv: list[str]) -> list[str]:
        """The command as run on this host: as is when local, through ssh (the suite's settings) otherwise."""
        return self.ref.argv(self.here(argv), self.ssh)


def resolve_hosts(names: list[str], host: LocalHost | None = None, check_ssh: bool = True,
                  ssh: SshSettings | None = None, where: str = "--hosts") -> list[NetHost]:
    """Names -> NetHosts; a name that does not resolve, a remote host SSH cannot reach or one without iperf3 is a
    UserError naming `where`. A name in `ssh.hosts` is reached over ssh at the address given there (also when
    that address is this machine's: the lab's hosts are namespaces of it)."""
    host, ssh = host or LocalHost(), ssh or SshSettings()
    out: list[NetHost] = []
    for name in names:
        if name in ssh.hosts:
            nh = NetHost(name, ssh.hosts[name], False, ssh, bind=True)
        else:
            try:
                addr = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)[0][4][0]
            except socket.gaierror as exc:
                raise UserError(f"host {name!r} cannot be reached: its name does not resolve ({exc.strerror})",
                                "check the name, give an IP address, or map it in settings.ssh.hosts",
                                where=where) from None
            local = is_local_address(addr)
            nh = NetHost(name, addr, local, ssh, bind=local)
        if any(o.address == nh.address for o in out):
            raise UserError(f"host {name!r} is given twice ({nh.address})", where=where)
        out.append(nh)
    if check_ssh:
        check_reach(out, host, ssh, where)
    return out


def check_reach(hosts: list[NetHost], host: LocalHost | None, ssh: SshSettings, where: str) -> None:
    remote = [h for h in hosts if not h.local]
    if remote:
        require_tools(host or LocalHost(), [h.ref for h in remote], ["iperf3", "timeout"], ssh, where)


def osd_net_hosts(metadata: list[dict], ssh: SshSettings, where: str = "baseline.network.hosts") -> list[NetHost]:
    """`hosts: osd-hosts`: this machine first (the client), at the address it sends from towards the cluster, then
    every OSD host at its OSDs' public address, reached as settings.ssh says. An OSD host that is this machine
    (the one-host lab, a client on an OSD host) is this machine once: the only host, a loopback pair on the lab."""
    ips = front_ips(metadata)
    if not ips:
        raise UserError("hosts 'osd-hosts': the cluster names no OSD host with an address (ceph osd metadata)",
                        "list the hosts by name", where=where)
    me = socket.gethostname()
    backs = back_ips(metadata)
    out = [NetHost(me, source_address_to(next(iter(ips.values())), where), True, ssh, bind=True)]
    for name, ip in ips.items():
        if host_ref(name, ssh).address is None or is_local_address(ip):
            continue
        back = backs.get(name)
        out.append(NetHost(name, ip, False, ssh, bind=True, cluster_address=back if back and back != ip else None))
    return out


def source_address_to(ip: str, where: str) -> str:
    try:
        return source_address(ip)
    except OSError as exc:
        raise UserError(f"this host has no route to the OSD host at {ip}: {exc.strerror or exc}",
                        "run cephbench on a host of the cluster's public network", where=where) from None


def cluster_hosts(cluster: Any, ssh: SshSettings, host: LocalHost | None = None, check_ssh: bool = True,
                  where: str = "baseline.network.hosts") -> list[NetHost]:
    """The keyword's hosts, from the cluster's OSD metadata, each remote one checked for ssh and iperf3."""
    hosts = osd_net_hosts(cluster.ceph_json("osd", "metadata"), ssh, where)
    if check_ssh:
        check_reach(hosts, host, ssh, where)
    return hosts


# ---- command builders ---------------------------------------------------------------------

def server_argv(port: int, limit_s: float, bind: str | None = None) -> list[str]:
    """One test, then exit; `timeout` makes sure a remote server never outlives the run. Its report of what it
    received every RECEIVED_INTERVAL_S, rates in Kbit/s (exact to a Kbit; the transfer column is rounded), reaches
    the client's JSON (`--get-server-output`): flows sharing a link are summed over the seconds they shared it."""
    return ["timeout", str(int(limit_s)), "iperf3", "-s", "-p", str(port), "--one-off", "--forceflush",
            "-i", f"{RECEIVED_INTERVAL_S:g}", "-f", "k", *(["-B", bind] if bind else [])]


def client_argv(address: str, port: int, duration_s: float, streams: int, bind: str | None = None) -> list[str]:
    return ["iperf3", "-c", address, "-p", str(port), "-t", f"{duration_s:g}", "-P", str(streams), "-J",
            "--get-server-output", "--connect-timeout", str(CONNECT_TIMEOUT_MS), *(["-B", bind] if bind else [])]


# `[  5]   0.10-0.20   sec  2.38 MBytes  200217 Kbits/sec` (one stream) or `[SUM] ...` (several)
_INTERVAL = re.compile(r"^\[\s*(SUM|\d+)\]\s+(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)\s+sec\s+\S+\s+\S+\s+"
                       r"(\d+(?:\.\d+)?)\s+([KMGT]?)bits/sec\s*$")
_RATE_UNIT = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def received_intervals(text: str) -> list[list[float]]:
    """A server's text report -> what it received in each interval: [start_s, end_s, bits_per_s], from its own
    start, the streams' sum where there are several; the summary after the last interval left out."""
    rows: dict[str, list[list[float]]] = {"SUM": [], "one": []}
    headers = 0
    for line in text.splitlines():
        if line.startswith("[ ID]"):
            headers += 1
            if headers > 1:         # the summary's table: whole-test figures, not intervals
                break
            continue
        m = _INTERVAL.match(line.strip())
        if m:
            rows["SUM" if m[1] == "SUM" else "one"].append(
                [float(m[2]), float(m[3]), float(m[4]) * _RATE_UNIT[m[5]]])
    return rows["SUM"] or rows["one"]


# ---- parser -----------------------------------------------------------------------------------

def parse_iperf_json(text: str) -> Measurement:
    """`iperf3 -c ... -J` output -> Measurement: received bytes/s, with bits/s, retransmits and streams in extra."""
    start = text.find("{")
    if start < 0:
        raise ParseError("no JSON in the iperf3 output" + (f" ({text.strip()[:200]!r})" if text.strip() else ""))
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"iperf3 output is not JSON: {exc}") from exc
    if data.get("error"):
        raise ParseError(f"iperf3: {' '.join(str(data['error']).split())[:300]}")
    try:
        end = mapping(data["end"], "end")
        sent = mapping(end["sum_sent"], "end.sum_sent")
        recv = mapping(end["sum_received"], "end.sum_received")
        streams = []
        for i, s in enumerate(array(end.get("streams", []), "end.streams")):
            where = f"end.streams[{i}]"
            s = mapping(s, where)
            snd = mapping(s.get("sender", {}), f"{where}.sender")
            rcv = mapping(s.get("receiver", {}), f"{where}.receiver")
            streams.append({"bits_per_s": number(rcv.get("bits_per_second", 0.0), f"{where}.receiver.bits_per_second"),
                            "sender_bits_per_s": number(snd.get("bits_per_second", 0.0),
                                                        f"{where}.sender.bits_per_second"),
                            "retransmits": optional(snd.get("retransmits"), count, f"{where}.sender.retransmits"),
                            "mean_rtt_us": optional(snd.get("mean_rtt"), number, f"{where}.sender.mean_rtt")})
        duration = number(recv.get("seconds") or sent["seconds"], "end.sum_received.seconds")
        samples, lengths = [], []
        for i, iv in enumerate(array(data.get("intervals", []), "intervals")):
            if "sum" in mapping(iv, f"intervals[{i}]"):
                sm = mapping(iv["sum"], f"intervals[{i}].sum")
                end = number(sm["end"], f"intervals[{i}].sum.end")
                lengths.append(end - number(sm.get("start", 0), f"intervals[{i}].sum.start"))
                samples.append(Sample(t_s=end,
                                      bytes_per_s=number(sm["bits_per_second"], f"intervals[{i}].sum.bits_per_second")
                                      / 8))
        # iperf3 cuts its last interval where the test ended (with -n, or -t and a late start): shorter than the rest
        full = max(lengths, default=0.0)
        for s, length in zip(samples, lengths):
            s.partial = length < FULL_INTERVAL_SHARE * full
        started = mapping(data.get("start", {}), "start")
        conn = mapping((array(started.get("connected") or [{}], "start.connected") or [{}])[0], "start.connected[0]")
        hosts = {k: conn.get(k) for k in ("local_host", "remote_host")}
        for k, v in hosts.items():
            if v is not None and not isinstance(v, str):
                raise ParseError(f"start.connected[0].{k} is not a host name")
        bits = number(recv["bits_per_second"], "end.sum_received.bits_per_second")
        extra = {"bits_per_s": bits,
                 "sender_bits_per_s": number(sent["bits_per_second"], "end.sum_sent.bits_per_second"),
                 "retransmits": optional(sent.get("retransmits"), count, "end.sum_sent.retransmits"),
                 "streams": streams, "stream_count": len(streams),
                 "local": hosts["local_host"], "remote": hosts["remote_host"], "version": started.get("version")}
        bytes_total = number(recv.get("bytes", 0), "end.sum_received.bytes")
        if isinstance(data.get("server_output_text"), str):
            extra["received_intervals"] = received_intervals(data["server_output_text"])
    except KeyError as exc:
        raise ParseError(f"iperf3 JSON without the expected field {exc}") from exc
    return checked(Measurement(tool="iperf3", op="send", duration_s=duration, bytes_total=bytes_total,
                               bytes_per_s=bits / 8, timeseries=samples, extra=extra))


# ---- servers ------------------------------------------------------------------------------------

def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("0.0.0.0", port))
            return True
        except OSError:
            return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


def check_port(port: int) -> None:
    if not 1 <= port <= 65535:
        raise UserError(f"port {port} is not a TCP port (1-65535)", where="--port")
    if not port_is_free(port):
        raise UserError(f"port {port} is taken on this host", "give another --port, or leave it out "
                        "and cephbench picks a free one", where="--port")


class Server:
    """An iperf3 server cephbench started, and stops."""

    def __init__(self, on: NetHost, port: int, limit_s: float, log_path: Path) -> None:
        self.on, self.port, self.log_path = on, port, log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self._forget: Callable[[], None] | None = None
        self.argv = on.wrap(server_argv(port, limit_s, on.address if on.bind else None))

    def start(self, host: LocalHost, record: Callable[[int], Callable[[], None]] | None = None) -> None:
        """`record`: the run's (DriverContext.record_process): the server in the ledger until `stop` (a kill -9
        leaves its PID for `cephbench cleanup`)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with held():        # never a server started and not recorded
            self.proc = host.start(self.argv, stdout_path=self.log_path)
            self._forget = record(self.proc.pid) if record is not None else None
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S + (0 if self.on.local else 10)
        while time.monotonic() < deadline:
            text = read_output(self.log_path)
            if "Server listening" in text:
                return
            if self.proc.poll() is not None:
                self.stop()
                if "Address already in use" in text:
                    raise UserError(f"port {self.port} is taken on {self.on.name}",
                                    "give another --port", where="--port")
                raise UserError(f"iperf3 server on {self.on.name} did not start: "
                                f"{(text.strip().splitlines() or ['no output'])[-1]}")
            time.sleep(0.05)
        self.stop()
        raise UserError(f"iperf3 server on {self.on.name} did not start in {SERVER_START_TIMEOUT_S} s")

    def stop(self) -> None:
        p = self.proc
        if p is None:
            return
        if p.poll() is None:
            import os
            import signal
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
        self.proc = None
        if self._forget is not None:
            self._forget()
            self._forget = None


def expand(test: Test, names: list[str], cluster: Sequence[str] = (), clients: Sequence[str] = (),
           first_is_client: bool = True) -> list[Test]:
    """The tests a keyword's test stands for, once its hosts are known: ids `<its id>-<pattern>`, `part_of` it;
    `cluster`: the OSD hosts with a cluster network of their own, paired over it too; `clients`: the suite's client
    hosts, each measured against every OSD host."""
    p = test.params
    return make_tests(names, p["streams"], p["duration_s"], p.get("port"), test.index, test.group, test.workload,
                      part_of=test.id, cluster=cluster, clients=clients, first_is_client=first_is_client)


def _port_for(r: NetHost, i: int, base_port: int | None) -> int:
    """A server on this machine (or a lab host that is a namespace of it) takes a port free here."""
    if base_port is not None:
        if r.local:
            check_port(base_port + i)
        return base_port + i
    return free_port() if r.local or is_local_address(r.address) else 5201 + i


# a client's process on this machine's clock: (start, end); None where its wrapper did not say
Span = tuple[float, float] | None
Together = Callable[[list[tuple[HostRef, Spawn]], float, Callable[[], bool], Callable[[list[int]], None]],
                    list[tuple[CommandResult, Span]]]
# flows that shared their link for less than this share of the window are named in a note
OVERLAP_SHARE = 0.8


def run(tests: list[Test], hosts: list[NetHost], rundir: RunDir | None, host: LocalHost,
        note: Callable[[str], None], base_port: int | None = None,
        started: Callable[[Test], None] = lambda _t: None, together: Together | None = None,
        watch: BaselineWatch | None = None, record: Callable[[int], Callable[[], None]] | None = None
        ) -> Iterator[Outcome]:
    """Each test's servers, then its clients all at once: with `together`, the clients of a pattern of several
    flows start at one instant (fanout's barrier): a sender that started 0.2 s before the others would have a
    shared link to itself for that long, and a 1 s fan-in would read a fifth more than the link carries.
    `watch` and `record`: the run's (DriverContext.run_baseline_tools, .record_process): the hosts' CPU while the
    clients run (on the test's Outcome), and every server and client in the ledger while it runs."""
    by_name = {h.name: h for h in hosts}
    raw_root = rundir.raw_dir("baseline-net") if rundir else Path("/tmp")
    if base_port is not None:
        for h in hosts:
            if h.local:
                check_port(base_port)
    for test in tests:
        p = test.params
        pairs = [(by_name[a], by_name[b]) for a, b in flows(p)]
        if p.get("network") == "cluster":
            pairs = [(_on_cluster(a), _on_cluster(b)) for a, b in pairs]
        duration = float(p["duration_s"])
        raw_dir = rundir.raw_dir(test.id) if rundir else raw_root
        t_started, t0 = time.time(), time.monotonic()
        started(test)
        senders = p["senders"] if "senders" in p else [p["sender"]]
        note(f"network baseline: {', '.join(senders)} -> {', '.join(p['receivers'])}, {p['streams']} stream(s)")
        servers: list[Server] = []
        try:
            for i, (_, r) in enumerate(pairs):
                port = _port_for(r, i, base_port)
                srv = Server(r, port, duration * 3 + 60, raw_dir / f"iperf3-server-{r.name}-{port}.txt")
                servers.append(srv)
                srv.start(host, record)
            argvs = [client_argv(srv.on.address, srv.port, duration, p["streams"], a.address if a.bind else None)
                     for (a, _), srv in zip(pairs, servers)]
            outputs = [raw_dir / f"iperf3-client-{a.name}-to-{srv.on.name}.json" for (a, _), srv in zip(pairs, servers)]
            if together is not None and len(pairs) > 1:
                spawns = [Spawn(a.here(argv), out) for (a, _), argv, out in zip(pairs, argvs, outputs)]
                flows_ = [(a.ref, sp) for (a, _), sp in zip(pairs, spawns)]

                def clients(tick: Callable[[], bool], tools: Callable[[list[int]], None]
                            ) -> list[tuple[CommandResult, Span]]:
                    return together(flows_, duration * 3 + 60, tick, tools)
            else:
                spawns = [Spawn(a.wrap(argv), out) for (a, _), argv, out in zip(pairs, argvs, outputs)]

                def clients(tick: Callable[[], bool], tools: Callable[[list[int]], None]
                            ) -> list[tuple[CommandResult, Span]]:
                    return [(r, None) for r in run_together(spawns, duration * 3 + 60, tick=tick, started=tools)]
            timed, seen = watch([test], [h.ref for pair in pairs for h in pair], clients) if watch is not None \
                else (clients(lambda: False, lambda _pids: None), None)
            results, spans = [r for r, _ in timed], [sp for _, sp in timed]
        finally:
            for srv in servers:
                srv.stop()
        commands = [r.cmdline for r in results]
        raw = [str(sp.output.relative_to(rundir.path)) for sp in spawns] if rundir else []
        try:
            parts = [parse_iperf_json(r.stdout) for r in results]
        except ParseError as exc:
            yield Outcome(test, t_started, time.monotonic() - t0, error=str(exc), commands=commands, raw=raw,
                          seen=seen)
            continue
        if len(parts) == 1:
            m = parts[0]
        elif p["pattern"] == "many-to-one":
            m = aggregate(parts, senders, "per_sender_bits_per_s", spans)
        else:
            m = aggregate(parts, p["receivers"], spans=spans)
        m.extra.update({"pattern": p["pattern"], "receivers": p["receivers"], "network": p.get("network", "public"),
                        **({"senders": senders} if "senders" in p else {"sender": p["sender"]}),
                        "loopback": all(h.local or ipaddress.ip_address(h.address).is_loopback
                                        for pair in pairs for h in pair)})
        notes = []
        if m.extra.get("figure") == "whole window" and m.extra["overlap_s"] < OVERLAP_SHARE * m.duration_s:
            notes.append(f"the {len(parts)} flows ran together for {m.extra['overlap_s']:.2f} s of the "
                         f"{m.duration_s:.2f} s they took (their starts {m.extra['start_spread_s']:.2f} s apart), and "
                         "not every receiver reported its intervals: the figure is what the link carried over all of "
                         "it, low if one flow alone cannot fill the link; a longer `duration` makes the difference "
                         "small")
        if m.extra["loopback"]:
            notes.append("loopback: sender and receiver are this host; the figure is memory and CPU, not a NIC")
        yield Outcome(test, t_started, time.monotonic() - t0, measurement=m, commands=commands, raw=raw,
                      notes=notes, seen=seen)


def _on_cluster(h: NetHost) -> NetHost:
    """The host as reached on its cluster network: its server listens, and its client sends, there."""
    assert h.cluster_address is not None
    return replace(h, address=h.cluster_address, bind=True)


def aggregate(parts: list[Measurement], names: list[str], per: str = "per_receiver_bits_per_s",
              spans: Sequence[Span] | None = None) -> Measurement:
    """Several iperf3 clients at once over one link (one sender to several receivers, or several to one): what
    they moved together, and each flow's own figure under `per`, by the name of the host at its other end.

    Flows started at one instant do not run over the same seconds: a flow whose handshake queued behind the
    others' data began 60-100 ms late. Summing each flow's own rate counts the time one flow had the link to
    itself once for every flow (three flows into a 200 Mbit/s link read 8-13 % above it). With every client's
    `spans` (its process's start and end on this machine's clock; its data placed before its end, as iperf3 exits
    once its receiver has reported):
    - with each receiver's report of every interval (`received_intervals`), the flows' rates summed over their
      common window, the seconds all of them ran: the link's figure whether it was the limit or the senders were;
    - without them, the bytes of all flows over their whole window, first byte to last: right when the shared link
      was the limit, low by the time one flow ran alone when it was not.
    Without spans, the sum of the flows' rates."""
    bits = sum(p.extra["bits_per_s"] for p in parts)
    bytes_total = sum(p.bytes_total or 0 for p in parts)
    duration, timing = max(p.duration_s for p in parts), {}
    if spans is not None and len(spans) == len(parts) and all(sp is not None for sp in spans):
        ends = [sp[1] for sp in spans]                 # type: ignore[index]
        starts = [e - p.duration_s for e, p in zip(ends, parts)]
        lo, hi = max(starts), min(ends)
        timing = {"overlap_s": max(hi - lo, 0.0), "start_spread_s": lo - min(starts),
                  "sum_of_flow_bits_per_s": bits}
        reports = [p.extra.get("received_intervals") for p in parts]
        if hi - lo >= RECEIVED_INTERVAL_S * 2 and all(reports):
            bits = sum(_bits_within(rep, start, lo, hi) for rep, start in zip(reports, starts)) / (hi - lo)
            duration, timing["figure"] = hi - lo, "common window"
        else:
            duration = max(ends) - min(starts)
            bits, timing["figure"] = bytes_total * 8 / duration, "whole window"
    return Measurement(tool="iperf3", op="send", duration_s=duration, bytes_total=bytes_total, bytes_per_s=bits / 8,
                       instances=parts,
                       extra={"bits_per_s": bits, "sender_bits_per_s": sum(p.extra["sender_bits_per_s"] for p in parts),
                              "retransmits": sum(p.extra.get("retransmits") or 0 for p in parts),
                              per: {n: p.extra["bits_per_s"] for n, p in zip(names, parts)},
                              "stream_count": sum(p.extra["stream_count"] for p in parts), **timing})


def _bits_within(report: list[list[float]], start: float, lo: float, hi: float) -> float:
    """The bits a receiver's report (intervals from its flow's `start`) puts between lo and hi, each interval's
    rate over the part of it inside."""
    return sum(rate * max(min(start + b, hi) - max(start + a, lo), 0.0) for a, b, rate in report)


def _hosts(params: dict[str, Any], cluster: Any, ssh: SshSettings, host: LocalHost | None = None) -> list[NetHost]:
    where = "baseline.network.hosts"
    if params["hosts"] == OSD_HOSTS:
        return cluster_hosts(cluster, ssh, host, where=where)
    return resolve_hosts(params["hosts"], host, ssh=ssh, where=where)


def with_lab_root(hosts: list[NetHost], target: Any) -> tuple[list[NetHost], list[str]]:
    """On a one-host lab of another release this machine is the lab's one host, a host of that release: its iperf3
    ends run from the lab's root, as its daemons do. A multi-host lab's hosts run the root's over ssh already, and
    this machine is their client there, whose tools are its own (as its rados). Where the root has no iperf3, this
    machine's runs, and the note returned says so."""
    if not getattr(target, "is_lab", False) or not any(h.local for h in hosts):
        return hosts, []
    lab = Lab(Path(target.conf).parent)
    info = lab.info()
    if info is None or info.topology is not None:
        return hosts, []
    in_root, instead = lab.tool_root("iperf3")
    return [replace(h, in_root=in_root) if h.local else h for h in hosts], [instead] if instead else []


def preflight(cluster, tests: list[Test], settings) -> None:
    """Hosts that cannot be reached and a taken port refuse the run before it changes anything."""
    first = tests[0].params
    hosts = _hosts(first, cluster, settings.ssh)
    if first.get("port") is not None and any(h.local for h in hosts):
        check_port(first["port"])


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    first = group[0].params
    tests = [t for t in group if t.id in todo]
    if ctx.dry_run:
        between = "this host and every OSD host" if first["hosts"] == OSD_HOSTS else ", ".join(first["hosts"])
        ctx.planned.append(f"iperf3 between {between} (servers started and stopped by cephbench)")
        return
    hosts = _hosts(first, ctx.cluster, ctx.settings.ssh, ctx.host)
    if first["hosts"] == OSD_HOSTS:
        cluster = [h.name for h in hosts if h.cluster_address]
        clients = client_net_hosts(ctx.suite_clients, ctx.settings.ssh, {h.name for h in hosts}, ctx.host)
        if clients and not ctx.load_here:
            hosts = [h for h in hosts if not h.local]       # every workload's load comes from client hosts
        here = ctx.load_here
        tests = [part for t in tests for part in expand(t, [h.name for h in hosts], cluster,
                                                         [c.name for c in clients], first_is_client=here)]
        hosts = hosts + clients
    hosts, instead = with_lab_root(hosts, ctx.target)

    def together(flows: list[tuple[HostRef, Spawn]], timeout_s: float, tick: Callable[[], bool],
                 tools: Callable[[list[int]], None]) -> list[CommandResult]:
        paths = ctx.at_paths_on([ref for ref, _ in flows])
        timed = run_started_together(ctx.host, ctx.placements_on(flows), ctx.settings.ssh, paths, timeout_s,
                                     tick=tick, started=tools)
        return [(t.result, None if t.start_unix_s is None or t.end_unix_s is None else (t.start_unix_s, t.end_unix_s))
                for t in timed]

    for n, o in enumerate(run(tests, hosts, ctx.rundir, ctx.host, ctx.events.note, first.get("port"),
                              ctx.events.test_started, together, ctx.run_baseline_tools, ctx.record_process)):
        yield replace(o, notes=[*instead, *o.notes]) if instead and n == 0 else o


def client_net_hosts(clients: Sequence[Any], ssh: SshSettings, taken: set[str],
                     host: LocalHost | None = None) -> list[NetHost]:
    """The suite's client hosts (clients.Client) as iperf3 ends: reached over ssh, sending and listening on the
    address ssh reaches them at (their own). One that is also an OSD host or this machine is measured as that."""
    out = []
    for c in clients:
        if c.name in taken or c.ref.address is None:
            continue
        out.append(NetHost(c.name, c.ref.address, False, ssh, bind=True))
    if out:
        check_reach(out, host, ssh, "clients")
    return out
