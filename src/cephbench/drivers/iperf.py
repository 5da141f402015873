"""Network baseline with iperf3: every ordered pair of hosts with one and with N streams, and one
sender to all others at once (the pattern that showed CenterDevice's bonding limit).

cephbench starts each iperf3 server itself, on a free port (or the --port given),
for one test (`--one-off`), and stops it afterwards. Hosts other than this one
are reached with `ssh -o BatchMode=yes` and the suite's `settings.ssh`; a host
named in `settings.ssh.hosts` is reached at the address given there, and its
server listens, and its client sends, on that address. On the one-host lab the
only host is this one and the pair is loopback. The parser of `iperf3 -J` is pure.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import UserError
from ..hosts import LocalHost, Spawn, run_together
from ..config import SshSettings
from ..remote import HostRef, is_local_address, require_tools
from ..results import Measurement, RunDir, Sample, Test
from . import ParseError
from .figures import array, checked, count, mapping, number, optional
from .base import Outcome

log = logging.getLogger(__name__)

SERVER_START_TIMEOUT_S = 10
CONNECT_TIMEOUT_MS = 3000


@dataclass(frozen=True)
class NetHost:
    name: str           # as the user gave it
    address: str        # what clients connect to
    local: bool         # this machine (no SSH needed)
    ssh: SshSettings = field(default_factory=SshSettings)
    bind: bool = False  # the address is the host's own (given in settings.ssh.hosts, or this machine's): servers
                        # listen and clients send on it, so each test crosses exactly that host's link

    @property
    def ref(self) -> HostRef:
        return HostRef(self.name, None if self.local else self.ssh.hosts.get(self.name, self.name))

    def wrap(self, argv: list[str]) -> list[str]:
        """The command as run on this host: as is when local, through ssh (the suite's settings) otherwise."""
        return self.ref.argv(argv, self.ssh)


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
    remote = [h for h in out if not h.local]
    if check_ssh and remote:
        require_tools(host, [h.ref for h in remote], ["iperf3", "timeout"], ssh, where)
    return out


# ---- command builders ---------------------------------------------------------------------

def server_argv(port: int, limit_s: float, bind: str | None = None) -> list[str]:
    """One test, then exit; `timeout` makes sure a remote server never outlives the run."""
    return ["timeout", str(int(limit_s)), "iperf3", "-s", "-p", str(port), "--one-off", "--forceflush",
            *(["-B", bind] if bind else [])]


def client_argv(address: str, port: int, duration_s: float, streams: int, bind: str | None = None) -> list[str]:
    return ["iperf3", "-c", address, "-p", str(port), "-t", f"{duration_s:g}", "-P", str(streams), "-J",
            "--connect-timeout", str(CONNECT_TIMEOUT_MS), *(["-B", bind] if bind else [])]


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
        samples = []
        for i, iv in enumerate(array(data.get("intervals", []), "intervals")):
            if "sum" in mapping(iv, f"intervals[{i}]"):
                sm = mapping(iv["sum"], f"intervals[{i}].sum")
                samples.append(Sample(t_s=number(sm["end"], f"intervals[{i}].sum.end"),
                                      bytes_per_s=number(sm["bits_per_second"], f"intervals[{i}].sum.bits_per_second")
                                      / 8))
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
        self.argv = on.wrap(server_argv(port, limit_s, on.address if on.bind else None))

    def start(self, host: LocalHost) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.proc = host.start(self.argv, stdout_path=self.log_path)
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S + (0 if self.on.local else 10)
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
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


# ---- the plan of a network baseline ---------------------------------------------------------

def patterns(hosts: list[str], streams: int) -> list[dict[str, Any]]:
    """Ordered pairs with 1 and N streams, then one-to-many from every sender (needs 2+ hosts)."""
    out: list[dict[str, Any]] = []
    pairs = [(a, b) for a in hosts for b in hosts if a != b] or [(hosts[0], hosts[0])]
    for a, b in pairs:
        for n in sorted({1, streams}):
            out.append({"pattern": "pair", "sender": a, "receivers": [b], "streams": n})
    if len(hosts) > 1:
        for a in hosts:
            out.append({"pattern": "one-to-many", "sender": a, "receivers": [h for h in hosts if h != a],
                        "streams": 1})
    return out


def _label(p: dict[str, Any]) -> str:
    if p["pattern"] == "pair":
        return f"{p['sender']}-to-{p['receivers'][0]}-P{p['streams']}"
    return f"{p['sender']}-to-all"


def make_tests(hosts: list[str], streams: int, duration_s: float, port: int | None, start_index: int = 1,
               group: str = "b002", workload: str = "baseline-net") -> list[Test]:
    out = []
    for n, p in enumerate(patterns(hosts, streams)):
        index = start_index + n
        out.append(Test(id=f"{index:03d}-{workload}-{_label(p)}", index=index, workload=workload, kind="net_baseline",
                        group=group, params={**p, "hosts": hosts, "duration_s": duration_s, "port": port},
                        est_duration_s=duration_s + 1))
    return out


def run(tests: list[Test], hosts: list[NetHost], rundir: RunDir | None, host: LocalHost,
        note: Callable[[str], None], base_port: int | None = None) -> Iterator[Outcome]:
    by_name = {h.name: h for h in hosts}
    raw_root = rundir.raw_dir("baseline-net") if rundir else Path("/tmp")
    if base_port is not None:
        for h in hosts:
            if h.local:
                check_port(base_port)
    for test in tests:
        p = test.params
        sender, receivers = by_name[p["sender"]], [by_name[r] for r in p["receivers"]]
        duration = float(p["duration_s"])
        raw_dir = rundir.raw_dir(test.id) if rundir else raw_root
        started, t0 = time.time(), time.monotonic()
        note(f"network baseline: {p['sender']} -> {', '.join(p['receivers'])}, {p['streams']} stream(s)")
        servers: list[Server] = []
        try:
            for i, r in enumerate(receivers):
                # a server on this machine (or a lab host that is a namespace of it) takes a port free here
                port = base_port + i if base_port is not None else \
                    (free_port() if r.local or is_local_address(r.address) else 5201 + i)
                if base_port is not None and r.local:
                    check_port(port)
                srv = Server(r, port, duration * 3 + 60, raw_dir / f"iperf3-server-{r.name}-{port}.txt")
                servers.append(srv)
                srv.start(host)
            spawns = [Spawn(sender.wrap(client_argv(s.on.address, s.port, duration, p["streams"],
                                                    sender.address if sender.bind else None)),
                            raw_dir / f"iperf3-client-{sender.name}-to-{s.on.name}.json") for s in servers]
            results = run_together(spawns, duration * 3 + 60)
        finally:
            for s in servers:
                s.stop()
        commands = [r.cmdline for r in results]
        raw = [str(sp.output.relative_to(rundir.path)) for sp in spawns] if rundir else []
        try:
            parts = [parse_iperf_json(r.stdout) for r in results]
        except ParseError as exc:
            yield Outcome(test, started, time.monotonic() - t0, error=str(exc), commands=commands, raw=raw)
            continue
        m = parts[0] if len(parts) == 1 else aggregate(parts, [r.name for r in receivers])
        m.extra.update({"pattern": p["pattern"], "sender": p["sender"], "receivers": p["receivers"],
                        "loopback": all(h.local or ipaddress.ip_address(h.address).is_loopback
                                        for h in (sender, *receivers))})
        notes = []
        if m.extra["loopback"]:
            notes.append("loopback: sender and receiver are this host; the figure is memory and CPU, not a NIC")
        yield Outcome(test, started, time.monotonic() - t0, measurement=m, commands=commands, raw=raw, notes=notes)


def aggregate(parts: list[Measurement], receivers: list[str]) -> Measurement:
    """One sender to several receivers at once: the sum, and each receiver's own figure."""
    bits = sum(p.extra["bits_per_s"] for p in parts)
    return Measurement(tool="iperf3", op="send", duration_s=max(p.duration_s for p in parts),
                       bytes_total=sum(p.bytes_total or 0 for p in parts), bytes_per_s=bits / 8,
                       instances=parts,
                       extra={"bits_per_s": bits, "sender_bits_per_s": sum(p.extra["sender_bits_per_s"] for p in parts),
                              "retransmits": sum(p.extra.get("retransmits") or 0 for p in parts),
                              "per_receiver_bits_per_s": {r: p.extra["bits_per_s"] for r, p in zip(receivers, parts)},
                              "stream_count": sum(p.extra["stream_count"] for p in parts)})


def preflight(cluster, tests: list[Test], settings) -> None:  # noqa: ARG001 - the runner's preflight hook
    """Hosts that cannot be reached and a taken port refuse the run before it changes anything."""
    first = tests[0].params
    hosts = resolve_hosts(first["hosts"], ssh=settings.ssh, where="baseline.network.hosts")
    if first.get("port") is not None and any(h.local for h in hosts):
        check_port(first["port"])


def run_group(ctx, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    first = group[0].params
    tests = [t for t in group if t.id in todo]
    if ctx.dry_run:
        ctx.planned.append(f"iperf3 between {', '.join(first['hosts'])} (servers started and stopped by cephbench)")
        return
    hosts = resolve_hosts(first["hosts"], ctx.host, ssh=ctx.settings.ssh, where="baseline.network.hosts")
    if tests:
        ctx.events.test_started(tests[0])
    yield from run(tests, hosts, ctx.rundir, ctx.host, ctx.events.note, first.get("port"))
