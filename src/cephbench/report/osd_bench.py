"""osd bench's own report: its table per test (each OSD's median, spread, repeats and gap to the others) and its
chart per OSD. They read its parameters and the keys its driver (drivers/osd_bench.py) writes in measurement.extra,
so they are the kind's, not the report's common tables (sections.py files them under its layout, `osd`)."""

from __future__ import annotations

from typing import Any

from ..core.results import Result
from ..core.units import format_size
from . import svg
from .charts import MIB, NORMAL, SLOW
from .format import Table, iops, mib_s, seconds


def _size(v: Any) -> str:
    return "-" if v is None else format_size(v) if isinstance(v, (int, float)) else str(v)


def osd_tables(rs: list[Result]) -> list[Table]:
    """One table per test: each OSD's median, spread and repeats, and the rule that calls one slow."""
    out = []
    for r in rs:
        m = r.measurement
        per = (m.extra.get("per_osd") or {}) if m else {}
        slow = set(m.extra.get("slow_osds", [])) if m else set()
        rows = [[name, mib_s(v.get("bytes_per_s")), _osd_spread(v), str(v.get("repeats", 1)), _osd_gap(v),
                 iops(v.get("ops_per_s")), seconds(v.get("duration_s")), _slow_cell(name in slow, v)]
                for name, v in sorted(per.items(), key=lambda kv: _osd_number(kv[0]))]
        p = r.test.params
        title = f"{r.test.id}: ceph tell osd.N bench {_size(p.get('total'))} in {_size(p.get('block_size'))} writes"
        t = Table(title, ["OSD", "median MiB/s", "spread MiB/s (min–max)", "repeats", "vs other OSDs", "IOPS",
                          "time per bench", "slow?"], rows,
                  notes=[_osd_rule(m)] if m else [r.error or ""])
        out.append(t)
    return out


def _slow_cell(slow: bool, v: dict[str, Any]) -> str:
    if slow:
        return "SLOW"
    if v.get("not_the_drive"):
        return f"below the OSDs on its own drive ({(v.get('shares_device') or {}).get('device', '?')}): not the drive"
    return ""


def _osd_number(name: str) -> tuple[int, str]:
    n = name.rsplit(".", 1)[-1]
    return (int(n), "") if n.isdigit() else (1 << 30, name)


def _osd_spread(v: dict[str, Any]) -> str:
    lo, hi = v.get("bytes_per_s_min"), v.get("bytes_per_s_max")
    return "-" if lo is None or hi is None else f"{mib_s(lo)}–{mib_s(hi)}"


def _osd_gap(v: dict[str, Any]) -> str:
    """Its median against the other OSDs' median, and the Mann-Whitney p of its repeats against theirs."""
    below = v.get("below_others")
    if below is None:
        return "-"
    p = v.get("p_value")
    return f"{-below:+.0%}, p {'n/a' if p is None else f'{p:.2g}'}"


def _osd_rule(m: Any) -> str:
    x = m.extra
    thr = f"{x.get('slow_threshold', 0.2):.0%}"
    if "slow_test" not in x:      # a run from before OSD bench was repeated
        return f"median {mib_s(x.get('median_bytes_per_s'))} MiB/s; slow = more than {thr} below the median"
    return (f"median OSD {mib_s(x.get('median_bytes_per_s'))} MiB/s; each OSD benched {x.get('repeat')} times, "
            f"round-robin; slow = median more than {thr} below the other OSDs' median, and "
            f"{x['slow_test']}: p < {x.get('slow_alpha', 0.05):g}"
            + ("; OSDs that share a data device are judged as one drive, against the other drives"
               if any("shares_device" in v for v in (x.get("per_osd") or {}).values()) else ""))


def osd_bars(result: Result) -> str | None:
    """OSD bench per OSD (MiB/s), slow OSDs in red, the median and the slow threshold as lines."""
    m = result.measurement
    per = (m.extra.get("per_osd") or {}) if m else {}
    if not per:
        return None
    names = sorted(per, key=lambda n: (0, int(n.split(".")[-1]), "") if n.split(".")[-1].isdigit() else (1, 0, n))
    slow = set(m.extra.get("slow_osds", []))
    values = [per[n]["bytes_per_s"] / MIB for n in names]
    median = (m.extra.get("median_bytes_per_s") or 0) / MIB
    thr = m.extra.get("slow_threshold", 0.2)
    refs = [svg.RefLine(median, f"median {median:.0f} MiB/s", "#555555"),
            svg.RefLine(median * (1 - thr), f"slow below {median * (1 - thr):.0f} MiB/s", SLOW, "5 3")]
    legend = [svg.LegendItem("slow OSD", SLOW, shape="box")] if slow else []
    return svg.bar_chart(names, values, [SLOW if n in slow else NORMAL for n in names], "MiB/s", refs,
                         "OSD bench per OSD", legend)
