"""Reaching the cluster's other hosts with ssh: page-cache drops and CPU watching on OSD hosts, iperf3 peers,
disk baselines.

Every remote command goes through `ssh -o BatchMode=yes` (never a password
prompt), with the user, port, identity file and extra options of the suite's
`settings.ssh`. A host is named as `ceph osd metadata` reports it (or as the
suite names it); the suite may map such a name to the address ssh should use.
"""

from __future__ import annotations

import re
import shlex
import shutil
import socket
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from ..core.settings import SshSettings
from ..core.errors import UserError
from .local import CommandResult, LocalHost

BASE_OPTS = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "StrictHostKeyChecking=accept-new",
             "-o", "LogLevel=ERROR"]     # errors still come through; "Permanently added ..." would mix into output

# root writes drop_caches itself; anyone else needs password-less sudo for exactly this
DROP_CACHES_SH = ('sync; if [ "$(id -u)" = 0 ]; then echo 3 > /proc/sys/vm/drop_caches; '
                  'else echo 3 | sudo -n tee /proc/sys/vm/drop_caches > /dev/null; fi')


# How long an idle master outlives its last session: the backstop for a run killed with -9, whose masters then
# end by themselves this long after its last ssh command.
MASTER_PERSIST_S = 60


@contextmanager
def ssh_master(settings: SshSettings, parent: Path | None = None) -> Iterator[SshSettings]:
    """`settings` with OpenSSH connection sharing: the first ssh to a host becomes its master, every later one
    (drop caches, host watches, iperf, fio, a fan-out's wrappers) runs as one more session over that connection,
    without a TCP connect, key exchange or login each time.

    The sockets live in a private directory (0700: a control socket is a login to the host for whoever can open
    it), under `parent` or the system's temporary directory. On exit every master is told to exit and the
    directory is removed: no daemonised ssh outlives the run. Options the suite gives itself come first and so
    win (ssh takes the first value of an option)."""
    # a control socket's path must fit a Unix socket's ~108 bytes: %C (40 hex digits) under a short directory
    base = parent if parent is not None and len(str(parent)) < 40 else None
    ctl = Path(tempfile.mkdtemp(prefix=CONTROL_PREFIX, dir=base))
    shared = ["ControlMaster=auto", f"ControlPath={ctl}/%C", f"ControlPersist={MASTER_PERSIST_S}"]
    try:
        yield settings.model_copy(update={"options": [*settings.options, *shared]})
    finally:
        close_masters(ctl)
        shutil.rmtree(ctl, ignore_errors=True)


CONTROL_PREFIX = "cephbench-ssh-"


def control_dir(settings: SshSettings) -> Path | None:
    """The private directory of an ssh_master's sockets, from the settings it gave (None: no sharing)."""
    for o in settings.options:
        if o.startswith("ControlPath=") and Path(o.split("=", 1)[1]).parent.name.startswith(CONTROL_PREFIX):
            return Path(o.split("=", 1)[1]).parent
    return None


def remove_control_dir(path: Path) -> None:
    """What a run killed with -9 left of its ssh_master: its masters (told to exit) and their directory. Only a
    directory of that name is touched."""
    if not path.name.startswith(CONTROL_PREFIX):
        raise ValueError(f"{path} is not an ssh control directory of cephbench")
    close_masters(path)
    shutil.rmtree(path, ignore_errors=True)


def close_masters(ctl: Path) -> None:
    """`ssh -O exit` for every control socket in `ctl`; a master removes its socket as it exits."""
    socks = [p for p in ctl.iterdir() if p.is_socket()] if ctl.is_dir() else []
    run_all(LocalHost(), [["ssh", "-o", f"ControlPath={p}", "-O", "exit", "cephbench-master"] for p in socks], 10)
    deadline = time.monotonic() + 2
    while any(p.exists() for p in socks) and time.monotonic() < deadline:
        time.sleep(0.02)


def ssh_argv(address: str, argv: Sequence[str], ssh: SshSettings | None = None) -> list[str]:
    """`argv` run on `address` through ssh; the remote shell sees it quoted exactly as given."""
    ssh = ssh or SshSettings()
    opts = list(BASE_OPTS)
    if ssh.port:
        opts += ["-p", str(ssh.port)]
    if ssh.identity_file:
        opts += ["-i", str(ssh.identity_file)]
    for o in ssh.options:
        opts += ["-o", o]
    dest = f"{ssh.user}@{address}" if ssh.user else address
    return ["ssh", *opts, dest, shlex.join(str(a) for a in argv)]


_ADDR_RE = re.compile(r"v[12]:\[?([0-9a-fA-F.:]+?)\]?:\d+/")


def addr_ips(addr: str) -> set[str]:
    """The IP addresses in a Ceph address vector ("[v2:10.0.0.1:6800/12,v1:10.0.0.1:6801/12]")."""
    return set(_ADDR_RE.findall(addr or ""))


def front_ips(metadata: list[dict]) -> dict[str, str]:
    """`ceph osd metadata` -> each OSD host's public (front) address, the lowest when its OSDs give several."""
    return _host_ips(metadata, "front_addr")


def back_ips(metadata: list[dict]) -> dict[str, str]:
    """Each OSD host's cluster (back) address: where replication goes; the public one when there is no cluster
    network."""
    return _host_ips(metadata, "back_addr")


def _host_ips(metadata: list[dict], key: str) -> dict[str, str]:
    out: dict[str, set[str]] = {}
    for m in metadata:
        name = m.get("hostname")
        if name:
            out.setdefault(str(name), set()).update(addr_ips(str(m.get(key) or "")))
    return {name: min(ips) for name, ips in sorted(out.items()) if ips}


def source_address(toward: str) -> str:
    """The address this machine sends from towards `toward`: the kernel's route choice, found by connecting a UDP
    socket (which sends nothing)."""
    family = socket.AF_INET6 if ":" in toward else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.connect((toward, 9))
        return str(s.getsockname()[0])


def is_local_address(addr: str) -> bool:
    """An address this machine owns: binding to it succeeds only here."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((addr, 0))
        return True
    except OSError:
        return False


@dataclass(frozen=True)
class HostRef:
    """A host of the cluster and how commands reach it."""
    name: str               # as `ceph osd metadata` reports it, or as the suite names it
    address: str | None     # what ssh reaches; None: this machine, no ssh needed

    def argv(self, argv: Sequence[str], ssh: SshSettings) -> list[str]:
        return list(argv) if self.address is None else ssh_argv(self.address, argv, ssh)

    @property
    def where(self) -> str:
        """For messages: "node1" or "node1 (10.0.0.11)"."""
        return self.name if self.address in (None, self.name) else f"{self.name} ({self.address})"


def this_host() -> HostRef:
    return HostRef(socket.gethostname(), None)


def host_ref(name: str, ssh: SshSettings) -> HostRef:
    """A name in `ssh.hosts` is always reached over ssh at the address given there; otherwise this machine's own
    name (or localhost) needs no ssh and any other name is reached by that name."""
    if name in ssh.hosts:
        return HostRef(name, ssh.hosts[name])
    return HostRef(name, None if name in {socket.gethostname(), socket.getfqdn(), "localhost"} else name)


def drop_caches_argv(host: HostRef, ssh: SshSettings) -> list[str]:
    return host.argv(["sh", "-c", DROP_CACHES_SH], ssh)


def run_all(host: LocalHost, argvs: list[list[str]], timeout_s: float = 60) -> list[CommandResult]:
    """Run one command per host at once (ssh connects take seconds)."""
    if not argvs:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(argvs))) as pool:
        return list(pool.map(lambda argv: host.run(argv, timeout_s), argvs))


def run_on_all(host: LocalHost, argvs: list[list[str]], timeout_s: float = 60) -> list[str | None]:
    """Run one command per host at once; for each, None or why it failed."""
    return [None if res.ok else res.error_text() for res in run_all(host, argvs, timeout_s)]


SSH_FAILED = 255        # ssh's own exit code: no connection, no login (the remote command's codes pass through)
NOT_FOUND = 127         # the remote shell's "command not found"


def unreachable(ref: HostRef, res: CommandResult) -> str | None:
    """Why ssh could not run anything on `ref` (None: it reached the host, whatever the command did)."""
    if ref.address is None or not (res.timed_out or res.returncode == SSH_FAILED):
        return None
    return f"host {ref.where} cannot be reached over ssh: {res.error_text()}"


def require_tools(host: LocalHost, refs: list[HostRef], tools: Sequence[str], ssh: SshSettings, where: str) -> None:
    """Refuse, in one line naming `where`, a host ssh cannot reach or one without one of `tools`."""
    script = "for t in " + " ".join(shlex.quote(t) for t in tools) + \
        '; do command -v "$t" > /dev/null || { echo "missing $t"; exit 127; }; done'
    for ref, res in zip(refs, run_all(host, [r.argv(["sh", "-c", script], ssh) for r in refs], 30)):
        why = unreachable(ref, res)
        if why:
            raise UserError(why, "cephbench needs password-less ssh to every host: check settings.ssh (user, port, "
                            "identity_file, hosts: {name: address})", where=where)
        if res.returncode == NOT_FOUND and res.stdout.startswith("missing "):
            tool = res.stdout.split()[1]
            raise UserError(f"{tool} is not installed on host {ref.where}",
                            f"install {tool} there (Debian: apt-get install {tool})", where=where)
        if not res.ok:
            raise UserError(f"host {ref.where} cannot run commands: {res.error_text()}", where=where)


CAN_DROP_SH = '[ "$(id -u)" = 0 ] || sudo -n true'


def check_osd_hosts(host: LocalHost, hosts: list[HostRef], ssh: SshSettings) -> None:
    """Refuse, before anything changes, a run whose read phases could not drop the OSD hosts' page cache."""
    remote = [h for h in hosts if h.address is not None]
    for h, why in zip(remote, run_on_all(host, [h.argv(["sh", "-c", CAN_DROP_SH], ssh) for h in remote])):
        if why is not None:
            raise UserError(f"OSD host {h.name} ({h.address}) cannot drop its page cache over ssh: {why}",
                            "cephbench drops it before every read; give settings.ssh (user, port, identity_file, "
                            "hosts: {name: address}) with root or password-less sudo, or set "
                            "settings.drop_caches: false", where="settings.ssh")
