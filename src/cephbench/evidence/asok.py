"""Reading OSDs' perf counters through their admin sockets, on each OSD host, at a test's start and end.

`ceph daemon osd.N perf dump` starts the Python `ceph` CLI, about half a second of CPU per OSD: twice per test and
per OSD that would cost more than the harness may. The admin socket's protocol is small (a JSON command ended by
a NUL byte; the answer a 4-byte big-endian length, then the JSON), so one short Python script per host asks every
OSD there, with each socket's path from `ceph-conf` (a C++ binary, as fast as `cat`) as the host's own ceph.conf
names it: over ssh on an OSD host, as a local process on this machine.
"""

from __future__ import annotations

import json
from typing import Any

from ..config import SshSettings
from ..hosts import LocalHost
from ..remote import HostRef, run_all

TIMEOUT_S = 5.0

# The script run on a host: argv = OSD ids; prints one "osd.N <json>" or "osd.N !<why>" line per OSD.
SCRIPT = r'''
import json, socket, struct, subprocess, sys
for n in sys.argv[1:]:
    try:
        path = subprocess.run(["ceph-conf", "--name", "osd." + n, "--show-config-value", "admin_socket"],
                              capture_output=True, text=True, timeout=5).stdout.strip()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(path)
        s.sendall(b'{"prefix": "perf dump"}\0')
        head = b""
        while len(head) < 4:
            chunk = s.recv(4 - len(head))
            if not chunk:
                raise OSError("closed")
            head += chunk
        size = struct.unpack(">I", head)[0]
        body = b""
        while len(body) < size:
            chunk = s.recv(min(1 << 16, size - len(body)))
            if not chunk:
                raise OSError("closed")
            body += chunk
        s.close()
        print("osd." + n, json.dumps(json.loads(body)))
    except Exception as e:
        print("osd." + n, "!" + (path if "path" in dir() and path else "no admin socket path") + ": " + str(e))
'''


def parse_lines(text: str) -> tuple[dict[int, dict[str, Any]], dict[int, str]]:
    """The script's output -> (osd -> its perf dump, osd -> why it could not be read)."""
    dumps: dict[int, dict[str, Any]] = {}
    errors: dict[int, str] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("osd.") or not name[4:].isdigit():
            continue
        osd = int(name[4:])
        if rest.startswith("!"):
            errors[osd] = rest[1:]
            continue
        try:
            doc = json.loads(rest)
        except ValueError:
            errors[osd] = "its admin socket's answer is not JSON"
            continue
        if isinstance(doc, dict):
            dumps[osd] = doc
        else:
            errors[osd] = "its admin socket's answer is not a JSON object"
    return dumps, errors


def read_all(host: LocalHost, by_host: dict[HostRef, list[int]], ssh: SshSettings, conf: str | None
             ) -> tuple[dict[int, dict[str, Any]], dict[int, str]]:
    """Every OSD's perf dump: one ssh per remote host (all at once), in-process for this machine's."""
    dumps: dict[int, dict[str, Any]] = {}
    errors: dict[int, str] = {}
    remote = [(ref, osds) for ref, osds in by_host.items() if ref.address is not None]
    argvs = [ref.argv(["python3", "-c", SCRIPT, *map(str, osds)], ssh) for ref, osds in remote]
    most = max((len(osds) for _, osds in remote), default=0)
    for (ref, osds), res in zip(remote, run_all(host, argvs, TIMEOUT_S * (most + 2))):
        d, e = parse_lines(res.stdout)
        dumps.update(d)
        errors.update(e)
        for n in osds:
            if n not in d and n not in e:
                errors[n] = f"host {ref.where} did not answer ({res.error_text()})"
    for ref, osds in by_host.items():
        if ref.address is None:         # the same script here, the run's ceph.conf naming the sockets
            res = host.run(["python3", "-c", SCRIPT, *map(str, osds)], TIMEOUT_S * (len(osds) + 2),
                           env={"CEPH_CONF": conf} if conf else None)
            d, e = parse_lines(res.stdout)
            dumps.update(d)
            errors.update(e)
    return dumps, errors
