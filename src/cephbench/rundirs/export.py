"""`cephbench export`: a run directory's results as CSV, JSON or OpenMetrics text. Pure: run dir -> text.

One record per test, every figure in base units (bytes/s, ops/s, seconds, a ratio). The OpenMetrics text is
what node_exporter's textfile collector and a Pushgateway accept: gauges only (neither takes client-side
timestamps, so there are none; when a test ran is a gauge of its own), one series per test and metric, names
with their unit last (`_bytes_per_second`, `_seconds`, `_ratio`), `# TYPE`/`# UNIT`/`# HELP` before each family
and `# EOF` at the end. docs/exports.md describes the columns and metrics.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..core.errors import UserError
from ..core.identity import identity
from ..core.results import Result, RunDir
from ..kinds import concurrency_of, object_size_of

FORMATS = ("csv", "json", "openmetrics", "grafana-annotations")

# the record's columns, in CSV order; the unit of each is in its name
COLUMNS = (
    "run", "suite", "test", "kind", "op", "status", "repeat", "pool", "pool_profile", "variant", "release",
    "object_size_bytes", "concurrency", "instances", "started_unix", "duration_s",
    "bandwidth_bytes_per_s", "ops_per_s", "latency_mean_s", "latency_p50_s", "latency_p99_s", "latency_max_s",
    "efficiency", "ceiling_bytes_per_s", "ceiling_ops_per_s", "bottleneck", "warnings", "error",
)



@dataclass(frozen=True)
class Metric:
    name: str                     # without the cephbench_ prefix, unit last
    unit: str                     # OpenMetrics unit ("" for none): the name's suffix
    help: str
    column: str                   # the record's field it reads


METRICS = (
    Metric("bandwidth_bytes_per_second", "bytes_per_second", "Measured bandwidth of the test.",
           "bandwidth_bytes_per_s"),
    Metric("operations_per_second", "", "Measured operations per second (IOPS, requests or objects per second).",
           "ops_per_s"),
    Metric("latency_mean_seconds", "seconds", "Mean latency of one operation.", "latency_mean_s"),
    Metric("latency_p50_seconds", "seconds", "Median (50th percentile) latency of one operation.", "latency_p50_s"),
    Metric("latency_p99_seconds", "seconds", "99th percentile latency of one operation.", "latency_p99_s"),
    Metric("efficiency_ratio", "ratio", "Measured figure divided by the ceiling the model computed from the "
           "baselines (1 = the hardware's limit).", "efficiency"),
    Metric("test_start_time_seconds", "seconds", "When the test started (Unix time).", "started_unix"),
)

LABELS = ("suite", "test", "kind", "op", "object_size", "concurrency", "pool_profile", "variant", "release")


def load(path: Path) -> tuple[dict[str, Any], list[Result]]:
    """run.json and the results of a run directory; UserError when it is none or has no results."""
    rundir = RunDir.open(path)
    results, _bad = rundir.results()
    if not results:
        raise UserError(f"{path} has no results yet", "export a run that finished at least one test",
                        where=str(path))
    return rundir.meta(), results


def pool_profile(params: dict[str, Any]) -> str:
    """'replicated size 3', 'EC 2+1', or '' when the test names no pool profile (an import, a baseline)."""
    prof = params.get("pool_profile")
    if not isinstance(prof, dict):
        return ""
    if prof.get("type") == "erasure":
        return f"EC {prof.get('k')}+{prof.get('m')}"
    if prof.get("type") == "replicated":
        return f"replicated size {prof.get('size', 3)}"
    return str(prof.get("type", ""))


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _ns_to_s(v: float | None) -> float | None:
    return None if v is None else v / 1e9


def record(meta: dict[str, Any], run_name: str, r: Result) -> dict[str, Any]:
    """One test as a flat record in base units; None where the tool or the model gives no figure."""
    p = r.test.params
    m = r.measurement
    a = r.analysis
    lat = m.latency if m else None
    ident = identity(r, meta)      # the variant is the test's, never a parameter
    size = object_size_of(r.test.kind, p)       # kind.object_size_param: RBD's is its image's, as always
    if size is None and m is not None:
        size = m.object_size_bytes or m.op_size_bytes
    rec: dict[str, Any] = {
        "run": run_name,
        "suite": str(meta.get("suite_name") or ""),
        "test": r.test.id,
        "kind": r.test.kind,
        "op": str(p.get("phase") or (m.op if m else "")),
        "status": r.status,
        "repeat": r.test.repeat,
        "pool": p.get("pool"),
        "pool_profile": pool_profile(p),
        "variant": ident.get("variant"),
        "release": ident.get("release"),
        "object_size_bytes": size,
        "concurrency": concurrency_of(r.test.kind, p),
        "instances": p.get("instances"),
        "started_unix": r.started_unix,
        "duration_s": m.duration_s if m else r.duration_s,
        "bandwidth_bytes_per_s": _finite(m.bytes_per_s) if m else None,
        "ops_per_s": _finite(m.ops_per_s) if m else None,
        "latency_mean_s": _ns_to_s(lat.mean_ns) if lat else None,
        "latency_p50_s": _ns_to_s(lat.percentiles_ns.get("50")) if lat else None,
        "latency_p99_s": _ns_to_s(lat.percentiles_ns.get("99")) if lat else None,
        "latency_max_s": _ns_to_s(lat.max_ns) if lat else None,
        "efficiency": a.efficiency if a else None,
        "ceiling_bytes_per_s": a.ceiling_bytes_per_s if a else None,
        "ceiling_ops_per_s": a.ceiling_ops_per_s if a else None,
        "bottleneck": a.bottleneck if a else None,
        "warnings": "; ".join(r.warnings) or None,
        "error": r.error,
    }
    return rec


def records(meta: dict[str, Any], results: list[Result], run_name: str = "") -> list[dict[str, Any]]:
    return [record(meta, run_name, r) for r in results]


def to_json(meta: dict[str, Any], results: list[Result], run_name: str = "") -> str:
    """A JSON list of records, each with the test's full parameters under "params" (for CI)."""
    out = [{**rec, "params": dict(r.test.params)} for rec, r in zip(records(meta, results, run_name), results)]
    return json.dumps(out, indent=2, default=str) + "\n"


def to_csv(meta: dict[str, Any], results: list[Result], run_name: str = "") -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for rec in records(meta, results, run_name):
        w.writerow({k: "" if v is None else v for k, v in rec.items()})
    return buf.getvalue()


def _label_value(v: Any) -> str:
    text = "" if v is None else str(v)
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(v: float) -> str:
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e15 else str(int(v))


def to_openmetrics(meta: dict[str, Any], results: list[Result], run_name: str = "") -> str:
    """OpenMetrics text: a gauge family per metric, a series per finished test that has the figure."""
    recs = [rec for rec in records(meta, results, run_name) if rec["status"] == "ok"]
    lines: list[str] = []
    for metric in METRICS:
        series = [(rec, rec[metric.column]) for rec in recs if rec[metric.column] is not None]
        if not series:
            continue
        name = f"cephbench_{metric.name}"
        lines.append(f"# TYPE {name} gauge")
        if metric.unit:
            lines.append(f"# UNIT {name} {metric.unit}")
        lines.append(f"# HELP {name} {metric.help}")
        for rec, value in series:
            labels = {"suite": rec["suite"], "test": rec["test"], "kind": rec["kind"], "op": rec["op"],
                      "object_size": rec["object_size_bytes"], "concurrency": rec["concurrency"],
                      "pool_profile": rec["pool_profile"], "variant": rec["variant"], "release": rec["release"]}
            text = ",".join(f'{k}="{_label_value(labels[k])}"' for k in LABELS)
            lines.append(f"{name}{{{text}}} {_number(value)}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _annotation_text(rec: dict[str, Any]) -> str:
    figures = []
    if rec["bandwidth_bytes_per_s"]:
        figures.append(f"{rec['bandwidth_bytes_per_s'] / 2**20:,.1f} MiB/s")
    if rec["ops_per_s"]:
        figures.append(f"{rec['ops_per_s']:,.0f} ops/s")
    if rec["latency_p99_s"]:
        figures.append(f"p99 {rec['latency_p99_s'] * 1000:,.2f} ms")
    elif rec["latency_mean_s"]:
        figures.append(f"mean {rec['latency_mean_s'] * 1000:,.2f} ms")
    if rec["efficiency"] is not None:
        figures.append(f"{rec['efficiency']:.0%} of its ceiling")
    if rec["bottleneck"]:
        figures.append(f"bottleneck: {rec['bottleneck']}")
    if rec["status"] != "ok":
        figures.append(f"{rec['status']}{': ' + rec['error'] if rec['error'] else ''}")
    return f"cephbench {rec['test']}: " + ", ".join(figures)


def to_grafana_annotations(meta: dict[str, Any], results: list[Result], run_name: str = "") -> str:
    """A JSON list of region annotations, one per test, in the body Grafana's `POST /api/annotations` takes (times
    in ms since the epoch): the tests over the operator's own dashboards, found by their tags."""
    out = []
    for rec in records(meta, results, run_name):
        start = rec["started_unix"]
        if start is None:
            continue
        tags = ["cephbench", f"run:{rec['run']}", f"suite:{rec['suite']}", f"kind:{rec['kind']}"]
        tags += [f"{k}:{rec[k]}" for k in ("op", "variant", "release") if rec[k]]
        out.append({"time": int(start * 1000), "timeEnd": int((start + (rec["duration_s"] or 0.0)) * 1000),
                    "tags": tags, "text": _annotation_text(rec)})
    return json.dumps(out, indent=2) + "\n"


RENDER: dict[str, Callable[[dict[str, Any], list[Result], str], str]] = {
    "csv": to_csv, "json": to_json, "openmetrics": to_openmetrics, "grafana-annotations": to_grafana_annotations}


def export(path: Path, fmt: str) -> str:
    """The run directory at `path` as text in `fmt` (one of FORMATS)."""
    if fmt not in RENDER:
        raise UserError(f"{fmt!r} is not an export format", f"use one of {', '.join(FORMATS)}", where="--format")
    meta, results = load(path)
    return RENDER[fmt](meta, results, Path(path).name)
