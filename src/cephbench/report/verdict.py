"""The verdict at the top of every report: per level and direction, how far the cluster is from its ceiling, and why.

A headline is a configuration, not a lucky run: the repeats of one test (same kind and parameters) are taken
together and their median repeat stands for it (stats.median: of an even count the lower middle one, a real
repeat), with the spread shown; its efficiency and reason are that repeat's, so they state the headline's figure.
A result carrying a warning (a read that ran out of objects, a write the capacity guard shortened, a test during
which the cluster was degraded) says nothing about what the cluster can do, so it never heads the verdict. Mixed reads and writes get their own line (they are neither the
best read nor the best write), and metadata operations (RGW stat, list, delete) are judged in requests per second, one line per op.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from ..core import stats
from ..kinds import DIRECTION_ORDER, LEVEL_ORDER, direction_of, level_of, ops_unit
from ..core.results import Result
from .format import iops, mib_s, pct


@dataclass(frozen=True)
class VerdictLine:
    level: str
    direction: str                # write | read | mixed | metadata
    test_id: str                  # the median repeat (of an even count the lower middle): it stands for the config
    bytes_per_s: float | None     # that repeat's figures: the median of the repeats (stats.median)
    ops_per_s: float | None
    efficiency: float | None
    bottleneck: str | None
    reason: str | None
    op: str | None = None         # metadata lines: which operation
    repeats: int = 1
    low: float | None = None      # the spread of the repeats, in the line's unit (bytes/s, or ops/s for metadata)
    high: float | None = None
    set_aside: int = 0            # results of this level and direction not counted because of a warning
    kind: str = ""                # of the test whose figure it is: names its operations (kinds.ops_unit)

    @property
    def in_ops(self) -> bool:
        return self.direction == "metadata"

    def ops_name(self) -> str:
        return ops_unit(self.kind) or "ops/s"

    def figure(self) -> str:
        if self.in_ops:
            return f"{iops(self.ops_per_s)} {self.ops_name()}"
        ops = f", {iops(self.ops_per_s)} {self.ops_name()}" if self.ops_per_s else ""
        return f"{mib_s(self.bytes_per_s)} MiB/s{ops}"

    def spread(self) -> str:
        if self.repeats < 2 or self.low is None or self.high is None:
            return ""
        fmt = iops if self.in_ops else mib_s
        return f"median of {self.repeats} repeats, {fmt(self.low)}–{fmt(self.high)} " \
               f"{self.ops_name() if self.in_ops else 'MiB/s'}"

    def title(self) -> str:
        return f"{self.level} {self.direction}" + (f" ({self.op})" if self.op else "")

    def headline(self) -> str:
        """"best 320.9 MiB/s, 80 IOPS (011-…; median of 4 repeats, …)", without the title or the ceiling."""
        detail = "; ".join(x for x in (self.test_id, self.spread()) if x)
        head = f"best {self.figure()} ({detail})"
        if self.set_aside:
            head += f" [{self.set_aside} result(s) with a warning not counted]"
        return head

    def no_ceiling(self) -> str:
        return "the model covers plain reads and writes" if self.direction in ("mixed", "metadata") else \
            "no baseline for this level"

    def text(self) -> str:
        head = f"{self.title()}: {self.headline()}"
        if self.efficiency is None:
            return head + f"; no ceiling ({self.no_ceiling()})"
        return f"{head} = {pct(self.efficiency)} of its ceiling; bottleneck: {self.bottleneck or 'unknown'}"


def _direction(r: Result) -> str | None:
    return direction_of(r.test.kind, r.test.params.phase, r.measurement.op if r.measurement else None)


def _key(r: Result) -> tuple[str, str, str | None] | None:
    level, direction = level_of(r.test.kind), _direction(r)
    if level is None or level in ("Baselines", "OSD") or direction is None:
        return None
    op = str(r.test.params.phase or r.measurement.op) if direction == "metadata" else None
    return level, direction, op


def _figure(r: Result, in_ops: bool) -> float:
    m = r.measurement
    return float((m.ops_per_s if in_ops else m.bytes_per_s) or 0.0)


def _config_line(key: tuple[str, str, str | None], repeats: list[Result]) -> VerdictLine:
    level, direction, op = key
    in_ops = direction == "metadata"
    ranked = sorted(repeats, key=lambda r: _figure(r, in_ops))
    values = [_figure(r, in_ops) for r in ranked]
    # the median repeat stands for the configuration: its figures, its efficiency and its reason are one result's,
    # so the percentage is always the headline's figure over its ceiling (stats.median: the lower middle of an
    # even count, as compare and history show it)
    mid = ranked[values.index(stats.median(values))]
    a, m = mid.analysis, mid.measurement
    return VerdictLine(level, direction, mid.test.id, m.bytes_per_s or None, m.ops_per_s or None,
                       a.efficiency if a else None, a.bottleneck if a else None, a.reason if a else None,
                       op=op, repeats=len(ranked), low=values[0], high=values[-1], kind=mid.test.kind)


def verdict(results: list[Result]) -> list[VerdictLine]:
    """For each level and direction, the configuration with the highest median over its repeats."""
    usable: dict[tuple[str, str, str | None], list[Result]] = {}
    set_aside: dict[tuple[str, str, str | None], int] = {}
    for r in results:
        if r.status != "ok" or r.measurement is None:
            continue
        key = _key(r)
        if key is None:
            continue
        if r.warnings:
            set_aside[key] = set_aside.get(key, 0) + 1
            continue
        usable.setdefault(key, []).append(r)
    lines: list[VerdictLine] = []
    for key, rs in usable.items():
        configs = [list(g) for _, g in groupby(sorted(rs, key=lambda r: r.test.match_key()),
                                               key=lambda r: r.test.match_key())]
        candidates = [_config_line(key, c) for c in configs]
        best = max(candidates, key=lambda v: (v.ops_per_s if v.in_ops else v.bytes_per_s) or 0.0)
        lines.append(VerdictLine(**{**best.__dict__, "set_aside": set_aside.get(key, 0)}))
    return sorted(lines, key=lambda v: (LEVEL_ORDER.index(v.level), DIRECTION_ORDER.index(v.direction),
                                        v.op or ""))


def slow_osds(results: list[Result]) -> list[str]:
    out: list[str] = []
    for r in results:
        if level_of(r.test.kind) == "OSD" and r.measurement:
            out += r.measurement.extra.get("slow_osds", [])
    return sorted(set(out))
