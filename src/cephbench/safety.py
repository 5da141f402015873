"""What keeps a benchmark from harming a cluster: health preflight, scrub flags,
the capacity guard, and dropping caches before reads."""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future
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
    _sent: list[tuple[str, Future]] = field(default_factory=list, repr=False)

    epoch: int = 0              # the osdmap epoch in which the missing flags were seen missing

    def missing(self) -> list[str]:
        """The scrub flags not set now: the ones this run will set (and the only ones it will unset)."""
        dump = self.cluster.ceph_json("osd", "dump")
        current = set(filter(None, str(dump.get("flags", "")).split(",")))
        self.epoch = int(dump.get("epoch") or 0)
        self.before = sorted(f for f in SCRUB_FLAGS if f in current)
        return [f for f in SCRUB_FLAGS if f not in current]

    def set(self, flags: list[str] | None = None) -> None:
        """Send the flags this run needs and return: they reach the mon with the run's next change (its first
        pool) and are committed with it, one osdmap commit (~1 s) instead of three. The next command through the
        cluster waits for them and raises their failure; restore() waits for them too."""
        todo = self.missing() if flags is None else list(flags)
        self.set_by_us = list(todo)     # as soon as sent: a flag set by the mon without us knowing is worse
        self._sent = list(zip(todo, self.cluster.send(*(("osd", "set", f) for f in todo), with_next=True)))

    def restore(self) -> None:
        """Unset, all at once and whole (an interrupt waits for it), exactly the flags this run set."""
        with held():
            for flag, sent in self._sent:
                if sent.exception() is not None and flag in self.set_by_us:
                    self.set_by_us.remove(flag)         # never set: nothing to undo
            self._sent = []
            flags = list(reversed(self.set_by_us))
            failures = []
            for flag, unset in zip(flags, self.cluster.send(*(("osd", "unset", f) for f in flags))):
                if unset.exception() is None:
                    self.set_by_us.remove(flag)
                else:
                    failures.append(unset.exception())
        if failures:
            raise failures[0]


@dataclass(frozen=True)
class CapacityBudget:
    total_raw: int
    used_raw: int                   # used now, plus what other runs in progress have reserved
    max_raw_used: float
    reserved_by_others: int = 0

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
        others = (f", {format_size(self.reserved_by_others)} of it reserved by other cephbench runs in progress"
                  if self.reserved_by_others else "")
        return (f"{format_size(self.used_raw)} of {format_size(self.total_raw)} raw used{others}; "
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

