"""`rados bench`: command builder, parser of its text output, and its group's hooks (drivers/lifecycle.py).

The parser reads both the current summary ("Average Latency(s):", "Average IOPS:")
and the old one the seeds show ("Average Latency:", no IOPS lines). rados bench
prints "MB" meaning MiB (2^20 bytes): that is what we convert from.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence, TypeVar

# the top-up's rules are the kind's: the plan's estimate counts a top-up by them too
from ..kinds.rados_bench import (SEQ_RATIO_MARGIN, TOPUP_MAX_CONCURRENCY, TOPUP_MAX_IN_FLIGHT,  # noqa: F401
                                TOPUP_SPEEDUP_MAX, TOPUP_START_S, seq_ratio, seq_write_ratio, topup_concurrency,
                                topup_effect_measured, topup_estimate_s)
from ..cluster.safety import CapacityBudget, amplification
from ..core.merge import merge_instances
from ..core.units import format_size
from ..core.results import Latency, Measurement, Sample, SearchStop, Test, steady_state
from ..core.errors import ParseError
from ..core.figures import checked, count, number
from ..evidence.rounds import Seen
from ..hosts.fanout import failure
from ..hosts.local import CommandResult, Spawn
from . import lifecycle
from .base import DriverContext, Outcome, client_notes, run_group_timeout
from .instances import run_instances
from .lifecycle import Hooks, Step
from .pools import create_pool, remove_pool
from .rados_namespace import own_namespace, release_namespaces
from .rounds import RoundsEnd, round_suffix

MIB = 1024 * 1024
NS = 1e9

# "  12      16       181       165   131.654       188    0.504986    0.466868"
_SECOND_RE = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s+([\d.]+)\s*$")
_SUMMARY_RE = re.compile(r"^\s*([A-Za-z][A-Za-z ()/]*?)\s*:\s*([-\d.e+]+)\s*$")

_FIELDS = {
    "total time run": "duration_s",
    "total writes made": "ops_total",
    "total reads made": "ops_total",
    "write size": "op_size",
    "read size": "op_size",
    "object size": "object_size",
    "bandwidth (mb/sec)": "bw_mib",
    "stddev bandwidth": "bw_stddev_mib",
    "max bandwidth (mb/sec)": "bw_max_mib",
    "min bandwidth (mb/sec)": "bw_min_mib",
    "average iops": "iops",
    "stddev iops": "iops_stddev",
    "max iops": "iops_max",
    "min iops": "iops_min",
    "average latency(s)": "lat_mean_s",
    "average latency": "lat_mean_s",
    "stddev latency(s)": "lat_stddev_s",
    "stddev latency": "lat_stddev_s",
    "max latency(s)": "lat_max_s",
    "max latency": "lat_max_s",
    "min latency(s)": "lat_min_s",
    "min latency": "lat_min_s",
}


@dataclass(frozen=True)
class RadosBenchCommand:
    pool: str
    mode: str                 # write | seq | rand
    duration_s: int
    concurrency: int
    object_size: int
    run_name: str
    no_cleanup: bool = True
    max_objects: int | None = None
    reuse: bool = False         # write the run name's objects again from the first, under their names (--reuse-bench)
    namespace: str | None = None    # the run's own, in a pool it did not create (rados_namespace.own_namespace)

    def argv(self, client_args: list[str]) -> list[str]:
        if self.mode not in ("write", "seq", "rand"):
            raise ValueError(f"unknown rados bench mode {self.mode!r}")
        argv = ["rados", *client_args, "-p", self.pool, *(["-N", self.namespace] if self.namespace else []),
                "bench", str(self.duration_s), self.mode,
                "-t", str(self.concurrency), "--run-name", self.run_name]
        if self.mode == "write":
            argv += ["-b", str(self.object_size), "-O", str(self.object_size)]
            if self.no_cleanup:
                argv.append("--no-cleanup")
            if self.max_objects is not None:
                argv += ["--max-objects", str(self.max_objects)]
            if self.reuse:
                argv.append("--reuse-bench")
        return argv


# the summary's figures taken over per-second reports
PER_SECOND_FIELDS = ("bw_stddev_mib", "bw_max_mib", "bw_min_mib", "iops_stddev", "iops_max", "iops_min")


# the write's header: "Maintaining 16 concurrent writes of 4194304 bytes to objects of size 4194304 for up to 5
# seconds or 0 objects"
_RUNTIME_RE = re.compile(r"^Maintaining \d+ concurrent writes of \d+ bytes .* for up to (\d+) seconds", re.M)


def parse(text: str, mode: str, requested_s: float | None = None) -> Measurement:
    """rados bench text output -> Measurement. Raises ParseError when there is no summary.
    `requested_s`: the run time the command asked for (a write prints it; seq and rand do not), after which the
    seconds rados bench still reports are partial: it only waits for the operations in flight then."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        m = _SUMMARY_RE.match(line)
        if m:
            key = _FIELDS.get(m.group(1).strip().lower())
            if key:
                values[key] = number(m.group(2), m.group(1).strip())
    seconds = parse_seconds(text)
    samples = seconds[3] if seconds else []
    if "duration_s" not in values or "bw_mib" not in values:
        tail = _last_line(text)
        raise ParseError(f"no rados bench summary in the output (last line: {tail!r})")
    header = _RUNTIME_RE.search(text)
    return _measurement(values, _mark_drain(samples, count(header.group(1), "seconds") if header else requested_s),
                        mode)


# `rados bench --format json` (Ceph 10+): the summary's keys -> the text summary's names above
_JSON_FIELDS = {
    "total_time_run": "duration_s", "total_writes_made": "ops_total", "total_reads_made": "ops_total",
    "write_size": "op_size", "read_size": "op_size", "op_size": "op_size", "object_size": "object_size",
    "bandwidth": "bw_mib", "stddev_bandwidth": "bw_stddev_mib", "max_bandwidth": "bw_max_mib",
    "min_bandwidth": "bw_min_mib", "average_iops": "iops", "stddev_iops": "iops_stddev", "max_iops": "iops_max",
    "min_iops": "iops_min", "average_latency": "lat_mean_s", "stddev_latency": "lat_stddev_s",
    "max_latency": "lat_max_s", "min_latency": "lat_min_s",
}
_JSON_START_RE = re.compile(r"^\s*\{", re.M)
MAX_PLAIN_LINES = 64


def json_document(text: str) -> dict:
    """The JSON object of `rados bench --format json` output. Ceph 16 prints plain status lines around and even
    inside it ("hints = 1" before; "Cleaning up (deleting benchmark objects)", "Removed N objects", "Clean up
    completed ..." in the middle of the per-second list when it removes its objects): each is cut where the
    decoder stops at a letter, up to the end of its line. ParseError when no document remains."""
    start = _JSON_START_RE.search(text)
    if start is None:
        raise ParseError(f"no JSON document in the rados bench output (last line: {_last_line(text)!r})")
    doc = text[start.start():]
    for _ in range(MAX_PLAIN_LINES):
        try:
            value, _end = json.JSONDecoder().raw_decode(doc.lstrip())
        except json.JSONDecodeError as exc:
            pos = len(doc) - len(doc.lstrip()) + exc.pos
            if pos >= len(doc) or not doc[pos].isalpha():
                raise ParseError(f"rados bench JSON cannot be read: {exc.msg} at character {exc.pos}") from None
            eol = doc.find("\n", pos)
            doc = doc[:pos] + (doc[eol + 1:] if eol >= 0 else "")
            continue
        except RecursionError:
            raise ParseError("rados bench JSON nested too deeply") from None
        if not isinstance(value, dict):
            raise ParseError("rados bench JSON is not an object")
        return value
    raise ParseError(f"more than {MAX_PLAIN_LINES} plain lines inside the rados bench JSON")


def parse_json(text: str, mode: str, requested_s: float | None = None) -> Measurement:
    """`rados bench --format json` output -> Measurement, as parse() makes of the text output (a write's run time is
    its seconds_to_run)."""
    doc = json_document(text)
    values = {key: number(doc[k], k) for k, key in _JSON_FIELDS.items() if doc.get(k) not in (None, "")}
    if "duration_s" not in values or "bw_mib" not in values:
        raise ParseError("no summary in the rados bench JSON (total_time_run and bandwidth missing)")
    # Ceph 16 prints stddev_iops of a write as an overflowed integer (-1515805776, 1076274096): a standard
    # deviation is never negative nor above the largest value
    sd = values.get("iops_stddev")
    if sd is not None and (sd < 0 or sd > values.get("iops_max", float("inf"))):
        del values["iops_stddev"]
    samples: list[Sample] = []
    prev = 0
    datas = doc.get("datas") or []
    if not isinstance(datas, list):
        raise ParseError("rados bench JSON: datas is not a list")
    for d in datas:
        if not isinstance(d, dict):
            raise ParseError("rados bench JSON: an entry of datas is not an object")
        sec, finished = count(d.get("sec"), "datas.sec"), count(d.get("finished"), "datas.finished")
        if sec > 0:
            last = d.get("last_lat")
            samples.append(Sample(t_s=sec, bytes_per_s=number(d.get("cur_bw"), f"cur_bw of second {sec}") * MIB,
                                  ops_per_s=float(finished - prev),
                                  lat_mean_ns=number(last, "last_lat") * NS if _is_number(str(last)) else None))
        prev = finished
    if doc.get("seconds_to_run") not in (None, ""):
        requested_s = count(doc["seconds_to_run"], "seconds_to_run")
    return _measurement(values, _mark_drain(samples, requested_s), mode)


def _mark_drain(samples: list[Sample], requested_s: float | None) -> list[Sample]:
    """The seconds after the requested run time are partial: rados bench starts no operation then and only waits
    for those in flight (a slow cluster's 4 MiB writes may take seconds to drain)."""
    for s in samples:
        s.partial = requested_s is not None and s.t_s > requested_s
    return samples


def _per_second_figures(values: dict[str, float], samples: list[Sample]) -> None:
    """rados bench's own stddev, max and min count every second it reported; with partial seconds among them these
    are taken again over the whole seconds alone (stddev as rados bench takes it: of a sample, n - 1)."""
    whole = steady_state(samples)
    for key in PER_SECOND_FIELDS:
        values.pop(key, None)
    for (sd, hi, lo), figures in ((("bw_stddev_mib", "bw_max_mib", "bw_min_mib"),
                                   [s.bytes_per_s / MIB for s in whole if s.bytes_per_s is not None]),
                                  (("iops_stddev", "iops_max", "iops_min"),
                                   [s.ops_per_s for s in whole if s.ops_per_s is not None])):
        if figures:
            values[hi], values[lo] = max(figures), min(figures)
        if len(figures) >= 2:
            values[sd] = statistics.stdev(figures)


def json_concurrency(text: str) -> int | None:
    """Operations in flight: the write's concurrent_ios, else the most ops a second had in flight."""
    doc = json_document(text)
    if doc.get("concurrent_ios") not in (None, ""):
        return count(doc["concurrent_ios"], "concurrent_ios")
    in_flight = [count(d.get("cur_ops"), "datas.cur_ops") for d in doc.get("datas") or [] if isinstance(d, dict)]
    return max(in_flight) if in_flight and max(in_flight) > 0 else None


_MAINTAINING_RE = re.compile(r"Maintaining (\d+) concurrent (?:writes|reads)")


def text_concurrency(text: str) -> int | None:
    """Operations in flight of the text output: the write's "Maintaining N concurrent writes", else the most a
    per-second line had in flight ("Cur ops": all of them while the run is going)."""
    header = _MAINTAINING_RE.search(text)
    if header:
        return count(header.group(1), "concurrent writes")
    in_flight = [count(m.group(2), "Cur ops") for ln in text.splitlines() if (m := _SECOND_RE.match(ln))]
    return max(in_flight) if in_flight and max(in_flight) > 0 else None


def _measurement(values: dict[str, float], samples: list[Sample], mode: str) -> Measurement:
    if not samples:
        # It ended before its first per-second report (a short write cut by --max-objects): the per-second
        # figures are then no figures (Max bandwidth 0, Min bandwidth DBL_MAX = 1.79769e+308).
        for key in PER_SECOND_FIELDS:
            values.pop(key, None)
    elif any(s.partial for s in samples):
        _per_second_figures(values, samples)
    duration = values["duration_s"]
    ops = values.get("ops_total")
    op_size = int(values["op_size"]) if "op_size" in values else None
    iops = values.get("iops")
    if ops is not None and duration > 0:
        # the old format prints no IOPS, and the new one int(IOPS): 0 for 4 MiB objects at 3 MiB/s
        iops = ops / duration
    return checked(Measurement(
        tool="rados bench",
        op=mode,
        duration_s=duration,
        ops_total=ops,
        bytes_total=ops * op_size if ops is not None and op_size is not None else None,
        op_size_bytes=op_size,
        object_size_bytes=int(values["object_size"]) if "object_size" in values else op_size,
        bytes_per_s=values["bw_mib"] * MIB,
        bytes_per_s_stddev=_scaled(values.get("bw_stddev_mib"), MIB),
        bytes_per_s_max=_scaled(values.get("bw_max_mib"), MIB),
        bytes_per_s_min=_scaled(values.get("bw_min_mib"), MIB),
        ops_per_s=iops,
        ops_per_s_stddev=values.get("iops_stddev"),
        ops_per_s_max=values.get("iops_max"),
        ops_per_s_min=values.get("iops_min"),
        latency=Latency(
            mean_ns=_scaled(values.get("lat_mean_s"), NS),
            stddev_ns=_scaled(values.get("lat_stddev_s"), NS),
            max_ns=_scaled(values.get("lat_max_s"), NS),
            min_ns=_scaled(values.get("lat_min_s"), NS),
        ),
        timeseries=samples,
    ))


def parse_interrupted(text: str, mode: str, object_size: int) -> Measurement:
    """The figures of a rados bench that was interrupted (SIGINT: it prints no summary) from its per-second lines:
    the ops finished by the last whole second it reported, over those seconds. Only the mean latency exists then."""
    full = parse_seconds(text)
    if full is None:
        raise ParseError(f"rados bench was stopped before its first per-second report (last line: "
                         f"{_last_line(text)!r})")
    sec, finished, avg_lat, samples = full
    return checked(Measurement(
        tool="rados bench", op=mode, duration_s=float(sec), ops_total=float(finished),
        bytes_total=float(finished * object_size), op_size_bytes=object_size, object_size_bytes=object_size,
        bytes_per_s=finished * object_size / sec, ops_per_s=finished / sec,
        latency=Latency(mean_ns=avg_lat * NS if avg_lat is not None else None), timeseries=samples))


def parse_seconds(text: str) -> tuple[int, int, float | None, list[Sample]] | None:
    """(last second, ops finished by then, its avg lat(s), the per-second samples), or None before the first."""
    last = None
    samples: list[Sample] = []
    prev_finished = 0
    for line in text.splitlines():
        m = _SECOND_RE.match(line)
        if not m:
            continue
        sec, finished = count(m.group(1), "seconds"), count(m.group(4), "finished ops")
        if sec > 0:
            last_lat = m.group(7)
            samples.append(Sample(t_s=sec, bytes_per_s=number(m.group(6), f"cur MB/s of second {sec}") * MIB,
                                  ops_per_s=float(finished - prev_finished),
                                  lat_mean_ns=number(last_lat, "last lat(s)") * NS if _is_number(last_lat) else None))
            last = (sec, finished, number(m.group(8), "avg lat(s)"))
        prev_finished = finished
    if last is None:
        return None
    return last[0], last[1], last[2], samples


def _scaled(v: float | None, factor: float) -> float | None:
    return None if v is None else v * factor


def _is_number(s: str) -> bool:
    """rados bench prints "-" as the last latency of a second in which no op completed."""
    try:
        float(s)
        return True
    except (ValueError, OverflowError):
        return False


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


# ---- running a group: pools, write, reads, cleanup ------------------------------------

def live_line(line: str) -> tuple[float, None] | None:
    """(bytes/s, None) of one per-second line; None for any other line, or one whose figures cannot be read."""
    m = _SECOND_RE.match(line)
    if not m:
        return None
    try:
        sec, bw = count(m.group(1), "second"), number(m.group(6), "cur MB/s") * MIB
    except ParseError:
        return None
    return (bw, None) if sec > 0 and math.isfinite(bw) else None


def live_figures(paths: list) -> tuple[float | None, float | None]:
    """Current bytes/s summed over instances, from the last per-second line each has printed."""
    from .base import live_sum, newest_line
    return live_sum(paths, lambda p: newest_line(p, live_line))


@dataclass(frozen=True)
class Fed:
    """What one instance's write left for the reads: its objects, made in so many seconds."""
    objects: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.objects / self.seconds if self.seconds > 0 else 0.0


_WRITES_MADE = re.compile(r'^Total writes made:\s+(\d+)\s*$|"total_writes_made":\s*"?(\d+)', re.M)   # text, json


def objects_written(outputs: list[str]) -> int | None:
    """The objects every instance's write made, from their summaries; None when one has no summary (stopped early:
    what it wrote is not known, only what it was allowed)."""
    counts = [_WRITES_MADE.search(text) for text in outputs]
    return None if not counts or any(c is None for c in counts) else sum(int(c.group(1) or c.group(2))
                                                                         for c in counts)


def seq_objects(fed: list[Fed], seq_s: float, ratio: float) -> int:
    """Objects each instance must hold for a seq of `seq_s` not to run out, when it reads `ratio` times as many
    objects per second as the slowest instance's write made."""
    rate = min(f.rate for f in fed)
    return math.ceil(rate * ratio * seq_s)


def hand_seq(samples: Sequence[Sample], objects: int) -> tuple[float, float] | None:
    """What a seq of only `objects` objects would have measured (objects per second, and its seconds), read off a
    topped-up seq's own per-second series: the pace of its first seconds until it had read that many, a stalled second
    counted whole. A seq typed by hand after the same write reads the write's objects alone, then stops, so this is the
    figure the top-up changed. None when the seq's whole seconds read fewer objects than that."""
    if objects <= 0:
        return None
    left, t = float(objects), 0.0
    for s in samples:
        if s.partial or s.ops_per_s is None:
            continue
        if s.ops_per_s >= left:
            t += left / s.ops_per_s
            return objects / t, t
        left -= s.ops_per_s
        t += 1.0
    return None


def topup_target(profile: dict, want: int, have: int, room: int) -> tuple[int, bool]:
    """(Objects per instance a top-up leaves for the seq, whether it writes the write's objects again under their
    names, --reuse-bench): `want` for the seq, within `room` more under the capacity guard. An erasure-coded pool
    refuses a rewrite (rados bench's writes are not whole-object writes: error 95, EOPNOTSUPP, without
    allow_ec_overwrites), so there the run name's objects are written anew under its next prefix, every one taking
    room, and the write's stay beside them until the pool goes."""
    rewrite = profile["type"] != "erasure"
    return min(want, have + room if rewrite else room), rewrite


def topup_effect(m: Measurement, before: int, after: int, in_flight: int, instances: int = 1,
                 object_size: int | None = None) -> str:
    """The note of how much a top-up changed a seq's figure, its figures put in `m.extra["topup"]` too: the
    objects it added, and the seq's objects per second against what a seq of the write's objects alone (what
    `rados bench seq` typed after the same write reads, then stops) would have measured at the pace of this seq's
    own first seconds (hand_seq)."""
    read = int(m.ops_total or 0)
    hand = hand_seq(m.timeseries, before) if read > before else None
    effect = m.ops_per_s / hand[0] if hand and m.ops_per_s else None
    m.extra["topup"] = {"objects_before": before, "objects_added": after - before, "objects_after": after,
                        "in_flight": in_flight, "hand_ops_per_s": hand[0] if hand else None,
                        "hand_seconds": hand[1] if hand else None, "effect": effect}
    added = (f"the top-up added {after - before:,} objects to the {before:,} the write made"
             + (f" (its {instances} instances together)" if instances > 1 else ""))
    if read <= before:
        return (f"{added}; this seq read {read:,}, no more than the write made, so a seq typed by hand after the "
                "same write would have read as many (those it read had been written again just before it)")
    if hand is None or effect is None:
        return (f"{added}; this seq read {read:,}, and what a seq of the write's objects alone would have measured "
                f"is not known (its whole seconds read fewer than {before:,})")
    size, (mid, lo, hi) = topup_effect_measured(object_size or m.object_size_bytes or 0)
    m.extra["topup"]["measured_on_lab"] = {"object_size": size, "median": mid, "lowest": lo, "highest": hi}
    return (f"{added}; this seq read {read:,}: a seq of the write's {before:,} alone (typed by hand after the same "
            f"write) would have read them in about {hand[1]:.1f} s and stopped, and this seq's first {hand[1]:.1f} s "
            f"read {hand[0]:,.0f} objects/s against {m.ops_per_s:,.0f} over its {m.duration_s:.1f} s ({effect - 1:+.0%}"
            f"); measured by hand on the 2-core lab at {format_size(size)}, a topped-up seq read {mid:.2f}x as fast as "
            f"the seq of the write's objects alone ({lo:.2f}-{hi:.2f} in 6 runs), a change its own seconds do not "
            f"show: the top-up's writes leave the OSDs busy (docs/suites.md)")


def write_seconds_for(fed: list[Fed], read: list[Fed], seq_s: float) -> int:
    """The write's duration that would have fed a seq of `seq_s` at the read rates it measured."""
    return max(math.ceil(r.rate * seq_s / f.rate) for f, r in zip(fed, read) if f.rate > 0)


def stopped_mid_write(results: Sequence[CommandResult], seen: Seen | None) -> bool:
    """Whether the capacity guard's stop cut the write short: its watch stopped it and an instance did not end on
    its own. A stop that came as the last instances finished (the watch's rate said the limit was near) cut nothing:
    each rados bench wrote its objects and its metadata object, and the reads read them. seed-bobtail-2012 on
    FileStore (2026-12-07): all 8 instances had written the 61 objects the guard allowed each when the watch stopped
    the write, and both seqs of the group failed as if it had been cut."""
    return bool(seen is not None and seen.cluster.stopped_for_capacity and any(not r.ok for r in results))


P = TypeVar("P")       # an instance's place: its client host (None: this machine) and its number there


def ran_out(parts: Sequence[Measurement], requested_s: float) -> float | None:
    """The seconds of the shortest read instance that stopped before 80 % of its requested duration: it read every
    object there was. Each instance's own duration, not the merged window: hosts started over ssh apart share a
    window shorter than each one's run. None: none ran out."""
    short = [p.duration_s for p in parts if p.duration_s < 0.8 * requested_s]
    return min(short) if short else None


def read_sources(readers: Sequence[P], writers: Sequence[P]) -> list[P]:
    """The write instance whose objects each read instance reads: its own, where it wrote (a client's reads read
    what its own write made); past the hosts a write's search of them reached (`clients: auto` stopped early), those
    that wrote, in turn (host by host, each instance the same instance of a host that wrote)."""
    return [r if r in writers else writers[k % len(writers)] for k, r in enumerate(readers)]


Place = tuple[Any, int]     # an instance's place: its client host (clients.Client; None: this machine), its number


@dataclass
class LastRound:
    """What a test's last round left for `finish`: its object limit, its instances' measurements and places, and
    whether the group ends with it (a failed write leaves the reads nothing)."""
    max_objects: int | None = None
    parts: list[Measurement] = field(default_factory=list)
    where: list[Place] = field(default_factory=list)
    ends_group: bool = False


@dataclass
class RadosGroup:
    """A group's pools and what passes from test to test (the lifecycle's resources value): what the last write
    left for the reads, and whether the capacity guard cut it."""
    group: list[Test]
    pools: list[str]                # one per instance
    namespace: str | None           # an existing pool: the run's objects (rados_namespace.own_namespace)
    run_names: list[str]            # this machine's instances' run names
    client_args: list[str]
    remote_args: list[str]
    write_load: int                 # the last write's operations in flight: a top-up writes as it did
    writers: list[Place] = field(default_factory=list)     # the last write's instances, whose objects the reads read
    fed: list[Fed] = field(default_factory=list)   # what the last write left each instance, in the order of writers
    write_cut: bool = False         # rados bench stopped mid-write records no metadata object: seq/rand cannot run
    topped: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)  # a topped-up seq's objects before,
                                                                                # after, in flight, instances
    last: dict[str, LastRound] = field(default_factory=dict)    # test id -> its last round

    @property
    def gid(self) -> str:
        return self.group[0].group

    @property
    def instances(self) -> int:
        return self.group[0].params["instances"]

    @property
    def profile(self) -> dict:
        return self.group[0].params["pool_profile"]

    @property
    def size(self) -> int:
        return self.group[0].params["object_size"]

    def places(self, ctx: DriverContext, test: Test) -> list[Place]:
        """A test's instances: N on this machine, or N on each of its client hosts (a search of them, `clients:
        auto`, has more hosts at each step), each with its own run name."""
        clients = ctx.clients_of(test)
        n = self.instances
        return [(c, i) for c in clients for i in range(n)] if clients else [(None, i) for i in range(n)]

    def run_name(self, ctx: DriverContext, place: Place) -> str:
        c, i = place
        return self.run_names[i] if c is None else ctx.name(self.gid, c.name, f"i{i}")

    def written_raw(self, results: list[CommandResult] | None) -> int | None:
        """Raw bytes a write added, when every instance said how many objects it made (a tighter bound than what
        it was allowed: the next write's room, and other runs', depend on it)."""
        made = objects_written([r.stdout for r in results]) if results else None
        return None if made is None else int(made * self.size * amplification(self.profile))

    def room(self, ctx: DriverContext, where: list[Place], least_objects: int = 0) -> tuple[int, CapacityBudget]:
        """Objects each instance may still write under the capacity guard (reserved until ctx.write_ended);
        with less room than `least_objects` each, it waits while the cluster is still freeing space."""
        client_bytes, budget = ctx.reserve_write(amplification(self.profile),
                                                 wanted=least_objects * self.size * len(where),
                                                 pools=sorted({self.pools[i] for _, i in where}))
        return client_bytes // self.size // len(where), budget

    def commands(self, ctx: DriverContext, where: list[Place], mode: str, duration_s: int, max_objects: int | None,
                 concurrency: int, reuse: bool = False) -> list[RadosBenchCommand]:
        names = [self.run_name(ctx, p) for p in (where if mode == "write" else read_sources(where, self.writers))]
        return [RadosBenchCommand(pool=self.pools[i], mode=mode, duration_s=duration_s, concurrency=concurrency,
                                  object_size=self.size, no_cleanup=True, max_objects=max_objects, reuse=reuse,
                                  namespace=self.namespace, run_name=name)
                for name, (_, i) in zip(names, where)]

    def spawns(self, where: list[Place], cmds: list[RadosBenchCommand], raw_dir: Path | None,
               stem: str) -> list[Spawn]:
        return [Spawn(cmd.argv(self.client_args if c is None else self.remote_args), (raw_dir / (
            f"{stem}-i{i}.txt" if c is None else f"{stem}-{c.name}-i{i}.txt")) if raw_dir else None)
            for cmd, (c, i) in zip(cmds, where)]


def _run(ctx: DriverContext, test: Test, where: list[Place], spawns: list[Spawn], duration_s: float):
    """(timed per client or None, the tools' results, what the watches saw); results None in a dry run."""
    ran = run_instances(ctx, test, [(c, sp) for (c, _), sp in zip(where, spawns)], run_group_timeout(duration_s),
                        live=live_figures)
    return (None, None, None) if ran is None else (ran.timed, ran.results, ran.seen)


class RadosBench(Hooks[RadosGroup]):
    """Write, then seq/rand reads of what was written, on fresh pools (one per instance). The reads read what the
    group's last write left: a write already recorded (a resumed run) runs again, unrecorded, while a read is still
    to do; a seq whose objects would not last is topped up first; a write the capacity guard cut leaves the reads
    nothing, and one that failed ends the group. A search's steps past its stop are skipped where they fall."""

    skips_in_place = True

    @contextmanager
    def resources(self, ctx: DriverContext, group: list[Test]) -> Iterator[RadosGroup]:
        first = group[0].params
        gid = group[0].group
        pools = [create_pool(ctx, ctx.name(gid, f"i{i}"), first["pool_profile"]) for i in range(first["instances"])]
        namespace = own_namespace(ctx, pools[0], first["pool_profile"], ctx.name(gid))
        g = RadosGroup(group, pools, namespace, [ctx.name(gid, f"i{i}") for i in range(first["instances"])],
                       ctx.target.client_args(), ctx.target.remote_client_args(),
                       write_load=first["concurrency"])
        g.writers = g.places(ctx, group[0])
        try:
            yield g
        finally:
            for p in dict.fromkeys(pools):
                release_namespaces(ctx, p)
                remove_pool(ctx, p)

    def needed(self, test: Test, group: list[Test], todo: set[str]) -> bool:
        """A write whose objects the reads still to do read: a write of no search, or the last of a search's steps
        (the reads that remain read what it leaves)."""
        return test.params["phase"] == "write" and (
            test.search is None or test is [t for t in group if t.params["phase"] == "write"][-1])

    def prepare(self, step: Step[RadosGroup]) -> Outcome | None:
        ctx, test, g = step.ctx, step.test, step.res
        mode = test.params["phase"]
        if mode != "write" and g.write_cut:
            return Outcome(test, step.started[0], 0.0, error=(
                "the capacity guard stopped the write before rados bench recorded what it wrote, so this "
                "read has nothing to read; lower the write's duration or raise settings.max_raw_used"))
        if mode == "seq" and g.fed and not ctx.dry_run:
            step.notes += self.top_up(step)
        return None

    def top_up(self, step: Step[RadosGroup]) -> list[str]:
        """Before a seq: when the objects the write left would not last its duration at the pace a seq may read
        them, write them again from the first and more after them (--reuse-bench: the same names, so only the
        new ones take room), up to what the capacity guard allows. An erasure-coded pool refuses a rewrite (rados
        bench's writes are not whole-object writes: EOPNOTSUPP without allow_ec_overwrites), so there the run
        name's objects are written anew under its next prefix, all of them taking room, and the seq reads those.
        Not recorded: the write's figure is its own."""
        ctx, seq, g = step.ctx, step.test, step.res
        fed, size = g.fed, g.size
        seq_s = seq.params["duration_s"]
        ratio, whence = seq_ratio(size, ctx.seq_ratios.get(size))
        want, have = seq_objects(fed, seq_s, ratio), min(f.objects for f in fed)
        if want <= have:
            return []
        extra, budget = g.room(ctx, g.writers)
        target, rewrite = topup_target(g.profile, want, have, extra)
        if target <= have:
            ctx.reserve(0)
            return [f"objects not topped up before the seq: the capacity guard leaves no room ({budget.describe()})"]
        secs = math.ceil(2 * target / min(f.rate for f in fed)) + 2    # --max-objects ends it, not the time
        in_flight = topup_concurrency(g.write_load, size, target)
        cmds = g.commands(ctx, g.writers, "write", secs, target, in_flight, reuse=rewrite)
        spawns = g.spawns(g.writers, cmds, ctx.rundir.raw_dir(seq.id) if ctx.rundir else None,
                          "rados-bench-topup-write")
        results = None
        try:
            timed, results, seen = _run(ctx, g.group[0], g.writers, spawns, secs)   # not recorded: nor what it saw
        finally:
            ctx.write_ended(g.written_raw(results))
        if results is None:
            return []
        failed = [r for r in results if not r.ok]
        why = "the capacity guard stopped the write" if stopped_mid_write(results, seen) else \
            ((failure(timed) if timed else None) or failed[0].error_text()) if failed else ""   # timed: clients only
        made = 0
        if not failed:
            try:
                made = min(int(parse(r.stdout, "write", cmd.duration_s).ops_total or 0)
                           for r, cmd in zip(results, cmds))
            except ParseError as exc:
                why = str(exc)
        if why:
            return [f"objects not topped up before the seq: {why}; it reads the {have} the write made"]
        how, wrote = (("--reuse-bench", f"wrote them again and {made - have} more, {made} in all") if rewrite else
                      ("of new objects under the same run name (an erasure-coded pool refuses rewrites)",
                       f"wrote {made} for the seq to read, {made - have} more than the write made (its own stay "
                       "beside them)"))
        note = (f"objects topped up before the seq: the {fed[0].seconds:.1f} s write made {have} objects per "
                f"instance, and a {seq_s:g} s seq may read {ratio:.1f}x as many per second as it wrote them "
                f"({whence}), so a rados bench write {how} -t {in_flight} (not recorded: raw/{seq.id}/"
                f"rados-bench-topup-write-*) {wrote}")
        if target < want:
            note += f"; the capacity guard allowed {target} of the {want} wanted ({budget.describe()})"
        g.topped[seq.id] = (sum(f.objects for f in fed), made * len(fed), in_flight, len(fed))
        # the next seq (a search's next step) finds them: at the write's pace, as many as were made
        fed[:] = [Fed(made, f.seconds * made / f.objects if f.objects else f.seconds) for f in fed]
        return [note]

    def one_round(self, step: Step[RadosGroup], k: int) -> Outcome | None:
        """One run of the phase's instances (with steady_state, round k of drivers/rounds.py)."""
        ctx, test, g, notes = step.ctx, step.test, step.res, step.notes
        mode = test.params["phase"]
        started, t0 = step.started
        last = g.last.setdefault(test.id, LastRound())
        max_objects = None
        where = g.places(ctx, test)
        if mode == "write" and not ctx.dry_run:
            # a search's write leaves room for every step it may still run: this one takes its share
            steps_left = step.searches.steps_left(test, g.group)
            per_instance, budget = g.room(ctx, where, test.params["concurrency"] * steps_left)
            per_instance //= steps_left
            if budget.waited_s >= 1.0:
                notes.append(f"capacity guard: waited {budget.waited_s:.0f} s while the cluster freed space "
                             f"(raw used falling: a removed pool's PGs being deleted) before this write"
                             + (" had room" if per_instance >= test.params["concurrency"] else
                                "; it did not free enough"))
            if per_instance < test.params["concurrency"]:
                ctx.reserve(0)
                msg = (f"capacity guard: writing would take the cluster past {budget.max_raw_used:.0%} raw "
                       f"used ({budget.describe()})")
                if k > 1:           # the rounds so far are the measurement
                    raise RoundsEnd(msg)
                if test.search is not None and g.fed:     # the search's steps so far stand; reads read them
                    why = SearchStop(reason="capacity", text=msg)
                    step.searches.stop(test, why)
                    return Outcome(test, started, time.monotonic() - t0, error=f"not run: {msg}",
                                   skipped=True, notes=list(notes), search_stop=why)
                last.ends_group = True
                return Outcome(test, started, time.monotonic() - t0, error=msg, notes=list(notes))
            max_objects = int(per_instance)
        last.max_objects = max_objects
        cmds = g.commands(ctx, where, mode, int(round(test.params["duration_s"])), max_objects,
                          test.params["concurrency"])
        if mode == "write":
            g.write_load = test.params["concurrency"]
        raw_dir = ctx.rundir.raw_dir(test.id if step.recorded else f"{g.gid}-prepare-write") if ctx.rundir else None
        spawns = g.spawns(where, cmds, raw_dir, f"rados-bench-{mode}{round_suffix(k)}")
        results = None
        try:
            timed, results, seen = _run(ctx, test, where, spawns, test.params["duration_s"])
        finally:
            if max_objects is not None:
                ctx.write_ended(g.written_raw(results))
        if results is None or seen is None:  # dry run
            return None
        commands = [r.cmdline for r in results]
        raw = [str(sp.output.relative_to(ctx.rundir.path)) for sp in spawns]
        cut = mode == "write" and stopped_mid_write(results, seen)
        g.write_cut = g.write_cut or cut
        failed = [r for r in results if not r.ok]
        if failed and not cut:
            err = f"rados bench {mode} failed: " + (failure(timed) or failed[0].error_text() if timed
                                                     else failed[0].error_text())
            last.ends_group = mode == "write"     # reads have nothing to read
            return Outcome(test, started, time.monotonic() - t0, error=err, commands=commands, raw=raw,
                           notes=list(notes), seen=seen)
        try:
            parts = [parse(r.stdout, mode, cmd.duration_s) if r.ok or not cut
                     else parse_interrupted(r.stdout, mode, g.size) for r, cmd in zip(results, cmds)]
        except ParseError as exc:
            return Outcome(test, started, time.monotonic() - t0, error=str(exc), commands=commands,
                           raw=raw, notes=list(notes), seen=seen)
        for part, t in zip(parts, timed or []):
            part.host, part.start_unix_s, part.end_unix_s = t.host, t.start_unix_s, t.end_unix_s
        last.parts, last.where = parts, where
        # latency weighted by each instance's ops: rados bench prints no percentiles
        m = merge_instances(parts, latency="mean-max")
        return Outcome(test, started, time.monotonic() - t0, measurement=m, commands=commands, raw=raw,
                       notes=notes + client_notes(m), seen=seen)

    def finish(self, step: Step[RadosGroup], outcome: Outcome) -> bool:
        """What a write left for the reads (and a seq learned of how fast it reads them), the capacity guard's cut
        of a write and a read that ran out of objects (warnings), a top-up's effect on its seq (a note); a failed
        write ends the group."""
        ctx, test, g = step.ctx, step.test, step.res
        last = g.last[test.id]
        m = outcome.measurement
        if m is None:
            return last.ends_group
        mode, size = test.params["phase"], g.size
        parts, max_objects = last.parts, last.max_objects
        warnings: list[str] = []
        read = [Fed(int(p.ops_total or 0), p.duration_s) for p in parts]
        n = g.instances
        if mode != "write" and len(last.where) > len(g.writers):
            outcome.notes.append(f"read from {len(last.where) // n} client hosts, and the write's search "
                                 f"wrote from {len(g.writers) // n}: past those, each host read the objects one "
                                 "of them wrote, in turn")
        if mode == "write":
            g.fed, g.writers = read, last.where
        elif mode == "seq" and g.fed:
            ratios = [r.rate / f.rate for f, r in zip(g.fed, read) if f.rate > 0]
            ctx.seq_ratios[size] = max([ctx.seq_ratios.get(size, 0.0), *ratios])
        fed = g.fed
        if mode == "write":
            if max_objects is not None and any((p.ops_total or 0) >= max_objects for p in parts):
                warnings.append(f"capacity guard: write stopped at {max_objects} objects per instance to stay "
                                f"below {ctx.settings.max_raw_used:.0%} raw used")
        elif (short := ran_out(parts, test.params["duration_s"])) is not None:
            seq_s = test.params["duration_s"]
            exact = mode == "seq" and fed and all(f.rate > 0 for f in fed)
            longer = (f"give the write at least {write_seconds_for(fed, read, seq_s)} s (it read "
                      f"{sum(r.rate for r in read):.0f} objects/s, the write made {sum(f.rate for f in fed):.0f}/s)"
                      if exact else "give the write a longer duration")
            warnings.append(f"{mode} ran out of objects after {short:.1f} s of the requested {seq_s:g} s: "
                            f"it read every object there was; {longer} (duration: {{write: ..., {mode}: ...}})")
        if not step.recorded:
            ctx.events.note(f"{g.gid}: wrote objects again for the reads that remain (not recorded)")
            return False
        if test.id in g.topped:
            outcome.notes.append(topup_effect(m, *g.topped[test.id], object_size=size))
        outcome.warnings = warnings
        return False


HOOKS = RadosBench()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    return lifecycle.run_group(HOOKS, ctx, group, todo)
