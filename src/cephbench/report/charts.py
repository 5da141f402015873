"""Charts as inline SVG strings (matplotlib, Agg): no files, no network, deterministic ids."""

from __future__ import annotations

import io
import math
import re
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..results import Result  # noqa: E402
from ..units import format_size  # noqa: E402

MIB = 1024 * 1024
MAX_LINES = 24          # more lines than this make a chart unreadable (and slow): the rest are listed as omitted

plt.rcParams.update({
    "svg.fonttype": "none",       # text stays text: small files, selectable, printable
    "svg.hashsalt": "cephbench",  # stable element ids from run to run
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 96,
})

_XML_HEAD = re.compile(r"^<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


def _svg(fig) -> str:
    buf = io.StringIO()
    # Fixed margins instead of bbox_inches="tight", which draws every figure twice.
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return _METADATA.sub("", _XML_HEAD.sub("", buf.getvalue()))


def _figure(rows: int, height: float):
    fig, axes = plt.subplots(rows, 1, figsize=(9.5, height), sharex=rows > 1, squeeze=False)
    # room on the right for the legend, left and bottom for labels
    fig.subplots_adjust(left=0.08, right=0.70, bottom=0.14 if rows == 1 else 0.09, top=0.96, hspace=0.12)
    return fig, [a[0] for a in axes]


def _legend(ax, n: int) -> None:
    if n:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _cpu_series(r: Result) -> list[float]:
    """The busiest watched host's CPU busy share, one value per second."""
    busiest = max(r.hosts, key=lambda h: h.cpu_busy_median, default=None)
    return busiest.cpu_busy_series if busiest else []


def _panels(rs: Sequence[Result]) -> list[str]:
    """What the time-series chart of these results shows: bandwidth, IOPS when a tool counts ops, host CPU."""
    panels = ["bandwidth"]
    if any(s.ops_per_s for r in rs for s in r.measurement.timeseries):
        panels.append("IOPS")
    if any(len(_cpu_series(r)) >= 2 for r in rs):
        panels.append("host CPU")
    return panels


def _with_series(results: Sequence[Result]) -> list[Result]:
    return [r for r in results if r.measurement and len(r.measurement.timeseries) >= 2][:MAX_LINES]


def timeseries_caption(results: Sequence[Result]) -> str:
    rs = _with_series(results)
    panels = _panels(rs) if rs else ["bandwidth"]
    return ", ".join(panels[:-1]) + " and " + panels[-1] if len(panels) > 1 else panels[0]


def timeseries(results: Sequence[Result]) -> str | None:
    """Bandwidth (MiB/s), IOPS and, when hosts were watched, CPU busy (%) per second, one line per test."""
    rs = _with_series(results)
    if not rs:
        return None
    panels = _panels(rs)
    fig, axes = _figure(len(panels), {1: 2.8, 2: 4.6, 3: 6.4}[len(panels)])
    ax = dict(zip(panels, axes))
    for r in rs:
        ts = r.measurement.timeseries
        t = [s.t_s for s in ts]
        ax["bandwidth"].plot(t, [(s.bytes_per_s or 0) / MIB for s in ts], label=r.test.id, linewidth=1.2)
        if "IOPS" in ax:
            ax["IOPS"].plot(t, [s.ops_per_s or 0 for s in ts], linewidth=1.2)
        if "host CPU" in ax:
            cpu = _cpu_series(r)
            ax["host CPU"].plot(range(1, len(cpu) + 1), [100 * c for c in cpu], linewidth=1.2)
    ax["bandwidth"].set_ylabel("MiB/s")
    ax["bandwidth"].set_ylim(bottom=0)
    if "IOPS" in ax:
        ax["IOPS"].set_ylabel("IOPS (ops/s)")
        ax["IOPS"].set_ylim(bottom=0)
    if "host CPU" in ax:
        ax["host CPU"].set_ylabel("CPU busy (%)\nbusiest host")
        ax["host CPU"].set_ylim(0, 100)
    axes[-1].set_xlabel("time (s)")
    _legend(ax["bandwidth"], len(rs))
    return _svg(fig)


def sweep(results: Sequence[Result], param: str) -> str | None:
    """Throughput (MiB/s) against a swept parameter (object size, concurrency), one line per phase."""
    points: dict[str, list[tuple[float, float]]] = {}
    for r in results:
        if not r.measurement or r.measurement.bytes_per_s is None or param not in r.test.params:
            continue
        p = r.test.params
        rest = [f"{k}={_short(k, v)}" for k, v in sorted(p.items())
                if k not in (param, "pool_profile", "duration_s", "phase") and not isinstance(v, (dict, list))
                and _varies(results, k)]
        key = " ".join([str(p.get("phase", r.measurement.op)), *rest])
        points.setdefault(key, []).append((float(p[param]), r.measurement.bytes_per_s / MIB))
    if len({x for pts in points.values() for x, _ in pts}) < 2:
        return None
    fig, (ax,) = _figure(1, 3.4)
    for key, pts in list(points.items())[:MAX_LINES]:
        pts.sort()
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=key, linewidth=1.2)
    xs = sorted({x for pts in points.values() for x, _ in pts})
    if param in ("object_size", "block_size", "io_size") or max(xs) / max(min(xs), 1) >= 16:
        ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([_short(param, x) for x in xs])
    ax.set_xlabel(param.replace("_", " "))
    ax.set_ylabel("MiB/s")
    ax.set_ylim(bottom=0)
    _legend(ax, len(points))
    return _svg(fig)


def percentiles(results: Sequence[Result]) -> str | None:
    """Completion latency percentiles (ms, log scale), one line per test."""
    rs = [r for r in results if r.measurement and r.measurement.latency.percentiles_ns][:MAX_LINES]
    if not rs:
        return None
    fig, (ax,) = _figure(1, 3.4)
    for r in rs:
        pc = sorted(r.measurement.latency.percentiles_ns.items(), key=lambda kv: float(kv[0]))
        ax.plot([f"p{k}" for k, _ in pc], [v / 1e6 for _, v in pc], marker="o", label=r.test.id, linewidth=1.2)
    ax.set_yscale("log")
    ax.set_ylabel("latency (ms)")
    _legend(ax, len(rs))
    return _svg(fig)


def osd_bars(result: Result) -> str | None:
    """OSD bench per OSD (MiB/s), slow OSDs in red, the median and the slow threshold as lines."""
    m = result.measurement
    per = (m.extra.get("per_osd") or {}) if m else {}
    if not per:
        return None
    names = sorted(per, key=lambda n: int(n.split(".")[-1]) if n.split(".")[-1].isdigit() else n)
    slow = set(m.extra.get("slow_osds", []))
    values = [per[n]["bytes_per_s"] / MIB for n in names]
    fig, ax = plt.subplots(figsize=(max(4.0, min(0.35 * len(names) + 2, 14)), 3.0))
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.3 if len(names) > 12 else 0.14, top=0.95)
    ax.bar(names, values, color=["#c0392b" if n in slow else "#2e86c1" for n in names])
    median = (m.extra.get("median_bytes_per_s") or 0) / MIB
    thr = m.extra.get("slow_threshold", 0.2)
    ax.axhline(median, color="#555", linewidth=1, label=f"median {median:.0f} MiB/s")
    ax.axhline(median * (1 - thr), color="#c0392b", linewidth=1, linestyle="--",
               label=f"slow below {median * (1 - thr):.0f} MiB/s")
    ax.set_ylabel("MiB/s")
    if len(names) > 12:
        ax.tick_params(axis="x", rotation=90)
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def _varies(results: Sequence[Result], key: str) -> bool:
    return len({repr(r.test.params.get(key)) for r in results}) > 1


def _short(key: str, v) -> str:
    if key in ("object_size", "block_size", "io_size", "total", "image_size") and isinstance(v, (int, float)):
        return format_size(v)
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        return str(int(v))
    return str(v)
