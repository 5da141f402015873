"""Watching the hosts while a test runs: one WATCH_SH per host (over the run's shared ssh, or a local process for
this machine), streaming CPU, the OSDs' devices and the links Ceph uses, each to a raw file of the test.

What each host is told to follow comes from `ceph osd metadata` (hoststream.watch_targets): an OSD host its OSDs'
devices and front/back addresses; a client host (and this machine when the load comes from here) the route it
takes to the public network. This machine's CPU is read in-process (hostload.CpuSampler) all the same: its watch
adds the devices and links only.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.settings import SshSettings
from .hostload import load_from_stream, watch_argv
from ..hosts.local import LocalHost, stop_group
from ..core.names import safe_name
from ..hosts.remote import HostRef
from ..core.results import DeviceLoad, HostLoad, LinkLoad, ProcessCpu
from ..core.userfiles import read_output
from .hoststream import (NOT_WATCHED, UNMEASURED, WHAT_WATCHES, HostStream, WantedAddress, WantedDevice,
                         daemon_cpu, file_backed, loads, parse_stream, watch_targets)
from .proccpu import HERE, OVER_SSH


@dataclass(frozen=True)
class WatchPlan:
    host: HostRef
    role: str                       # "OSD host", "client"
    devices: list[WantedDevice] = field(default_factory=list)
    addresses: list[WantedAddress] = field(default_factory=list)   # Ceph's addresses on the host
    routes: list[WantedAddress] = field(default_factory=list)      # addresses the host reaches (a client)
    cpu: bool = True                # False: this machine, whose CPU the CpuSampler reads
    daemons: bool | None = None     # list its Ceph daemons (None: where its CPU is read; this machine's as an OSD host)

    def argv(self, ssh: SshSettings) -> list[str]:
        return self.host.argv(watch_argv([d.device for d in self.devices], [a.address for a in self.addresses],
                                         [a.address for a in self.routes],
                                         daemons=self.cpu if self.daemons is None else self.daemons), ssh)


@dataclass
class Watcher:
    plan: WatchPlan
    proc: subprocess.Popen
    path: Path


@dataclass
class Watched:
    hosts: list[HostLoad] = field(default_factory=list)
    devices: list[DeviceLoad] = field(default_factory=list)
    links: list[LinkLoad] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # this machine's Ceph daemons when it is an OSD host (the one-host lab), for the CpuSampler's load: with their
    # command lines, since the machine may run another cluster's too (the run keeps those of its own conf)
    here_daemons: list[tuple[ProcessCpu, str]] = field(default_factory=list)


def plans(metadata: Any, osd_hosts: list[HostRef], clients: list[HostRef], here: HostRef | None,
          here_is_client: bool) -> list[WatchPlan]:
    """Who is watched and for what: every OSD host; every client host of the test; this machine (`here`, when it
    is not an OSD host itself: its CPU is read in-process) for its route to the cluster when the load comes from
    it. `osd_hosts` with address None are this machine."""
    targets = watch_targets(metadata)
    public = next((a.address for _, addrs in targets.values() for a in addrs if a.network == "public"), None)
    route = [WantedAddress(public, "public")] if public else []
    out, seen = [], set()
    for h in osd_hosts:
        devs, addrs = targets.get(h.name, ([], []))
        local = h.address is None
        out.append(WatchPlan(h, "OSD host", devs, addrs, route if local and here_is_client else [], cpu=not local,
                             daemons=True))
        seen.add(h.name)
    for c in clients:
        if c.name not in seen:
            out.append(WatchPlan(c, "client", routes=route))
            seen.add(c.name)
    if here is not None and here_is_client and here.name not in seen and not any(h.address is None for h in osd_hosts):
        out.append(WatchPlan(here, "client", routes=route, cpu=False))
    return out


def start(local: LocalHost, plans_: list[WatchPlan], ssh: SshSettings, raw: Path) -> list[Watcher]:
    """Start every plan's watch, held by its standard input (`stop`); its stream goes to
    raw/host-<name>-watch.txt."""
    return [Watcher(p, local.start(p.argv(ssh), stdout_path=path, held=True), path)
            for p in plans_ for path in [raw / f"host-{safe_name(p.host.name)}-watch.txt"]]


STOP_GRACE_S = 1.0      # a watch told to stop takes its last reading and ends in milliseconds, over ssh too


def stop(watchers: list[Watcher]) -> None:
    """Every watch told to end at once ("stop" on its input: it takes a last reading, WATCH_SH), then given
    STOP_GRACE_S in all to do so; one that has not ended by then (its remote shell gave it no input) is killed with
    its process group."""
    for w in watchers:
        if w.proc.stdin is not None:
            with contextlib.suppress(OSError):
                w.proc.stdin.write(b"stop\n")
                w.proc.stdin.flush()
            with contextlib.suppress(OSError):
                w.proc.stdin.close()
    deadline = time.monotonic() + STOP_GRACE_S
    for w in watchers:
        with contextlib.suppress(subprocess.TimeoutExpired):
            w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        stop_group(w.proc)


def not_watched(host: str, text: str, stream: HostStream) -> str | None:
    """A note when a remote host's watch gave nothing (ssh refused, name unknown: a toolbox with a ceph.conf and a
    key only), naming why and the settings that would measure it; None when it streamed."""
    if stream.disks or stream.nets or stream.ifaces:
        return None
    why = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "its watch printed nothing")
    return f"{host}: {NOT_WATCHED} ({why[:200]}): {UNMEASURED}; {WHAT_WATCHES}"


def collect(watchers: list[Watcher], metadata: Any) -> Watched:
    """After the watchers were stopped: each host's CPU, devices and links, and a note for what was not measured."""
    out = Watched()
    missed: set[str] = set()
    for w in watchers:
        text = read_output(w.path) if os.path.lexists(w.path) else ""
        stream = parse_stream(text)
        if not w.plan.cpu and w.plan.daemons:
            out.here_daemons += [(p, stream.daemons.get(p.pid or 0, "")) for p in daemon_cpu(w.plan.host.name, stream, HERE)]
        if w.plan.cpu:
            load = load_from_stream(text, w.plan.host.name, w.plan.role)
            if load is not None:
                # its Ceph daemons over the same rounds: whose its CPU time was (analysis/cpusplit.py)
                load.processes = daemon_cpu(w.plan.host.name, stream,
                                            OVER_SSH if w.plan.host.address is not None else HERE)
                out.hosts.append(load)
        unreached = not_watched(w.plan.host.name, text, stream) if w.plan.host.address is not None else None
        if unreached is not None:
            out.notes.append(unreached)
            missed.add(w.plan.host.name)
            continue
        devs, links, notes = loads(w.plan.host.name, stream, w.plan.devices, w.plan.addresses + w.plan.routes)
        for fig in [*devs, *links]:
            fig.source, fig.resolution_s = ("here" if w.plan.host.address is None else "ssh"), 1.0
        out.devices += devs
        out.links += links
        out.notes += notes
    watched = {w.plan.host.name for w in watchers} - missed
    out.notes += [f"osd.{osd} on {host}: a file on {disk}, whose figures include the disk's other I/O" if disk
                  else f"osd.{osd} on {host}: no block device named, so none was read in /proc/diskstats"
                  for host, osd, disk in file_backed(metadata) if host in watched]
    return out
