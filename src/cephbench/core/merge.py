"""Merging measurements of instances that ran at once (several processes, several client hosts) into one.
Pure: no I/O, no cluster.

The one place where instances are lined up by time: each instance's per-second samples are relative to its own
start; with `start_unix_s`/`end_unix_s` (on this machine's clock) they are placed on one grid and summed over the
common window, the seconds every instance ran. Without them (instances of one host started together) every
instance counts from 0 and the window is the seconds all of them reported.

Latency is merged from what the tool gives, never from averaged percentiles: fio's json+ completion-latency bins,
cephbench-loadgen's HDR histograms, or, for rados bench, which prints only a mean and a max per instance, the
op-weighted mean and the largest max (and no percentiles at all).
"""

from __future__ import annotations

import math
import statistics
import zlib
from typing import Any, Iterable

from .errors import ParseError
from .results import Latency, Measurement, Sample, steady_state

LATENCY_MODES = ("bins", "hdr", "mean-max")

# fio's json+ bins: the percentiles fio itself reports
BIN_PERCENTILES = ("50", "90", "99", "99.9", "99.99")
# cephbench-loadgen's HDR histograms (docs/loadgen.md): 1 µs .. 1 h, 3 significant digits
HDR_LOWEST_NS, HDR_HIGHEST_NS, HDR_SIG_FIGS = 1000, 3600 * 10**9, 3
HDR_PERCENTILES = ("50", "90", "99", "99.9")

# a second counts for the window when at least half of it lies inside
SECOND_TOLERANCE_S = 0.5
# a client that starts later (or stops earlier) than the first (last) by more than this is named in the notes
LATE_S, LATE_SHARE = 1.0, 0.10
# a client whose rate is this far below the other clients' median is flagged
IMBALANCE = 0.20


# ---- latency -------------------------------------------------------------------------------------

def weighted_mean(values: Iterable[tuple[float | None, float]]) -> float | None:
    """The mean of (value, weight) pairs weighted by op count: the pairs without a value or ops left out; None
    when none is left. The one op-weighted mean latency: of instances, of rounds, of loadgen clients' TTFB."""
    pairs = [(v, w) for v, w in values if v is not None and w > 0]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None


def pooled_latency(lats: list[Latency], weights: list[float]) -> Latency:
    """Mean and stddev of the pooled operations (weights: each part's op count), max of max, min of min."""
    total = sum(weights)
    if total <= 0 or any(l.mean_ns is None for l in lats):
        return Latency()
    mean = weighted_mean(zip([l.mean_ns for l in lats], weights)) or 0.0
    stddev = None
    if all(l.stddev_ns is not None for l in lats):
        second_moment = sum((l.stddev_ns**2 + l.mean_ns**2) * w for l, w in zip(lats, weights)) / total
        stddev = math.sqrt(max(second_moment - mean**2, 0.0))
    maxes = [l.max_ns for l in lats if l.max_ns is not None]
    mins = [l.min_ns for l in lats if l.min_ns is not None]
    return Latency(mean_ns=mean, stddev_ns=stddev, max_ns=max(maxes) if maxes else None,
                   min_ns=min(mins) if mins else None)


def percentiles_from_bins(bins: dict[int, int], wanted: tuple[str, ...] = BIN_PERCENTILES) -> dict[str, float]:
    """The value at which the cumulative count first reaches p% of all samples (fio's own rule)."""
    total = sum(bins.values())
    if total == 0:
        return {}
    items = sorted(bins.items())
    out: dict[str, float] = {}
    for p in wanted:
        need = float(p) / 100.0 * total
        cum = 0
        for value, n in items:
            cum += n
            if cum >= need:
                out[p] = float(value)
                break
    return out


def add_bins(all_bins: Iterable[dict[Any, int]]) -> dict[int, int]:
    """Histograms of latency bucket (ns; a JSON key is a string) -> count, added up."""
    out: dict[int, int] = {}
    for bins in all_bins:
        for k, v in bins.items():
            out[int(k)] = out.get(int(k), 0) + int(v)
    return out


def decode_hdr(b64: str, what: str = "an HDR histogram"):
    from hdrh import codec
    from hdrh.histogram import HdrHistogram
    try:
        return HdrHistogram.decode(b64)
    except (ValueError, IndexError, RuntimeError, zlib.error, codec.HdrCookieException, codec.HdrLengthException,
            codec.HdrHistogramSettingsException) as exc:     # what hdrh raises on text that is no histogram
        raise ParseError(f"{what} does not decode as an HDR histogram ({type(exc).__name__})") from None


def merge_hdr(encoded: list[str]):
    """Exact merge of loadgen histograms (all have one geometry)."""
    from hdrh.histogram import HdrHistogram
    total = HdrHistogram(HDR_LOWEST_NS, HDR_HIGHEST_NS, HDR_SIG_FIGS)
    for b64 in encoded:
        try:
            total.add(decode_hdr(b64))
        except IndexError:
            raise ParseError("an HDR histogram holds values beyond loadgen's range (1 µs .. 1 h)") from None
    return total


def hdr_percentiles(hist) -> dict[str, float]:
    if hist.get_total_count() == 0:
        return {}
    return {k: float(hist.get_value_at_percentile(float(k))) for k in HDR_PERCENTILES}


def _ops(p: Measurement) -> float:
    return p.ops_total or 0.0


def merged_latency(parts: list[Measurement], mode: str) -> tuple[Latency, dict[str, Any]]:
    """The parts' latency merged as `mode` says, and what goes into the merged extra (the merged histogram)."""
    lat = pooled_latency([p.latency for p in parts], [_ops(p) for p in parts])
    if mode == "mean-max":
        return lat, {}
    if lat.mean_ns is None:     # a part without a mean: what the parts have, weighted where they have it
        lat = Latency(mean_ns=weighted_mean((p.latency.mean_ns, _ops(p)) for p in parts),
                      max_ns=max((p.latency.max_ns for p in parts if p.latency.max_ns is not None), default=None),
                      min_ns=min((p.latency.min_ns for p in parts if p.latency.min_ns is not None), default=None))
    if mode == "bins":
        missing = [i for i, p in enumerate(parts) if not p.extra.get("clat_bins")]
        if missing:
            raise ParseError(f"instance {missing[0]} kept no latency bins (extra.clat_bins): the instances' "
                             "percentiles cannot be merged")
        bins = add_bins(p.extra["clat_bins"] for p in parts)
        lat.percentiles_ns = percentiles_from_bins(bins)
        return lat, {"clat_bins": {str(k): v for k, v in sorted(bins.items())}}
    missing = [i for i, p in enumerate(parts) if not p.extra.get("hdr_lat")]
    if missing:
        raise ParseError(f"instance {missing[0]} wrote no latency histogram (total.hdr_lat): the instances' "
                         "latencies cannot be merged")
    hist = merge_hdr([p.extra["hdr_lat"] for p in parts])
    lat.percentiles_ns = hdr_percentiles(hist)
    return lat, {"hdr_lat": hist.encode().decode()}


# ---- time -----------------------------------------------------------------------------------------

def sum_series(parts: list[Measurement], starts: list[float], lo: float | None = None,
               hi: float | None = None) -> list[Sample]:
    """The parts' per-second samples summed on one grid of whole seconds counted from `lo` (the earliest start
    when None): a sample at t_s of a part that started at `start` covers (start + t_s - 1, start + t_s] and goes to
    second round(start + t_s - lo). With `hi`, only the seconds of [lo, hi] (half of a second inside is enough)."""
    origin = min(starts) if lo is None else lo
    seconds: dict[int, list[float]] = {}
    partial: set[int] = set()       # a second one part had only partly is partial in the sum
    for p, start in zip(parts, starts):
        for s in p.timeseries:
            if not _inside(start + s.t_s, lo, hi):
                continue
            t = round(start + s.t_s - origin)
            acc = seconds.setdefault(t, [0.0, 0.0])
            acc[0] += s.bytes_per_s or 0.0
            acc[1] += s.ops_per_s or 0.0
            if s.partial:
                partial.add(t)
    return [Sample(t_s=t, bytes_per_s=b, ops_per_s=o, partial=t in partial) for t, (b, o) in sorted(seconds.items())]


def _inside(end: float, lo: float | None, hi: float | None) -> bool:
    """Whether the second that ends at `end` lies (at least half) inside [lo, hi]."""
    return (lo is None or end - 1 >= lo - SECOND_TOLERANCE_S) and (hi is None or end <= hi + SECOND_TOLERANCE_S)


def _window_rate(p: Measurement, start: float, lo: float, hi: float, per_second: bool) -> tuple[float, float, bool]:
    """(bytes/s, ops/s, from its seconds?) of one part over the window: the mean of its seconds inside, or its
    whole-run average when the window is too short for seconds or the part has none there."""
    inside = [s for s in steady_state(p.timeseries) if _inside(start + s.t_s, lo, hi)]
    if per_second and inside:
        return (sum(s.bytes_per_s or 0.0 for s in inside) / len(inside),
                sum(s.ops_per_s or 0.0 for s in inside) / len(inside), True)
    return p.bytes_per_s or 0.0, p.ops_per_s or 0.0, False


# ---- the merge ------------------------------------------------------------------------------------

def _timed(parts: list[Measurement]) -> bool:
    return all(p.start_unix_s is not None and p.end_unix_s is not None for p in parts)


def merge_instances(parts: list[Measurement], *, latency: str, starts_s: list[float] | None = None) -> Measurement:
    """Instances that ran at once -> one Measurement whose `instances` are the parts.

    Bandwidth and IOPS: summed over the common window (latest start to earliest end; without start/end times,
    the seconds all parts reported), each part's own seconds inside it averaged. `ops_total`/`bytes_total`:
    everything the parts did (what the merged latency counts). Latency: see the module's doc; `latency` is
    "bins" (fio json+, parts' extra.clat_bins), "hdr" (loadgen, extra.hdr_lat) or "mean-max" (rados bench).
    With start/end times, `extra.clients` tells first/last done, the spreads and each client's share, and
    names a client that started late, stopped early, or ran more than 20% below the others.
    `starts_s`, for instances of this host without start/end times whose figures each cover its own measured phase
    (cephbench-loadgen's, from start_unix_ns): their rates add up over their whole runs and their seconds are
    summed aligned on these starts.
    """
    if latency not in LATENCY_MODES:
        raise ValueError(f"unknown latency merge {latency!r}; one of {', '.join(LATENCY_MODES)}")
    if not parts:
        raise ValueError("nothing to merge")
    if len(parts) == 1:
        return parts[0]
    timed = _timed(parts)
    if not timed and starts_s is not None:
        return _whole_runs(parts, starts_s, latency)
    if timed:
        starts = [float(p.start_unix_s) for p in parts]       # type: ignore[arg-type]
        ends = [float(p.end_unix_s) for p in parts]           # type: ignore[arg-type]
        lo, hi = max(starts), min(ends)
    else:       # started together on this host: each counts from 0, the window is what all reported
        starts = [0.0] * len(parts)
        lo, hi = 0.0, min((max((s.t_s for s in p.timeseries), default=0.0) for p in parts), default=0.0)
        ends = [hi] * len(parts)
    window = max(hi - lo, 0.0)
    timeseries = sum_series(parts, starts, lo, hi) if window > 0 else []
    per_second = len(steady_state(timeseries)) >= 2
    rates = [_window_rate(p, s, lo, hi, per_second) for p, s in zip(parts, starts)]
    lat, merged_extra = merged_latency(parts, latency)
    first = parts[0]
    extra: dict[str, Any] = {"instances": len(parts), "common_interval_s": len(timeseries), **merged_extra}
    if timed:
        extra["clients"] = clients_summary(parts, rates, latency)
    instances = [p.model_copy(update={"extra": {k: v for k, v in p.extra.items() if k not in merged_extra}})
                 for p in parts] if merged_extra else parts
    return Measurement(
        tool=first.tool, op=first.op,
        duration_s=window if timed else max(p.duration_s for p in parts),
        ops_total=sum(_ops(p) for p in parts),
        bytes_total=sum(p.bytes_total or 0 for p in parts),
        op_size_bytes=first.op_size_bytes, object_size_bytes=first.object_size_bytes,
        bytes_per_s=sum(r[0] for r in rates), ops_per_s=sum(r[1] for r in rates),
        bytes_per_s_max=max((s.bytes_per_s or 0 for s in steady_state(timeseries)), default=None),
        bytes_per_s_min=min((s.bytes_per_s or 0 for s in steady_state(timeseries)), default=None),
        latency=lat, timeseries=timeseries, instances=instances, extra=extra,
    )


def _whole_runs(parts: list[Measurement], starts_s: list[float], latency: str) -> Measurement:
    """Instances of this host, each measured over its own phase: their sums, and their seconds aligned."""
    lat, merged_extra = merged_latency(parts, latency)
    first = parts[0]
    return Measurement(
        tool=first.tool, op=first.op, duration_s=max(p.duration_s for p in parts),
        ops_total=sum(_ops(p) for p in parts), bytes_total=sum(p.bytes_total or 0.0 for p in parts),
        ops_per_s=sum(p.ops_per_s or 0.0 for p in parts), bytes_per_s=sum(p.bytes_per_s or 0.0 for p in parts),
        op_size_bytes=first.op_size_bytes, object_size_bytes=first.object_size_bytes,
        latency=lat, timeseries=sum_series(parts, starts_s),
        instances=[p.model_copy(update={"extra": {k: v for k, v in p.extra.items() if k not in merged_extra}})
                   for p in parts],
        extra={"instances": len(parts), **merged_extra})


def _host(p: Measurement) -> str:
    return p.host or "local"


def clients_summary(parts: list[Measurement], rates: list[tuple[float, float, bool]], latency: str) -> dict[str, Any]:
    """extra.clients of a timed merge: first/last done and spreads (seconds from the first start), each client's
    figures over the window, and the notes naming a late, early or slow client."""
    starts = [float(p.start_unix_s) for p in parts]       # type: ignore[arg-type]
    ends = [float(p.end_unix_s) for p in parts]           # type: ignore[arg-type]
    t0, lo, hi = min(starts), max(starts), min(ends)
    window = max(hi - lo, 0.0)
    by_host: dict[str, list[int]] = {}
    for i, p in enumerate(parts):
        by_host.setdefault(_host(p), []).append(i)
    by_bytes = sum(r[0] for r in rates) > 0        # metadata operations move no bytes: compare their ops
    total = sum(r[0] if by_bytes else r[1] for r in rates)
    per_client = []
    for host, idx in by_host.items():
        mine = [parts[i] for i in idx]
        lat, _ = merged_latency(mine, latency) if len(mine) > 1 else (mine[0].latency, {})
        bw, ops = sum(rates[i][0] for i in idx), sum(rates[i][1] for i in idx)
        per_client.append({
            "host": host, "instances": len(idx),
            "start_offset_s": min(starts[i] for i in idx) - t0,
            "duration_s": max(ends[i] for i in idx) - min(starts[i] for i in idx),
            "bytes_per_s": bw, "ops_per_s": ops,
            "lat_mean_ns": lat.mean_ns, "lat_p99_ns": lat.percentiles_ns.get("99"), "lat_max_ns": lat.max_ns,
            "share": ((bw if by_bytes else ops) / total) if total > 0 else None,
            "per_second": all(rates[i][2] for i in idx),
        })
    notes = _timing_notes(parts, starts, ends, window)
    imbalanced = []
    for c in per_client:
        others = [o["bytes_per_s" if by_bytes else "ops_per_s"] for o in per_client if o is not c]
        if not others:
            continue
        median = statistics.median(others)
        mine_rate = c["bytes_per_s" if by_bytes else "ops_per_s"]
        below = 1 - mine_rate / median if median > 0 else 0.0
        c["below_others"] = below
        if below > IMBALANCE:
            imbalanced.append(c["host"])
            notes.append(f"imbalance: client {c['host']} ran {below:.0%} below the other clients' median "
                         f"({'bandwidth' if by_bytes else 'operations per second'} over the common window)")
    no_seconds = [c["host"] for c in per_client if not c["per_second"]]
    if no_seconds and window > 0:
        notes.append(f"no per-second figures over the common window for {', '.join(no_seconds)}: "
                     "their whole-run averages are counted")
    if latency == "mean-max" and any(p.latency.mean_ns is not None for p in parts):   # rbd bench reports none
        notes.append("rados bench prints only each instance's mean and max latency: the merged mean is weighted "
                     "by operations and the max is the largest; no percentiles exist")
    last_done = max(ends) - t0
    return {
        "hosts": len(by_host), "window_s": window, "window_start_unix_s": lo,
        "first_done_s": min(ends) - t0, "last_done_s": last_done,
        "start_spread_s": lo - t0, "end_spread_s": max(ends) - hi,
        "last_done_bytes_per_s": sum(p.bytes_total or 0 for p in parts) / last_done if last_done > 0 else None,
        "last_done_ops_per_s": sum(_ops(p) for p in parts) / last_done if last_done > 0 else None,
        "latency_merge": latency, "per_client": per_client, "imbalanced": imbalanced, "notes": notes,
    }


def _timing_notes(parts: list[Measurement], starts: list[float], ends: list[float], window: float) -> list[str]:
    """A client that started after the first, or stopped before the last, by more than 1 s or 10% of the window."""
    limit = min(LATE_S, LATE_SHARE * window) if window > 0 else LATE_S
    counts: dict[str, int] = {}
    for p in parts:
        counts[_host(p)] = counts.get(_host(p), 0) + 1
    seen: dict[str, int] = {}
    notes = []
    for p, start, end in zip(parts, starts, ends):
        host = _host(p)
        seen[host] = seen.get(host, -1) + 1
        who = f"client {host}" + (f" (instance {seen[host]})" if counts[host] > 1 else "")
        late, early = start - min(starts), max(ends) - end
        if late > limit:
            notes.append(f"{who} started {late:.2f} s after the first: the common window is shorter by that")
        if early > limit:
            notes.append(f"{who} stopped {early:.2f} s before the last: the common window ends when it stopped")
    return notes
