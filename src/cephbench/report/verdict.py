"""The verdict at the top of every report: per level, how far the cluster is from its ceiling, and why."""

from __future__ import annotations

from dataclasses import dataclass

from ..results import Result
from .format import mib_s, pct

LEVELS = {"rados_bench": "RADOS", "fio_rados": "RADOS", "rbd_bench": "RBD", "fio_rbd": "RBD",
          "rgw": "RGW", "osd_bench": "OSD"}
WRITE_OPS = {"write", "randwrite", "put"}


@dataclass(frozen=True)
class VerdictLine:
    level: str
    direction: str           # write | read
    test_id: str
    bytes_per_s: float | None
    efficiency: float | None
    bottleneck: str | None
    reason: str | None

    def text(self) -> str:
        head = f"{self.level} {self.direction}: best {mib_s(self.bytes_per_s)} MiB/s ({self.test_id})"
        if self.efficiency is None:
            return head + "; no ceiling (no baseline for this level)"
        return f"{head} = {pct(self.efficiency)} of its ceiling; bottleneck: {self.bottleneck or 'unknown'}"


def verdict(results: list[Result]) -> list[VerdictLine]:
    """For each level and direction, the result with the highest bandwidth, with its analysis."""
    best: dict[tuple[str, str], Result] = {}
    for r in results:
        level = LEVELS.get(r.test.kind)
        if level is None or level == "OSD" or r.status != "ok" or r.measurement is None:
            continue
        phase = str(r.test.params.get("phase") or r.measurement.op)
        direction = "write" if phase in WRITE_OPS else "read"
        key = (level, direction)
        if key not in best or (r.measurement.bytes_per_s or 0) > (best[key].measurement.bytes_per_s or 0):
            best[key] = r
    lines = []
    for (level, direction), r in sorted(best.items(), key=lambda kv: (list(LEVELS.values()).index(kv[0][0]),
                                                                       kv[0][1] != "write")):
        a = r.analysis
        lines.append(VerdictLine(level, direction, r.test.id, r.measurement.bytes_per_s,
                                 a.efficiency if a else None, a.bottleneck if a else None, a.reason if a else None))
    return lines


def slow_osds(results: list[Result]) -> list[str]:
    out: list[str] = []
    for r in results:
        if r.test.kind == "osd_bench" and r.measurement:
            out += r.measurement.extra.get("slow_osds", [])
    return sorted(set(out))
