"""Each OSD's counters (and, at a run's first reading, its settings and counter schema) at a test's start and end:
through its admin socket where this machine or ssh reaches it (asok.py; where the socket is, sockpaths.py: the
cluster's config, the host's ceph.conf, cephadm's /var/run/ceph/<fsid>/, Ceph's default), else `ceph tell osd.N`
over the run's librados connection.

The admin socket is not reachable when there is no ssh to the OSD's host, or when the socket lives where none of
its candidates is: inside a pod (Rook) or a chroot (a lab root of another release). `ceph tell` reaches every OSD
that is up, through the monitors' map, since Octopus; it costs a few milliseconds per OSD (the OSD answers over the
messenger the client already holds), so an OSD whose socket could not be read once is asked this way from then on,
without an ssh attempt per reading. Every `ceph tell` reading waits at most the run's --connect-timeout, all OSDs
asked at once.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping

from ..core.settings import SshSettings
from ..hosts.local import LocalHost
from ..hosts.remote import HostRef
from .asok import Readings, read_all
from .sockpaths import candidates, layout

ADMIN_SOCKET = "admin socket"
CEPH_TELL = "ceph tell"
AHEAD = "read from Prometheus after the test"     # an OSD whose counters a source ahead of `ceph tell` holds

# (osd, prefix, timeout_s) -> the OSD's JSON answer, parsed; raises when it refuses or does not answer
Tell = Callable[[int, str, float], Any]
# osd -> the options the cluster's config sets for it, by name (sockpaths.options_set); raises when it will not say
OsdConfig = Callable[[int], Mapping[str, str]]


def tell_all(tell: Tell, osds: list[int], describe: Collection[int], timeout_s: float) -> Readings:
    """Every OSD's `perf dump` (and of those in `describe` their `config show` and `perf schema`) through `ceph
    tell`, all at once, within timeout_s in all."""
    got = Readings({}, {}, {}, {}, {})
    if not osds:
        return got
    deadline = time.monotonic() + timeout_s

    def one(n: int) -> None:
        left = lambda: max(0.5, deadline - time.monotonic())  # noqa: E731
        doc = tell(n, "perf dump", left())
        if not isinstance(doc, dict):
            raise ValueError("its answer to perf dump is not a JSON object")
        got.dumps[n] = doc
        if n in describe:
            for prefix, into in (("config show", got.config), ("perf schema", got.schema)):
                try:
                    answer = tell(n, prefix, left())
                except Exception:  # noqa: BLE001 - the counters still count without it
                    continue
                if isinstance(answer, dict):
                    into[n] = answer

    pool = ThreadPoolExecutor(max_workers=min(8, len(osds)), thread_name_prefix="cephbench-tell")
    try:
        futures = {pool.submit(one, n): n for n in osds}
        wait(futures, timeout=timeout_s + 1)
        for f, n in futures.items():
            if not f.done():
                got.errors[n] = f"no answer to ceph tell in {timeout_s:.0f} s"
            elif f.exception() is not None:
                got.errors[n] = f"ceph tell: {f.exception()}"
    finally:
        pool.shutdown(wait=False, cancel_futures=True)     # each call left running is bounded by librados
    for n in got.errors:
        got.dumps.pop(n, None)
    return got


@dataclass
class OsdReading:
    dumps: dict[int, dict[str, Any]]
    errors: dict[int, str]          # osd -> why it could not be read, by either way
    sources: dict[int, str]         # osd -> CEPH_TELL, or ADMIN_SOCKET with where it was found: which gave its counters
    stats: dict[int, str] = field(default_factory=dict)    # osd -> its /proc/PID/stat line (asok.Readings.stats)


@dataclass
class OsdReader:
    """A run's readings of its OSDs: what earlier readings learned (socket paths, which OSDs only `ceph tell`
    reaches, each OSD's settings and schema) is kept for the next."""

    host: LocalHost
    ssh: SshSettings
    conf: str | None
    tell: Tell | None               # None: a cluster this run may not `ceph tell`
    timeout_s: float
    paths: dict[int, str] = field(default_factory=dict)     # osd -> its admin socket, once looked up
    told: set[int] = field(default_factory=set)             # OSDs whose admin socket could not be read
    config: dict[int, dict[str, Any]] | None = None         # osd -> its `config show`, from the first reading
    schema: dict[int, dict[str, Any]] = field(default_factory=dict)    # osd -> its `perf schema`
    described: set[int] = field(default_factory=set)        # OSDs that gave their settings and schema
    fsid: str | None = None         # the cluster's: cephadm's socket directory is named by it
    osd_config: OsdConfig | None = None     # None: the cluster's config is not asked where a socket is
    set_for: dict[int, Mapping[str, str]] = field(default_factory=dict)    # osd -> its options the cluster sets
    layouts: dict[int, str] = field(default_factory=dict)   # osd -> where its socket was found (sockpaths' names)
    # osds -> those a source ahead of `ceph tell` in the order (sources.py: ceph-exporter) holds the counters of:
    # asked once for an OSD whose socket could not be read, which is then read after the test, not told
    ahead: Callable[[list[int]], set[int]] | None = None
    elsewhere: set[int] = field(default_factory=set)        # OSDs read after the test by a source ahead of tell
    asked_ahead: set[int] = field(default_factory=set)

    def _candidates(self, osds: list[int]) -> dict[int, list[str]]:
        """The paths to try for each OSD whose socket is not found yet, the cluster's config asked once per OSD."""
        out = {}
        for n in osds:
            if n in self.paths:
                continue
            if n not in self.set_for:
                try:
                    self.set_for[n] = self.osd_config(n) if self.osd_config is not None else {}
                except Exception:  # noqa: BLE001 - a key that may not read config: the other places remain
                    self.set_for[n] = {}
            out[n] = candidates(n, self.fsid, self.set_for[n])
        return out

    def read(self, by_host: dict[HostRef, list[int]]) -> OsdReading:
        first = self.config is None
        asked = {ref: [n for n in osds if n not in self.told] for ref, osds in by_host.items()}
        got = read_all(self.host, {r: o for r, o in asked.items() if o}, self.ssh, self.conf,
                       with_config=first, paths=self.paths,
                       candidates=self._candidates([n for osds in asked.values() for n in osds]))
        for n in got.dumps:
            if n not in self.layouts and n in self.set_for and n in self.paths:
                self.layouts[n] = layout(self.paths[n], n, self.fsid, self.set_for[n])
        sources = {n: f"{ADMIN_SOCKET}, {self.layouts[n]}" if n in self.layouts else ADMIN_SOCKET for n in got.dumps}
        errors = dict(got.errors)
        if first:
            self.described.update(got.dumps)
        rest = sorted({n for osds in by_host.values() for n in osds} - set(got.dumps))
        if rest and self.ahead is not None and (new := [n for n in rest if n not in self.asked_ahead]):
            self.asked_ahead.update(new)
            self.elsewhere |= self.ahead(new) & set(new)
        for n in set(rest) & self.elsewhere:
            errors[n] = f"{errors[n]}; {AHEAD}" if n in errors else AHEAD
        rest = [n for n in rest if n not in self.elsewhere]
        if rest and self.tell is not None:
            self.told.update(rest)
            # an OSD that has not given its settings (read through `ceph tell` from a later reading on, or down
            # until then) is asked them with its counters
            describe = set(rest) - self.described
            by_tell = tell_all(self.tell, rest, describe, self.timeout_s)
            for n in by_tell.dumps:
                errors.pop(n, None)
                sources[n] = CEPH_TELL
            for n, why in by_tell.errors.items():
                errors[n] = f"{errors[n]}; {why}" if n in errors else why
            for mine, theirs in zip(got, by_tell):
                mine.update(theirs)
            self.described.update(describe & set(by_tell.dumps))
        self.config = {**(self.config or {}), **got.config}
        self.schema.update(got.schema)
        return OsdReading(got.dumps, errors, sources, got.stats)
