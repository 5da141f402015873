"""A real SSH server on 127.0.0.1 for the remote-host code paths (asyncssh; OpenSSH's `ssh` is the client).

It accepts one client key, runs each command with `sh -c` on this machine and
records it, so a test can see what cephbench ran over ssh. It may listen on
several loopback addresses (127.0.0.2, ...: "hosts" of one machine) and record
which one each command came in on, and give every session extra environment
variables, as sshd_config's SetEnv does.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
from pathlib import Path

import asyncssh


class SshServer:
    def __init__(self, workdir: Path, addresses: tuple[str, ...] = ("127.0.0.1",),
                 env: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.addresses = addresses
        self.env = env or {}
        self.client_key = workdir / "id_ed25519"
        self.commands: list[str] = []
        self.sessions: list[tuple[str, str]] = []     # (the address the client connected to, its command)
        self.finished = 0                  # commands that have ended (the watch loops included)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: asyncssh.SSHAcceptor | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> "SshServer":
        key = asyncssh.generate_private_key("ssh-ed25519")
        key.write_private_key(str(self.client_key))
        self.client_key.chmod(0o600)
        authorized = asyncssh.import_authorized_keys(key.export_public_key().decode())
        host_key = asyncssh.generate_private_key("ssh-ed25519")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._thread.start()

        async def start() -> asyncssh.SSHAcceptor:
            return await asyncssh.create_server(
                asyncssh.SSHServer, list(self.addresses), self.port, server_host_keys=[host_key],
                authorized_client_keys=authorized, process_factory=self._run)
        self._server = asyncio.run_coroutine_threadsafe(start(), self._loop).result(10)
        return self

    async def _run(self, process: asyncssh.SSHServerProcess) -> None:
        """Stream the command's output as it comes; kill it when the client goes away (as sshd's SIGHUP would)."""
        self.commands.append(process.command or "")
        self.sessions.append((process.get_extra_info("sockname")[0], process.command or ""))
        proc = await asyncio.create_subprocess_exec("sh", "-c", process.command or "true",
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                    start_new_session=True, env={**os.environ, **self.env})
        try:
            while True:
                line = await proc.stdout.readline()
                if not line:
                    break
                if process.is_closing():
                    raise ConnectionError("client gone")
                process.stdout.write(line.decode())
            process.stderr.write((await proc.stderr.read()).decode())
            process.exit(await proc.wait())
        except (ConnectionError, asyncssh.Error, BrokenPipeError):
            pass
        finally:
            if proc.returncode is None:
                os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
            self.finished += 1

    def ssh_settings(self, **extra: object) -> dict:
        """The suite's `settings.ssh` that reaches this server."""
        return {"port": self.port, "identity_file": str(self.client_key),
                "options": ["UserKnownHostsFile=" + str(self.workdir / "known_hosts")], **extra}

    def __exit__(self, *exc: object) -> None:
        # on the loop's own thread: asyncio is not thread-safe, and a close from this thread raced the loop's
        # (TypeError in Server._wakeup, seen once in CI)
        if self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
