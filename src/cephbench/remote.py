"""Reaching the cluster's other hosts with ssh: page-cache drops on OSD hosts, iperf3 peers.

Every remote command goes through `ssh -o BatchMode=yes` (never a password
prompt), with the user, port, identity file and extra options of the suite's
`settings.ssh`. An OSD host is named as `ceph osd metadata` reports it; the
suite may map such a name to the address ssh should use.
"""

from __future__ import annotations

import shlex
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from .config import SshSettings
from .errors import UserError
from .hosts import LocalHost

if TYPE_CHECKING:
    from .cluster import Cluster

BASE_OPTS = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "StrictHostKeyChecking=accept-new",
             "-o", "LogLevel=ERROR"]     # errors still come through; "Permanently added ..." would mix into output

# root writes drop_caches itself; anyone else needs password-less sudo for exactly this
DROP_CACHES_SH = ('sync; if [ "$(id -u)" = 0 ]; then echo 3 > /proc/sys/vm/drop_caches; '
                  'else echo 3 | sudo -n tee /proc/sys/vm/drop_caches > /dev/null; fi')


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
class OsdHost:
    name: str               # as `ceph osd metadata` reports it
    address: str | None     # what ssh reaches; None: this machine, no ssh needed

    def argv(self, argv: Sequence[str], ssh: SshSettings) -> list[str]:
        return list(argv) if self.address is None else ssh_argv(self.address, argv, ssh)


def osd_hosts(cluster: Cluster, ssh: SshSettings) -> list[OsdHost]:
    """The hosts that carry OSDs. A name in `ssh.hosts` is always reached over ssh at the address given there;
    otherwise this machine's own name needs no ssh and any other name is reached by that name."""
    names = sorted({str(m.get("hostname")) for m in cluster.ceph_json("osd", "metadata") if m.get("hostname")})
    here = {socket.gethostname(), socket.getfqdn()}
    return [OsdHost(n, ssh.hosts[n] if n in ssh.hosts else (None if n in here else n)) for n in names]


def drop_caches_argv(host: OsdHost, ssh: SshSettings) -> list[str]:
    return host.argv(["sh", "-c", DROP_CACHES_SH], ssh)


def run_on_all(host: LocalHost, argvs: list[list[str]], timeout_s: float = 60) -> list[str | None]:
    """Run one command per host at once (ssh connects take seconds); for each, None or why it failed."""
    def one(argv: list[str]) -> str | None:
        res = host.run(argv, timeout_s)
        return None if res.ok else res.error_text()
    if not argvs:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(argvs))) as pool:
        return list(pool.map(one, argvs))


CAN_DROP_SH = '[ "$(id -u)" = 0 ] || sudo -n true'


def check_osd_hosts(host: LocalHost, hosts: list[OsdHost], ssh: SshSettings) -> None:
    """Refuse, before anything changes, a run whose read phases could not drop the OSD hosts' page cache."""
    remote = [h for h in hosts if h.address is not None]
    for h, why in zip(remote, run_on_all(host, [h.argv(["sh", "-c", CAN_DROP_SH], ssh) for h in remote])):
        if why is not None:
            raise UserError(f"OSD host {h.name} ({h.address}) cannot drop its page cache over ssh: {why}",
                            "cephbench drops it before every read; give settings.ssh (user, port, identity_file, "
                            "hosts: {name: address}) with root or password-less sudo, or set "
                            "settings.drop_caches: false", where="settings.ssh")
