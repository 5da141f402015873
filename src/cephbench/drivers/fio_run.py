"""Running fio against Ceph (rbd, rados and libaio-on-krbd engines): one fio process per test, its
json+ output and its per-second bandwidth/IOPS logs (`log_avg_msec=1000`) made into one Measurement.

fio.py builds the command line and aggregates jobs by merged latency bins; this
module adds the per-second series, read from the logs fio writes next to the JSON, runs one fio here or on each
client host (`measure_fio`), and holds the lifecycle's hooks fio on a group's RBD images shares (`FioOnImages`:
fio_rbd, qemu_rbd).
"""

from __future__ import annotations

import logging
import math
import re
import shlex
import tempfile
from collections import defaultdict
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Sequence

from ..cluster.ceph import Target
from ..core.errors import OperationFailed
from ..hosts.local import Spawn
from ..hosts.remote_dirs import dir_path, fetch_dir, make_dir
from ..core.resources import Resource
from ..core.results import Measurement, Sample, Test, steady_state
from ..core.userfiles import read_output
from ..core.errors import ParseError
from .base import DriverContext, Outcome, run_group_timeout, safe_name
from ..core.figures import count, number
from .fio import FioJob, fio_argv, parse_fio_json, to_measurement
from .instances import instances_outcome, measure_instances, run_instances
from .lifecycle import Step
from .rbd_images import Images, OnImages

log = logging.getLogger(__name__)

LOG_AVG_MSEC = 1000
KIB = 1024


@dataclass(frozen=True)
class FioRun:
    spawn: Spawn
    json_path: Path
    log_prefix: Path

    def measurement(self, op: str, tool: str, keep_bins: bool = False) -> Measurement:
        """json+ (summary, percentiles from merged bins) + logs (per-second series) -> Measurement.
        `keep_bins`: keep the merged latency bins (extra.clat_bins) for a merge with other clients' fio."""
        try:
            text = read_output(self.json_path)
        except OSError as exc:
            raise ParseError(f"fio wrote no JSON output ({self.json_path.name}: {exc.strerror})") from exc
        m = to_measurement(parse_fio_json(text), op, tool=tool, keep_bins=keep_bins)
        m.timeseries = series_from_logs(self.log_prefix)
        whole = steady_state(m.timeseries)
        rates = [s.bytes_per_s for s in whole if s.bytes_per_s is not None]
        if len(rates) >= 2:
            m.bytes_per_s_max, m.bytes_per_s_min = max(rates), min(rates)
            ops = [s.ops_per_s or 0.0 for s in whole]
            m.ops_per_s_max, m.ops_per_s_min = max(ops), min(ops)
        return m


def fio_run(raw_dir: Path, jobs: list[FioJob], env: dict[str, str] | None = None,
            remote_dir: str | None = None) -> FioRun:
    """The fio command of one test: json+ to raw_dir/fio.json, logs to raw_dir/fio_{bw,iops}.N.log.
    `remote_dir`: fio runs on a client host and writes those files into this directory there (to be fetched into
    raw_dir); its stdout still comes to raw_dir/fio-stdout.txt."""
    json_path = raw_dir / "fio.json"
    prefix = raw_dir / "fio"
    out_dir = raw_dir if remote_dir is None else PurePosixPath(remote_dir)
    # --eta=always: a status line per second on stdout (the JSON goes to its own file) for live figures
    global_opts = {"write_bw_log": out_dir / "fio", "write_iops_log": out_dir / "fio", "log_avg_msec": LOG_AVG_MSEC,
                   "per_job_logs": 1, "eta": "always"}
    argv = fio_argv(jobs, global_opts, out_dir / "fio.json")
    return FioRun(Spawn(argv, raw_dir / "fio-stdout.txt", env=env), json_path, prefix)


_ETA_BW = re.compile(r"\[((?:[rwt]=[\d.]+[kKMGTP]?i?B/s,?)+)\]")
_ETA_IOPS = re.compile(r"\[((?:[rwt]=[\d.]+[kMG]?,?)+) IOPS\]")
_ETA_PART = re.compile(r"[rwt]=([\d.]+)([kKMGTP]?)(i?)")
_POWER = {"": 0, "k": 1, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


def eta_figures(line: str) -> tuple[float | None, float | None] | None:
    """fio's status line, e.g. "Jobs: 1 (f=1): [w(1)][75.0%][w=222MiB/s][w=56.8k IOPS][eta 00m:01s]" ->
    (bytes/s, ops/s), reads and writes summed; None when it carries no figures (starting up, not a status line)
    or figures that are no numbers (a line cut off or garbled)."""
    def total(group: str) -> float:    # KiB/MiB: powers of 1024; kB/MB (kb_base=1000) and IOPS' k/M: of 1000
        return sum(number(num, "fio status figure") * (1024 if iec else 1000) ** _POWER[prefix]
                   for num, prefix, iec in _ETA_PART.findall(group))
    bw, iops = _ETA_BW.search(line), _ETA_IOPS.search(line)
    if bw is None and iops is None:
        return None
    try:
        figures = (total(bw.group(1)) if bw else None), (total(iops.group(1)) if iops else None)
    except ParseError:
        return None
    return figures if all(f is None or math.isfinite(f) for f in figures) else None


def live_figures(paths: list[Path]) -> tuple[float | None, float | None]:
    """Live (bytes/s, ops/s) from the newest status line fio printed in each stdout file, summed."""
    from .base import live_sum, newest_line
    return live_sum(paths, lambda p: newest_line(p, eta_figures))


def parse_log(text: str) -> list[tuple[int, float]]:
    """A fio bw/iops log: "msec, value, ddir, bs, offset[, prio]" lines -> (msec, value)."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 3:
            continue
        try:
            msec, value = count(parts[0], "msec"), number(parts[1], "value")
        except ParseError:
            raise ParseError(f"not a fio log line: {line[:120]!r}") from None
        if value < 0:
            raise ParseError(f"a negative value in a fio log line: {line[:120]!r}")
        out.append((msec, value))
    return out


def series(bw_logs: list[str], iops_logs: list[str]) -> list[Sample]:
    """Per-job, per-direction logs -> one per-second series, summed over jobs and directions.

    An entry at t ms averages the window that ends at t: it belongs to second round(t/1000).
    bw logs are in KiB/s. No sample is partial: fio 3.33 logs a window only once it is whole, and writes nothing
    for the part of a second its job's end cut off (tests/fixtures/fio/*_runtime2600ms_logs).
    """
    bw: dict[int, float] = defaultdict(float)
    ops: dict[int, float] = defaultdict(float)
    for text in bw_logs:
        for t_ms, v in parse_log(text):
            bw[round(t_ms / LOG_AVG_MSEC)] += v * KIB
    for text in iops_logs:
        for t_ms, v in parse_log(text):
            ops[round(t_ms / LOG_AVG_MSEC)] += v
    if not all(math.isfinite(v) for v in (*bw.values(), *ops.values())):
        raise ParseError("fio logs sum to more than a float holds: they are not fio's")
    seconds = sorted(set(bw) | set(ops))
    return [Sample(t_s=float(s), bytes_per_s=bw.get(s), ops_per_s=ops.get(s)) for s in seconds if s > 0]


def series_from_logs(prefix: Path) -> list[Sample]:
    def texts(kind: str) -> list[str]:
        return [read_output(p) for p in sorted(prefix.parent.glob(f"{prefix.name}_{kind}.*.log"))]
    return series(texts("bw"), texts("iops"))


# ---- one fio on each of many client hosts ------------------------------------------------------------------

@dataclass(frozen=True)
class ClientRun:
    """One client host's fio in a test: its command, writing its json+ and logs into `remote_dir` on that host,
    from where they come back into raw/<test>/<client>/ (run.json_path and run.log_prefix are there)."""
    client: Any             # clients.Client
    run: FioRun
    remote_dir: str


def client_env(target: Target) -> dict[str, str] | None:
    """What fio on a client host needs in its environment: the run's client id (CEPH_ARGS), never this machine's
    conf or keyring paths (the client uses its own). It reaches the client as `env` lines on the start
    barrier's stdin, not on a command line."""
    args = target.remote_client_args()
    return {"CEPH_ARGS": " ".join(args)} if args else None


def client_runs(ctx: DriverContext, test_id: str, clients: Sequence[Any], jobs_of: Callable[[Any], list[FioJob]],
                wrap: Callable[[list[str]], list[str]] | None = None) -> list[ClientRun]:
    """One fio per client for a test (`jobs_of(client)`: that client's jobs), each with its own work directory
    there and its own raw/<test>/<client>/ here; `wrap` rewrites a command line (e.g. to read the client's own
    ceph.conf)."""
    raw = ctx.rundir.raw_dir(test_id) if ctx.rundir else Path(tempfile.gettempdir()) / "cephbench-dry"
    out = []
    for c in clients:
        remote = dir_path(ctx.run_id, c.name, test_id)
        run = fio_run(raw / safe_name(c.name), jobs_of(c), env=client_env(ctx.target), remote_dir=remote)
        if wrap is not None:
            run = replace(run, spawn=replace(run.spawn, argv=wrap([str(a) for a in run.spawn.argv])))
        out.append(ClientRun(c, run, remote))
    return out


def measure_fio(ctx: DriverContext, test: Test, started: tuple[float, float], name: str, clients: Sequence[Any],
                jobs_of: Callable[[Any], list[FioJob]], parse: Callable[[FioRun, Any], Measurement], timeout_s: float,
                *, tool: str, notes: list[str], warnings: Sequence[str] = (),
                wrap: Callable[[list[str]], list[str]] | None = None) -> Outcome | None:
    """One fio on this machine (no `clients`), or one per client host (its work directory made there through the
    ledger, the fios started at one instant, their outputs brought back and the directories removed), run and
    merged by drivers/instances.py (latency from the merged bins). `jobs_of(client)` and `parse(run, client)`
    take None for this machine; a client's parse keeps its latency bins. `name`: the raw directory (raw/<name>/,
    one per client below it). None in a dry run. A client whose fio fails fails the test, named."""
    if not clients:
        raw_dir = ctx.rundir.raw_dir(name) if ctx.rundir else Path(tempfile.gettempdir()) / "cephbench-dry"
        run = fio_run(raw_dir, jobs_of(None), env=ctx.target.env())
        outcome = measure_instances(ctx, test, started, [(None, run.spawn)], timeout_s,
                                    lambda _i, _r: parse(run, None), tool=tool, latency="bins", notes=notes,
                                    warnings=warnings, live=live_figures)
        if outcome is not None and ctx.rundir and run.json_path.exists():
            outcome.raw.append(str(run.json_path.relative_to(ctx.rundir.path)))
        return outcome
    runs = client_runs(ctx, name, clients, jobs_of, wrap=wrap)
    ssh = ctx.settings.ssh
    where = [(r.client, r.run.spawn) for r in runs]
    if ctx.dry_run:
        ctx.planned.extend(shlex.join(r.client.ref.argv(["mkdir", "-m", "0700", "--", r.remote_dir], ssh))
                           for r in runs)
        run_instances(ctx, test, where, timeout_s, live=live_figures)
        return None
    dirs = [make_dir(ctx.host, r.client.ref, ssh, ctx.ledger, r.remote_dir) for r in runs]
    ran = run_instances(ctx, test, where, timeout_s, live=live_figures)
    fetch_errors = bring_back(ctx, runs, dirs)
    if ran is None:
        return None
    rundir = ctx.rundir.path if ctx.rundir else Path("/")
    raw = [str(r.run.spawn.output.relative_to(rundir)) for r in runs]
    raw += [str(r.run.json_path.relative_to(rundir)) for r in runs if r.run.json_path.exists()]

    def parse_one(i: int, _r: object) -> Measurement:
        try:
            return parse(runs[i].run, runs[i].client)
        except ParseError as exc:       # the fetch's failure is the likely cause: say it
            why = fetch_errors.get(runs[i].client.name)
            raise ParseError(f"{exc} ({why})" if why else str(exc)) from exc

    return instances_outcome(test, started, ran, parse_one, tool=tool, latency="bins", raw=raw, notes=notes,
                             warnings=warnings)


def bring_back(ctx: DriverContext, runs: list[ClientRun], dirs: list[Resource]) -> dict[str, str]:
    """Each client's work directory copied into its raw directory here, then removed (through the ledger);
    client -> why its files could not be fetched."""
    errors: dict[str, str] = {}
    for r, res in zip(runs, dirs):
        try:
            fetch_dir(ctx.host, r.client.ref, ctx.settings.ssh, r.remote_dir, r.run.json_path.parent)
        except OperationFailed as exc:
            errors[r.client.name] = str(exc)
        finally:
            try:
                ctx.ledger.release_one(res)
            except OperationFailed as exc:      # the ledger keeps it: the run's final cleanup tries again
                log.warning("%s", exc)
    return errors


# ---- fio on a group's RBD images: the hooks fio_rbd and qemu_rbd share ------------------------------------------

class FioOnImages(OnImages):
    """One fio per test (here, or one per client host on its own images) on the group's images (rbd_images.OnImages),
    once or in rounds, its figures described with the images it ran on. A kind says its tool's name, what its
    measurement records of its client (`described`), each client's jobs (`jobs`), and what a round needs running
    beside fio (`round_setup`: qemu-nbd's exports, started before fio and stopped after it, `round_ended`)."""

    def tool(self, test: Test) -> str:
        raise NotImplementedError

    def described(self, test: Test) -> dict[str, Any]:
        raise NotImplementedError

    def jobs(self, step: Step[Images], client: Any, there: Any) -> list[FioJob]:
        """The fio jobs of `client` (None: this machine); `there`: what round_setup yielded."""
        raise NotImplementedError

    def round_setup(self, step: Step[Images], name: str, timeout_s: float) -> AbstractContextManager[Any]:
        return nullcontext()

    def round_ended(self, step: Step[Images], outcome: Outcome, there: Any) -> None:
        """What the round's setup adds to its outcome (its commands, its output) once it is undone."""

    def one_round(self, step: Step[Images], n: int) -> Outcome | None:
        test, images, p = step.test, step.res, step.test.params
        tool, described = self.tool(test), self.described(test)
        name = step.name(n)
        timeout = run_group_timeout(p["duration_s"] + p["ramp"])

        def parse(run: FioRun, client: Any) -> Measurement:
            m = run.measurement(p["phase"], tool, keep_bins=client is not None)
            m.extra.update({**(images.of(client.name) if client else images).describe(), **described})
            return m

        with self.round_setup(step, name, timeout) as there:
            outcome = measure_fio(step.ctx, test, step.started, name, step.clients,
                                  lambda c: self.jobs(step, c, there), parse, timeout, tool=tool,
                                  notes=list(step.notes), warnings=step.warnings)
        if outcome is not None and there is not None:
            self.round_ended(step, outcome, there)
        return outcome

    def finish(self, step: Step[Images], outcome: Outcome) -> None:
        if step.clients and outcome.measurement is not None:     # the step's hosts' images
            outcome.measurement.extra.update({**step.res.of(*(c.name for c in step.clients)).describe(),
                                              **self.described(step.test)})


def image_job_options(test: Test, direct: bool) -> dict[str, Any]:
    """What every fio job on an image of the test shares: its phase, sizes, depth, clones, time and mix."""
    p = test.params
    return dict(rw=p["phase"], bs=p["block_size"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                runtime_s=p["duration_s"], ramp_s=p["ramp"] or None, time_based=True, direct=direct,
                rwmixread=p["rwmixread"] if p["phase"] == "randrw" else None)
