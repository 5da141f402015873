"""Running fio against Ceph (rbd, rados and libaio-on-krbd engines): one fio process per test, its
json+ output and its per-second bandwidth/IOPS logs (`log_avg_msec=1000`) made into one Measurement.

fio.py builds the command line and aggregates jobs by merged latency bins; this
module adds the per-second series, read from the logs fio writes next to the JSON.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..hosts import Spawn
from ..results import Measurement, Sample
from . import ParseError
from .figures import count, number
from .fio import FioJob, fio_argv, parse_fio_json, to_measurement

LOG_AVG_MSEC = 1000
KIB = 1024


@dataclass(frozen=True)
class FioRun:
    spawn: Spawn
    json_path: Path
    log_prefix: Path

    def measurement(self, op: str, tool: str) -> Measurement:
        """json+ (summary, percentiles from merged bins) + logs (per-second series) -> Measurement."""
        try:
            text = self.json_path.read_text(errors="replace")
        except OSError as exc:
            raise ParseError(f"fio wrote no JSON output ({self.json_path.name}: {exc.strerror})") from exc
        m = to_measurement(parse_fio_json(text), op, tool=tool)
        m.timeseries = series_from_logs(self.log_prefix)
        rates = [s.bytes_per_s for s in m.timeseries if s.bytes_per_s is not None]
        if len(rates) >= 2:
            m.bytes_per_s_max, m.bytes_per_s_min = max(rates), min(rates)
            ops = [s.ops_per_s or 0.0 for s in m.timeseries]
            m.ops_per_s_max, m.ops_per_s_min = max(ops), min(ops)
        return m


def fio_run(raw_dir: Path, jobs: list[FioJob], env: dict[str, str] | None = None) -> FioRun:
    """The fio command of one test: json+ to raw_dir/fio.json, logs to raw_dir/fio_{bw,iops}.N.log."""
    json_path = raw_dir / "fio.json"
    prefix = raw_dir / "fio"
    # --eta=always: a status line per second on stdout (the JSON goes to its own file) for live figures
    global_opts = {"write_bw_log": prefix, "write_iops_log": prefix, "log_avg_msec": LOG_AVG_MSEC,
                   "per_job_logs": 1, "eta": "always"}
    argv = fio_argv(jobs, global_opts, json_path)
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
    bw logs are in KiB/s.
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
        return [p.read_text(errors="replace") for p in sorted(prefix.parent.glob(f"{prefix.name}_{kind}.*.log"))]
    return series(texts("bw"), texts("iops"))
