"""What keeps a benchmark from harming a cluster: health preflight, scrub flags,
the capacity guard, and dropping caches before reads."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from .cluster import Cluster
from .errors import UserError
from .interrupts import held
from .units import format_size

log = logging.getLogger(__name__)

SCRUB_FLAGS = ("noscrub", "nodeep-scrub")


def preflight_health(status: dict, force: bool) -> str:
    """Refuse a HEALTH_ERR cluster unless forced; return the health status."""
    health = status.get("health", {})
    state = health.get("status", "UNKNOWN")
    if state == "HEALTH_ERR" and not force:
        checks = ", ".join(sorted(health.get("checks", {}))) or "no details"
        raise UserError(f"the cluster is HEALTH_ERR ({checks}); benchmarking it would add load to a sick cluster",
                        "fix the cluster first, or pass --force", where="preflight")
    return state


@dataclass
class ScrubFlags:
    """Sets noscrub/nodeep-scrub for the run and restores exactly what was there before."""

    cluster: Cluster
    set_by_us: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)

    def set(self) -> None:
        current = self.cluster.osd_flags()
        self.before = sorted(f for f in SCRUB_FLAGS if f in current)
        self._change([f for f in SCRUB_FLAGS if f not in current], on=True)

    def restore(self) -> None:
        self._change(list(reversed(self.set_by_us)), on=False)

    def _change(self, flags: list[str], on: bool) -> None:
        """Both flags at once (one osdmap commit instead of two, a second saved each way), whole: an interrupt
        waits for them. set_by_us always says which flags this run has set and not yet unset."""
        with held():
            replies = self.cluster.ceph_ok_together(*(("osd", "set" if on else "unset", f) for f in flags))
        failures = [r for r in replies if isinstance(r, Exception)]
        for flag, reply in zip(flags, replies):
            if isinstance(reply, Exception):
                continue
            if on:
                self.set_by_us.append(flag)
            else:
                self.set_by_us.remove(flag)
        if failures:
            raise failures[0]


@dataclass(frozen=True)
class CapacityBudget:
    total_raw: int
    used_raw: int
    max_raw_used: float

    @property
    def allowed_raw(self) -> int:
        return max(0, int(self.total_raw * self.max_raw_used) - self.used_raw)

    def client_bytes(self, amplification: float) -> int:
        """Client bytes that may be written, given raw bytes per client byte.

        A 20% margin covers BlueStore metadata, allocation rounding of small
        objects and what other clients write meanwhile.
        """
        return int(self.allowed_raw / amplification * 0.8)

    def describe(self) -> str:
        return (f"{format_size(self.used_raw)} of {format_size(self.total_raw)} raw used; "
                f"limit {self.max_raw_used:.0%}")


def amplification(profile: dict) -> float:
    """Raw bytes written per client byte for a pool profile."""
    if profile["type"] == "replicated":
        return float(profile["size"])
    return (profile["k"] + profile["m"]) / profile["k"]


def drop_caches_local() -> str | None:
    """`sync; echo 3 > /proc/sys/vm/drop_caches` on this host; returns why not, or None when done."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return None
    except PermissionError:
        return "not root: page cache not dropped"
    except OSError as exc:
        return f"page cache not dropped: {exc.strerror}"
