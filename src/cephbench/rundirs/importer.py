"""`cephbench import`: raw output of earlier runs (any Ceph version) into a run directory.

The format is told from the content, never the file name: `rados bench` text (old and new summaries), fio JSON
(json or json+, with or without notes before it), `rbd bench` text, `iperf3 -J` JSON, cephbench-loadgen/1
JSON and `ceph tell osd.N bench` JSON (one OSD's: `--label osd=N` names it). Each file is read by its driver's own parser (drivers/*.py) into a Measurement, and becomes one Test whose
kind and params are inferred from the content (op and sizes from the rados bench summary, rw/bs/iodepth from
fio's job options, ...); `--label key=value` adds or overrides params. Files of one configuration are repeats
of one test (samples for `cephbench compare`). Every file is read before anything is written: one bad file
writes nothing.

When a result was measured is `--date`, else the date the output carries (fio's and iperf3's timestamps,
loadgen's start, the dated lines of a rados bench that ran 20 s or more or of a Ceph log), else the file's own
modification time, said so; history orders runs by it.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.errors import ParseError
from ..drivers import fio, iperf, osd_bench, rados_bench
from ..drivers import rbd_bench_tool as rbd_bench
from ..core.figures import count, mapping, number, unix_time
from ..drivers.rgw import parse as rgw_loadgen
from ..core.errors import UserError
from ..core.results import Measurement, Result, RunDir, Test, run_dir_path
from ..core.units import format_size, parse_duration, parse_size
from ..core.userfiles import read_bytes, write_file

FORMATS = "rados bench, fio, rbd bench, iperf3, loadgen or osd bench"
_SIZE_KEYS = {"object_size", "op_size", "block_size", "io_size", "total", "image_size"}
# The largest output a tool writes for one run (fio json+ of many jobs, with every latency bin, is a few MiB).
MAX_OUTPUT_BYTES = 256 * 1024**2


@dataclass
class Parsed:
    """One source file, read: which tool made it, what ran, what it measured."""
    source: Path
    sha256: str
    format: str
    kind: str
    params: dict[str, Any]
    measurement: Measurement
    measured_unix: float = 0.0          # when it was measured (see date_from)
    date_from: str = "file time"        # "--date", "content" or "file time"
    notes: list[str] = field(default_factory=list)
    data: bytes = field(default=b"", repr=False)     # as read: kept in raw/ (the source is not read twice)


def _unknown(path: Path, reason: str) -> UserError:
    return UserError(f"not a {FORMATS} output ({reason})", where=str(path))


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0][:80] if lines else ""


def _json_doc(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    if start < 0:
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


# ---- per format: measurement from the driver's parser, params from the content -------------------------

def _rados_bench(text: str, labels: dict[str, Any]) -> tuple[str, dict[str, Any], Measurement]:
    reads = re.search(r"^\s*Total reads made\s*:", text, re.M) is not None
    # seq and rand print the same summary: the phase of a read is "read" unless a --label phase= says which
    phase = "write" if not reads else str(labels.get("phase", "read"))
    m = rados_bench.parse(text, phase)
    return "rados_bench", _rados_bench_params(m, phase, rados_bench.text_concurrency(text)), m


def _rados_bench_json(text: str, labels: dict[str, Any]) -> tuple[str, dict[str, Any], Measurement]:
    """`rados bench --format json`: the same params as from its text output."""
    doc = rados_bench.json_document(text)
    phase = "write" if "total_reads_made" not in doc else str(labels.get("phase", "read"))
    m = rados_bench.parse_json(text, phase)
    return "rados_bench", _rados_bench_params(m, phase, rados_bench.json_concurrency(text) or None), m


def _rados_bench_params(m: Measurement, phase: str, concurrency: int | None) -> dict[str, Any]:
    """The test parameters a rados bench output gives, text or JSON alike."""
    params: dict[str, Any] = {"phase": phase}
    if m.object_size_bytes:
        params["object_size"] = m.object_size_bytes
    if m.op_size_bytes and m.op_size_bytes != m.object_size_bytes:
        params["op_size"] = m.op_size_bytes
    if concurrency is not None:
        params["concurrency"] = concurrency
    return params


def _fio(text: str) -> tuple[str, dict[str, Any], Measurement]:
    jobs = fio.parse_fio_json(text)
    if not jobs:
        raise ParseError("fio JSON with no jobs")
    doc = _json_doc(text) or {}
    glob = {str(k): str(v) for k, v in mapping(doc.get("global options") or {}, "global options").items()}
    opts = [{**glob, **j.options} for j in jobs]
    rws = sorted({o.get("rw", "read") for o in opts})
    if len(rws) > 1:
        raise ParseError(f"fio jobs of different kinds ({', '.join(rws)}): import one kind of job per file")
    rw = rws[0]
    engine = opts[0].get("ioengine", "psync")
    kind = {"rados": "fio_rados", "rbd": "fio_rbd"}.get(engine, "fio")
    try:
        m = fio.to_measurement(jobs, rw, tool=f"fio {engine}" if kind != "fio" else "fio")
    except ValueError as exc:
        raise ParseError(str(exc)) from None
    params: dict[str, Any] = {"phase": rw}
    if kind == "fio":
        params["ioengine"] = engine
    bs = opts[0].get("bs")
    if bs:
        try:
            params["block_size"] = parse_size(bs)
        except ValueError:
            params["block_size"] = bs
    params["iodepth"] = count(opts[0].get("iodepth", 1), "job option iodepth")
    params["jobs"] = len(jobs)
    if rw in ("rw", "randrw", "readwrite") and "rwmixread" in opts[0]:
        params["rwmixread"] = count(opts[0]["rwmixread"], "job option rwmixread")
    return kind, params, m


def _rbd_bench(text: str) -> tuple[str, dict[str, Any], Measurement]:
    m = rbd_bench.parse(text)
    header = next(h for ln in text.splitlines() if (h := rbd_bench._HEADER_RE.match(ln.strip())))
    rand = header.group(7) in ("rand", "random")
    # "type write ... pattern random" is a random write: the phase names it as fio and the report do (randwrite,
    # randread, randrw); a sequential one keeps rbd bench's io type, as a suite's rbd_bench tests do
    params: dict[str, Any] = {"phase": m.op if rand else header.group(1), "io_size": int(header.group(4)),
                              "io_threads": int(header.group(5)), "io_pattern": "rand" if rand else "seq"}
    if header.group(2):
        params["rw_mix_read"] = int(header.group(2))
    return "rbd_bench", params, m


def _iperf3(text: str) -> tuple[str, dict[str, Any], Measurement]:
    m = iperf.parse_iperf_json(text)
    params: dict[str, Any] = {"pattern": "pair", "streams": m.extra.get("stream_count", 1)}
    if m.extra.get("local") and m.extra.get("remote"):       # this client's address and the server's
        params.update(sender=m.extra["local"], receivers=[m.extra["remote"]])
    return "net_baseline", params, m


def _osd_bench(text: str) -> tuple[str, dict[str, Any], Measurement]:
    m = osd_bench.parse(text)
    # one OSD's bench: which OSD the document does not say (--label osd=N names it)
    return "osd_bench", {"total": int(m.bytes_total or 0), "block_size": int(m.op_size_bytes or 0)}, m


def _loadgen(text: str) -> tuple[str, dict[str, Any], Measurement]:
    m = rgw_loadgen.parse(text)
    p = (_json_doc(text) or {}).get("params") or {}
    params: dict[str, Any] = {"protocol": p.get("protocol"), "phase": m.op, "concurrency": p.get("concurrency")}
    sizes = p.get("sizes") or []
    if len(sizes) == 1:
        params["object_size"] = int(sizes[0]["bytes"])
    elif sizes:
        params["sizes"] = sizes
    for key in ("objects", "buckets", "mix"):
        if p.get(key):
            params[key] = p[key]
    if p.get("rate_ops_per_s"):
        params["rate"] = p["rate_ops_per_s"]
    return "rgw", {k: v for k, v in params.items() if v is not None}, m


# A dated line: Ceph's log lines and rados bench's "min lat" line every 20 s ("2026-11-21T05:33:02.547+0000 ..."),
# older Ceph without the T and the offset ("2017-09-14 16:25:05.513016 min lat: ...").
_DATED_LINE_RE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?([+-]\d{2}:?\d{2}|Z)?(.*)$",
                            re.M)
_RADOS_DATED_EVERY_S = 20.0     # rados bench prints its dated "min lat" line after every 20th second


def content_date(fmt: str, text: str) -> tuple[float, str] | None:
    """When the output says it was measured, in unix seconds, with a note when that is less than exact; None when
    it says nothing. ParseError naming the field for a date that is no time (1e30, before 1970)."""
    doc = _json_doc(text) if fmt in ("fio", "iperf3", "loadgen") else None
    if fmt == "fio" and doc and doc.get("timestamp"):
        return unix_time(doc["timestamp"], "timestamp"), ""          # fio's report time, at the end of the run
    if fmt == "iperf3" and doc:
        start = doc.get("start")
        stamp = start.get("timestamp") if isinstance(start, dict) else None
        secs = stamp.get("timesecs") if isinstance(stamp, dict) else None
        if secs:
            return unix_time(secs, "start.timestamp.timesecs"), ""
    if fmt == "loadgen" and doc and doc.get("start_unix_ns"):
        return unix_time(number(doc["start_unix_ns"], "start_unix_ns") / 1e9, "start_unix_ns in seconds"), ""
    m = _DATED_LINE_RE.search(text)
    if m is None:
        return None
    day, clock, frac, offset, rest = m.groups()
    try:
        dt = datetime.fromisoformat(f"{day}T{clock}{frac or ''}{offset or ''}")
        # the first "min lat" line of a rados bench is 20 s into it; a Ceph log line is dated as it is
        back = _RADOS_DATED_EVERY_S if fmt == "rados bench" and "min lat" in rest else 0.0
        note = ""
        if dt.tzinfo is None:
            dt, note = dt.replace(tzinfo=timezone.utc), "the output's time has no time zone: taken as UTC"
        unix = dt.timestamp() - back
    except (ValueError, OverflowError):         # a day that does not exist (02-30), or year 1 less an offset
        return None
    return unix_time(unix, f"the dated line {m.group(0).strip()[:30]!r}"), note


def detect(text: str) -> str | None:
    """The tool that wrote `text`, from its content; None when it is none of those cephbench reads."""
    if '"schema"' in text and "cephbench-loadgen/" in text:
        return "loadgen"
    if '"fio version"' in text:
        return "fio"
    if '"intervals"' in text and '"start"' in text:
        return "iperf3"
    if '"concurrent_ios"' in text or '"total_time_run"' in text:
        return "rados bench json"
    if '"bytes_written"' in text and '"elapsed_sec"' in text and '"blocksize"' in text:
        return "osd bench"
    if any(rbd_bench._HEADER_RE.match(ln.strip()) for ln in text.splitlines()):
        return "rbd bench"
    if re.search(r"^\s*Total time run\s*:", text, re.M) or re.search(r"^\s*sec\s+Cur ops\s+started", text, re.M):
        return "rados bench"
    return None


def read_file(path: Path, labels: dict[str, Any] | None = None) -> Parsed:
    """One file -> Parsed; UserError (one line) when it is unknown, truncated or the tool's error message."""
    labels = labels or {}
    data = read_bytes(Path(path), "", f"give {FORMATS} output saved to a file", MAX_OUTPUT_BYTES, where="FILE")
    text = data.decode("utf-8", errors="replace")
    fmt = detect(text)
    if fmt is None:
        doc = _json_doc(text)
        if doc is not None:
            raise _unknown(path, f"a JSON document with keys {', '.join(list(doc)[:6])}")
        first = _first_line(text)
        raise _unknown(path, f"first line: {first!r}" if first else "the file is empty")
    try:
        if fmt == "rados bench":
            kind, params, m = _rados_bench(text, labels)
        elif fmt == "rados bench json":
            kind, params, m = _rados_bench_json(text, labels)
        elif fmt == "fio":
            kind, params, m = _fio(text)
        elif fmt == "rbd bench":
            kind, params, m = _rbd_bench(text)
        elif fmt == "iperf3":
            kind, params, m = _iperf3(text)
        elif fmt == "osd bench":
            kind, params, m = _osd_bench(text)
        else:
            kind, params, m = _loadgen(text)
        dated = content_date(fmt, text)
    except ParseError as exc:
        raise _unknown(path, f"looks like {fmt} but: {exc}") from None
    # a phase label names what the output cannot tell (seq or rand of a rados bench read); it never renames a write
    extra = {k: v for k, v in labels.items() if k != "phase" or params.get("phase") in (None, "read")}
    parsed = Parsed(Path(path), hashlib.sha256(data).hexdigest(), fmt, kind, {**params, **extra}, m, data=data)
    if dated is not None:
        parsed.measured_unix, parsed.date_from = dated[0], "content"
        if dated[1]:
            parsed.notes.append(dated[1])
    else:
        try:
            parsed.measured_unix = unix_time(Path(path).stat().st_mtime, "its modification time")
        except ParseError as exc:
            raise UserError(f"no date in the output, and {exc}", "give --date", where=str(path)) from None
        parsed.notes.append("no date in the output: dated by the file's modification time")
    return parsed


def parse_labels(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """`key=value` strings -> params: sizes and durations in base units, numbers as numbers."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
            raise UserError(f"{item!r} is not key=value", "e.g. --label ceph_version=16.2.15", where="--label")
        raw = raw.strip()
        value: Any = raw
        try:
            if key in _SIZE_KEYS:
                value = parse_size(raw)
            elif key.endswith("_s"):
                value = parse_duration(raw)
            elif re.fullmatch(r"-?\d+", raw):
                value = int(raw)
            elif re.fullmatch(r"-?\d+\.\d*(e-?\d+)?", raw):
                value = float(raw)
        except ValueError as exc:
            raise UserError(str(exc), where=f"--label {key}") from None
        out[key] = value
    return out


def _test_id(index: int, kind: str, params: dict[str, Any]) -> str:
    bits = [kind, str(params.get("phase", ""))]
    for key in ("object_size", "block_size", "io_size"):
        if isinstance(params.get(key), int):
            bits.append(format_size(params[key]))
    for key, prefix in (("concurrency", "t"), ("io_threads", "t"), ("iodepth", "qd"), ("streams", "P")):
        if key in params:
            bits.append(f"{prefix}{params[key]}")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(b for b in bits if b))
    return f"{index:03d}-{safe}"


def import_files(files: list[Path], out_dir: Path | None, labels: dict[str, Any],
                 date: float | None = None) -> tuple[RunDir, list[Result]]:
    """Every file read first (any failure: UserError, nothing written), then one run directory with them all.

    `date` (unix seconds, from --date) is when every file was measured, whatever the files say."""
    if not files:
        raise UserError("give at least one file to import", "e.g. cephbench import rados-bench-write.txt",
                        where="FILE")
    if date is not None:
        try:
            unix_time(date, "the date")
        except ParseError as exc:
            raise UserError(str(exc), "give the date the files were measured", where="--date") from None
    parsed = [read_file(f, labels) for f in files]
    if date is not None:
        for p in parsed:
            p.measured_unix, p.date_from = date, "--date"
            p.notes = [n for n in p.notes if not n.startswith(("no date in the output", "the output's time"))]
    path = run_dir_path("import", out_dir)
    repeats: dict[str, int] = {}
    tests = []
    for i, p in enumerate(parsed, 1):
        key = json.dumps({"kind": p.kind, "params": p.params}, sort_keys=True, default=str)
        repeats[key] = repeats.get(key, 0) + 1
        tid = _test_id(i, p.kind, p.params) + (f"-r{repeats[key]}" if repeats[key] > 1 else "")
        tests.append(Test(id=tid, index=i, workload="imported", kind=p.kind, group=f"g{i:03d}", params=p.params,
                          repeat=repeats[key], est_duration_s=p.measurement.duration_s))
    now = time.time()
    meta: dict[str, Any] = {
        "cephbench_version": __version__, "run_ids": [secrets.token_hex(3)], "suite_name": "import",
        "imported": True, "imported_unix": now, "labels": labels,
        # the run is when its results were measured, so that history puts it in its place
        "started_unix": min(p.measured_unix for p in parsed),
        "finished_unix": max(p.measured_unix + (p.measurement.duration_s or 0.0) for p in parsed),
        "sources": [{"path": str(p.source.absolute()), "sha256": p.sha256, "format": p.format, "test": t.id,
                     "measured_unix": p.measured_unix, "date_from": p.date_from}
                    for p, t in zip(parsed, tests)],
        "plan": [t.model_dump() for t in tests],
    }
    if "ceph_version" in labels:
        meta["cluster"] = {"versions": {"overall": {f"ceph version {labels['ceph_version']}": 1}}}
    if "fsid" in labels:
        meta.setdefault("cluster", {})["status"] = {"fsid": str(labels["fsid"])}
    rundir = RunDir.create(path, meta)
    results = []
    try:
        for p, t in zip(parsed, tests):
            raw_dir = rundir.raw_dir(t.id)
            write_file(raw_dir / p.source.name, p.data, "give --out a new directory you may write", where="--out",
                       within=rundir.path, sync=False)
            r = Result(test=t, status="ok", started_unix=p.measured_unix, duration_s=p.measurement.duration_s,
                       raw=[str((raw_dir / p.source.name).relative_to(rundir.path))], measurement=p.measurement,
                       notes=[f"imported from {p.source} ({p.format}, sha256 {p.sha256[:12]}…)", *p.notes])
            rundir.append(r)
            results.append(r)
    except (OSError, UserError) as exc:
        shutil.rmtree(rundir.path, ignore_errors=True)      # the directory this import made, and only its files
        if isinstance(exc, UserError):
            raise
        raise UserError(f"cannot write the run directory: {exc}", where=str(path)) from None
    return rundir, results
