"""What happened to the cluster while a test ran: OSDs down or out, PGs degraded or inactive, slow ops, raw use.

A sampler (one `ceph status` a second through the run's connection) and a pure summariser: `observe` turns one
status into an Observation, `ClusterWatch` keeps the changes as timed events and decides when a test must stop —
the cluster as a whole (every client, not just this run) passed the capacity limit during a write, or PGs stayed
inactive so long that the tool would only hang. Drivers know nothing of it: `RunContext.run_tools_seen` starts it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..core.poll import Pending
from ..core.results import MON_SILENCE_WARNING, ClusterDuringTest

log = logging.getLogger(__name__)

INACTIVE_LIMIT_S = 15.0     # PGs inactive this long: I/O to them blocks; the test is stopped with that cause
LOST_AFTER = 3              # `ceph status` failing this many times in a row: the cluster is gone for this test
BRIEF_INACTIVE_S = 5.0      # peering after another client's pool creation or a map change: no warning
SILENT_S = 5.0              # no `ceph status` back this long (one takes milliseconds): the monitors were out
# the capacity guard's rate is over this many seconds at least: `ceph df` counts a write once the OSD has reported it
# (a stats period) and the mgr has digested it (another), so raw use moves in lumps; Ceph's default period is 5 s
# (cluster/safety.settle_seconds: 2 periods and a second). The run passes its cluster's own (mgr_stats_period).
DEFAULT_RATE_WINDOW_S = 11.0


@dataclass(frozen=True)
class Observation:
    osds: int
    up: int
    in_: int
    pgs: int
    degraded_pgs: int
    inactive_pgs: int
    degraded_objects: int
    slow_ops: bool
    raw_used: float | None          # fraction of the cluster's raw capacity in use


def observe(status: dict[str, Any]) -> Observation:
    """One `ceph status -f json` (Pacific's layout) as the figures the watch follows."""
    osdmap = status.get("osdmap") or {}
    osdmap = osdmap.get("osdmap", osdmap)            # older releases nest it once more
    pgmap = status.get("pgmap") or {}
    degraded = inactive = 0
    for s in pgmap.get("pgs_by_state") or []:
        states = set(str(s.get("state_name", "")).split("+"))
        n = int(s.get("count", 0))
        if "degraded" in states or "undersized" in states:
            degraded += n
        if "active" not in states:
            inactive += n
    total, used = pgmap.get("bytes_total"), pgmap.get("bytes_used")
    checks = (status.get("health") or {}).get("checks") or {}
    return Observation(osds=int(osdmap.get("num_osds", 0)), up=int(osdmap.get("num_up_osds", 0)),
                       in_=int(osdmap.get("num_in_osds", 0)), pgs=int(pgmap.get("num_pgs", 0)),
                       degraded_pgs=degraded, inactive_pgs=inactive,
                       degraded_objects=int(pgmap.get("degraded_objects", 0) or 0),
                       slow_ops="SLOW_OPS" in checks,
                       raw_used=float(used) / float(total) if total else None)


def _describe(o: Observation) -> list[str]:
    out = []
    if o.up < o.osds:
        out.append(f"{o.osds - o.up} of {o.osds} OSD(s) down")
    if o.in_ < o.osds:
        out.append(f"{o.osds - o.in_} of {o.osds} OSD(s) out")
    if o.degraded_pgs:
        out.append(f"{o.degraded_pgs} PG(s) degraded")
    if o.inactive_pgs:
        out.append(f"{o.inactive_pgs} PG(s) inactive")
    if o.slow_ops:
        out.append("slow ops")
    return out


def growth_per_s(before: float | None, after: float, elapsed_s: float | None) -> float:
    """Raw use's growth per real second between two readings elapsed_s apart; 0 when unknown or shrinking.

    Readings are a second apart only while the monitors answer: after a pause, one difference spans the pause."""
    if before is None or not elapsed_s or elapsed_s <= 0:
        return 0.0
    return max(0.0, after - before) / elapsed_s


def growth_over_window(readings: list[tuple[float, float]], window_s: float) -> float:
    """Raw use's growth per second over the last `window_s` seconds of (test second, raw use) readings, oldest
    first: from the latest reading at least `window_s` before the last one (else the first) to the last, divided by
    at least `window_s`. `ceph df` counts writes in lumps a stats period apart, so one reading's jump is a period's
    writes (or, at a test's start, the writes before it), never a second's: over a window that spans the periods a
    lump is spread over the seconds it took, and a lump before the window has filled counts over the whole window."""
    if len(readings) < 2:
        return 0.0
    t_last, last = readings[-1]
    older = [r for r in readings[:-1] if r[0] <= t_last - window_s]
    t0, first = older[-1] if older else readings[0]
    return growth_per_s(first, last, max(t_last - t0, window_s))


def silence_text(start_s: float, end_s: float, to_end: bool) -> str:
    """The warning of one silence of the monitors."""
    until = f"the end of the test ({end_s:.0f} s)" if to_end else f"{end_s:.0f} s"
    return (f"{MON_SILENCE_WARNING}{end_s - start_s:.0f} s (from {start_s:.0f} s to {until}): the "
            "cluster's state and raw use went unseen meanwhile")


@dataclass
class ClusterWatch:
    """Follows the cluster during one test; `sample` once a second, `stop_reason` says when the test must end."""

    status: Callable[[], dict[str, Any]]
    max_raw_used: float
    writing: bool                                   # a write phase: the capacity limit applies
    started: float = field(default_factory=lambda: time.monotonic())
    first: Observation | None = None
    last: Observation | None = None
    events: list[tuple[float, str]] = field(default_factory=list)
    worst: dict[str, float] = field(default_factory=dict)
    inactive_since: float | None = None
    inactive_longest_s: float = 0.0
    last_raw_used: float | None = None
    stop_reason: str | None = None
    stopped_for_capacity: bool = False              # what was written until then is a measurement, cut short
    failures: int = 0
    failed_in_a_row: int = 0
    conf: Path | None = None                        # the tools' ceph.conf: gone means no tool reaches the cluster
    answered_s: float = 0.0                         # test time of the last reading (the start counts as one)
    silences: list[tuple[float, float, bool]] = field(default_factory=list)   # (from, to, to the end) in test s
    rate_window_s: float = DEFAULT_RATE_WINDOW_S    # the capacity guard's rate is over this window (growth_over_window)
    raw_readings: list[tuple[float, float]] = field(default_factory=list)     # (test second answered, raw use)
    # a write that stops by itself once it has written what it reserved (rados bench's --max-objects from the
    # guard's room, which leaves a fifth of it free): the raw use it may take the cluster to; None: not bounded
    bounded_until: float | None = None

    def sample(self) -> None:
        if self.conf is not None and not self.conf.exists() and self.stop_reason is None:
            self.stop_reason = f"{self.conf} is gone: the tools cannot reach the cluster any more"
            return
        try:
            o = observe(self.status())
        except Pending:             # asked, not back yet: a silence is measured when it is
            return
        except Exception as exc:  # noqa: BLE001 - one missed reading is noise; LOST_AFTER in a row end the test
            self.failures += 1
            self.failed_in_a_row += 1
            log.debug("cluster status: %s", exc)
            if self.failed_in_a_row >= LOST_AFTER and self.stop_reason is None:
                self.stop_reason = f"the cluster stopped answering ({exc}), so the test was stopped"
            return
        self.failed_in_a_row = 0
        now = time.monotonic() - self.started
        self._answered(self._reading_at(now))
        if self.first is None:
            self.first = o
        before = set(_describe(self.last)) if self.last else set()
        for text in _describe(o):
            if text not in before:
                self.events.append((round(now, 1), text))
        if self.last is not None and _describe(self.last) and not _describe(o):
            self.events.append((round(now, 1), "healthy again"))
        self.last = o
        for key, value in (("osds_down", o.osds - o.up), ("osds_out", o.osds - o.in_),
                           ("pgs_degraded", o.degraded_pgs), ("pgs_inactive", o.inactive_pgs),
                           ("objects_degraded", o.degraded_objects),
                           ("raw_used", o.raw_used or 0.0)):
            self.worst[key] = max(self.worst.get(key, 0), value)
        if o.inactive_pgs:
            self.inactive_since = self.inactive_since if self.inactive_since is not None else now
            self.inactive_longest_s = max(self.inactive_longest_s, now - self.inactive_since)
            if now - self.inactive_since >= INACTIVE_LIMIT_S and self.stop_reason is None:
                self.stop_reason = (f"{o.inactive_pgs} PG(s) inactive for {now - self.inactive_since:.0f} s "
                                    f"({o.up} of {o.osds} OSDs up): I/O to them blocks, so the test was stopped")
        else:
            self.inactive_since = None
        if o.raw_used is not None:
            self.raw_readings.append((self.answered_s, o.raw_used))
            self.raw_readings = [r for r in self.raw_readings if r[0] >= self.answered_s - 2 * self.rate_window_s]
        if self.writing and o.raw_used is not None and self.stop_reason is None:
            # stop a second early: the next reading comes a second later, and raw use grows meanwhile; the rate
            # is over a window that spans the cluster's stats periods, so one lump of `ceph df` is not a rate
            rising = growth_over_window(self.raw_readings, self.rate_window_s)
            # a bounded write's own rise ends at its bound, below the limit: while the cluster is within it, a
            # second's rise past the limit is the write's, which stops first (the guard once stopped such writes
            # a second early near their end, where a small room's fifth is less than a second of writing, and
            # the reads after had nothing to read); beyond it the rise is someone else's too, and judged
            ours = self.bounded_until is not None and o.raw_used <= self.bounded_until < self.max_raw_used
            if o.raw_used + rising >= self.max_raw_used and not ours:
                self.stop_reason = (f"capacity guard: the cluster reached {o.raw_used:.1%} raw used, "
                                    f"{rising:.1%} a second over the last {self.rate_window_s:g} s (limit "
                                    f"{self.max_raw_used:.0%}, counting every client's writes), so the write was "
                                    "stopped")
                self.stopped_for_capacity = True
        self.last_raw_used = o.raw_used

    def _reading_at(self, now: float) -> float:
        """When this reading came back, in test seconds: a Poll's (late ones are taken at a later tick) says
        when; a plain call came back now."""
        at = getattr(self.status, "answered_at", None)
        return max(0.0, at - self.started) if at is not None else now

    def _answered(self, now: float) -> float:
        """A reading came back at `now` (test seconds): the seconds since the one before, and a silence of the
        monitors recorded when that was SILENT_S or more."""
        since = now - self.answered_s
        if since >= SILENT_S:
            self._silent(self.answered_s, now, to_end=False)
        self.answered_s = now
        return since

    def _silent(self, start_s: float, end_s: float, to_end: bool) -> None:
        self.silences.append((start_s, end_s, to_end))
        self.events.append((round(start_s, 1), f"the monitors stopped answering for {end_s - start_s:.0f} s"))
        self.events.sort(key=lambda e: e[0])

    def finish(self) -> None:
        """The test ended: a silence still going on counts until now."""
        now = time.monotonic() - self.started
        if now - self.answered_s >= SILENT_S and not (self.silences and self.silences[-1][2]):
            self._silent(self.answered_s, now, to_end=True)

    def summary(self) -> ClusterDuringTest | None:
        if self.first is None and not self.silences:
            return None
        return ClusterDuringTest(
            osds_down_max=int(self.worst.get("osds_down", 0)), osds_out_max=int(self.worst.get("osds_out", 0)),
            pgs_degraded_max=int(self.worst.get("pgs_degraded", 0)),
            pgs_inactive_max=int(self.worst.get("pgs_inactive", 0)),
            objects_degraded_max=int(self.worst.get("objects_degraded", 0)),
            raw_used_max=self.worst.get("raw_used") or None, events=[f"{t:g} s: {e}" for t, e in self.events],
            stopped=self.stop_reason, mon_silent_s=round(sum(b - a for a, b, _ in self.silences), 1))

    def warnings(self) -> list[str]:
        """What makes the result no capability of the cluster: it ran degraded, or was stopped."""
        out = []
        if self.stop_reason:
            out.append(self.stop_reason)
        if self.worst.get("osds_down") or self.worst.get("pgs_degraded") or \
                self.inactive_longest_s >= BRIEF_INACTIVE_S:
            out.append("the cluster was degraded during this test (" + "; ".join(e for _, e in self.events) + ")")
        out += [silence_text(*s) for s in self.silences]
        return out
