"""Reading OSDs' perf counters through their admin sockets, on each OSD host, at a test's start and end.

`ceph daemon osd.N perf dump` starts the Python `ceph` CLI, about half a second of CPU per OSD: twice per test and
per OSD that would cost more than the harness may. The admin socket's protocol is small (a JSON command ended by
a NUL byte; the answer a 4-byte big-endian length, then the JSON), so one short Python script per host asks every
OSD there: over ssh on an OSD host. Each socket's path is the first of its candidates that answers (sockpaths.py:
the cluster's config, the host's own ceph.conf through `ceph-conf`, a C++ binary as fast as `cat`, cephadm's
/var/run/ceph/<fsid>/, Ceph's default), found once per run. This machine's OSDs are asked by the same code inside
cephbench, beside the ssh readings: a Python process started twice per test cost 0.1-0.3 s each time on a busy
host, most of a short test's overhead (benchmarks/bench_overhead.py).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple

from ..core.settings import SshSettings
from ..hosts.local import LocalHost
from ..hosts.remote import HostRef, run_all
from ..hosts import asokproto
from .sockpaths import HOST_CONF

TIMEOUT_S = 5.0

# The script run on a host: argv = "perf", "perf+config" or "perf+config+schema", then one word per OSD: "N=" and a
# JSON list of the paths to try in order (sockpaths.candidates; "" is what `ceph-conf` names, asked of it for every
# OSD at once; one path: what an earlier reading found). Each path where a socket exists is asked until one answers;
# it prints "sock.N PATH" for it, one "osd.N <json>" (its perf dump) or "osd.N !<why>" line per OSD, with "+config"
# a "cfg.N <json>" line (its `config show`: every option, defaults included), with "+schema" a "sch.N <json>" line
# (its `perf schema`: each counter's type and nick, by which counters.py finds names that differ by release), and a
# "cpu.N CLK_TCK <its /proc/PID/stat>" line: the OSD's CPU time (proccpu.py), its PID the socket's peer. Its
# `read` is also called here, for this machine's OSDs. It asks each socket through asokproto.py, whose text goes
# before it: one client of the protocol, here and there.
_READER = r'''
import os, stat, subprocess, sys
def one_line(path, prefix):
    return json.dumps(json.loads(ask(path, prefix, 5.0)))
def proc_stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        return "%d %s" % (os.sysconf("SC_CLK_TCK"), f.read().strip())
def first_answer(paths):
    tried = []
    for path in paths:
        try:
            if not stat.S_ISSOCK(os.stat(path).st_mode):
                raise OSError("not a socket")
            text, pid = ask_peer(path, "perf dump", 5.0)
            return path, json.loads(text), pid, tried
        except Exception as e:
            tried.append(path + ": " + (e.strerror or str(e) if isinstance(e, OSError) else str(e)))
    return None, None, None, tried
def read(what, words, emit, env=None):
    osds, looked = [], {}
    for w in words:
        n, _, rest = w.partition("=")
        osds.append((n, json.loads(rest) if rest else [""]))
        if "" in osds[-1][1]:
            looked[n] = subprocess.Popen(["ceph-conf", "--name", "osd." + n, "--show-config-value", "admin_socket"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                                         env=env)
    for n, paths in osds:
        if n in looked:
            named = ""
            try:
                named = looked[n].communicate(timeout=5)[0].strip()
            except Exception:
                looked[n].kill()
                looked[n].wait()
            paths = [named if p == "" else p for p in paths]
        path, doc, pid, tried = first_answer([p for i, p in enumerate(paths) if p and p not in paths[:i]])
        if path is None:
            emit("osd." + n + " !" + ("no admin socket answered (" + "; ".join(tried) + ")" if tried
                                      else "no admin socket path"))
            continue
        emit("sock." + n + " " + path)
        emit("osd." + n + " " + json.dumps(doc))
        try:
            emit("cpu." + n + " " + proc_stat(pid))
        except Exception as e:
            emit("cpu." + n + " !" + ("the socket names no PID" if pid is None else str(e)))
        for part, tag, prefix in (("config", "cfg.", "config show"), ("schema", "sch.", "perf schema")):
            if part in what.split("+"):
                try:
                    emit(tag + n + " " + one_line(path, prefix))
                except Exception as e:
                    emit(tag + n + " !" + str(e))
if __name__ == "__main__":
    read(sys.argv[1], sys.argv[2:], print)
'''
SCRIPT = Path(asokproto.__file__).read_text() + _READER


class Readings(NamedTuple):
    dumps: dict[int, dict[str, Any]]        # osd -> its perf dump
    errors: dict[int, str]                  # osd -> why it could not be read
    config: dict[int, dict[str, Any]]       # osd -> its `config show` (when asked)
    schema: dict[int, dict[str, Any]]       # osd -> its `perf schema` (when asked)
    stats: dict[int, str]                   # osd -> "CLK_TCK <its /proc/PID/stat>", or "!<why not>"


def parse_lines(text: str, paths: dict[int, str] | None = None) -> Readings:
    """The script's output -> its Readings; the socket paths it looked up go into `paths`."""
    dumps: dict[int, dict[str, Any]] = {}
    errors: dict[int, str] = {}
    config: dict[int, dict[str, Any]] = {}
    schema: dict[int, dict[str, Any]] = {}
    stats: dict[int, str] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        kind, _, num = name.partition(".")
        if kind not in ("osd", "cfg", "sch", "sock", "cpu") or not num.isdigit():
            continue
        osd = int(num)
        if kind == "sock":
            if paths is not None and rest.strip():
                paths[osd] = rest.strip()
            continue
        if kind == "cpu":
            stats[osd] = rest.strip()
            continue
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
        else:
            {"osd": dumps, "cfg": config, "sch": schema}[kind][osd] = doc
    return Readings(dumps, errors, config, schema, stats)


def local_reader() -> Callable[..., None]:
    """SCRIPT's `read`, defined here (not run as a script: its `__main__` part is skipped)."""
    scope: dict[str, Any] = {"__name__": "cephbench.evidence.asok_script"}
    exec(compile(SCRIPT, "<asok SCRIPT>", "exec"), scope)     # noqa: S102 - our own constant text
    return scope["read"]


def read_all(host: LocalHost, by_host: dict[HostRef, list[int]], ssh: SshSettings, conf: str | None,
             with_config: bool = False, paths: dict[int, str] | None = None,
             candidates: Mapping[int, list[str]] | None = None) -> Readings:
    """Every OSD's perf dump (and with_config its `config show` and `perf schema`): one ssh per remote host (all
    at once), and this machine's OSDs asked in the meantime by SCRIPT's own code, the run's ceph.conf naming their
    sockets.
    `paths` (osd -> its admin socket) are the paths earlier readings found: an OSD in it is asked at once,
    without `ceph-conf` (about 0.1 s per OSD on a busy host); the paths this reading finds are added to it. Another
    OSD's paths to try are its `candidates` (sockpaths.candidates), else only what the host's `ceph-conf` says."""
    got = Readings({}, {}, {}, {}, {})
    errors = got.errors
    what = "perf+config+schema" if with_config else "perf"
    paths = {} if paths is None else paths

    def words(osds: list[int]) -> list[str]:
        return [f"{n}={json.dumps([paths[n]] if n in paths else (candidates or {}).get(n, [HOST_CONF]))}"
                for n in osds]

    def keep(text: str) -> tuple[dict[int, dict[str, Any]], dict[int, str]]:
        one = parse_lines(text, paths)
        for mine, theirs in zip(got, one):
            mine.update(theirs)
        return one.dumps, one.errors

    remote = [(ref, osds) for ref, osds in by_host.items() if ref.address is not None]
    argvs = [ref.argv(["python3", "-c", SCRIPT, what, *words(osds)], ssh) for ref, osds in remote]
    most = max((len(osds) for _, osds in remote), default=0)
    here = [n for ref, osds in by_host.items() if ref.address is None for n in osds]
    with ThreadPoolExecutor(max_workers=1) as pool:
        # the ssh readings wait in a thread; this machine's in this one, where a Ctrl-C interrupts them at once
        answers = pool.submit(run_all, host, argvs, TIMEOUT_S * (most + 2))
        if here:
            env = {k: v for k, v in {**os.environ, **host.env, **({"CEPH_CONF": conf} if conf else {})}.items()
                   if k not in host.unset_env}
            lines: list[str] = []
            local_reader()(what, words(here), lines.append, env)
            keep("\n".join(lines))
        for (ref, osds), res in zip(remote, answers.result()):
            d, e = keep(res.stdout)
            for n in osds:
                if n not in d and n not in e:
                    errors[n] = f"host {ref.where} did not answer ({res.error_text()})"
    return got
