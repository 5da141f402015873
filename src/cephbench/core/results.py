"""Tests, measurements, results, and the run directory that holds them.

A run directory is: run.json (metadata), results.jsonl (one Result per line,
appended the moment a test ends) and raw/<test id>/ (every tool's raw output and
the exact command lines). docs/results-schema.md documents the format.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from .errors import UserError
from .planned import Search, SearchStop, Test  # noqa: F401 - Search too: the results name all three, as before
from .userfiles import not_a_file, append_file, open_read, read_bytes, read_lines, write_file

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

# Every model here is built when first used (defer_build=True): a model built at import would cost every command
# its schema. The tests of a plan and their searches are in planned.py, which `validate` imports alone.


class Latency(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    mean_ns: float | None = None
    stddev_ns: float | None = None
    min_ns: float | None = None
    max_ns: float | None = None
    percentiles_ns: dict[str, float] = Field(default_factory=dict)   # "50", "99", "99.9" -> ns


class Sample(BaseModel):
    """One point of a time series (per second unless the tool says otherwise).

    `partial`: the tool's output says this interval was not a whole second of load (loadgen's last bin, which only
    holds the operations still finishing after the measured window; iperf3's last interval, cut short). It stays in
    the series, so that a chart can mark it, and is left out of every per-second statistic (steady_state())."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    t_s: float
    bytes_per_s: float | None = None
    ops_per_s: float | None = None
    lat_mean_ns: float | None = None
    partial: bool = False

    @model_serializer(mode="wrap")
    def _omit_whole(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A whole second (nearly all of them) is written without the field: results.jsonl stays as it was."""
        data = handler(self)
        if not self.partial:
            data.pop("partial", None)
        return data


def steady_state(series: list[Sample]) -> list[Sample]:
    """The samples that were whole seconds of load: what stddev, min and max of per-second figures are taken over."""
    return [s for s in series if not s.partial]


class Measurement(BaseModel):
    """What a parser makes of a tool's output, in base units."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    tool: str
    op: str                             # write, read, seq, rand, randwrite, ...
    duration_s: float
    bytes_total: float | None = None
    ops_total: float | None = None
    bytes_per_s: float | None = None
    ops_per_s: float | None = None
    bytes_per_s_stddev: float | None = None
    bytes_per_s_max: float | None = None
    bytes_per_s_min: float | None = None
    ops_per_s_stddev: float | None = None
    ops_per_s_max: float | None = None
    ops_per_s_min: float | None = None
    op_size_bytes: int | None = None
    object_size_bytes: int | None = None
    latency: Latency = Field(default_factory=Latency)
    timeseries: list[Sample] = Field(default_factory=list)
    instances: list["Measurement"] = Field(default_factory=list)   # per-process figures when aggregated
    extra: dict[str, Any] = Field(default_factory=dict)
    # an instance run on a client host: which, and its actual start and end on THIS machine's clock (the client's
    # measured clock offset taken off), so that core/merge.py can line instances up by time
    host: str | None = None
    start_unix_s: float | None = None
    end_unix_s: float | None = None


class HostLoad(BaseModel):
    """How busy a host was while the test ran (fractions of all its CPUs' time, from /proc/stat, or from its
    cpuacct cgroup when the host is a cgroup of a machine: the multi-host lab)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    host: str
    role: str = "client"                 # client, OSD host, or both (the lab)
    cpus: int
    cpu_busy_mean: float                 # over the whole tool run, start-up and wind-down included
    cpu_busy_median: float               # of the seconds: the steady state (the mean when under 3 seconds)
    cpu_busy_max: float                  # the busiest second
    iowait_mean: float | None = None     # None: not known (a cgroup has no iowait of its own)
    cpu_busy_series: list[float] = Field(default_factory=list)   # one value per second
    source: Literal["proc-stat", "cpuacct", "prometheus"] = "proc-stat"     # prometheus: node-exporter's
    # whose the CPU time was (analysis/cpusplit.py): the busy CPU-seconds and wall seconds between the first and last
    # readings, the kernel's boot id (hosts that are cgroups of one machine share it with the machine), and the Ceph
    # daemons the host's watch found there, each over the same readings (none: not listed, or a result from before)
    cpu_s: float | None = None
    wall_s: float | None = None
    machine: str | None = None
    processes: list["ProcessCpu"] = Field(default_factory=list)


# How a silence of the monitors during a test begins its warning (evidence/clusterwatch.py writes it). The figure
# stays the cluster's (the clients' I/O goes to the OSDs, not through the monitors): only what the watch would have
# seen meanwhile is missing, so a curve keeps such a point, as the search that ran it did.
MON_SILENCE_WARNING = "the monitors did not answer for "


def is_mon_silence(warning: str) -> bool:
    return warning.startswith(MON_SILENCE_WARNING)


class ClusterDuringTest(BaseModel):
    """What happened to the cluster while the test ran (`ceph status` once a second)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    osds_down_max: int = 0
    osds_out_max: int = 0
    pgs_degraded_max: int = 0
    pgs_inactive_max: int = 0
    objects_degraded_max: int = 0
    raw_used_max: float | None = None          # fraction of raw capacity, every client's data counted
    events: list[str] = Field(default_factory=list)   # "3.2 s: 1 of 3 OSD(s) down", in order
    stopped: str | None = None                 # why the test was stopped early, if it was
    mon_silent_s: float = 0.0                  # seconds no `ceph status` came back (silences of 5 s or more)


class OsdCounters(BaseModel):
    """One OSD's perf counters over a test: the deltas from its start to its end (`perf dump` through its admin
    socket, or `ceph tell osd.N perf dump`).
    Latencies are averages over the test's ops, in seconds; None: the counter was not there (its name is in
    `missing`) or no op of that kind ran."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    osd: int
    host: str | None = None
    op_r: float | None = None                       # client read ops
    op_w: float | None = None                       # client write ops
    op_in_bytes: float | None = None
    op_out_bytes: float | None = None
    op_r_latency_s: float | None = None             # op_r_latency: from receipt to reply
    op_w_latency_s: float | None = None
    op_r_process_latency_s: float | None = None     # op_*_process_latency: from dequeue to reply (no queue wait)
    op_w_process_latency_s: float | None = None
    subop_w: float | None = None                    # replica writes this OSD applied for others
    subop_w_latency_s: float | None = None
    commit_latency_s: float | None = None           # bluestore commit_lat (txc_commit_lat from Quincy on)
    submit_latency_s: float | None = None           # bluestore submit_lat (txc_submit_lat)
    throttle_latency_s: float | None = None         # bluestore throttle_lat (txc_throttle_lat): inside the commit
    kv_sync_latency_s: float | None = None          # bluestore kv_sync_lat
    kv_flush_latency_s: float | None = None         # bluestore kv_flush_lat
    aio_wait_latency_s: float | None = None         # bluestore state_aio_wait_lat: the data device's writes
    bluefs_db_used_bytes: float | None = None       # at the end
    bluefs_slow_used_bytes: float | None = None     # at the end: DB spilled onto the slow device
    missing: list[str] = Field(default_factory=list)
    source: str | None = None                       # how they were read: "admin socket" or "ceph tell"


class DeviceLoad(BaseModel):
    """A block device behind an OSD, per second from /proc/diskstats on its host."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    host: str
    device: str                                     # e.g. sdb, nvme0n1, loop3
    osds: list[int] = Field(default_factory=list)   # the OSDs whose data, DB or WAL it holds
    role: str = "data"                              # data, db, wal, journal
    start_unix_s: float | None = None               # when the first second of the series began (the host's clock)
    busy: list[float] = Field(default_factory=list)              # fraction of each second with I/O in flight
    read_bytes_per_s: list[float] = Field(default_factory=list)
    write_bytes_per_s: list[float] = Field(default_factory=list)
    await_ms: list[float | None] = Field(default_factory=list)   # mean time an I/O took, per second
    read_ops_per_s: list[float] = Field(default_factory=list)
    write_ops_per_s: list[float] = Field(default_factory=list)
    # requests as submitted, before the block layer merged them (completed + merged): what an IOPS throttle
    # counts; empty in results written before they were recorded
    read_requests_per_s: list[float] = Field(default_factory=list)
    write_requests_per_s: list[float] = Field(default_factory=list)
    # a cgroup throttle on the device (blkio or io.max): its capacity, since a throttled I/O waits before the
    # block layer counts the device busy; None: not throttled
    limit_read_bytes_per_s: float | None = None
    limit_write_bytes_per_s: float | None = None
    limit_read_iops: float | None = None
    limit_write_iops: float | None = None
    # where the figures came from: "ssh" or "here" (the host's /proc, read by its watch), "prometheus"
    # (node-exporter's series); None in results written before it was recorded; and how many seconds each
    # figure spans at best (Prometheus: the scrape interval)
    source: str | None = None
    resolution_s: float | None = None

    def submitted(self, op: str) -> list[float]:
        """Reads or writes per second as an IOPS throttle counts them (before merging); completed ones in a result
        that did not record them."""
        if op == "read":
            return self.read_requests_per_s or self.read_ops_per_s
        return self.write_requests_per_s or self.write_ops_per_s


# A device's cgroup throttle as a Prometheus gauge, where a textfile publishes one (the lab's node-exporters do:
# lab/monitoring.py; evidence/promanswer.py reads it): no node-exporter series shows a throttle, since a throttled
# I/O waits before the block layer counts the device busy. Its kind label -> the DeviceLoad field it fills.
DEVICE_LIMIT_METRIC = "cephbench_disk_limit"
DEVICE_LIMIT_FIELDS = {"read_bytes_per_s": "limit_read_bytes_per_s", "write_bytes_per_s": "limit_write_bytes_per_s",
                       "read_iops": "limit_read_iops", "write_iops": "limit_write_iops"}


class LinkLoad(BaseModel):
    """A network link a Ceph host uses, per second from /proc/net/dev on its host, against its speed."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    host: str
    iface: str
    network: str = "public"                         # public, cluster (both: one link carries both)
    speed_bits_per_s: float | None = None
    speed_source: str | None = None                 # "sysfs", "lab shaping", "node_network_speed_bytes"; None: unknown
    start_unix_s: float | None = None               # when the first second of the series began (the host's clock)
    rx_bytes_per_s: list[float] = Field(default_factory=list)
    tx_bytes_per_s: list[float] = Field(default_factory=list)
    source: str | None = None                       # as DeviceLoad's
    resolution_s: float | None = None


class ProcessCpu(BaseModel):
    """One process's CPU time over a test (utime + stime from /proc/PID/stat at its start and end) and what it cost
    per operation and per GiB it served (evidence/proccpu.py; docs/model.md, "CPU per operation")."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    who: str                                        # "osd.3", or "client" (the test's tool processes here)
    host: str | None = None
    pid: int | None = None
    cpu_s: float                                    # user + system seconds over the test
    ops: float | None = None                        # the client ops it served (an OSD: op_r + op_w as primary)
    bytes: float | None = None                      # the client bytes it served (op_in_bytes + op_out_bytes)
    cpu_ms_per_op: float | None = None
    cpu_s_per_gib: float | None = None
    source: str                                     # e.g. "/proc/PID/stat over ssh", "/proc/PID/stat here"
    # a daemon as its host's watch saw it (HostLoad.processes): over how many wall seconds, its cgroup (the cpu
    # controller's path), its container's id when the path names one, its CFS limit in cores, and over the same
    # readings the CFS periods that ran and those throttled, and the time throttled (cpu.stat)
    wall_s: float | None = None
    cgroup: str | None = None
    container: str | None = None
    limit_cores: float | None = None
    periods: int | None = None
    throttled_periods: int | None = None
    throttled_s: float | None = None

    @classmethod
    def of(cls, who: str, cpu_s: float, ops: float | None, nbytes: float | None, source: str,
           host: str | None = None, pid: int | None = None) -> "ProcessCpu":
        """The figures with their ratios; a ratio over no ops (or no bytes) is None, not infinite."""
        return cls(who=who, host=host, pid=pid, cpu_s=round(cpu_s, 4), ops=ops, bytes=nbytes,
                   cpu_ms_per_op=round(cpu_s * 1000 / ops, 6) if ops else None,
                   cpu_s_per_gib=round(cpu_s / (nbytes / 2**30), 6) if nbytes else None, source=source)


OSDS_CPU = "all OSDs"     # ProcessCpu.who of the OSDs together (osds_cpu)


def osds_cpu(cpu: list[ProcessCpu]) -> ProcessCpu | None:
    """Every OSD's CPU over every OSD's client ops: the cluster's CPU per client op, its replicas' work included
    (what Ceph's cpu_cycles_per_op counts); None when no OSD's CPU was read."""
    osds = [c for c in cpu if c.who.startswith("osd.")]
    if not osds:
        return None
    ops = [c.ops for c in osds if c.ops is not None]
    nbytes = [c.bytes for c in osds if c.bytes is not None]
    return ProcessCpu.of(OSDS_CPU, sum(c.cpu_s for c in osds), sum(ops) if ops else None,
                         sum(nbytes) if nbytes else None, "; ".join(dict.fromkeys(c.source for c in osds)))


class OtherLoad(BaseModel):
    """Client I/O on the cluster that was not this run's (pools it did not create), sampled during the test."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    read_bytes_per_s: float = 0.0                   # mean over the test
    write_bytes_per_s: float = 0.0
    ops_per_s: float = 0.0
    pools: list[str] = Field(default_factory=list)  # the pools it came from
    # daemons' own housekeeping (RGW's log/control/meta pools, the mgr's): background, never other clients
    background_bytes_per_s: float = 0.0
    background_ops_per_s: float = 0.0
    background_pools: list[str] = Field(default_factory=list)
    # each pool's client I/O of the figures above ({read_bytes_per_s, write_bytes_per_s, ops_per_s}), over the
    # seconds between the two readings; the existing pools the run's own ops were taken out of (issue 35)
    by_pool: dict[str, dict[str, float]] = Field(default_factory=dict)
    window_s: float | None = None
    own_pools: list[str] = Field(default_factory=list)


class Evidence(BaseModel):
    """What Ceph's own counters and the hosts' disks and links showed while a test ran (raw under raw/<test>/)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    osds: list[OsdCounters] = Field(default_factory=list)
    devices: list[DeviceLoad] = Field(default_factory=list)
    links: list[LinkLoad] = Field(default_factory=list)
    settings: dict[str, dict[str, str]] = Field(default_factory=dict)   # "osd.0" -> {option: value} that cap results
    other_load: OtherLoad | None = None
    cpu: list[ProcessCpu] = Field(default_factory=list)    # each OSD's and the client's CPU per op (none before)
    notes: list[str] = Field(default_factory=list)  # what could not be collected, and why


class LatencyBreakdown(BaseModel):
    """Where a client's mean latency went, in seconds (None: not known from the evidence)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    client_s: float                                 # what the client measured
    network_s: float | None = None                  # client minus the OSD's op latency: messenger and wire
    queue_s: float | None = None                    # op latency minus process latency: waiting in the OSD's queue
    replica_s: float | None = None                  # replica writes beyond the primary's own commit
    commit_s: float | None = None                   # BlueStore commit (kv_sync and the data device's wait inside)
    kv_sync_s: float | None = None
    device_wait_s: float | None = None
    other_s: float | None = None                    # what is left of the OSD's process latency


class Analysis(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    ceiling_bytes_per_s: float | None = None
    ceiling_ops_per_s: float | None = None
    efficiency: float | None = None
    bottleneck: str | None = None
    reason: str | None = None
    breakdown: LatencyBreakdown | None = None       # where the mean latency went (from the result's evidence)
    evidence: list[str] = Field(default_factory=list)   # the facts the bottleneck rests on, one line each


class OptionInForce(BaseModel):
    """One option of a variant as the daemons ran with it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    who: str
    name: str
    value: str                      # as the configuration database holds it after `ceph config set`
    previous: str | None = None     # what it held before the run (None: not set); restored afterwards
    reported: dict[str, str] = Field(default_factory=dict)   # daemon -> the value it reported (config show)
    note: str | None = None         # e.g. why some daemons were not asked


class VariantInForce(BaseModel):
    """The variant a result was measured under, and what was actually in force."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    options: list[OptionInForce] = Field(default_factory=list)
    # the Ceph release the lab ran under the variant's shape (`lab: {release: reef}`); None: run.json's `release`
    release: str | None = None


class SteadyRound(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    start_s: float                  # from the phase's first round
    duration_s: float
    bytes_per_s: float | None = None
    ops_per_s: float | None = None


class SteadyState(BaseModel):
    """A phase run in rounds until steady (Measurement.extra["steady_state"]): SNIA's criteria over the last
    `window` rounds: their range at most `max_range` of their mean, the best-fit line's change across them at
    most `max_slope` of it. The measurement is the window's rounds together."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    reached: bool
    reached_after_s: float | None = None   # from the first round's start to the end of the window that was steady
    window: int
    max_s: float
    max_range: float
    max_slope: float
    range: float | None = None             # of the last window: (max - min) / mean
    slope: float | None = None             # of the last window: |best-fit change across it| / mean
    metric: str = "bytes_per_s"
    rounds: list[SteadyRound] = Field(default_factory=list)


class Result(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = SCHEMA_VERSION
    test: Test
    status: Literal["ok", "failed", "skipped"]
    error: str | None = None
    started_unix: float
    duration_s: float
    commands: list[str] = Field(default_factory=list)
    raw: list[str] = Field(default_factory=list)        # paths relative to the run directory
    measurement: Measurement | None = None
    notes: list[str] = Field(default_factory=list)      # e.g. "page cache dropped on 3 OSD hosts"
    # why the figure is not what the cluster can do (a read that ran out of objects, a write the capacity guard
    # shortened): such a result never heads the verdict
    warnings: list[str] = Field(default_factory=list)
    hosts: list[HostLoad] = Field(default_factory=list)  # watched during the test: this host (on the lab: all)
    cluster: ClusterDuringTest | None = None   # watched during the test: OSDs, PGs, slow ops, raw use
    evidence: Evidence | None = None          # Ceph's counters, devices and links during the test
    analysis: Analysis | None = None
    variant: VariantInForce | None = None     # the suite's variant and what was in force; None: no variants
    search_stop: SearchStop | None = None     # a search's last step: why the search stopped there


RUNS_DIR = Path("cephbench-runs")


def run_dir_path(label: str, out_dir: Path | None = None, when: float | None = None) -> Path:
    """Where a run, a baseline or an import goes: --out, else ./cephbench-runs/<UTC timestamp>-<label>."""
    if out_dir is not None:
        return Path(out_dir)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
    return RUNS_DIR / f"{stamp}-{label}"


@dataclass(frozen=True)
class CorruptLine:
    line_no: int
    reason: str


# Bounds of what a run directory's files may hold: far above any run's (a run.json of a thousand-test plan is a few
# MiB; a result line with its evidence, a few hundred KiB), far below what would exhaust memory.
MAX_RUN_JSON_BYTES = 64 * 1024**2
MAX_RESULTS_BYTES = 2 * 1024**3
MAX_RESULT_LINE_BYTES = 64 * 1024**2
_RUN_HINT = "give the directory that 'cephbench run' printed"
_FILE_HINT = "a run directory holds regular files: put the run's own file back, or give another run directory"
_WRITE_HINT = "give a run directory of regular files you may write"


class RunDir:
    """A run directory on disk. Writing is append-only and flushed per result; every file is read with a bound and
    written through core/userfiles.py (regular files inside the directory only)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def results_jsonl(self) -> Path:
        return self.path / "results.jsonl"

    def raw_dir(self, test_id: str) -> Path:
        d = self.path / "raw" / test_id
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:          # raw/ (or the test's) is a file, or the directory is read-only
            raise UserError(f"cannot make {d}: {exc.strerror}", _WRITE_HINT) from None
        return d

    @staticmethod
    def check_new(path: Path) -> None:
        """Refuse, before anything else happens, a run directory that cannot be made or is taken."""
        path = Path(path)
        if path.exists() and not path.is_dir():
            kind = not_a_file(os.stat(path).st_mode) or "a file"
            raise UserError(f"{path} is {kind}, not a directory", "give --out a new directory", where="--out")
        if path.is_dir() and any(path.iterdir()):
            raise UserError(f"run directory {path} already exists and is not empty",
                            "choose another --out, or use --resume to complete it", where="--out")
        parent = next((p for p in [path, *path.absolute().parents] if p.exists()), None)
        if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise UserError(f"cannot create {path}: {parent} is not a writable directory",
                            "give --out a directory you may write", where="--out")

    @classmethod
    def create(cls, path: Path, meta: dict[str, Any]) -> "RunDir":
        path = Path(path)
        cls.check_new(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create {path}: {exc.strerror}", "give --out a directory you may write",
                            where="--out") from None
        rd = cls(path)
        (path / "raw").mkdir(exist_ok=True)
        rd.write_meta({"schema_version": SCHEMA_VERSION, **meta})
        append_file(rd.results_jsonl, b"", _WRITE_HINT, within=path)
        return rd

    @classmethod
    def open(cls, path: Path) -> "RunDir":
        rd = cls(Path(path))
        if not rd.path.is_dir():
            what = "it does not exist" if not os.path.lexists(rd.path) else "not a directory"
            raise UserError(f"{path} is not a cephbench run directory ({what})", _RUN_HINT)
        if not os.path.lexists(rd.run_json):
            raise UserError(f"{path} is not a cephbench run directory (no run.json)", _RUN_HINT)
        meta = rd.meta()
        version = meta.get("schema_version")
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise UserError(f"{path} was written with results schema {version!r}; this cephbench reads up to "
                            f"{SCHEMA_VERSION}", "upgrade cephbench")
        return rd

    def meta(self) -> dict[str, Any]:
        data = read_bytes(self.run_json, "", _FILE_HINT, MAX_RUN_JSON_BYTES)
        try:
            meta = json.loads(data)
        except (ValueError, RecursionError) as exc:
            why = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
            raise UserError(f"{self.run_json} cannot be read: not JSON ({why})", _FILE_HINT) from None
        if not isinstance(meta, dict):
            raise UserError(f"{self.run_json} is not a cephbench run.json (not a JSON object)",
                            "give the directory that 'cephbench run' printed")
        return meta

    def write_meta(self, meta: dict[str, Any]) -> None:
        write_file(self.run_json, json.dumps(meta, indent=2, sort_keys=False, default=str) + "\n", _WRITE_HINT,
                   within=self.path)

    def update_meta(self, **fields: Any) -> None:
        meta = self.meta()
        meta.update(fields)
        self.write_meta(meta)

    @property
    def torn_jsonl(self) -> Path:
        return self.path / "results.torn.jsonl"

    def set_aside_torn_tail(self) -> str | None:
        """A last line cut short (a run killed while writing it: no newline at its end) is moved to
        results.torn.jsonl, so that the next result starts a line of its own; returns the torn text."""
        if not os.path.lexists(self.results_jsonl):
            return None
        with open_read(self.results_jsonl, "", _WRITE_HINT, MAX_RESULTS_BYTES):
            pass        # a regular file inside the run directory, of a sane size: else one line, never a hang
        try:
            with open(self.results_jsonl, "rb+") as f:  # checked just above; truncate needs a descriptor to write
                size = f.seek(0, os.SEEK_END)
                if size == 0:
                    return None
                f.seek(size - 1)
                if f.read(1) == b"\n":
                    return None
                chunk = min(size, 1 << 20)
                f.seek(size - chunk)
                data = f.read(chunk)
                start = data.rfind(b"\n") + 1          # 0: the whole chunk is the torn line
                torn = data[start:]
                append_file(self.torn_jsonl, torn + b"\n", _WRITE_HINT, within=self.path)
                f.truncate(size - len(torn))
                f.flush()
                os.fsync(f.fileno())
                return torn.decode(errors="replace")
        except FileNotFoundError:
            return None

    def append(self, result: Result) -> None:
        self.set_aside_torn_tail()
        line = result.model_dump_json(exclude_none=True) + "\n"
        append_file(self.results_jsonl, line.encode("utf-8"), _WRITE_HINT, within=self.path)

    def results(self) -> tuple[list[Result], list[CorruptLine]]:
        """Every readable result, and the lines that could not be read (never raises on content)."""
        out: list[Result] = []
        bad: list[CorruptLine] = []
        if not os.path.lexists(self.results_jsonl):
            return out, bad
        with open_read(self.results_jsonl, "", _FILE_HINT, MAX_RESULTS_BYTES) as f:
            for n, raw in read_lines(f, MAX_RESULT_LINE_BYTES, MAX_RESULTS_BYTES):
                if raw is None:
                    bad.append(CorruptLine(n, f"longer than {MAX_RESULT_LINE_BYTES // 1024**2} MiB"))
                    continue
                line = raw.decode("utf-8", errors="replace")
                if not line.strip():
                    continue
                try:
                    out.append(Result.model_validate_json(line))
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(p) for p in first.get("loc", ()))
                    bad.append(CorruptLine(n, f"{where}: {first.get('msg')}" if where else str(first.get("msg"))))
        return out, bad

    def write_raw(self, test_id: str, name: str, text: str) -> str:
        p = self.raw_dir(test_id) / name
        write_file(p, text, _WRITE_HINT, within=self.path, sync=False)
        return str(p.relative_to(self.path))
