"""fio with librados (fio's rados engine): the latency percentiles `rados bench` does not give.

Each fio "file" of the rados engine is one RADOS object named <job>.<clone>.<file>.
To match rados bench (one whole object per operation), a job has `nrfiles`
objects of `filesize` = block_size: writes write whole objects, reads read them
back; rand* phases pick a random object per I/O (file_service_type=random).
The group writes first, then reads what it wrote, in the order of `rw`; when the
write did not cover every object (a short or random write, a resumed run), every
object is written once before the first read, and that write is not recorded.

fio 3.33's rados engine reads the Ceph config from its `conf` option (default
/etc/ceph/ceph.conf), not from CEPH_CONF, so the target's conf is passed as `conf`;
the keyring and id reach librados through CEPH_KEYRING / CEPH_ARGS.

With `clients:`, one fio runs on each client host (started together, merged exactly: fio_run.measure_fio),
each on objects of its own (job name obj-<client>) in the group's pool, the capacity budget shared between them.
There fio reads the client's own ceph.conf: `--conf="${CEPH_CONF:-/etc/ceph/ceph.conf}"`, expanded by a shell on
the client (`remote_conf`), and the id arrives in CEPH_ARGS (fio_run.client_env).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Iterator

from .pools import create_pool, remove_pool
from ..core.results import Measurement, Test
from ..cluster.safety import amplification
from . import lifecycle
from .base import DriverContext, Outcome, now, run_group_timeout, safe_name
from .fio import FioJob
from .fio_run import FioRun, measure_fio
from .lifecycle import Hooks, Step

DATA_SET_BYTES = 256 * 1024**2    # objects per group: this much data, within MIN..MAX objects
MIN_OBJECTS = 16
MAX_OBJECTS = 1024
JOB_NAME = "obj"                   # the same in every phase: reads open the objects the write made


def object_count(block_size: int, iodepth: int, budget_bytes: int | None) -> int:
    """How many objects of block_size the group writes: DATA_SET_BYTES worth, at least iodepth,
    at most what the capacity budget allows (0 when even iodepth objects do not fit)."""
    n = max(MIN_OBJECTS, iodepth, min(MAX_OBJECTS, DATA_SET_BYTES // block_size))
    if budget_bytes is not None:
        n = min(n, budget_bytes // block_size)
        if n < iodepth:
            return 0
    return n


def remote_conf(argv: list[str]) -> list[str]:
    """fio's command line for a client host: its rados job reads the client's ceph.conf (CEPH_CONF there, or the
    default), which only a shell on the client knows. The option goes last: it belongs to the (one) job."""
    return ["sh", "-c", 'exec "$@" --conf="${CEPH_CONF:-/etc/ceph/ceph.conf}"', "sh", *argv]


def job_name(client: str | None) -> str:
    """The job's name, which names its objects: one set per client host."""
    return JOB_NAME if client is None else f"{JOB_NAME}-{safe_name(client)}"


def job_for(phase: str, params: dict, pool: str, objects: int, conf: str | None, client_id: str | None,
            name: str = JOB_NAME) -> FioJob:
    """`conf` None: left out (a client host's command gets its own, see remote_conf)."""
    bs = params["block_size"]
    # touch_objects=0: fio would otherwise create every object before starting (slow with many objects, and
    # pointless: a write creates its object, and a read must find objects written in full)
    extra: dict = {"nrfiles": objects, "filesize": bs, "touch_objects": 0}
    if phase.startswith("rand"):
        extra["file_service_type"] = "random"
    options = {"pool": pool, "clientname": client_id or "admin", **({"conf": conf} if conf is not None else {})}
    return FioJob(name=name, rw=phase, bs=bs, iodepth=params["iodepth"], size=objects * bs,
                  runtime_s=params["duration_s"], time_based=True, engine="rados", options=options, extra=extra)


def _place(client) -> str | None:
    """Where a fio runs, as `filled` knows it: a client host's name, or None for this machine."""
    return client.name if client is not None else None


@dataclass
class Objects:
    """A group's pool and the objects its tests write and read there (the same at every step of a search)."""
    pool: str
    objects: int        # per client host (or here); 0: not even the deepest step's fit under the capacity guard
    depth: int          # the deepest step's iodepth
    filled: set[str | None] = field(default_factory=set)    # where every object is written in full (None: here)


class FioRados(Hooks[Objects]):
    @contextmanager
    def resources(self, ctx: DriverContext, group: list[Test]) -> Iterator[Objects]:
        first = group[0].params
        pool = create_pool(ctx, ctx.name(group[0].group), first["pool_profile"])
        try:
            budget = None if ctx.dry_run else ctx.budget().client_bytes(amplification(first["pool_profile"]))
            # each client host writes objects of its own; a search of them (`clients: auto`) leaves room for its
            # largest step
            most = len(ctx.clients_of_group(group))
            if budget is not None and most:
                budget //= most
            # a search (iodepth: auto) runs on the same objects at every step: as many as its deepest step needs
            depth = max(t.params["iodepth"] for t in group)
            yield Objects(pool, object_count(first["block_size"], depth, budget), depth)
        finally:
            remove_pool(ctx, pool)

    def prepare(self, step: Step[Objects]) -> Outcome | None:
        """No objects: the capacity guard's error. Before a read: every object written in full where no write of
        the group did so (not recorded)."""
        ctx, test, res = step.ctx, step.test, step.res
        if res.objects == 0:
            return Outcome(test, step.started[0], 0.0, error=f"capacity guard: not even {res.depth} objects of "
                           f"{test.params['block_size']} bytes fit below {ctx.settings.max_raw_used:.0%} raw used")
        if "read" not in test.params["phase"]:
            return None
        unfilled = [c for c in step.clients or [None] if _place(c) not in res.filled]
        if unfilled:
            hosts = [c for c in unfilled if c is not None]
            prep = _prepare_write(ctx, test, res.pool, res.objects, hosts)
            if prep is not None and prep.error:
                return Outcome(test, step.started[0], time.monotonic() - step.started[1], commands=prep.commands,
                               raw=prep.raw, error=f"writing the objects to read failed: {prep.error}")
            res.filled.update(_place(c) for c in unfilled)
            whose = f" of {', '.join(c.name for c in hosts)}" if hosts else ""
            step.notes.append(f"all {res.objects} objects{whose} were written in full before this read (not "
                              "recorded): no earlier write in the group covered them")
        return None

    def one_round(self, step: Step[Objects], n: int) -> Outcome | None:
        return _run(step.ctx, step.test, step.res.pool, step.res.objects, step.test.params["phase"], step.started,
                    list(step.notes), step.clients, name=step.name(n) if n else None)

    def finish(self, step: Step[Objects], outcome: Outcome) -> None:
        res, m, clients = step.res, outcome.measurement, step.clients
        if step.test.params["phase"] == "write" and m is not None:      # each host that wrote all its objects
            parts = (m.instances or [m]) if clients else [m]      # one client host: the result is its own
            res.filled.update(p.host if clients else None for p in parts if (p.ops_total or 0) >= res.objects)
        outcome.notes.append(f"{res.objects} objects of {step.test.params['block_size']} bytes"
                             + (" on each client host" if clients else ""))


HOOKS = FioRados()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    """The group's pool and objects; its tests in order, each read finding its objects written (drivers/lifecycle.py)."""
    return lifecycle.run_group(HOOKS, ctx, group, todo)


def _run(ctx: DriverContext, test: Test, pool: str, objects: int, phase: str, started: tuple[float, float],
         notes: list[str], clients: list, name: str | None = None, fill: bool = False) -> Outcome | None:
    """One fio here, or one per client host on its own objects (merged by bins); `fill`: the unrecorded write of
    every object before a read (not time-based), into raw/<test>-fill/."""
    params = test.params

    def jobs(c) -> list[FioJob]:
        job = job_for(phase, params, pool, objects, None if c else str(ctx.target.conf), ctx.target.id,
                      name=job_name(c.name) if c else JOB_NAME)
        return [replace(job, time_based=False, runtime_s=None) if fill else job]

    def parse(run: FioRun, client) -> Measurement:
        m = run.measurement(phase, "fio rados", keep_bins=client is not None)
        if not fill or client is not None:
            m.object_size_bytes = params["block_size"]
            m.extra.update({"objects": objects, "iodepth": params["iodepth"]})
        return m

    timeout = run_group_timeout(objects * params["block_size"] / 2**20 if fill else params["duration_s"])
    outcome = measure_fio(ctx, test, started, name or test.id, clients, jobs, parse, timeout,
                          tool=f"fio rados {phase}", notes=notes, wrap=remote_conf if clients else None)
    if clients and outcome is not None and outcome.measurement is not None:
        outcome.measurement.extra.update({"objects": objects * len(clients), "objects_per_client": objects,
                                          "iodepth": params["iodepth"]})
    return outcome


def _prepare_write(ctx: DriverContext, test: Test, pool: str, objects: int, clients: list) -> Outcome | None:
    """Write every object once (sequential, not time-based) so that a read has something to read."""
    ctx.events.note(f"{test.group}: writing {objects} objects for the reads (not recorded)")
    return _run(ctx, test, pool, objects, "write", now(), [], clients, name=f"{test.id}-fill", fill=True)
