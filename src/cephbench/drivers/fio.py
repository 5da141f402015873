"""fio, shared by every fio user (disk baseline, fio with librados, fio with librbd).

Three pieces, as for every tool: `FioJob` + `fio_argv` build the command line,
`parse_fio_json` reads fio's `--output-format=json+` (pure), and `to_measurement`
turns the jobs that ran together into one Measurement.

Jobs that ran together are aggregated by summing bandwidth and IOPS and by
merging the json+ completion-latency histograms ("clat_ns" "bins"): percentiles
of several jobs are computed from the merged histogram, never averaged.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.merge import BIN_PERCENTILES, add_bins, percentiles_from_bins
from ..core.results import Latency, Measurement
from ..core.units import parse_size
from ..core.errors import ParseError
from ..core.figures import array, checked, count, mapping, number

PERCENTILES = BIN_PERCENTILES
ENGINES = {"libaio": "libaio", "rados": "rados", "rbd": "rbd", "nbd": "nbd"}


@dataclass(frozen=True)
class FioJob:
    """One fio job section. Sizes in bytes, times in seconds; `options` are engine options
    (pool, clientname, rbdname, filename, ...); `extra` any other fio option, verbatim."""

    name: str
    rw: str                               # read, write, randread, randwrite, rw, randrw
    bs: int
    iodepth: int = 1
    numjobs: int = 1
    runtime_s: float | None = None
    ramp_s: float | None = None
    size: int | None = None
    direct: bool = True
    engine: Literal["libaio", "rados", "rbd", "nbd"] = "libaio"
    options: dict[str, Any] = field(default_factory=dict)
    rwmixread: int | None = None
    time_based: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def args(self) -> list[str]:
        if self.engine not in ENGINES:
            raise ValueError(f"unknown fio engine {self.engine!r}")
        a = [f"--name={self.name}", f"--ioengine={self.engine}", f"--rw={self.rw}", f"--bs={self.bs}",
             f"--iodepth={self.iodepth}", f"--numjobs={self.numjobs}", f"--direct={int(self.direct)}"]
        if self.size is not None:
            a.append(f"--size={self.size}")
        if self.runtime_s is not None:
            a.append(f"--runtime={_secs(self.runtime_s)}")
        if self.ramp_s:
            a.append(f"--ramp_time={_secs(self.ramp_s)}")
        if self.time_based:
            a.append("--time_based=1")
        if self.rwmixread is not None:
            a.append(f"--rwmixread={self.rwmixread}")
        for k, v in {**self.options, **self.extra}.items():
            a.append(f"--{k}" if v is True else f"--{k}={v}")
        return a


def _secs(s: float) -> str:
    return f"{int(s)}s" if float(s).is_integer() else f"{int(round(s * 1000))}ms"


def fio_argv(jobs: list[FioJob], global_opts: dict[str, Any], output_path: Path | str | None) -> list[str]:
    """fio command line: global options first (fio treats options before the first --name as global).
    `output_path` None: the JSON goes to stdout (fio run on another host over ssh)."""
    if not jobs:
        raise ValueError("fio needs at least one job")
    argv = ["fio", "--output-format=json+"] + ([f"--output={output_path}"] if output_path is not None else [])
    for k, v in global_opts.items():
        argv.append(f"--{k}" if v is True else f"--{k}={v}")
    for j in jobs:
        argv += j.args()
    return argv


# ---- parsing ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Clat:
    n: int
    mean_ns: float
    stddev_ns: float
    min_ns: float
    max_ns: float
    bins: dict[int, int]                 # latency bucket (ns) -> count, from json+
    percentiles_ns: dict[str, float]     # as fio printed them


@dataclass(frozen=True)
class Direction:
    io_bytes: int
    bytes_per_s: float
    iops: float
    runtime_s: float
    total_ios: int
    clat: Clat | None


@dataclass(frozen=True)
class JobResult:
    name: str
    groupid: int
    error: int
    runtime_s: float
    read: Direction
    write: Direction
    options: dict[str, str]
    version: str = ""       # the document's "fio version" ("fio-3.39"): what `fio --version` of the fio that ran says


def _json_start(text: str) -> int:
    """fio may print warnings ("fio: ...") before the JSON document."""
    if text.lstrip().startswith("{"):
        return text.index("{")
    i = text.find("\n{")
    if i < 0:
        raise ParseError(f"no JSON in the fio output (first line: {text.strip().splitlines()[0][:200]!r})"
                         if text.strip() else "the fio output is empty")
    return i + 1


def _clat(d: dict[str, Any], where: str) -> Clat | None:
    c = d.get("clat_ns")
    if not c:
        return None
    c = mapping(c, f"{where}.clat_ns")
    if not c.get("N"):
        return None
    where += ".clat_ns"
    pct = {}
    for k, v in mapping(c.get("percentile") or {}, f"{where}.percentile").items():
        pct[f"{number(k, f'{where}.percentile key'):g}"] = number(v, f"{where}.percentile[{k!r}]")
    bins = {count(k, f"{where}.bins key"): count(v, f"{where}.bins[{k!r}]")
            for k, v in mapping(c.get("bins") or {}, f"{where}.bins").items()}
    return Clat(n=count(c["N"], f"{where}.N"), mean_ns=number(c["mean"], f"{where}.mean"),
                stddev_ns=number(c.get("stddev", 0.0), f"{where}.stddev"), min_ns=number(c["min"], f"{where}.min"),
                max_ns=number(c["max"], f"{where}.max"), bins=bins, percentiles_ns=pct)


def _direction(d: Any, where: str) -> Direction:
    d = mapping(d, where)
    return Direction(io_bytes=count(d.get("io_bytes", 0), f"{where}.io_bytes"),
                     bytes_per_s=number(d.get("bw_bytes", 0), f"{where}.bw_bytes"),
                     iops=number(d.get("iops", 0.0), f"{where}.iops"),
                     runtime_s=count(d.get("runtime", 0), f"{where}.runtime") / 1000.0,
                     total_ios=count(d.get("total_ios", 0), f"{where}.total_ios"), clat=_clat(d, where))


def parse_fio_json(text: str) -> list[JobResult]:
    """fio `--output-format=json` or `json+` -> one JobResult per job (per clone with numjobs>1)."""
    start = _json_start(text)
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not fio JSON output: {exc}") from exc
    if not isinstance(data, dict) or "jobs" not in data:
        raise ParseError("not fio JSON output: no \"jobs\" in the document")
    version = data.get("fio version", "")
    if not isinstance(version, str):
        raise ParseError("fio JSON's \"fio version\" is not a string")
    out = []
    for i, j in enumerate(array(data["jobs"], "fio jobs")):
        where = f"jobs[{i}]"
        j = mapping(j, where)
        try:
            out.append(JobResult(name=str(j["jobname"]), groupid=count(j.get("groupid", 0), f"{where}.groupid"),
                                 error=count(j.get("error", 0), f"{where}.error"),
                                 runtime_s=count(j.get("job_runtime", 0), f"{where}.job_runtime") / 1000.0,
                                 read=_direction(j.get("read", {}), f"{where}.read"),
                                 write=_direction(j.get("write", {}), f"{where}.write"),
                                 options={str(k): str(v) for k, v in
                                          mapping(j.get("job options") or {}, f"{where}.job options").items()},
                                 version=version))
        except KeyError as exc:
            raise ParseError(f"fio job without the expected field {exc}") from exc
    return out


# ---- aggregation ----------------------------------------------------------------------

def merge_clat(clats: list[Clat]) -> Latency:
    """Completion latency of several jobs: pooled mean and stddev, merged histogram for percentiles."""
    clats = [c for c in clats if c is not None and c.n > 0]
    if not clats:
        return Latency()
    n = sum(c.n for c in clats)
    mean = sum(c.mean_ns * c.n for c in clats) / n
    second = sum((c.stddev_ns**2 + c.mean_ns**2) * c.n for c in clats) / n
    bins = add_bins(c.bins for c in clats)
    if bins:
        pct = percentiles_from_bins(bins)
    elif len(clats) == 1:
        pct = {k: v for k, v in clats[0].percentiles_ns.items() if k in PERCENTILES}
    else:
        pct = {}  # plain json (no bins) of several jobs: percentiles cannot be combined
    return Latency(mean_ns=mean, stddev_ns=math.sqrt(max(second - mean**2, 0.0)),
                   min_ns=min(c.min_ns for c in clats), max_ns=max(c.max_ns for c in clats), percentiles_ns=pct)


def _dirs(op: str) -> tuple[str, ...]:
    if op in ("rw", "randrw", "readwrite"):
        return ("read", "write")
    if "read" in op or op in ("seq", "rand"):
        return ("read",)
    if "write" in op:
        return ("write",)
    raise ValueError(f"unknown fio operation {op!r}")


def to_measurement(job_results: list[JobResult], op: str, tool: str = "fio", keep_bins: bool = False) -> Measurement:
    """Jobs that ran at the same time -> one Measurement: summed bandwidth and IOPS, merged latency bins.
    `keep_bins`: the merged bins go into extra.clat_bins too, for merge.merge_instances to merge this fio with
    the fio of other client hosts (latency="bins")."""
    if not job_results:
        raise ParseError("no fio jobs to aggregate")
    failed = [j for j in job_results if j.error]
    if failed:
        raise ParseError(f"fio job {failed[0].name!r} ended with error {failed[0].error}")
    parts = [getattr(j, d) for j in job_results for d in _dirs(op)]
    bs = {j.options.get("bs") for j in job_results}
    duration = max((p.runtime_s for p in parts), default=0.0)
    m = Measurement(
        tool=tool, op=op, duration_s=duration,
        bytes_total=float(sum(p.io_bytes for p in parts)),
        ops_total=float(sum(p.total_ios for p in parts)),
        bytes_per_s=sum(p.bytes_per_s for p in parts),
        ops_per_s=sum(p.iops for p in parts),
        latency=merge_clat([p.clat for p in parts if p.clat is not None]),
        extra={"jobs": len(job_results), "aggregate": "sum of jobs; latency from merged clat_ns bins"},
    )
    versions = {j.version for j in job_results if j.version}
    if len(versions) == 1:
        m.extra["version"] = versions.pop()       # as iperf3's and the loadgen's results record theirs
    if keep_bins:
        bins = add_bins(p.clat.bins for p in parts if p.clat is not None)
        m.extra["clat_bins"] = {str(k): v for k, v in sorted(bins.items())}
    if len(bs) == 1 and (b := bs.pop()):
        try:
            m.op_size_bytes = parse_size(b)
        except ValueError:
            pass
    return checked(m)
