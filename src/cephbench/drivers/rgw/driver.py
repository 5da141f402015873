"""RGW over S3 or Swift with cephbench-loadgen: the command line, the preflight and the group run.

One loadgen process per instance and phase (op), each on its own fresh buckets named
cephbench-<run-id>-<group>-<op>-i<n>-<k>; read phases prefill their key space (loadgen --prefill), so a get
never depends on what an earlier put happened to write. loadgen deletes what it wrote; cephbench's ledger
removes the RGW user it made for the run (with --purge-data), or, with keys the user gave, any bucket a killed
loadgen left behind (admin.py).

Keys (credentials.py) are held in memory only and reach loadgen through its environment: never argv, logs,
results or the run directory. Instances are parsed and merged exactly by parse.py.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator, Mapping

from ...cluster.ceph import Cluster
from ...core.settings import Settings
from ...core.errors import PermissionDenied, UserError
from ...hosts.fanout import TimedResult, failure
from ...hosts.local import CommandResult, Spawn
from ...core.results import Measurement, Test
from ...cluster.safety import CapacityBudget
from ...core.units import format_size
from ...core.userfiles import read_output, write_file
from ...core.errors import ParseError
from .. import lifecycle
from ..base import DriverContext, Outcome, client_notes, live_sum, newest_line, run_group_timeout
from ..instances import run_instances
from ..lifecycle import Hooks, Step
from .admin import BucketSweep, run_user, sweep_buckets
from .binary import EXIT_INTERRUPTED, EXIT_USAGE, TOOL, find_loadgen
from .credentials import ENV_KEYS, Credentials, given_credentials
from .endpoint import check_connect, resolve_endpoint
from .parse import diagnose, merge, parse, progress_figures, split_document

log = logging.getLogger(__name__)
RAW_HINT = "give the run a directory of regular files you may write"


# ---- the command line ------------------------------------------------------------------------

@dataclass(frozen=True)
class LoadgenCommand:
    binary: str
    protocol: str                   # s3 | swift
    endpoint: str
    workload: str                   # put get delete list stat mixed
    object_size: int
    concurrency: int
    bucket_prefix: str
    output: Path | None             # None: the document on stdout (a client host's run brings it back that way)
    objects: int = 1000
    buckets: int = 1
    duration_s: float | None = None
    ops: int | None = None
    rate: float | None = None
    arrival: str = "constant"
    mix: Mapping[str, int] | None = None
    warmup_s: float = 0.0
    max_error_ratio: float = 0.01
    prefill: bool | None = None     # None: loadgen's default (true except put)
    seed: int = 1

    def argv(self) -> list[str]:
        if (self.duration_s is None) == (self.ops is None):
            raise ValueError("give exactly one of duration_s and ops")
        argv = [self.binary, "run", "--protocol", self.protocol, "--endpoint", self.endpoint,
                "--workload", self.workload, "--object-size", str(self.object_size),
                "--concurrency", str(self.concurrency), "--objects", str(self.objects),
                "--buckets", str(self.buckets), "--bucket-prefix", self.bucket_prefix,
                "--max-error-ratio", f"{self.max_error_ratio:g}", "--seed", str(self.seed),
                "--output", "-" if self.output is None else str(self.output)]
        if self.duration_s is not None:
            argv += ["--duration", _go_duration(self.duration_s)]
        else:
            argv += ["--ops", str(self.ops)]
        if self.rate is not None:
            argv += ["--rate", f"{self.rate:g}", "--arrival", self.arrival]
        if self.workload == "mixed" and self.mix:
            argv += ["--mix", ",".join(f"{op}:{w}" for op, w in self.mix.items())]
        if self.warmup_s > 0:
            argv += ["--warmup", _go_duration(self.warmup_s)]
        if self.prefill is not None:
            argv.append(f"--prefill={'true' if self.prefill else 'false'}")
        return argv


def _go_duration(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


class LoadgenRefused(PermissionDenied):
    """loadgen exited 2 (bad input, a closed port, rejected keys): nothing was sent, and the run stops (exit 2)."""


# ---- before anything is created -----------------------------------------------------------------

def preflight(cluster: Cluster, tests: list[Test], settings: Settings) -> None:  # noqa: ARG001 - registry signature
    """Everything an rgw workload needs, checked before anything is created: loadgen, endpoint, keys."""
    if not tests:
        return
    find_loadgen()
    seen: set[str] = set()
    needs_admin = False
    for t in tests:
        where = f"workload {t.workload}"
        try:
            ep = resolve_endpoint(t.params, cluster.target)
            if ep not in seen:
                check_connect(ep)
                seen.add(ep)
            creds = given_credentials(t.params)
        except UserError as exc:
            exc.where = f"{where}: {exc.where}" if exc.where else where
            raise
        proto = t.params["protocol"]
        if creds is None:
            needs_admin = True
        elif not creds.has(proto):
            a, b = ENV_KEYS[proto]
            raise UserError(f"the {creds.source} gives no {proto} keys",
                            f"set {a} and {b}" if creds.source == "environment"
                            else f"add {'s3_access_key and s3_secret_key' if proto == 's3' else 'swift_user and swift_key'}",
                            where=where)
    if needs_admin and shutil.which("radosgw-admin") is None:
        raise UserError("radosgw-admin is not installed: cephbench needs it to create the run's RGW user",
                        "install ceph-common and radosgw (scripts/setup.sh), or give keys "
                        "(CEPHBENCH_S3_ACCESS_KEY/CEPHBENCH_S3_SECRET_KEY, or credentials: FILE)")


def live_figures(logs: list[Path]) -> tuple[float | None, float | None]:
    """(bytes/s, ops/s) of the last second, summed over instances, from loadgen's progress lines."""
    return live_sum(logs, lambda p: newest_line(p, progress_figures))


# ---- running a group ----------------------------------------------------------------------------

@dataclass(frozen=True)
class _GroupSetup:
    """What every phase of a group shares."""

    binary: str
    endpoint: str
    creds: Credentials | None       # None only in a dry run that would make the run's user
    made_user: bool                 # the run's own user: its removal (--purge-data) takes every bucket with it
    guard: str | None               # the capacity guard's refusal, the same for every phase


def _setup(ctx: DriverContext, group: list[Test]) -> _GroupSetup:
    binary = find_loadgen()
    first = group[0].params
    endpoint = resolve_endpoint(first, ctx.target)
    creds = given_credentials(first)
    made_user = creds is None
    if made_user:
        creds = run_user(ctx)
    guard = None if ctx.dry_run else _capacity_check(ctx, group)   # one key space size for the whole group
    return _GroupSetup(binary, endpoint, creds, made_user, guard)


def _capacity_check(ctx: DriverContext, group: list[Test]) -> str | None:
    """An error text when one phase's key spaces (one per instance and client host: a search of the hosts counts
    its largest step's) would take the cluster past max_raw_used."""
    p = group[0].params
    hosts = len(ctx.clients_of_group(group))
    need = p["objects"] * p["object_size"] * p["instances"] * max(1, hosts)
    try:
        pools = ctx.cluster.ceph_json("osd", "pool", "ls", "detail")
        sizes = [float(x.get("size", 3)) for x in pools if str(x.get("pool_name", "")).endswith("rgw.buckets.data")]
        amp = max(sizes) if sizes else 3.0
        budget: CapacityBudget = ctx.budget()
    except Exception as exc:  # noqa: BLE001 - a guard that cannot read the cluster does not stop the run
        log.warning("capacity guard skipped: %s", exc)
        return None
    if need > budget.client_bytes(amp):
        return (f"capacity guard: {p['objects']} objects of {format_size(p['object_size'])} x {p['instances']} "
                f"instance(s){f' x {hosts} client hosts' if hosts else ''} would take the cluster past {budget.max_raw_used:.0%} raw used ({budget.describe()}); "
                "lower objects")
    return None


def _prefill(op: str) -> bool:
    """put writes fresh keys; every other op reads (or deletes) a key space that loadgen writes first."""
    return op != "put"


@dataclass(frozen=True)
class _Instance:
    """One loadgen process of a phase: where it runs, the buckets that are its own, the name of its files."""

    client: Any | None              # clients.Client; None: this machine, as without clients
    index: int                      # its number on its host
    prefix: str                     # its buckets are prefix + 0, 1, ...: no other instance or client touches them
    label: str                      # in its files' names: i0, or c1-i0


_TAG_MAX = 16                       # a client's part of a bucket name: S3 names are 63 characters at most


def client_tags(names: list[str]) -> list[str]:
    """Each client's part of its bucket names: its name as a bucket name may spell it (lower case, letters,
    digits and '-'), or c0, c1, ... when a name does not fit or two would come out the same."""
    tags = [re.sub(r"[^a-z0-9-]+", "-", n.lower()).strip("-") for n in names]
    if all(0 < len(t) <= _TAG_MAX for t in tags) and len(set(tags)) == len(tags):
        return tags
    return [f"c{j}" for j in range(len(names))]


def _instances(ctx: DriverContext, test: Test, clients: list[Any]) -> list[_Instance]:
    """`instances` loadgen processes on this machine, or on each client host of the test."""
    p = test.params
    n, op = p["instances"], p["phase"]
    if not clients:
        return [_Instance(None, i, ctx.name(test.group, op, f"i{i}") + "-", f"i{i}") for i in range(n)]
    tags = client_tags([c.name for c in clients])
    return [_Instance(c, i, ctx.name(test.group, op, tag, f"i{i}") + "-", f"{c.name}-i{i}")
            for c, tag in zip(clients, tags) for i in range(n)]


def _commands(ctx: DriverContext, setup: _GroupSetup, test: Test, instances: list[_Instance],
              raw_dir: Path) -> list[LoadgenCommand]:
    """One command per instance, each on its own buckets and with its own seed. On a client host: the copy of
    loadgen there (the one whose `at` starts it), and the document on stdout, which brings it back."""
    p = test.params
    op = p["phase"]
    return [LoadgenCommand(
        binary=setup.binary if inst.client is None else ctx.loadgen_on(inst.client.name) or TOOL,
        protocol=p["protocol"],
        endpoint=setup.endpoint, workload=op, object_size=p["object_size"], concurrency=p["concurrency"],
        bucket_prefix=inst.prefix, output=raw_dir / f"loadgen-{op}-{inst.label}.json" if inst.client is None else None,
        objects=p["objects"], buckets=p["buckets"], duration_s=p.get("duration_s"), ops=p.get("ops"),
        rate=p.get("rate"), arrival=p.get("arrival", "constant"), mix=p.get("mix"), warmup_s=p.get("warmup", 0.0),
        max_error_ratio=p["max_error_ratio"], prefill=_prefill(op), seed=k + 1) for k, inst in enumerate(instances)]


def _held(argv: list[str]) -> list[str]:
    """loadgen waits, set up and prefilled, until every instance of the test (here or on client hosts) is released
    at one instant (drivers/instances.run_instances)."""
    return [*argv[:2], "--hold", *argv[2:]]


def _documents_from_clients(timed: list[TimedResult], instances: list[_Instance], raw_dir: Path,
                            op: str) -> list[CommandResult]:
    """Each client's document (on its stdout) into raw/ as loadgen-<op>-<client>-i<n>.json, as a local run
    writes it; its log keeps the rest. The results returned hold that rest, so their error lines are loadgen's."""
    results = []
    for t, inst in zip(timed, instances):
        doc, rest = split_document(t.result.stdout)
        if doc is not None:
            write_file(raw_dir / f"loadgen-{op}-{inst.label}.json", doc, RAW_HINT, sync=False)
        write_file(raw_dir / f"loadgen-{op}-{inst.label}.log", rest, RAW_HINT, sync=False)
        results.append(replace(t.result, stdout=rest))
    return results


def measured_window(part: Measurement, t: TimedResult, offset_ns: int) -> tuple[float | None, float | None]:
    """A client's measured phase on this machine's clock: from its document's start (its own clock, less its
    offset) for its duration. The process ran longer (the check, prefill, cleanup): its time series and rates are
    those of the measured phase, and the clients' common window is where their measured phases overlap. Without
    a start in the document: the process's own start and end."""
    start_ns = part.extra.get("start_unix_ns")
    if not start_ns:
        return t.start_unix_s, t.end_unix_s
    start = (start_ns - offset_ns) / 1e9
    return start, start + part.duration_s


def _read_documents(results: list[CommandResult], paths: list[Path],
                    op: str) -> tuple[list[Measurement], list[str]]:
    """Each instance's JSON document parsed; an instance without one gives an error instead."""
    parts: list[Measurement] = []
    errors: list[str] = []
    for r, path in zip(results, paths):
        try:
            parts.append(parse(read_output(path)))
        except (OSError, ParseError) as exc:
            errors.append(f"{TOOL} {op} failed: {r.error_text()}" if not r.ok else str(exc))
    return parts, errors


def _exit_error(r: CommandResult, part: Measurement, op: str, max_error_ratio: float) -> str:
    """Why an instance that wrote its document still exited non-zero."""
    if part.extra.get("stopped_reason") == "error-ratio":
        return (f"{TOOL} {op} stopped: error ratio above {max_error_ratio:g} "
                f"(errors by kind: {json.dumps(part.extra.get('errors_by_kind', {}))})")
    if r.returncode == EXIT_INTERRUPTED:
        return f"{TOOL} {op} was interrupted"
    return f"{TOOL} {op} failed: {r.error_text()}"


def _left_behind(part: Measurement) -> bool:
    cleanup = part.extra.get("cleanup") or {}
    return bool(cleanup.get("buckets_left") or cleanup.get("objects_left"))


def _release_swept(sweeps: list[BucketSweep], parts: list[Measurement]) -> None:
    """Buckets loadgen said it removed leave the ledger; the rest stay for the run's cleanup."""
    if len(parts) != len(sweeps):
        return
    for sweep, part in zip(sweeps, parts):
        if not _left_behind(part):
            sweep.done()


def _result_notes(m: Measurement, parts: list[Measurement]) -> list[str]:
    """What the merged figures and each instance's cleanup say about the run."""
    notes = diagnose(m)
    if m.extra.get("unsent_ops"):
        notes.append(f"{m.extra['unsent_ops']} scheduled ops never sent: RGW did not keep up with the rate; "
                     "latency figures are a lower bound")
    left = [part.extra.get("cleanup", {}) for part in parts if _left_behind(part)]
    if left:
        notes.append("loadgen could not remove everything it wrote: "
                     + "; ".join(f"{c.get('objects_left', 0)} objects, buckets {c.get('buckets_left')}" for c in left))
    return notes


def rgw_gone(endpoint: str) -> str | None:
    """Why the test failed when RGW no longer takes connections (it did at preflight), else None."""
    try:
        check_connect(endpoint)
    except UserError as exc:
        return f"RGW stopped answering during the run: {exc.message}"
    return None


def _run_phase(ctx: DriverContext, setup: _GroupSetup, test: Test, started: tuple[float, float],
               round_n: int = 0) -> Outcome | None:
    """One phase (op): its instances at once (on this machine, or on each client host started together), merged
    into one Outcome; None in a dry run. `round_n`: a steady-state round's, its output in raw/<test>/round<n>/."""
    started_unix, t0 = started
    p = test.params
    op = p["phase"]
    notes = [f"RGW keys: {setup.creds.source}"] if setup.creds is not None else []
    if setup.guard:
        return Outcome(test, started_unix, time.monotonic() - t0, error=setup.guard, notes=notes)
    name = f"{test.id}/round{round_n}" if round_n else test.id
    raw_dir = ctx.rundir.raw_dir(name) if ctx.rundir else Path("RUN_DIR", "raw", name)
    clients = ctx.clients_of(test)
    instances = _instances(ctx, test, clients)
    cmds = _commands(ctx, setup, test, instances, raw_dir)
    # keys reach loadgen through its environment; on a client host through `at`'s stdin (fanout), never argv
    env = setup.creds.env(p["protocol"]) if setup.creds is not None else {}
    spawns = [Spawn(c.argv(), raw_dir / f"loadgen-{op}-{inst.label}.log", env=env)
              for inst, c in zip(instances, cmds)]
    sweeps = [] if setup.made_user or ctx.dry_run else [sweep_buckets(ctx, inst.prefix) for inst in instances]
    length = p.get("duration_s") or 60.0
    timeout = run_group_timeout(length + p.get("warmup", 0.0)) + 60
    ran = run_instances(ctx, test, [(inst.client, sp) for inst, sp in zip(instances, spawns)], timeout,
                        live=live_figures, hold=_held)
    timed = None if ran is None else ran.timed
    results = None if ran is None else (ran.results if timed is None
                                        else _documents_from_clients(timed, instances, raw_dir, op))
    if ran is None or results is None:  # dry run
        return None
    if timed is not None:   # the errors below name the client host
        timed = [replace(t, result=r) for t, r in zip(timed, results)]
    refused = [k for k, r in enumerate(results) if r.returncode == EXIT_USAGE]
    gone = rgw_gone(setup.endpoint) if refused or not all(r.ok for r in results) else None
    if refused:
        for k in refused:       # that loadgen created nothing; one stopped on another client may have: swept
            if sweeps:
                sweeps[k].done()
        if gone:    # preflight reached it: RGW died, the keys and flags are fine; the run goes on without it
            return Outcome(test, started_unix, time.monotonic() - t0, error=gone, notes=notes,
                           commands=[r.cmdline for r in results], seen=ran.seen)
        k = refused[0]
        host = f"client {timed[k].host}: " if timed else ""
        raise LoadgenRefused(host + results[k].error_text().removeprefix(f"{TOOL}: "),
                             where=f"{test.id} ({p['protocol']} {op})")
    docs = [raw_dir / f"loadgen-{op}-{inst.label}.json" for inst in instances]
    parts, errors = _read_documents(results, docs, op)
    _release_swept(sweeps, parts)
    failed = failure(timed) if timed else None
    if failed:      # one client failed on its own: the others were stopped, and the test fails naming it
        errors.insert(0, f"{TOOL} {op} failed on " + failed.replace(f": {TOOL}: ", ": ", 1))
    if not errors:
        errors = [_exit_error(r, part, op, p["max_error_ratio"]) for r, part in zip(results, parts) if not r.ok]
    if gone and errors:
        errors[0] = f"{gone} ({errors[0]})"
    m = None
    if parts and len(parts) == len(results):
        for part, t in zip(parts, timed or []):
            part.host = t.host
            part.start_unix_s, part.end_unix_s = measured_window(part, t, ctx.clock_offset_ns(t.host))
        try:
            m = merge(parts)
        except ParseError as exc:   # documents whose histograms cannot be merged
            errors.append(str(exc))
    warnings: list[str] = []
    if m is not None:
        notes += _result_notes(m, parts) + client_notes(m)
        if m.extra.get("stopped_reason") == "keys-exhausted":
            warnings.append("delete used up the key space before the end; raise objects for a longer run")
    raw = [str(path.relative_to(ctx.rundir.path)) for sp, doc in zip(spawns, docs) for path in (doc, sp.output)
           if path.exists()]
    return Outcome(test, started_unix, time.monotonic() - t0, measurement=m, error=errors[0] if errors else None,
                   commands=[r.cmdline for r in results], raw=raw, notes=notes, warnings=warnings, seen=ran.seen)


class RgwLoad(Hooks[_GroupSetup]):
    """One loadgen run per phase (op) and instance on fresh buckets. A search (`concurrency: auto`, `clients: auto`)
    runs its steps in order, each a phase of its own on its own hosts, and stops where the knee rule says
    (drivers/search.py). A read phase writes its own key space first, in the same loadgen run (kinds/rgw.py
    `prefills_in_run`: the core drops no caches before it)."""

    def resources(self, ctx: DriverContext, group: list[Test]) -> AbstractContextManager[_GroupSetup]:
        # the S3/Swift user a run makes enters the ledger (admin.run_user) and goes with the run's other resources
        return nullcontext(_setup(ctx, group))

    def one_round(self, step: Step[_GroupSetup], n: int) -> Outcome | None:
        return _run_phase(step.ctx, step.res, step.test, step.started, n)


HOOKS = RgwLoad()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    return lifecycle.run_group(HOOKS, ctx, group, todo)
