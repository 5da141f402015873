"""What a driver gets from the runner (DriverContext, made from the run's RunContext) and gives back (Outcome).

The runner knows no tool: it hands a driver the tests of one group and records
each Outcome the driver yields, the moment it is yielded.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import shlex
import time
from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence, TypeVar

from ..cluster.ceph import Cluster, Target
from ..core.userfiles import write_file
from ..core.settings import Settings
from ..core.errors import OperationFailed, UserError
from ..cluster import marker
from ..evidence.clusterwatch import DEFAULT_RATE_WINDOW_S, ClusterWatch
from ..core.interrupts import held
from ..core.poll import Poll
from ..evidence.hostload import CpuSampler
from ..core.names import safe_name  # noqa: F401  (the drivers' import of it)
from ..evidence import watch as hostwatch
from ..evidence.hoststream import of_conf
from ..evidence.prometheus import Prometheus, in_place_of_watch
from ..evidence.source import CEPH_TELL, Ask, Reach, What
from ..evidence.sources import window_sources
from ..kinds import KINDS, direction_of
from ..hosts.fanout import Placement, TimedResult, run_started_together
from ..hosts.local import CommandResult, LocalHost, Spawn, run_together
from ..evidence.osdread import OsdReader, OsdReading
from ..evidence.sockpaths import options_set
from ..evidence.counters import osd_evidence
from ..evidence.otherload import OtherLoadSampler
from ..evidence.proccpu import RemoteCpu, ToolCpu, clients_cpu, test_cpu, unread_osds, with_osd_cpu
from ..evidence.rounds import ClusterSeen, Seen
from ..evidence.settings import capping_settings
from ..hosts.remote import HostRef, drop_caches_argv, host_ref, run_on_all, this_host
from ..cluster.osd_hosts import osd_hosts
from ..cluster.recovery import process_resource, process_start_ticks, stop_process_group
from ..core.resources import Ledger, Resource
from ..core.results import Evidence, Measurement, RunDir, SearchStop, Test
from ..cluster.safety import CapacityBudget, Freeing, UnseenWrites, drop_caches_local, settle_seconds

log = logging.getLogger(__name__)
R = TypeVar("R")


@dataclass
class Outcome:
    test: Test
    started_unix: float
    duration_s: float
    measurement: Measurement | None = None
    error: str | None = None
    skipped: bool = False
    commands: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)   # the figure is not a capability of the cluster: see Result
    seen: Seen | None = None        # what its tool run saw (drivers/instances.py); in rounds, the window's
    search_stop: SearchStop | None = None   # a search's last step: why it stopped (drivers/search.py)


class Events(Protocol):
    """What the runner tells whoever shows progress (cli/)."""

    def test_started(self, test: Test) -> None: ...
    def live(self, test: Test, bytes_per_s: float | None, ops_per_s: float | None) -> None: ...
    def note(self, text: str) -> None: ...


class QuietEvents:
    def test_started(self, test: Test) -> None:
        pass

    def live(self, test: Test, bytes_per_s: float | None, ops_per_s: float | None) -> None:
        pass

    def note(self, text: str) -> None:
        log.info("%s", text)


# The tools' run under a watch: run(tick, started), where tick() is called once a second (True stops the tools)
# and started(pids) as they start
ToolsRun = Callable[[Callable[[], bool], Callable[[list[int]], None]], Any]
# A baseline's tools under the run's watch (RunContext.run_baseline_tools): its tests, the hosts it runs on; it
# returns what the tools returned and what was watched (the hosts' CPU), which the baseline puts on its Outcomes
BaselineWatch = Callable[[Sequence[Test], Sequence[HostRef], ToolsRun], tuple[Any, Seen]]


@dataclass
class OsdFacts:
    """What the run learned of the OSDs, each at its first need and kept for the run."""
    hosts: list[HostRef] | None = None                  # every OSD host
    ids: dict[HostRef, list[int]] | None = None         # each OSD host's OSDs
    meta: list[dict[str, Any]] | None = None            # `ceph osd metadata`
    reader: OsdReader | None = None                     # what the OSDs' readings learned so far
    mgr_services: dict[str, str] | None = None          # `ceph mgr services`: whose the mgr module's series are


@dataclass
class ClientHosts:
    """The suite's client hosts as the run reached them."""
    hosts: list[Any] = field(default_factory=list)             # clients.Client, in order
    offsets_ns: dict[str, int] = field(default_factory=dict)   # client -> its clock minus this machine's
    at_paths: dict[str, str] = field(default_factory=dict)     # client -> cephbench-loadgen there (the start barrier)
    load_here: bool = True      # some test's load comes from this machine (not every one from client hosts)


_ROUND_DIR = re.compile(r"round[0-9]+")     # drivers/rounds.py: a round's raw directory

@dataclass
class Reservation:
    """The capacity guard's own state: this run's writes `ceph df` may not count yet, and the write in progress."""
    unseen: UnseenWrites | None = None
    # raw bytes reserved, df's used when reserved, the pools written to (when named: UnseenWrites) and their used
    writing: tuple[int, int, tuple[str, ...], int] = (0, 0, (), 0)
    # the raw use (a share of the cluster's raw bytes) the reserved write may take the cluster to: what was used and
    # counted when it was reserved (others' reservations, this run's unseen writes) and the reservation; None: none
    writing_until: float | None = None


@dataclass
class MarkerState:
    """What the run's marker on the cluster says of it (marker.value), which other runs read."""
    options: tuple[tuple[str, str], ...] = ()   # (who, name) the run's variants change
    scrub_flags: tuple[str, ...] = ()           # the scrub flags the run holds (safety.ScrubFlags)
    scrub_letting_go: tuple[str, ...] = ()      # ... and those its end let go of
    pool_delete: tuple[str | None, ...] = ()    # (value to put back,) while it holds mon_allow_pool_delete
    reserved_raw_bytes: int = 0                 # what its write may still add
    unseen: tuple[int, float] = (0, 0.0)        # what its last writes added that df may not count: (bytes, until unix)
    written: bool = False       # write_marker has set the run's marker (whatever became of mark_run's send)


@dataclass
class RunContext:
    """The runner's object: the run's state and the machinery behind what a driver is given (DriverContext, made
    by `for_driver`): the marker it shares with other runs, the client hosts as set up, the OSD facts learned, the
    capacity reservation. Only the run's own modules (run/) change these."""

    cluster: Cluster
    run_id: str
    rundir: RunDir | None          # None in a dry run
    ledger: Ledger
    settings: Settings
    events: Events = field(default_factory=QuietEvents)
    host: LocalHost = field(default_factory=LocalHost)
    dry_run: bool = False
    planned: list[str] = field(default_factory=list)   # dry run: the commands that would change the cluster
    restart_lab_osds: Callable[[], None] | None = None
    osds: OsdFacts = field(default_factory=OsdFacts, repr=False)
    client_hosts: ClientHosts = field(default_factory=ClientHosts)
    reservation: Reservation = field(default_factory=Reservation, repr=False)
    # object size -> the most objects per second a rados bench seq read per one its write made. The one run-wide
    # state a driver writes: rados bench learns it in one group and sizes the top-up before a later group's seq of
    # the same size by it (drivers/rados_bench.py, seq_ratio). Each group is its own run_group call, so it lives
    # with the run; nothing else reads it, nor is it written to run.json.
    seq_ratios: dict[int, float] = field(default_factory=dict)
    started_unix: float = field(default_factory=time.time)
    marker_state: MarkerState = field(default_factory=MarkerState)
    has_cluster: bool = True        # False: `cephbench baseline`, on a machine that may have no Ceph at all

    @property
    def target(self) -> Target:
        return self.cluster.target

    def for_driver(self) -> DriverContext:
        """What a driver is given of this run."""
        return DriverContext(self)

    def name(self, *parts: str) -> str:
        """Every cluster object cephbench creates is named cephbench-<run-id>-..."""
        return "-".join(("cephbench", self.run_id, *parts))

    def budget(self) -> CapacityBudget:
        """Room left under settings.max_raw_used, counting what other runs in progress on the cluster have
        reserved for their writes (their markers) as if already written, and this run's own writes that
        `ceph df` does not count yet."""
        return self._budget()[0]

    def _budget(self) -> tuple[CapacityBudget, dict[str, int]]:
        """budget, and each pool's raw used as the same `ceph df` says."""
        total, used, pools_used = self.cluster.raw_usage()
        others = 0
        if not self.dry_run:
            try:
                others = marker.reserved_by_others(marker.read_runs(self.cluster), self.run_id)
            except (OperationFailed, UserError) as exc:
                log.warning("other runs' reservations unknown (config-key dump): %s", exc)
        unseen = (self.reservation.unseen.pending(used, time.monotonic(), pools_used)
                  if self.reservation.unseen is not None else 0)
        return CapacityBudget(total, used + others + unseen, self.settings.max_raw_used, reserved_by_others=others,
                              unseen=unseen), pools_used

    def _unseen_writes(self) -> UnseenWrites:
        if self.reservation.unseen is None:
            period = 5.0                # Ceph's default
            try:
                got = self.cluster.ceph_json("config", "get", "mgr", "mgr_stats_period")
                period = float(got if not isinstance(got, dict) else got.get("mgr_stats_period", period))
            except (OperationFailed, UserError, TypeError, ValueError) as exc:
                log.debug("mgr_stats_period unknown, taken as %g s: %s", period, exc)
            self.reservation.unseen = UnseenWrites(settle_seconds(period))
        return self.reservation.unseen

    def reserve_write(self, amplification: float, wanted: int = 0, pools: Sequence[str] = ()
                      ) -> tuple[int, CapacityBudget]:
        """Client bytes the next write may add, reserved in the run's marker. With `wanted` (the least the write
        needs) and less room than that, wait while the cluster is still freeing space (a pool just removed:
        cluster/safety.py Freeing) before saying how much there is. `pools`: the pools it writes to, whose own
        growth says when `ceph df` counts it (UnseenWrites)."""
        granted, budget = self._reserve_write(amplification, pools)
        if wanted <= granted or self.dry_run:
            return granted, budget
        freeing = Freeing(quiet_s=max(self._unseen_writes().settle_s, 3.0))
        t0 = time.monotonic()
        while freeing.goes_on(budget.used_raw - budget.reserved_by_others - budget.unseen, time.monotonic()):
            time.sleep(1.0)
            granted, budget = self._reserve_write(amplification, pools)
            if granted >= wanted:
                break
        return granted, replace(budget, waited_s=time.monotonic() - t0)

    def _reserve_write(self, amplification: float, pools: Sequence[str]) -> tuple[int, CapacityBudget]:
        """Runs that start together both reserve, then both look again: if the reservations together pass the
        limit, each shrinks to what is left beside the others' (never more than alone: two runs cannot overfill
        the cluster between them)."""
        settle = self._unseen_writes().settle_s
        budget, pools_used = self._budget()
        granted = budget.client_bytes(amplification)
        self.reserve(int(granted * amplification), unseen=(budget.unseen, time.time() + settle))
        again = self.budget()
        if again.reserved_by_others > budget.reserved_by_others:
            granted = min(granted, again.client_bytes(amplification))
            self.reserve(int(granted * amplification), unseen=(again.unseen, time.time() + settle))
            budget = again
        # a pool `ceph df` does not list yet (made just now) has used nothing
        self.reservation.writing = (int(granted * amplification),
                                    budget.used_raw - budget.reserved_by_others - budget.unseen, tuple(pools),
                                    sum(pools_used.get(p, 0) for p in pools))
        self.reservation.writing_until = ((budget.used_raw + int(granted * amplification)) / budget.total_raw
                                          if budget.total_raw > 0 else None)
        return granted, budget

    def write_ended(self, written_raw: int | None = None) -> None:
        """The reserved write is over. Until the mgr has reported it, this run counts it as unseen, and its
        marker tells other runs to count it too for as long: the raw bytes the tool said it wrote, else what was
        reserved (an upper bound: the count may only err on the safe side)."""
        raw, used_before, pools, pools_before = self.reservation.writing
        if written_raw is not None:
            raw = min(raw, max(0, written_raw))
        self.reservation.writing = (0, 0, (), 0)
        self.reservation.writing_until = None
        unseen = self.reservation.unseen
        settle = unseen.settle_s if unseen is not None else 0.0
        self.reserve(0, unseen=(raw, time.time() + settle))
        if unseen is not None:
            unseen.add(raw, used_before, time.monotonic(), pools, pools_before)

    def reserve(self, raw_bytes: int, unseen: tuple[int, float] = (0, 0.0)) -> None:
        """Say in the run's marker how many raw bytes its write may still add, and what its last writes added
        that `ceph df` may not count yet (bytes, until when). Other runs' capacity guards subtract both."""
        self.marker_state.reserved_raw_bytes = raw_bytes
        self.marker_state.unseen = unseen
        self.write_marker()

    def marker_value(self) -> str:
        m = self.marker_state
        return marker.value(str(self.rundir.path.absolute()) if self.rundir else None, self.started_unix,
                            m.reserved_raw_bytes, *m.unseen, options=m.options, scrub_flags=m.scrub_flags,
                            scrub_letting_go=m.scrub_letting_go, pool_delete=m.pool_delete,
                            pid_started=process_start_ticks(os.getpid()))

    def write_marker(self) -> None:
        """The run's marker as it is now (its reservation and options), waited for: other runs read it next."""
        if self.dry_run:
            return
        try:
            with held():
                self.cluster.ceph_ok("config-key", "set", marker.key(self.run_id), self.marker_value())
            self.marker_state.written = True
        except (OperationFailed, UserError) as exc:   # refused: other runs then do not see this one's writes
            log.warning("run marker not shared with other runs (config-key set): %s", exc)

    def change(self, argv: Sequence[str], action: Callable[[], Any]) -> Any:
        """Run a cluster-changing action, or in a dry run only record its command."""
        if self.dry_run:
            self.planned.append(" ".join(str(a) for a in argv))
            return None
        return action()

    def run_tools_seen(self, test: Test, spawns: list[Spawn], timeout_s: float,
                       live: Callable[[list[Path]], Figures] | None = None, hold: bool = False,
                       ) -> tuple[list[CommandResult], Seen] | None:
        """Run tool processes together (None in a dry run), reporting live figures once a second; what was watched
        meanwhile is returned beside the results. `hold`: tools run with --hold, released together once all are
        set up (hosts/local.run_together)."""
        if self.dry_run:
            self.planned.extend(" ".join(str(a) for a in sp.argv) for sp in spawns)
            return None

        tools = ToolCpu()       # this machine's tools: their CPU per op
        return self._watched(test, [sp.output for sp in spawns], live, [], lambda tick, started: run_together(
            spawns, timeout_s, tick=tick, started=tools.then(started),
            ended=tools.ended, hold=hold), tools)

    def run_on_clients_seen(self, test: Test, placements: list[Placement], timeout_s: float,
                            live: Callable[[list[Path]], Figures] | None = None, hold: bool = False,
                            ) -> tuple[list[TimedResult], Seen] | None:
        """Run tool processes on the suite's client hosts, started at one instant (fanout: ready, then go), and
        watched as run_tools_seen watches them, the client hosts' CPU too; what was watched is returned beside the
        results. `hold`: tools run with --hold, released together once all are set up (fanout). None in a dry
        run."""
        if self.dry_run:
            self.planned.extend(f"on {pl.host.name}: " + " ".join(str(a) for a in pl.spawn.argv)
                                for pl in placements)
            return None
        clients = list({pl.host.name: pl.host for pl in placements if pl.host.address is not None}.values())
        return self._watched(test, [pl.spawn.output for pl in placements], live, clients,
                             lambda tick, started: run_started_together(
                                 self.host, placements, self.settings.ssh, self.client_hosts.at_paths, timeout_s,
                                 tick=tick, started=started, hold=hold),
                             remote_cpu=clients_cpu)

    def placements(self, spawns: list[tuple[Any, Spawn]]) -> list[Placement]:
        """(client, spawn) pairs -> placements with each client's measured clock offset."""
        return self.placements_on([(c.ref, sp) for c, sp in spawns])

    def placements_on(self, spawns: Sequence[tuple[HostRef, Spawn]]) -> list[Placement]:
        """(host, spawn) pairs -> placements with each host's measured clock offset."""
        return [Placement(sp, ref, self.clock_offset_ns(ref.name)) for ref, sp in spawns]

    def clock_offset_ns(self, host: str) -> int:
        """A client host's clock minus this machine's, as measured when it was set up (none measured: 0)."""
        return self.client_hosts.offsets_ns.get(host, 0)

    def loadgen_on(self, host: str) -> str | None:
        """Where cephbench-loadgen was copied on a client host; None where it was not."""
        return self.client_hosts.at_paths.get(host)

    def at_paths_on(self, refs: Sequence[HostRef]) -> dict[str, str]:
        """cephbench-loadgen (whose `at` is the start barrier) on each of these hosts: copied through the ledger
        where missing (as to clients), each host's clock offset measured once; host name -> its path there."""
        from ..hosts.clients import Client, deploy_loadgen, measure_clock
        from .rgw.binary import find_loadgen
        at_paths, offsets = self.client_hosts.at_paths, self.client_hosts.offsets_ns
        missing = list({r.name: r for r in refs if r.name not in at_paths}.values())
        if missing:
            paths, _ = deploy_loadgen(self.host, [Client(r.name, r, "baseline.network.hosts") for r in missing],
                                      self.settings.ssh, self.ledger, Path(find_loadgen()), self.run_id)
            at_paths.update(paths)
            for r in missing:
                if r.address is not None and r.name not in offsets:
                    offsets[r.name] = measure_clock(self.host, r, self.settings.ssh).offset_ns
        return {r.name: at_paths[r.name] for r in refs}

    def clients_of(self, test: Test) -> list[Any]:
        """The client hosts (clients.Client) a test's load comes from; none: this machine."""
        from ..hosts.clients import clients_of
        return clients_of(test.params.get("clients"), self.client_hosts.hosts)

    def clients_of_group(self, group: list[Test]) -> list[Any]:
        """Every client host a group's tests run on: its largest step's, when it searches them (`clients: auto`),
        for whose images or objects the group makes room once."""
        return max((self.clients_of(t) for t in group), key=len)

    def _watched(self, test: Test, outputs: list[Path], live: Callable[[list[Path]], Figures] | None,
                 clients: list[HostRef], run: Callable[[Callable[[], bool], Callable[[list[int]], None]], R],
                 tools: ToolCpu | None = None,
                 remote_cpu: Callable[[R], RemoteCpu | None] | None = None) -> tuple[R, Seen]:
        """`run(tick, started)` with this host, the OSD hosts and the load's client hosts watched (CPU, the OSDs'
        devices, the links Ceph uses), Ceph's counters read at the start and the end, other clients' I/O sampled,
        the cluster watched (it may stop the tools), and live figures reported once a second."""
        hosts = self._all_osd_hosts()
        role = "controller" if clients else "client"
        cpu = CpuSampler(role=f"{role} and OSD host" if any(h.address is None for h in hosts) else role)
        raw = self._evidence_dir(test, outputs)
        watchers = self._watch(raw, hosts, clients)
        # recorded now: once a watcher has ended, its start time (part of the tag) can no longer be read
        watcher_res = self._record_processes([w.proc.pid for w in watchers])
        # polled: a monitor that does not answer must not hold up the tools' loop (core/poll.py)
        writing = direction_of(test.kind, test.params.phase) in ("write", "mixed")
        # the capacity guard's rate spans the cluster's stats periods (mgr_stats_period, read once a run): `ceph df`
        # counts writes in lumps, and one lump is not a second's rise
        # a kind the guard cuts (capacity_cut) stops by itself at the write it reserved, within the limit
        bounded = self.reservation.writing_until if getattr(KINDS.get(test.kind), "capacity_cut", False) else None
        watch = ClusterWatch(Poll(self.cluster.status), self.settings.max_raw_used, writing=writing,
                             conf=self.target.conf,
                             rate_window_s=self._unseen_writes().settle_s if writing else DEFAULT_RATE_WINDOW_S,
                             bounded_until=bounded if writing else None)
        others = (OtherLoadSampler(self.cluster, self.name() + "-", through_rgw=getattr(KINDS.get(test.kind), "layout", None) == "rgw")
                  if self.settings.other_load else None)

        def tick() -> bool:
            cpu.sample()
            if tools is not None:
                tools.sample()
            watch.sample()
            if others is not None:
                others.sample()
            if live:
                bw, ops = live(outputs)
                self.events.live(test, bw, ops)
            return watch.stop_reason is not None

        osds = self._osds_by_host() if self.settings.osd_counters else {}
        before = self._read_counters(osds) if osds else None
        window = [time.time(), 0.0]     # the tools' own, as the watchers saw them (stopped with the tools)
        try:
            results = self._tools_run(run, tick, watchers, watcher_res)
        finally:
            window[1] = time.time()
            watch.finish()
        seen = hostwatch.collect(watchers, self.osd_metadata())
        if self.settings.prometheus:
            self._from_prometheus(seen, [h.name for h in hosts], *window)
        hosts_seen = [load for load in [cpu.summary(), *seen.hosts] if load is not None]
        if hosts_seen and hosts_seen[0].host == cpu.host and seen.here_daemons:
            # this machine is an OSD host (the one-host lab): its daemons of the run's cluster, whose CPU is its own
            conf = str(self.target.conf) if self.target.conf else None
            hosts_seen[0].processes = [p for p, cmdline in seen.here_daemons if of_conf(cmdline, conf)]
        evidence = Evidence(devices=seen.devices, links=seen.links, notes=list(seen.notes))
        if osds and before is not None:
            after = self._read_counters(osds)
            window_notes = self._counters_from_window(before, after, osds, *window) if self.settings.prometheus \
                else []
            reader = self._reader()
            self._keep_raw(raw, "osd-perf-dump-start.json.gz", before.dumps)
            self._keep_raw(raw, "osd-perf-dump-end.json.gz", after.dumps)
            counted = osd_evidence((before.dumps, before.errors), (after.dumps, after.errors),
                                   {n: ref.name for ref, ns in osds.items() for n in ns}, reader.schema,
                                   {**before.sources, **after.sources})
            evidence.osds, evidence.notes = counted.osds, counted.notes + window_notes + evidence.notes
            evidence.cpu, cpu_notes = test_cpu(before.stats, after.stats, counted.osds, osds, tools, cpu.host,
                                               remote_cpu(results) if remote_cpu is not None else None)
            if self.settings.prometheus and (unread := unread_osds(evidence.cpu, osds)):
                for src in window_sources(self._reach(), {What.OSD_CPU}):
                    found = src.read(self._ask(*window, cpu_osds=unread))
                    evidence.cpu, cpu_notes = with_osd_cpu(evidence.cpu, cpu_notes, found.cpu_s, counted.osds,
                                                           unread, next(iter(found.sources.values()), src.name))
                    cpu_notes += found.notes
                    unread = {n: h for n, h in unread.items() if n not in found.cpu_s}
            evidence.notes += cpu_notes
            self._keep_raw(raw, "osd-proc-stat.json.gz", {"start": before.stats, "end": after.stats})
            evidence.settings = {f"osd.{n}": capping_settings(cfg)
                                 for n, cfg in sorted((reader.config or {}).items())}
        if others is not None:
            evidence.other_load = others.result()
            evidence.notes += others.notes
        return results, Seen(hosts_seen, evidence, ClusterSeen(watch.summary(), watch.warnings(), watch.stop_reason,
                                                               watch.stopped_for_capacity))

    def _from_prometheus(self, seen: hostwatch.Watched, osd_hosts: list[str], start: float, end: float) -> None:
        """The OSD hosts' devices and links from the window sources (Prometheus' exporters: evidence/sources.py) over
        the tools' window, in place of what their watch saw (whose stream, when ssh watched them too, stays in
        raw/); other hosts' stay the watch's. An OSD host ssh did not watch (a toolbox): its CPU, and its daemons'."""
        here = {h.name for h in self._all_osd_hosts() if h.address is None}      # the CpuSampler's
        unwatched = [h for h in osd_hosts if h not in {x.host for x in seen.hosts} | here]
        ask = self._ask(start, end, hosts=osd_hosts, unwatched=unwatched)
        for src in window_sources(self._reach(), {What.DEVICES, What.LINKS, What.HOST_CPU, What.DAEMON_CPU}):
            found = src.read(ask)
            if found.devices is not None or found.links is not None:
                in_place_of_watch(seen, osd_hosts, found.devices or [], found.links or [], found.notes)
            else:
                seen.notes += found.notes
            seen.hosts += found.hosts
            for load in seen.hosts:
                load.processes = [*load.processes, *found.processes.get(load.host, [])]

    def _counters_from_window(self, before: OsdReading, after: OsdReading, osds: dict[HostRef, list[int]],
                              start: float, end: float) -> list[str]:
        """The counters of the OSDs neither reading gave (no socket reached, `ceph tell` refused, or left to a
        source ahead of it) from the window sources, in order, put into both readings; their notes."""
        unread = {n: ref.name for ref, ns in osds.items() for n in ns if n not in before.dumps or n not in after.dumps}
        notes: list[str] = []
        for src in window_sources(self._reach(), {What.OSD_COUNTERS}):
            if not unread:
                break
            found = src.read(self._ask(start, end, osds=unread))
            notes += found.notes
            for n, (first, last) in found.counters.items():
                before.dumps[n], after.dumps[n] = first, last
                before.errors.pop(n, None)
                after.errors.pop(n, None)
                before.sources[n] = after.sources[n] = found.sources.get(n, src.name)
                unread.pop(n, None)
        return notes

    def _counters_ahead(self, osds: list[int]) -> set[int]:
        """Of these OSDs (their sockets out of reach), those a window source ahead of `ceph tell` in the order holds
        the counters of now: they are read after each test, not told."""
        host_of = {n: ref.name for ref, ns in self._osds_by_host().items() for n in ns}
        now, got = time.time(), set()
        for src in window_sources(self._reach(), {What.OSD_COUNTERS}, before=CEPH_TELL):
            left = {n: host_of[n] for n in osds if n in host_of and n not in got}
            got |= set(src.read(self._ask(now, now, osds=left)).counters) if left else set()
        return got

    def _reach(self) -> Reach:
        return Reach(ssh=self.host.which("ssh") is not None and self.settings.watch_osd_hosts,
                     prometheus=self.settings.prometheus, cluster=self.has_cluster)

    def _ask(self, start: float, end: float, **what: Any) -> Ask:
        """What a window source is asked (settings.prometheus is set)."""
        assert self.settings.prometheus
        if self.osds.mgr_services is None:
            try:
                got = self.cluster.ceph_json("mgr", "services")
                self.osds.mgr_services = {str(k): str(v) for k, v in got.items()} if isinstance(got, dict) else {}
            except (OperationFailed, UserError) as exc:
                log.info("the mgr's services unknown (ceph mgr services): %s", exc)
                self.osds.mgr_services = {}
        return Ask(Prometheus(self.settings.prometheus), self.osd_metadata(), start, end,
                   mgr_services=self.osds.mgr_services, config=self._config_value, **what)

    def _config_value(self, who: str, name: str) -> str | None:
        """`ceph config get who name`; None when the cluster will not say."""
        try:
            got = self.cluster.ceph_json("config", "get", who, name)
        except (OperationFailed, UserError):
            return None
        return str(got.get(name) if isinstance(got, dict) else got)

    def _tools_run(self, run: Callable[[Callable[[], bool], Callable[[list[int]], None]], R],
                   tick: Callable[[], bool], watchers: list[hostwatch.Watcher], watcher_res: list[Resource]) -> R:
        """`run(tick, started)` with its tools in the ledger while they run (a kill -9 leaves their PIDs for
        `cephbench cleanup`), the watchers stopped after them."""
        tools: list[Resource] = []
        try:
            return run(tick, lambda pids: tools.extend(self._record_processes(pids)))
        finally:
            hostwatch.stop(watchers)
            for r in tools + watcher_res:
                self.ledger.forget(r)      # ended (or killed) by now: nothing of theirs is left

    def run_baseline_tools(self, tests: Sequence[Test], hosts: Sequence[HostRef],
                           run: Callable[[Callable[[], bool], Callable[[list[int]], None]], R]) -> tuple[R, Seen]:
        """A baseline's tools, `run(tick, started)`: their PIDs in the ledger, and the CPU of this machine and of
        each of `hosts` (over ssh) watched (their streams kept in `tests[0]`'s raw directory); what was watched is
        returned beside what `run` returned. The cluster is not read: a baseline measures the hardware, and
        `cephbench baseline` may run where no Ceph is configured."""
        cpu = CpuSampler(role="baseline host")
        remote = list({h.name: h for h in hosts if h.address is not None}.values())
        plans = [hostwatch.WatchPlan(h, "baseline host") for h in remote]
        watchers = hostwatch.start(self.host, plans, self.settings.ssh, self.rundir.raw_dir(tests[0].id)) \
            if self.rundir is not None and plans else []
        def tick() -> bool:
            cpu.sample()
            return False        # nothing stops a baseline but its own end
        results = self._tools_run(run, tick, watchers,
                                  self._record_processes([w.proc.pid for w in watchers]))
        loads = [load for load in [cpu.summary(), *hostwatch.collect(watchers, []).hosts] if load is not None]
        return results, Seen(hosts=loads, evidence=None)    # a baseline reads no cluster: no evidence, no watch

    def _evidence_dir(self, test: Test, outputs: list[Path]) -> Path | None:
        """Where one run of a test's tools keeps what was watched (the hosts' streams, the OSDs' counters): in the
        round's directory when its tools' output is in one (raw/<test>/round<n>/, a client's below it), else in the
        test's raw directory; one that holds an earlier run's already (a search step run again, a steady round whose output
        only a suffix tells apart) gets a directory of its own under it, run2/, run3/, ..., so none is written over.
        None without a run directory."""
        if self.rundir is None:
            return None
        base = self.rundir.raw_dir(test.id)
        # a round's directory, whatever lies below it (a client's outputs: raw/<test>/[roundN/]<client>/)
        rounds = {o.relative_to(base).parts[0] for o in outputs
                  if o.is_relative_to(base) and len(o.relative_to(base).parts) > 1}
        own = rounds.pop() if len(rounds) == 1 else None
        name = f"{test.id}/{own}" if own is not None and _ROUND_DIR.fullmatch(own) else test.id
        found, n = self.rundir.raw_dir(name), 1
        while (found / "osd-perf-dump-start.json.gz").exists() or any(found.glob("host-*-watch.txt")):
            n += 1
            found = self.rundir.raw_dir(f"{name}/run{n}")
        return found

    def _keep_raw(self, raw: Path | None, name: str, doc: Any) -> None:
        """A reading as it came, beside the tools' output (gzip: a perf dump is ~40 KB per OSD)."""
        if raw is not None and self.rundir is not None and doc:
            text = json.dumps(doc)      # whole: json.dump's many small writes through gzip cost ten times more
            write_file(raw / name, gzip.compress(text.encode(), mtime=0),
                       "give the run a directory of regular files you may write", within=self.rundir.path,
                       sync=False)

    def _reader(self) -> OsdReader:
        if self.osds.reader is None:
            fsid = None
            try:
                fsid = str(self.cluster.status().get("fsid") or "") or None
            except OperationFailed as exc:
                log.warning("the cluster's fsid unknown (ceph status): %s", exc)
            self.osds.reader = OsdReader(self.host, self.settings.ssh, str(self.target.conf),
                                         lambda n, prefix, t: self.cluster.tell_json(n, prefix, timeout_s=t),
                                         self.cluster.connect_timeout_s, fsid=fsid,
                                         osd_config=lambda n: options_set(self.cluster.ceph_json("config", "get",
                                                                                                 f"osd.{n}")),
                                         ahead=self._counters_ahead if self.settings.prometheus else None)
        return self.osds.reader

    def _read_counters(self, osds: dict[HostRef, list[int]]) -> OsdReading:
        """Every OSD's perf dump (through its admin socket, else `ceph tell`), and why one could not be read; the
        reader keeps each OSD's settings and schema from the run's first reading."""
        return self._reader().read(osds)

    def osd_metadata(self) -> list[dict[str, Any]]:
        """`ceph osd metadata`, once per run; a cluster that will not say gives none."""
        if self.osds.meta is None:
            try:
                meta = self.cluster.ceph_json("osd", "metadata")
                self.osds.meta = [m for m in meta if isinstance(m, dict)] if isinstance(meta, list) else []
            except OperationFailed as exc:
                log.warning("OSDs unknown (ceph osd metadata): %s", exc)
                self.osds.meta = []
        return self.osds.meta

    def _osds_by_host(self) -> dict[HostRef, list[int]]:
        """Each OSD host (reached as settings.ssh says) and its OSDs' ids, once per run."""
        if self.osds.ids is None:
            by_name: dict[str, list[int]] = {}
            for m in self.osd_metadata():
                if m.get("hostname") is not None and isinstance(m.get("id"), int):
                    by_name.setdefault(str(m["hostname"]), []).append(m["id"])
            self.osds.ids = {host_ref(name, self.settings.ssh): sorted(ids) for name, ids in sorted(by_name.items())}
        return self.osds.ids

    def record_process(self, pid: int) -> Callable[[], None]:
        """A process the run started (an iperf3 server) into the ledger by PID; returns what forgets it once it
        is stopped."""
        [r] = self._record_processes([pid])
        return lambda: self.ledger.forget(r)

    def _record_processes(self, pids: list[int]) -> list[Resource]:
        """Tool processes enter the ledger by PID and start time: a run killed with -9 leaves their record in
        resources.json, and `cephbench cleanup` stops exactly those processes."""
        out = []
        for pid in pids:
            r = self._process_resource(pid)
            self.ledger.add(r, lambda tag=r.name: stop_process_group(tag))
            out.append(r)
        return out

    @staticmethod
    def _process_resource(pid: int) -> Resource:
        return process_resource(pid)

    def _watch(self, raw: Path | None, hosts: list[HostRef], clients: list[HostRef]) -> list[hostwatch.Watcher]:
        """One watch per OSD host and client host (over ssh), and this machine's own (a local process) for its
        devices and links; their streams are kept as raw output, in `raw`."""
        if raw is None:
            return []
        remote_ok = self.host.which("ssh") is not None
        if not remote_ok and any(h.address is not None for h in hosts + clients):
            log.warning("ssh is not installed: OSD and client hosts are not watched")
        osd_hosts = [h for h in hosts if h.address is None or (remote_ok and self.settings.watch_osd_hosts)]
        plans = hostwatch.plans(self.osd_metadata(), osd_hosts, clients if remote_ok else [], this_host(),
                                here_is_client=not clients)
        return hostwatch.start(self.host, plans, self.settings.ssh, raw)

    def _all_osd_hosts(self) -> list[HostRef]:
        """Every host with an OSD, once per run; a cluster that will not say gives none."""
        if self.osds.hosts is None:
            try:
                self.osds.hosts = osd_hosts(self.cluster, self.settings.ssh)
            except OperationFailed as exc:
                log.warning("OSD hosts unknown (ceph osd metadata): %s", exc)
                self.osds.hosts = []
        return self.osds.hosts

    def prepare_reads(self) -> list[str]:
        """Drop caches (and restart lab OSDs when asked) before a read phase; returns notes."""
        notes = []
        if self.dry_run:
            if self.settings.drop_caches:
                self.planned.append("sync; echo 3 > /proc/sys/vm/drop_caches")
                self._drop_osd_host_caches()
            return notes
        if self.settings.cold_reads == "restart-lab-osds":
            if self.restart_lab_osds is None:
                notes.append("cold_reads restart-lab-osds ignored: the target is not a lab")
            else:
                self.restart_lab_osds()
                notes.append("lab OSDs restarted before the read: BlueStore caches were cold")
        if self.settings.drop_caches:
            why = drop_caches_local()
            if why:
                notes.append(why)
            notes += self._drop_osd_host_caches()
        return notes

    def _drop_osd_host_caches(self) -> list[str]:
        """The OSD hosts other than this one, over ssh, all at once; a host that fails is noted, not fatal."""
        remote = [h for h in self._all_osd_hosts() if h.address is not None]
        argvs = [drop_caches_argv(h, self.settings.ssh) for h in remote]
        if self.dry_run:
            self.planned.extend(shlex.join(a) for a in argvs)
            return []
        failures = run_on_all(self.host, argvs)
        done = [h.name for h, why in zip(remote, failures) if why is None]
        notes = [f"page cache not dropped on OSD host {h.name}: {why}"
                 for h, why in zip(remote, failures) if why is not None]
        if done:
            notes.append(f"page cache dropped over ssh on OSD host(s) {', '.join(done)}")
        return notes


def _through(name: str) -> Any:
    """A RunContext field or method (dotted: one of its parts), read through the run's context: a driver sees it
    as it is now (a lab shape's rebuild gives the run a new cluster) and cannot set it."""
    get = attrgetter(name)
    return property(lambda self: get(self._run), doc=f"RunContext.{name}")


class DriverContext:
    """What a driver is given: the cluster, the run's names, settings and events; the ledger for what it creates;
    the tool runner, which watches its tools and returns what it saw beside their output; the capacity guard.
    The runner makes one per group from its RunContext, whose run-level state (the run's marker, the client hosts'
    set-up, the OSD facts, the reservation) a driver neither reads nor sets."""

    __slots__ = ("_run",)

    def __init__(self, run: RunContext) -> None:
        self._run = run

    # the cluster, the run's names, settings and events
    cluster = _through("cluster")
    target = _through("target")
    run_id = _through("run_id")
    name = _through("name")
    rundir = _through("rundir")
    settings = _through("settings")
    events = _through("events")
    host = _through("host")
    dry_run = _through("dry_run")
    # the change ledger: what the driver creates enters it before it is made; a dry run only plans it
    ledger = _through("ledger")
    change = _through("change")
    planned = _through("planned")
    # the tool runner: tools here or on the client hosts, watched; a baseline's; a process it starts itself
    run_tools_seen = _through("run_tools_seen")
    run_on_clients_seen = _through("run_on_clients_seen")
    run_baseline_tools = _through("run_baseline_tools")
    record_process = _through("record_process")
    prepare_reads = _through("prepare_reads")
    clients_of = _through("clients_of")
    clients_of_group = _through("clients_of_group")
    suite_clients = _through("client_hosts.hosts")
    load_here = _through("client_hosts.load_here")
    placements = _through("placements")
    placements_on = _through("placements_on")
    clock_offset_ns = _through("clock_offset_ns")
    loadgen_on = _through("loadgen_on")
    at_paths_on = _through("at_paths_on")
    # the capacity guard
    budget = _through("budget")
    reserve_write = _through("reserve_write")
    write_ended = _through("write_ended")
    reserve = _through("reserve")
    # what an earlier group of the run learned (RunContext.seq_ratios says why it is run-wide); the OSDs as
    # `ceph osd metadata` describes them, read once per run
    seq_ratios = _through("seq_ratios")
    osd_metadata = _through("osd_metadata")


# ---- live figures: (bytes/s, ops/s) a running tool last printed; None where the tool does not say ----------

Figures = tuple[float | None, float | None]


def tail_lines(path: Path, nbytes: int = 4096) -> list[str]:
    """The last lines of a file a running tool writes; none when it is not there yet."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - nbytes))
            return f.read().decode(errors="replace").splitlines()
    except OSError:
        return []


def newest_line(path: Path, parse: Callable[[str], Figures | None]) -> Figures | None:
    """The figures of the newest line of `path` that `parse` understands."""
    for line in reversed(tail_lines(path)):
        figures = parse(line)
        if figures is not None:
            return figures
    return None


def live_sum(paths: list[Path], newest: Callable[[Path], Figures | None]) -> Figures:
    """A test's live figures: each process's newest ones (`newest` reads one output file), summed."""
    found = [f for f in map(newest, paths) if f is not None]

    def total(i: int) -> float | None:
        values = [f[i] for f in found if f[i] is not None]
        return sum(values) if values else None
    return total(0), total(1)


def run_group_timeout(duration_s: float) -> float:
    """A tool that runs for `duration_s` gets this long before it is killed."""
    return duration_s * 3 + 120


class GroupDriver(Protocol):
    def __call__(self, ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]: ...


def now() -> tuple[float, float]:
    return time.time(), time.monotonic()


def client_notes(m: Measurement) -> list[str]:
    """What the merge of many clients noticed (a client that started late, stopped early, or lagged), for notes."""
    return list((m.extra.get("clients") or {}).get("notes") or [])


def started_tests(ctx: DriverContext, group: list[Test], todo: set[str],
                  skip: Callable[[Test], object] | None = None) -> Iterator[tuple[Test, tuple[float, float]]]:
    """The group's tests still to do, in order, each announced as it starts: (test, (unix, monotonic) start).
    `skip`: true for a test that does not start (a step past where its search stopped: drivers/search.py)."""
    for test in group:
        if test.id in todo and not (skip is not None and skip(test)):
            started = now()
            ctx.events.test_started(test)
            yield test, started
