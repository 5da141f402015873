"""`rbd bench`, the tool: command builder, parser of its text output and live figures.

Used by the rbd_bench workload (rbd_bench.py) and by the prefill of every RBD workload's images (rbd_images.py).

rbd bench has no duration option: a duration-bounded test gets a practically
endless --io-total and is sent SIGINT `duration` seconds after it printed its
header (`DURATION_WRAPPER`): rbd bench catches SIGINT and still prints its
summary. The clock starts at the header, not at the command, for connecting and
opening the image took from 0.1 s to over 3 s under load. The summary's "bytes/sec" is rounded for humans
("8.6 MiB/s") in Ceph 15+, so bandwidth is computed from ops/sec x io_size.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.results import Measurement, Sample, steady_state
from ..core.userfiles import read_output
from ..core.errors import ParseError
from ..core.figures import checked, count, number
from .base import live_sum

DURATION_IO_TOTAL = 1 << 50          # 1 PiB: "until its SIGINT"
KILL_AFTER_S = 30                    # a bench that ignores its SIGINT this long is killed (exit 137, a failure)

# sh: runs "$@" (rbd bench) with its output through a pipe of ours; when its header ("bench  type ...") passes,
# start a timer that sends it SIGINT after $1 seconds, SIGKILL KILL_AFTER_S later. Its exit status is rbd bench's
# (0 after the SIGINT). The fifo is unlinked before rbd starts: nothing stays on the host even after a SIGKILL.
# The shell ignores SIGINT and SIGTERM: a stop sent to the whole group (drivers' tick, Ctrl-C) reaches rbd bench,
# which prints its summary, and the shell must still pass that on; a second SIGINT would kill rbd bench unprinted.
# The timer is a background job (SIGINT ignored); its TERM trap ends its sleep with it, stopped by PID.
DURATION_WRAPPER = " ".join(line.strip() for line in f"""
d=$1; shift; t=$(mktemp -d) || exit 1;
mkfifo "$t/f" && exec 5<>"$t/f" 4<"$t/f" 6>"$t/f" 5>&-; rm -rf "$t";
"$@" >&6 4<&- 6>&- & r=$!;
exec 6>&-; trap '' INT TERM; f=;
while IFS= read -r l <&4; do printf '%s\\n' "$l";
  if [ -z "$f" ]; then case $l in "bench "*)
    ( trap 'kill "$s" 2>/dev/null; exit 0' TERM; sleep "$d" & s=$!; wait "$s"; kill -INT "$r" 2>/dev/null;
      sleep {KILL_AFTER_S} & s=$!; wait "$s"; kill -KILL "$r" 2>/dev/null ) 4<&- & f=$!;; esac; fi;
done; wait "$r"; rc=$?; [ -z "$f" ] || kill "$f" 2>/dev/null; exit "$rc"
""".strip().splitlines())     # one line: rbd bench logs the command line that sent its SIGINT

# "bench  type readwrite read:write=70:30 io_size 4096 io_threads 16 bytes 41943040 pattern random"
_HEADER_RE = re.compile(r"^bench\s+type\s+(\S+)(?:\s+read:write=(\d+):(\d+))?\s+io_size\s+(\d+)\s+io_threads\s+"
                        r"(\d+)\s+bytes\s+(\d+)\s+pattern\s+(\S+)")
# "    2      5136   2545.45   9.9 MiB/s"  (Ceph 15+)  or  "    2      5136   2545.45  10426163.20" (older)
_SECOND_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*([KMGT]?i?B)?(?:/s)?\s*$")
# "elapsed: 4   ops: 10240   ops/sec: 2203.1   bytes/sec: 8.6 MiB/s" and the read_/write_ lines of readwrite
_PAIR_RE = re.compile(r"([a-z_/]+):\s+(-?nan|[\d.]+)(?:\s*([KMGTE]?i?B)/s)?")


def op_name(io_type: str, pattern: str) -> str:
    """rbd bench type + pattern -> the op names fio and the model use."""
    rand = pattern in ("rand", "random")
    if io_type in ("readwrite", "rw"):
        return "randrw" if rand else "rw"
    return f"rand{io_type}" if rand else io_type


@dataclass(frozen=True)
class RbdBenchCommand:
    spec: str                      # pool/image
    io_type: str                   # write | read | readwrite
    io_size: int
    io_threads: int
    io_pattern: str = "seq"        # seq | rand
    rw_mix_read: int = 50
    io_total: int | None = None
    duration_s: float | None = None

    def argv(self, client_args: list[str]) -> list[str]:
        if self.io_type not in ("write", "read", "readwrite"):
            raise ValueError(f"unknown rbd bench io type {self.io_type!r}")
        if (self.io_total is None) == (self.duration_s is None):
            raise ValueError("rbd bench needs exactly one of io_total and duration")
        argv = ["rbd", *client_args, "bench", "--io-type", self.io_type, "--io-size", f"{self.io_size}B",
                "--io-threads", str(self.io_threads), "--io-pattern", self.io_pattern]
        if self.io_type == "readwrite":
            argv += ["--rw-mix-read", str(self.rw_mix_read)]
        argv += ["--io-total", f"{self.io_total if self.io_total is not None else DURATION_IO_TOTAL}B", self.spec]
        if self.duration_s is not None:
            argv = ["sh", "-c", DURATION_WRAPPER, "sh", f"{self.duration_s:g}", *argv]
        return argv


def parse(text: str) -> Measurement:
    """rbd bench text output -> Measurement (bandwidth, IOPS, per-second series; rbd bench gives no latency)."""
    header = None
    samples: list[Sample] = []
    summary: dict[str, float] = {}
    cumulative: list[tuple[int, int]] = []     # (second, ops completed so far)
    for line in text.splitlines():
        if header is None:
            m = _HEADER_RE.match(line.strip())
            if m:
                header = m
                io_size = count(header.group(4), "io_size")
            continue
        m = _SECOND_RE.match(line)
        if m:
            sec = count(m.group(1), "SEC")
            cumulative.append((sec, count(m.group(2), f"OPS of second {sec}")))
            ops_s = number(m.group(3), f"OPS/SEC of second {sec}")
            samples.append(Sample(t_s=float(sec), ops_per_s=ops_s, bytes_per_s=ops_s * io_size))
            continue
        pairs = _PAIR_RE.findall(line)
        if pairs and pairs[0][0] in ("elapsed", "read_ops", "write_ops"):
            for key, value, _unit in pairs:
                if "nan" not in value:
                    summary[key] = number(value, key)
    if header is None:
        raise ParseError(f"not rbd bench output (no 'bench type ...' line; last line: {_last_line(text)!r})")
    io_type, threads, pattern = header.group(1), count(header.group(5), "io_threads"), header.group(7)
    extra: dict[str, object] = {"io_threads": threads, "io_pattern": pattern,
                                "io_total_bytes": count(header.group(6), "bytes")}
    if summary.get("ops", 0) > 0 and summary.get("ops/sec", 0) > 0:
        ops, ops_s = summary["ops"], summary["ops/sec"]
    elif cumulative and cumulative[-1][0] > 0:
        # stopped without a summary (or an empty one): the per-second lines say what was done in whole seconds
        last_s, ops = cumulative[-1]
        ops_s = ops / last_s
        extra["summary"] = "from the per-second lines: rbd bench printed no summary"
    elif "ops" in summary:
        raise ParseError("rbd bench completed no I/O in the time it ran: the cluster served none of its ops")
    else:
        raise ParseError(f"no rbd bench summary in the output (last line: {_last_line(text)!r})")
    if header.group(2):
        extra["rw_mix_read"] = count(header.group(2), "read:write")
        for side in ("read", "write"):
            if f"{side}_ops/sec" in summary:
                extra[f"{side}_ops_per_s"] = summary[f"{side}_ops/sec"]
                extra[f"{side}_bytes_per_s"] = summary[f"{side}_ops/sec"] * io_size
                extra[f"{side}_ops_total"] = summary.get(f"{side}_ops")
    # every line is a whole second: rbd bench prints none for the part of a second before its end (or SIGINT)
    rates = [s.ops_per_s for s in steady_state(samples) if s.ops_per_s is not None]
    return checked(Measurement(
        tool="rbd bench",
        op=op_name(io_type, pattern),
        duration_s=ops / ops_s if ops_s > 0 else summary.get("elapsed", 0.0),
        ops_total=ops,
        bytes_total=ops * io_size,
        op_size_bytes=io_size,
        bytes_per_s=ops_s * io_size,
        ops_per_s=ops_s,
        ops_per_s_max=max(rates) if rates else None,
        ops_per_s_min=min(rates) if rates else None,
        bytes_per_s_max=max(rates) * io_size if rates else None,
        bytes_per_s_min=min(rates) * io_size if rates else None,
        timeseries=samples,
        extra=extra,
    ))


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def live_line(line: str, io_size: int) -> tuple[float, float] | None:
    """(bytes/s, ops/s) of one per-second line; None for any other line, or one whose figures cannot be read.
    The line's own BYTES/SEC is rounded to 2 digits: bytes/s is OPS/SEC x the header's io_size."""
    s = _SECOND_RE.match(line)
    if not s:
        return None
    try:
        ops_s = number(s.group(3), "OPS/SEC")
    except ParseError:
        return None
    bw = ops_s * io_size
    return (bw, ops_s) if math.isfinite(bw) else None


def live_figures(paths: list[Path]) -> tuple[float | None, float | None]:
    """Bytes/s and ops/s summed over images, from the last per-second line each has printed."""
    def newest(p):
        try:
            text = read_output(p)
        except OSError:
            return None
        header = _HEADER_RE.search(text)
        try:
            io_size = count(header.group(4), "io_size") if header else None
        except ParseError:
            return None
        for line in reversed(text.splitlines()[-5:]):
            figures = live_line(line, io_size) if io_size is not None else None
            if figures:
                return figures
        return None
    return live_sum(paths, newest)

