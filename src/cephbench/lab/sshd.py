"""An OpenSSH server on each host of a multi-host lab, on the lab's own key.

cephbench reaches a lab host exactly as it reaches a host of a real cluster: `ssh -o BatchMode=yes` with a user,
an identity file and a known_hosts file (settings.ssh). Everything lives in `<lab>/ssh/`: the client key pair
(`id_ed25519`, only ever in authorized_keys of this lab), one host key shared by the lab's hosts, `known_hosts`
naming every host's address with that key (so StrictHostKeyChecking stays on), and an sshd_config per host that
listens on the host's public address only.

Each session gets the host's environment through `SetEnv`: CEPH_CONF (so `ceph`, `rados` and fio find the lab),
CEPHBENCH_CPUACCT, the host's cpuacct cgroup, which is what "this host's CPU" means when hosts share a machine,
CEPHBENCH_LINK_SPEEDS, the rates its links are shaped to (a veth tells sysfs nothing of tc), and
a PATH whose first directory is the host's own (`<lab>/hosts/<host>/bin`, empty at start): the hosts share this
machine's files, so a tool put there (a `date` 5 s off, a `fio` without the rbd engine) is seen on that host alone.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..core.errors import UserError
from ..hosts.local import LocalHost

SSHD = "/usr/sbin/sshd"
USER = "root"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"   # sshd's own default for root


def session_path(host_bin: Path) -> str:
    """A lab host's PATH: its own directory first, then the system's."""
    return f"{host_bin}:{SYSTEM_PATH}"


def session_env(conf: Path, host_bin: Path) -> dict[str, str]:
    """What every session on a lab host starts with (sshd's SetEnv), beside the host's own figures.

    SHLVL=1: sshd runs a command through the user's shell, and Debian's bash reads ~/.bashrc when run by sshd as a
    top-level shell, the user's interactive set-up on every session of a host that should look like a server. On
    this project's machines root's ~/.bashrc runs `pyenv init` and puts pyenv's shims first on the PATH: each
    session paid for it, and every `python3` on a host (the counters' reading) was pyenv's shim, 0.3 s of CPU and
    up to 2.6 s a start on a busy machine, against 0.02 for /usr/bin/python3. A shell that inherits SHLVL=1 counts
    itself the second level and leaves ~/.bashrc alone, so the PATH is the lab's."""
    return {"CEPH_CONF": str(conf), "PATH": session_path(host_bin), "SHLVL": "1"}


@dataclass(frozen=True)
class SshFiles:
    dir: Path

    @property
    def identity(self) -> Path:
        return self.dir / "id_ed25519"

    @property
    def host_key(self) -> Path:
        return self.dir / "ssh_host_ed25519_key"

    @property
    def authorized_keys(self) -> Path:
        return self.dir / "authorized_keys"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    def config(self, host: str) -> Path:
        return self.dir / f"sshd_config.{host}"

    @property
    def client_config(self) -> Path:
        """An ssh client config naming every host: `ssh -F <lab>/ssh/config h1` for a person at the shell."""
        return self.dir / "config"


def check_tools(host: LocalHost) -> None:
    missing = [p for p in (SSHD, "ssh", "ssh-keygen") if host.which(p) is None]
    if missing:
        raise UserError(f"{', '.join(missing)} not found: each host of a multi-host lab runs sshd (openssh-server)",
                        "run scripts/setup.sh")


def make_keys(files: SshFiles, host: LocalHost) -> None:
    """The client key pair and the host key, made fresh for each lab (never a key of the user's)."""
    files.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    for key, comment in ((files.identity, "cephbench-lab-client"), (files.host_key, "cephbench-lab-host")):
        res = host.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(key)], 30)
        if not res.ok:
            raise UserError(f"ssh-keygen failed: {res.error_text()}", "run scripts/setup.sh")
    shutil.copyfile(files.identity.with_suffix(".pub"), files.authorized_keys)
    files.authorized_keys.chmod(0o600)


def write_known_hosts(files: SshFiles, addresses: list[str]) -> None:
    pub = files.host_key.with_suffix(".pub").read_text().split()
    files.known_hosts.write_text("".join(f"{a} {pub[0]} {pub[1]}\n" for a in addresses))


def write_client_config(files: SshFiles, hosts: Mapping[str, str]) -> None:
    files.client_config.write_text("".join(
        f"Host {name}\n  HostName {addr}\n  User {USER}\n  IdentityFile {files.identity}\n"
        f"  UserKnownHostsFile {files.known_hosts}\n  StrictHostKeyChecking yes\n  BatchMode yes\n"
        for name, addr in hosts.items()))


def render_config(files: SshFiles, *addresses: str, port: int = 22, sessions: int = 100) -> str:
    """The one sshd_config cephbench writes: a lab host's (one address), or the fan-out benchmark's (up to 16
    addresses of this machine, more sessions)."""
    # StrictModes off: the lab directory may sit under a group-writable /tmp path sshd would otherwise refuse.
    # UsePAM off: no PAM session (and no login records) for a benchmark's commands.
    # PidFile none: the lab writes the PID it started (run/sshd.<host>.pid), as for its other daemons.
    listen = "".join(f"ListenAddress {a}\n" for a in addresses)
    return f"""\
{listen}Port {port}
HostKey {files.host_key}
AuthorizedKeysFile {files.authorized_keys}
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
MaxStartups {sessions}:30:{sessions + 100}
MaxSessions {sessions}
LogLevel ERROR
Subsystem sftp internal-sftp
"""


def sshd_argv(files: SshFiles, host: str, env: Mapping[str, str]) -> list[str]:
    """-D: stays in the foreground, so the PID cephbench started is sshd's; -e: its log goes to our file.

    The sessions' environment is given on the command line rather than in the config: it holds CEPH_CONF, the
    path by which the lab recognises its own processes (daemons.is_lab_process), so sshd is checked like the
    Ceph daemons before it is ever signalled."""
    set_env = " ".join(f"{k}={v}" for k, v in sorted(env.items()))
    return [SSHD, "-D", "-e", "-f", str(files.config(host)), "-o", f"SetEnv={set_env}"]


def ensure_privsep_dir() -> None:
    """sshd refuses to start without /run/sshd (Debian's service makes it at boot; no service runs here)."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)


def client_options(files: SshFiles) -> list[str]:
    """settings.ssh.options for the lab: its own known_hosts, checked strictly."""
    return [f"UserKnownHostsFile={files.known_hosts}", "StrictHostKeyChecking=yes"]
