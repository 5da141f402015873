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
# The script run on a host: argv = "perf" or "perf+config", then OSD ids; prints one "osd.N <json>" (its perf
# dump) or "osd.N !<why>" line per OSD, and with "+config" a "cfg.N <json>" line (its `config show`: every option,
# defaults included) after it.
SCRIPT = r'''
import json, socket, struct, subprocess, sys
def ask(path, prefix):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(json.dumps({"prefix": prefix}).encode() + b"\0")
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
    return json.dumps(json.loads(body))
for n in sys.argv[2:]:
    path = ""
    try:
        path = subprocess.run(["ceph-conf", "--name", "osd." + n, "--show-config-value", "admin_socket"],
                              capture_output=True, text=True, timeout=5).stdout.strip()
        print("osd." + n, ask(path, "perf dump"))
    except Exception as e:
        print("osd." + n, "!" + (path or "no admin socket path") + ": " + str(e))
        continue
    if sys.argv[1] == "perf+config":
        try:
            print("cfg." + n, ask(path, "config show"))
        except Exception as e:
            print("cfg." + n, "!" + str(e))
'''


Readings = tuple[dict[int, dict[str, Any]], dict[int, str], dict[int, dict[str, Any]]]


def parse_lines(text: str) -> Readings:
    """The script's output -> (osd -> its perf dump, osd -> why it could not be read, osd -> its config)."""
    dumps: dict[int, dict[str, Any]] = {}
    errors: dict[int, str] = {}
    config: dict[int, dict[str, Any]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        kind, _, num = name.partition(".")
        if kind not in ("osd", "cfg") or not num.isdigit():
            continue
        osd = int(num)
        if rest.startswith("!"):
            if kind == "osd":
                errors[osd] = rest[1:]
            continue
        try:
            doc = json.loads(rest)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            if kind == "osd":
                errors[osd] = "its admin socket's answer is not a JSON object"
        elif kind == "osd":
            dumps[osd] = doc
        else:
            config[osd] = doc
    return dumps, errors, config


def read_all(host: LocalHost, by_host: dict[HostRef, list[int]], ssh: SshSettings, conf: str | None,
             with_config: bool = False) -> Readings:
    """Every OSD's perf dump (and with_config its `config show`): one ssh per remote host (all at once), the same
    script as a local process for this machine's OSDs."""
    dumps: dict[int, dict[str, Any]] = {}
    errors: dict[int, str] = {}
    config: dict[int, dict[str, Any]] = {}
    what = "perf+config" if with_config else "perf"
    remote = [(ref, osds) for ref, osds in by_host.items() if ref.address is not None]
    argvs = [ref.argv(["python3", "-c", SCRIPT, what, *map(str, osds)], ssh) for ref, osds in remote]
    most = max((len(osds) for _, osds in remote), default=0)
    for (ref, osds), res in zip(remote, run_all(host, argvs, TIMEOUT_S * (most + 2))):
        d, e, c = parse_lines(res.stdout)
        dumps.update(d)
        errors.update(e)
        config.update(c)
        for n in osds:
            if n not in d and n not in e:
                errors[n] = f"host {ref.where} did not answer ({res.error_text()})"
    for ref, osds in by_host.items():
        if ref.address is None:         # the same script here, the run's ceph.conf naming the sockets
            res = host.run(["python3", "-c", SCRIPT, what, *map(str, osds)], TIMEOUT_S * (len(osds) + 2),
                           env={"CEPH_CONF": conf} if conf else None)
            d, e, c = parse_lines(res.stdout)
            dumps.update(d)
            errors.update(e)
            config.update(c)
    return dumps, errors, config
