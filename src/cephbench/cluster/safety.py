"""What keeps a benchmark from harming a cluster: health preflight, scrub flags,
the capacity guard, and dropping caches before reads."""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from .ceph import Cluster
from ..core.errors import UserError
from ..core.interrupts import held
from ..core.units import format_size

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
    """noscrub/nodeep-scrub for the run, shared with the other cephbench runs in progress through their markers.

    A run holds (lists in its marker) the flags a cephbench run set: those it sets, and those already set that
    another run's marker holds or has just let go of. A flag set that no run holds is the user's: never held, never
    unset. At its end a run lets go of its flags first (its marker lists them as let go of), then reads the others'
    markers and unsets only the flags none holds: of two runs that end together, at least one sees the other gone.
    A run that starts reads before it writes (its one marker write carries the flags it holds), so each side looks
    twice when a run starts as another ends: the starting run, when it found a flag set, waits for its marker and
    then sets the flags it shares again (they join its first pool's commit), and reads the flags again when one
    looked like the user's (an ending run's unset may have just taken it); the ending run reads the markers again
    after its unset, and sets again a flag a run started meanwhile holds."""

    cluster: Cluster
    # the run's marker with the flags it holds, and those it let go of, written
    hold: Callable[[Sequence[str], Sequence[str]], None] = lambda _held, _going: None
    # the flags other runs in progress hold (their markers); True: and those an ending run let go of
    others: Callable[[bool], set[str]] = lambda _letting_go: set()
    held: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)     # set when the run began (by the user or another run)
    users: list[str] = field(default_factory=list)      # set when the run began and held by no run: the user's
    _sent: list[tuple[str, Future]] = field(default_factory=list, repr=False)

    epoch: int = 0              # the osdmap epoch in which the flags were read (a dead run's cleanup reads since)

    def take(self) -> list[str]:
        """The flags this run holds: the ones not set now (it will set them) and the ones set and held by another
        run in progress. Read only: the run's marker lists them when it is written (runner.mark_run)."""
        dump = self.cluster.ceph_json("osd", "dump")
        current = set(filter(None, str(dump.get("flags", "")).split(",")))
        self.epoch = int(dump.get("epoch") or 0)
        held_elsewhere = self.others(True)
        self.before = sorted(f for f in SCRUB_FLAGS if f in current)
        self.users = [f for f in self.before if f not in held_elsewhere]
        return [f for f in SCRUB_FLAGS if f not in self.users]

    def recheck(self, flags: list[str]) -> list[str]:
        """Once the marker holding `flags` is written: a flag that looked like the user's and is unset now was let
        go of by a run ending at that instant, which unset it: this run holds it too (in its marker on return)."""
        if not self.users:
            return flags
        now = self.cluster.osd_flags()
        gone = [f for f in self.users if f not in now]
        if not gone:
            return flags
        self.users = [f for f in self.users if f not in gone]
        flags = [f for f in SCRUB_FLAGS if f in flags or f in gone]
        self.hold(flags, ())
        return flags

    def set(self, flags: list[str]) -> None:
        """Send the flags this run holds and return: they reach the mon with the run's next change (its first
        pool) and are committed with it, one osdmap commit (~1 s) instead of three. The next command through the
        cluster waits for them and raises their failure; restore() waits for them too."""
        self.held = list(flags)         # as soon as sent: a flag set by the mon without us knowing is worse
        self._sent = list(zip(flags, self.cluster.send(*(("osd", "set", f) for f in flags), with_next=True)))

    def restore(self) -> None:
        """Let go of the run's flags, then unset, all at once and whole (an interrupt waits for it), those that no
        other run in progress holds; set again any that a run started meanwhile holds."""
        with held():
            for flag, sent in self._sent:
                if sent.exception() is not None and flag not in self.before and flag in self.held:
                    self.held.remove(flag)              # never set: nothing to undo
            self._sent = []
            self.hold([], self.held)
            kept = self.others(False)
            flags = [f for f in reversed(self.held) if f not in kept]
            self.held = [f for f in self.held if f in flags]
            failures = []
            unset = []
            for flag, reply in zip(flags, self.cluster.send(*(("osd", "unset", f) for f in flags))):
                if reply.exception() is None:
                    self.held.remove(flag)
                    unset.append(flag)
                else:
                    failures.append(reply.exception())
            again = [f for f in unset if f in self.others(False)] if unset else []
            for reply in self.cluster.send(*(("osd", "set", f) for f in again)):
                reply.result()
        if failures:
            raise failures[0]


@dataclass(frozen=True)
class CapacityBudget:
    total_raw: int
    used_raw: int                   # used now, plus what other runs have reserved and this run's unseen writes
    max_raw_used: float
    reserved_by_others: int = 0
    unseen: int = 0                 # of used_raw: this run's writes that `ceph df` does not count yet
    waited_s: float = 0.0           # how long the guard waited for the cluster to free space before this reading

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
        if self.unseen:
            others += f", {format_size(self.unseen)} of it written by this run and not yet counted by `ceph df`"
        return (f"{format_size(self.used_raw)} of {format_size(self.total_raw)} raw used{others}; "
                f"limit {self.max_raw_used:.0%}")


@dataclass
class UnseenWrites:
    """Raw bytes this run wrote that `ceph df` may not count yet. The OSDs report their usage to the mgr once a
    stats period and `ceph df` serves the mgr's last digest, so a write shows a period or two after it ended: a
    write started meanwhile (the next steady-state round) would find the same room again and pass the limit.
    A write counts as unseen until `ceph df` has grown by it since the first such write began: the cluster's raw
    used and, when the write names its pools, their raw used too. Neither alone: the cluster's also holds the OSDs'
    BlueFS (RocksDB, its WAL), which on a lab rose by 35 MiB and fell by 44 MiB between readings a second apart
    while the written pool's figure stood still, and passed for a round's data; a pool's figure came a digest before
    the cluster's (a lab's pool at 92 MiB, the cluster's used 2 MiB up). By the first, 4 rounds wrote 283 objects
    of 2 MiB raw where 250 were allowed; by the second alone, up to 285. A time alone
    never makes it seen: with the CPUs starved the mgr's digest came later than two periods, the next round found
    the room again and the writes passed the limit. Only after `forget_s` (far longer) is it dropped, for space
    freed meanwhile (a pool removed) hides growth and would keep it unseen for ever; that error is on the safe
    side."""

    settle_s: float
    forget_s: float = 0.0                # 0: the longer of 30 s and ten times settle_s
    # (ended, raw bytes, the cluster's raw used before, its pools, their raw used before)
    writes: list[tuple[float, int, int, tuple[str, ...], int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.forget_s <= 0:
            self.forget_s = max(30.0, 10 * self.settle_s)

    def add(self, raw_bytes: int, used_before: int, now: float, pools: Sequence[str] = (),
            pools_before: int = 0) -> None:
        if raw_bytes > 0:
            self.writes.append((now, raw_bytes, used_before, tuple(sorted(pools)), pools_before))

    def pending(self, used_now: int, now: float, pools_used: Mapping[str, int] | None = None) -> int:
        self.writes = [w for w in self.writes if now - w[0] < self.forget_s]
        if not self.writes:
            return 0
        left = sum(w[1] for w in self.writes) - max(0, used_now - min(w[2] for w in self.writes))
        by_pools = 0
        for pools in {w[3] for w in self.writes if w[3]}:
            mine = [w for w in self.writes if w[3] == pools]
            # a pool df does not list (made after its digest, or removed) counts as 0 used: unseen, the safe side
            grown = sum((pools_used or {}).get(p, 0) for p in pools) - min(w[4] for w in mine)
            by_pools += max(0, sum(w[1] for w in mine) - max(0, grown))
        left = max(left, by_pools)
        if left <= 0:
            self.writes = []        # df counts them all: space freed later must not make them unseen again
        return max(0, left)


@dataclass
class Freeing:
    """Whether the cluster is still freeing space: Ceph frees a removed pool's space as its OSDs delete its PGs,
    which takes tens of seconds after `ceph osd pool delete` returns (Reef and Tentacle slower than Pacific), so a
    write that follows a group's removal found the room of the pool just removed still used and was refused. The
    guard waits while `ceph df`'s raw used keeps falling, and gives up once it has not fallen for `quiet_s` (at
    least two stats periods: `ceph df` moves once a period) or after `max_s`."""

    quiet_s: float
    max_s: float = 90.0
    started: float = 0.0
    last_fall: float = 0.0
    least_used: int | None = None

    def goes_on(self, used_raw: int, now: float) -> bool:
        if self.least_used is None:
            self.started = self.last_fall = now
            self.least_used = used_raw
            return True
        if used_raw < self.least_used:
            self.least_used, self.last_fall = used_raw, now
        return now - self.started < self.max_s and now - self.last_fall < self.quiet_s


def settle_seconds(mgr_stats_period_s: float) -> float:
    """How long `ceph df` may take to count a write: the OSD's report (a stats period), the mgr's digest (another),
    and a second for the reading itself."""
    return 2 * mgr_stats_period_s + 1.0


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

