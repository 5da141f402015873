"""cephbench-loadgen's JSON document (cephbench-loadgen/1, docs/loadgen.md) -> Measurement, and the exact merge
of several instances that ran at once. Pure: no I/O, no cluster.

The document's HDR histograms (base64, V2 compressed, 1 µs .. 1 h, 3 significant digits) are merged exactly
across instances with `hdrh`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...core.merge import decode_hdr, hdr_percentiles, merge_hdr, merge_instances, weighted_mean
from ...core.results import Latency, Measurement, Sample
from ...core.errors import ParseError
from ...core.figures import array, checked, count, mapping, number, optional
from .binary import TOOL

SCHEMA = "cephbench-loadgen/1"
# our percentile keys -> loadgen's lat_ns keys
PERCENTILES = {"50": "p50", "90": "p90", "99": "p99", "99.9": "p999"}
# a line loadgen (or `at` around it) prints on stderr; in a client host's output it shares the stream with the
# document, and ssh may cut the document where such a line lands
_STDERR_LINE = re.compile(rf"{TOOL}(?: at)?(?: \([^)\n]*\))?: [^\n]*(?:\n|$)")
_PROGRESS_RE = re.compile(r"cephbench-loadgen: progress t=\d+s ops_per_s=([\d.]+) bytes_per_s=([\d.]+)")


def _latency(lat: Any, where: str) -> Latency:
    if not lat:
        return Latency()
    lat = mapping(lat, where)
    return Latency(mean_ns=optional(lat.get("mean"), number, f"{where}.mean"),
                   min_ns=optional(lat.get("min"), number, f"{where}.min"),
                   max_ns=optional(lat.get("max"), number, f"{where}.max"),
                   percentiles_ns={k: number(lat[g], f"{where}.{g}") for k, g in PERCENTILES.items()
                                   if lat.get(g) is not None})


def _ttfb(t: Any) -> dict[str, float] | None:
    if not t:
        return None
    t = mapping(t, "total.ttfb_ns")
    out = {k: number(t[g], f"total.ttfb_ns.{g}") for k, g in PERCENTILES.items() if t.get(g) is not None}
    out.update({k: number(t[k], f"total.ttfb_ns.{k}") for k in ("min", "max", "mean") if t.get(k) is not None})
    return out


def _errors_by_kind(value: Any, where: str) -> dict[str, int]:
    return {str(k): count(n, f"{where}.errors_by_kind[{k!r}]")
            for k, n in mapping(value or {}, f"{where}.errors_by_kind").items()}


def _histogram(value: Any, what: str) -> str | None:
    """An HDR histogram of the document, checked to decode (merge decodes it again)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParseError(f"{what} is not an HDR histogram (base64 text)")
    _decode(value, what)
    return value


def parse(json_text: str) -> Measurement:
    """A cephbench-loadgen/1 document -> Measurement (figures over all operations of the run).

    Percentiles p50/p90/p99/p99.9 and min/max/mean from the document (HDR, 3 significant digits), per-second
    ops and bytes as the time series, TTFB, errors by kind and why the run stopped in `extra`, and the HDR
    histograms themselves (extra hdr_lat / hdr_ttfb) so that `merge` can combine instances exactly.
    """
    try:
        doc = json.loads(json_text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{TOOL} output is not JSON ({exc.msg} at character {exc.pos})") from None
    except (ValueError, RecursionError) as exc:     # an int of more than 4300 digits, nesting too deep
        raise ParseError(f"{TOOL} output is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ParseError(f"{TOOL} output has schema {str(got)[:40]!r}; this cephbench reads {SCHEMA}")
    try:
        total = mapping(doc["total"], "total")
        params = mapping(doc["params"], "params")
        ops = count(total["ops"], "total.ops")
        sizes = array(params.get("sizes") or [], "params.sizes")
        size = count(mapping(sizes[0], "params.sizes[0]")["bytes"], "params.sizes[0].bytes") \
            if len(sizes) == 1 else None
        workload = doc["workload"]
        if not isinstance(workload, str):
            raise ParseError("workload is not the name of an operation")
        per_op = {}
        for name, o in sorted(mapping(doc["operations"], "operations").items()):
            where = f"operations.{name}"
            o = mapping(o, where)
            per_op[name] = {"ops": count(o["ops"], f"{where}.ops"), "errors": count(o["errors"], f"{where}.errors"),
                            "ops_per_s": number(o["ops_per_s"], f"{where}.ops_per_s"),
                            "bytes_per_s": number(o["bytes_per_s"], f"{where}.bytes_per_s"),
                            "errors_by_kind": _errors_by_kind(o.get("errors_by_kind"), where),
                            "lat_ns": _latency(o.get("lat_ns"), f"{where}.lat_ns").model_dump(exclude_none=True)}
        duration = number(doc["duration_s"], "duration_s")
        samples, series_lat = [], []
        for i, p in enumerate(array(doc.get("timeseries") or [], "timeseries")):
            where = f"timeseries[{i}]"
            p = mapping(p, where)
            t_s = number(p["t_s"], f"{where}.t_s")
            samples.append(Sample(t_s=t_s, bytes_per_s=number(p["bytes"], f"{where}.bytes"),
                                  ops_per_s=number(p["ops"], f"{where}.ops"), partial=_partial_bin(t_s, duration)))
            series_lat.append([number(p.get("lat_ns_p50", 0), f"{where}.lat_ns_p50"),
                               number(p.get("lat_ns_p99", 0), f"{where}.lat_ns_p99")])
        extra: dict[str, Any] = {
            "protocol": doc.get("protocol"),
            "endpoint": doc.get("endpoint"),
            "loop": params.get("loop"),
            "arrival": params.get("arrival"),
            "rate_ops_per_s": optional(params.get("rate_ops_per_s") or None, number, "params.rate_ops_per_s"),
            "concurrency": optional(params.get("concurrency"), count, "params.concurrency"),
            "errors": count(total.get("errors", 0), "total.errors"),
            "errors_by_kind": _errors_by_kind(total.get("errors_by_kind"), "total"),
            "stopped_reason": doc.get("stopped_reason"),
            "warmup_ops": count(doc.get("warmup_ops", 0), "warmup_ops"),
            "unsent_ops": count(doc.get("unsent_ops", 0), "unsent_ops"),
            "prefill": doc.get("prefill"),
            "cleanup": mapping(doc["cleanup"], "cleanup") if doc.get("cleanup") is not None else None,
            "start_unix_ns": optional(doc.get("start_unix_ns"), count, "start_unix_ns"),
            "loadgen_version": doc.get("version"),
            "timeseries_lat_p50_p99_ns": series_lat,
            "hdr_lat": _histogram(total.get("hdr_lat"), "total.hdr_lat"),
        }
        if params.get("mix"):
            extra["mix"] = params["mix"]
        if len(per_op) > 1 or workload == "mixed":
            extra["operations"] = per_op
        ttfb = _ttfb(total.get("ttfb_ns"))
        if ttfb is not None:
            extra["ttfb_ns"] = ttfb
            extra["hdr_ttfb"] = _histogram(total.get("hdr_ttfb"), "total.hdr_ttfb")
        return checked(Measurement(
            tool=TOOL, op=workload, duration_s=duration,
            ops_total=float(ops), bytes_total=number(total.get("bytes", 0), "total.bytes"),
            ops_per_s=number(total["ops_per_s"], "total.ops_per_s"),
            bytes_per_s=number(total["bytes_per_s"], "total.bytes_per_s"),
            op_size_bytes=size, object_size_bytes=size,
            latency=_latency(total.get("lat_ns"), "total.lat_ns"), timeseries=samples,
            extra={k: v for k, v in extra.items() if v is not None},
        ))
    except (KeyError, IndexError) as exc:
        raise ParseError(f"{TOOL} document is missing or has a bad field: {exc!r}") from None


# a bin that ends this little after the measured window still counts as a whole second (float rounding)
BIN_SLACK_S = 0.01


def _partial_bin(t_s: float, duration_s: float) -> bool:
    """Bin t_s holds the operations that completed in (t_s - 1, t_s] of the measured window, which lasted duration_s:
    one that ends after the window (the operations still in flight at its end, or a run stopped early) is partial."""
    return t_s > duration_s + BIN_SLACK_S


def split_document(output: str) -> tuple[str | None, str]:
    """loadgen's output with `--output -` (the document on stdout, its messages on stderr in the same stream, as a
    client host's run brings it back) -> (the document, or None when there is none; the other lines).

    The document is loadgen's indented JSON: from a line `{` to the last line `}`. A message written while the
    document was on its way may land inside it, even mid-line: such lines are taken out of it."""
    lines = output.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if ln.rstrip("\r\n") == "{"]
    ends = [i for i, ln in enumerate(lines) if ln.rstrip("\r\n") == "}"]
    if not starts or not ends or ends[-1] < starts[0]:
        return None, output
    a, b = starts[0], ends[-1]
    messages: list[str] = []

    def aside(m: re.Match[str]) -> str:
        messages.append(m.group(0) if m.group(0).endswith("\n") else m.group(0) + "\n")
        return ""

    doc = _STDERR_LINE.sub(aside, "".join(lines[a:b + 1]))
    return doc, "".join(lines[:a]) + "".join(messages) + "".join(lines[b + 1:])


NAGLE_GAP_NS = 30e6      # delayed ACKs hold a segment back for 40 ms on Linux (200 ms elsewhere)


def diagnose(m: Measurement) -> list[str]:
    """Notes on what a result's own figures say about the setup (pure; the driver adds them to the result).

    Small GETs whose body comes tens of ms after the headers show Nagle's algorithm on the server meeting the
    client's delayed ACK: RGW wrote headers and body in two segments and the second waited for an ACK. Beast
    turns Nagle off with `tcp_nodelay=1` in rgw_frontends (measured on the lab: 4 KiB GET p50 47 -> 14 ms).
    """
    notes: list[str] = []
    ttfb = m.extra.get("ttfb_ns") or {}
    lat50, ttfb50 = m.latency.percentiles_ns.get("50"), ttfb.get("50")
    small = m.op_size_bytes is not None and m.op_size_bytes <= 1024**2
    if small and lat50 is not None and ttfb50 is not None and lat50 - ttfb50 >= NAGLE_GAP_NS \
            and lat50 - ttfb50 > 0.5 * lat50:
        notes.append(f"GET bodies arrive {(lat50 - ttfb50) / 1e6:.0f} ms after the headers (p50 TTFB "
                     f"{ttfb50 / 1e6:.1f} ms, latency {lat50 / 1e6:.1f} ms): Nagle's algorithm on RGW meeting "
                     "delayed ACKs; with beast set tcp_nodelay=1 in rgw_frontends")
    return notes


# ---- merging instances ---------------------------------------------------------------------

# kept under their old names: the histograms' merge lives in core/merge.py with the other instance merges
_decode = decode_hdr
merge_histograms = merge_hdr


def merge(parts: list[Measurement]) -> Measurement:
    """Several loadgen clients that ran at once -> one Measurement: merge.merge_instances (latency from the exact
    merge of the HDR histograms; instances of one host add up over their whole runs, aligned on their measured
    phase's start_unix_ns; instances of client hosts over the common window, extra.clients telling how they ran),
    and what loadgen adds: errors by kind, unsent and warm-up ops, the time to first byte from its histograms."""
    if not parts:
        raise ValueError("nothing to merge")
    if len(parts) == 1:
        return parts[0]
    ns = [p.extra.get("start_unix_ns") for p in parts]
    t0 = min((s for s in ns if s), default=0)
    merged = merge_instances(parts, latency="hdr", starts_s=[(s or t0) / 1e9 for s in ns])
    errors_by_kind: dict[str, int] = {}
    for p in parts:
        for k, n in (p.extra.get("errors_by_kind") or {}).items():
            errors_by_kind[k] = errors_by_kind.get(k, 0) + int(n)
    reasons = [p.extra.get("stopped_reason") for p in parts if p.extra.get("stopped_reason")]
    first = parts[0]
    extra: dict[str, Any] = {k: first.extra[k] for k in ("protocol", "endpoint", "loop", "arrival",
                                                         "rate_ops_per_s", "mix") if k in first.extra}
    extra.update({
        "instances": len(parts),
        "concurrency": sum(p.extra.get("concurrency") or 0 for p in parts),
        "errors": sum(int(p.extra.get("errors", 0)) for p in parts),
        "errors_by_kind": errors_by_kind,
        "stopped_reason": reasons[0] if reasons else None,
        "warmup_ops": sum(p.extra.get("warmup_ops", 0) for p in parts),
        "unsent_ops": sum(p.extra.get("unsent_ops", 0) for p in parts),
        "hdr_lat": merged.extra["hdr_lat"],
    })
    if all(p.extra.get("hdr_ttfb") for p in parts):
        ttfb_hist = merge_histograms([p.extra["hdr_ttfb"] for p in parts])
        ttfb = hdr_percentiles(ttfb_hist)
        for key, pick in (("min", min), ("max", max)):
            values = [p.extra["ttfb_ns"][key] for p in parts if key in p.extra.get("ttfb_ns", {})]
            if values:
                ttfb[key] = pick(values)
        mean = weighted_mean([(p.extra["ttfb_ns"].get("mean"), ttfb_hist_count(p)) for p in parts])
        if mean is not None:
            ttfb["mean"] = mean
        extra["ttfb_ns"] = ttfb
        extra["hdr_ttfb"] = ttfb_hist.encode().decode()
    extra.update({k: merged.extra[k] for k in ("clients", "common_interval_s") if k in merged.extra})
    instances = [p.model_copy(update={"extra": {k: v for k, v in p.extra.items() if not k.startswith("hdr_")}})
                 for p in parts]
    return checked(merged.model_copy(update={"instances": instances,
                                             "extra": {k: v for k, v in extra.items() if v is not None}}))


def ttfb_hist_count(m: Measurement) -> int:
    return int(_decode(m.extra["hdr_ttfb"]).get_total_count()) if m.extra.get("hdr_ttfb") else 0


def progress_figures(line: str) -> tuple[float, float] | None:
    """(bytes/s, ops/s) of one of loadgen's per-second progress lines; None for any other line."""
    m = _PROGRESS_RE.match(line)
    if not m:
        return None
    try:
        return number(m.group(2), "bytes_per_s"), number(m.group(1), "ops_per_s")
    except ParseError:      # a line cut off or garbled: no figures
        return None
