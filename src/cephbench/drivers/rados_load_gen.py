"""`rados load-gen`: command builder, parser of its output, and its group's run.

What the tool prints (Ceph 16.2.15, tests/fixtures/rados_load_gen/), and all this reads of it:
- "run length N seconds" (--run-length);
- "  K: throughput=…MB/sec pending data=N" when a second has passed since the last such line (its rate since the
  start, and bytes sent not yet completed); the first comes before any operation: load-gen waits a second before
  it sends anything;
- one line per operation as it is made, in the order of their ids: "READ : oid=obj-… off=N len=N" (or WRITE);
- one line per operation completed: "op ID completed, throughput=…MB/sec" (the cumulative rate: not read here);
- "waiting for all operations to complete" when the run length is over, then "cleaning up objects" (its objects
  removed; a run cut short by a signal prints neither and leaves them).
It measures no latency and prints no summary: the figures are counted from the operation lines, each completion
matched to its operation by id (its type and length). Its load runs from its first per-second line to the end of
the run length, so that is the measured window (the run length less its idle first second). It sends whenever it
wakes (an operation completed, or a second passed) until it has sent the target rate times the time so far: after
its operations complete it idles until its next second, so its load comes in bursts at a low rate. Each second of
the series is the operations completed between two per-second lines; the first (idle) and what completed after the
last one (the end of the run and the operations still in flight) are partial.
"""

from __future__ import annotations

import re
import statistics
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ..core.errors import ParseError
from . import lifecycle
from .base import DriverContext, Outcome, run_group_timeout
from ..core.figures import checked, count
from .instances import measure_instances
from .pools import create_pool, remove_pool
from .lifecycle import Hooks, Step, write_room
from .rounds import round_suffix
from ..cluster.safety import amplification
from ..core.results import Latency, Measurement, Sample, Test
from ..hosts.local import CommandResult, Spawn

MIB = 1024 * 1024
TOOL = "rados load-gen"
BELOW_TARGET = 0.9       # a rate below this share of the target is noted as held back

_RUN_LENGTH_RE = re.compile(r"^run length (\d+) seconds$")
_OP_RE = re.compile(r"^(READ|WRITE) : oid=\S+ off=(\d+) len=(\d+)$")
_DONE_RE = re.compile(r"^op (\d+) completed, throughput=")
_SECOND_RE = re.compile(r"^\s*(\d+): throughput=(\S+)MB/sec pending data=(\d+)$")
_END = "waiting for all operations to complete"
IDLE_S = 1          # load-gen's first second, in which it sends nothing


@dataclass(frozen=True)
class LoadGenCommand:
    pool: str
    duration_s: int
    target_bytes_per_s: int
    read_percent: int
    max_ops: int
    objects: int
    min_object_size: int
    max_object_size: int
    min_op_size: int
    max_op_size: int
    max_backlog: int | None = None

    def argv(self, client_args: list[str]) -> list[str]:
        argv = ["rados", *client_args, "-p", self.pool, "load-gen",
                "--num-objects", str(self.objects),
                "--min-object-size", str(self.min_object_size), "--max-object-size", str(self.max_object_size),
                "--min-op-len", str(self.min_op_size), "--max-op-len", str(self.max_op_size),
                "--max-ops", str(self.max_ops), "--target-throughput", str(self.target_bytes_per_s),
                "--read-percent", str(self.read_percent), "--run-length", str(self.duration_s)]
        if self.max_backlog is not None:
            argv += ["--max-backlog", str(self.max_backlog)]
        return argv

    def sent_bound(self) -> int:
        """The most bytes its operations may carry: the target over the run length, and the operations in flight
        when it ends."""
        return self.target_bytes_per_s * self.duration_s + self.max_ops * self.max_op_size

    def written_bound(self) -> int:
        """The most client bytes it may leave written at once: its operations' bytes (any of them may be a write),
        at most every object in full, plus the one byte that makes each object (a whole allocation unit)."""
        return min(self.sent_bound(), self.objects * self.max_object_size) + self.objects * 64 * 1024


def parse(text: str) -> Measurement:
    """rados load-gen output -> Measurement. ParseError when it never got to its run (no "run length" line), its run
    did not end (cut short: no figure covers the time it was asked for), or an operation completed that was never
    made."""
    run_length: int | None = None
    ended = False
    ops: list[tuple[str, int]] = []          # by id: (READ or WRITE, bytes)
    done: dict[str, list[int]] = {"READ": [0, 0], "WRITE": [0, 0]}      # ops, bytes
    seconds: list[tuple[int, int, int, int]] = []      # (second, ops, bytes completed in it, pending bytes)
    in_second = [0, 0]
    for line in text.splitlines():
        line = line.rstrip()
        if (m := _OP_RE.match(line)) is not None:
            ops.append((m.group(1), count(m.group(3), "len")))
        elif (m := _DONE_RE.match(line)) is not None:
            op_id = count(m.group(1), "op id")
            if op_id >= len(ops):
                raise ParseError(f"{TOOL}: op {op_id} completed but only {len(ops)} operations were made")
            kind, length = ops[op_id]
            done[kind][0] += 1
            done[kind][1] += length
            in_second[0] += 1
            in_second[1] += length
        elif (m := _SECOND_RE.match(line)) is not None:
            seconds.append((count(m.group(1), "second"), in_second[0], in_second[1],
                            count(m.group(3), "pending data")))
            in_second = [0, 0]
        elif (m := _RUN_LENGTH_RE.match(line)) is not None:
            run_length = count(m.group(1), "run length")
        elif line == _END:
            ended = True
    if run_length is None:
        raise ParseError(f"{TOOL}: no \"run length\" line: it did not start its run (last line: {_last(text)!r})")
    if not ended:
        raise ParseError(f"{TOOL}: its run did not end (no \"{_END}\"): cut short (last line: {_last(text)!r})")
    window = run_length - IDLE_S
    if window <= 0:
        raise ParseError(f"{TOOL}: a run length of {run_length} s is its idle first second alone: no load")
    samples = [Sample(t_s=float(sec), bytes_per_s=float(b), ops_per_s=float(n), partial=i == 0)
               for i, (sec, n, b, _) in enumerate(seconds)]
    if in_second[0]:
        last = seconds[-1][0] if seconds else 0
        samples.append(Sample(t_s=float(last + 1), bytes_per_s=float(in_second[1]), ops_per_s=float(in_second[0]),
                              partial=True))
    ops_done = done["READ"][0] + done["WRITE"][0]
    bytes_done = done["READ"][1] + done["WRITE"][1]
    whole = [s for s in samples if not s.partial]
    per_second = [s.bytes_per_s or 0.0 for s in whole]
    ops_second = [s.ops_per_s or 0.0 for s in whole]
    return checked(Measurement(
        tool=TOOL, op="mixed", duration_s=float(window),
        ops_total=float(ops_done), bytes_total=float(bytes_done),
        ops_per_s=ops_done / window, bytes_per_s=bytes_done / window,
        bytes_per_s_max=max(per_second) if per_second else None,
        bytes_per_s_min=min(per_second) if per_second else None,
        bytes_per_s_stddev=statistics.stdev(per_second) if len(per_second) >= 2 else None,
        ops_per_s_max=max(ops_second) if ops_second else None,
        ops_per_s_min=min(ops_second) if ops_second else None,
        ops_per_s_stddev=statistics.stdev(ops_second) if len(ops_second) >= 2 else None,
        latency=Latency(),
        timeseries=samples,
        extra={"run_length_s": run_length, "ops_made": len(ops), "reads": done["READ"][0],
               "read_bytes": done["READ"][1], "writes": done["WRITE"][0], "write_bytes": done["WRITE"][1],
               "pending_bytes_max": max((p for *_, p in seconds), default=0)},
    ))


def _last(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


# ---- running a group ------------------------------------------------------------------------------------

def command(test: Test, pool: str) -> LoadGenCommand:
    p = test.params
    return LoadGenCommand(pool=pool, duration_s=int(round(p["duration_s"])), target_bytes_per_s=p["target_throughput"],
                          read_percent=p["read_percent"], max_ops=p["concurrency"], objects=p["objects"],
                          min_object_size=p["min_object_size"], max_object_size=p["max_object_size"],
                          min_op_size=p["min_op_size"], max_op_size=p["max_op_size"], max_backlog=p.get("max_backlog"))


class RadosLoadGen(Hooks[str]):
    """A pool for the group; each test, once or in rounds, from this machine or one load-gen per client host.
    Each run makes its own objects and removes them at its end; one cut short leaves them to the pool's removal.
    Never a pool cephbench did not create (the kind's existing_pools is False): load-gen opens the pool itself, so
    -N does not reach its objects, named at random in the default namespace, which a run cut short would leave
    among the owner's."""

    @contextmanager
    def resources(self, ctx: DriverContext, group: list[Test]) -> Iterator[str]:
        pool = create_pool(ctx, ctx.name(group[0].group), group[0].params["pool_profile"])
        try:
            yield pool
        finally:
            remove_pool(ctx, pool)

    def one_round(self, step: Step[str], n: int) -> Outcome | None:
        """Round n (0: no rounds) of one load-gen here, or one on each client host started at one instant; merged.
        None in a dry run. Refused when what it may write does not fit under the capacity guard."""
        ctx, test, clients = step.ctx, step.test, step.clients
        notes = list(step.notes)
        cmd = command(test, step.res)
        where = clients or [None]
        amp = amplification(test.params["pool_profile"])
        bound = cmd.written_bound() * len(where)
        refused, _ = write_room(step, n, amp, bound, TOOL,
                                "lower target_throughput, duration, or objects x max_object_size", pools=[cmd.pool])
        if refused is not None:
            return refused
        raw_dir = ctx.rundir.raw_dir(test.id) if ctx.rundir else None
        args = ctx.target.remote_client_args() if clients else ctx.target.client_args()
        spawns = [(c, Spawn(cmd.argv(args), raw_dir / f"rados-load-gen{'-' + c.name if c else ''}"
                            f"{round_suffix(n)}.txt" if raw_dir else None)) for c in where]

        def parse_one(i: int, r: CommandResult) -> Measurement:
            m = parse(r.stdout)
            m.extra.update({"target_bytes_per_s": cmd.target_bytes_per_s, "read_percent": cmd.read_percent})
            return m

        try:
            outcome = measure_instances(ctx, test, step.started, spawns, run_group_timeout(cmd.duration_s),
                                        parse_one, tool=TOOL, latency="mean-max", notes=notes)
        finally:
            if not ctx.dry_run:
                ctx.write_ended(int(bound * amp))
        m = outcome.measurement if outcome is not None else None
        target = cmd.target_bytes_per_s * len(where)
        if m is not None and m.bytes_per_s is not None and m.bytes_per_s < BELOW_TARGET * target:
            outcome.notes.append(f"below its target: {m.bytes_per_s / MIB:.2f} MiB/s of the {target / MIB:.2f} "
                                 f"MiB/s asked (the cluster, concurrency {cmd.max_ops} or the backlog limit held it "
                                 "back)")
        return outcome


HOOKS = RadosLoadGen()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    return lifecycle.run_group(HOOKS, ctx, group, todo)
