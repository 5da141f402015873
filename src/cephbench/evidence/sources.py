"""The evidence sources in the order they are preferred: for each thing a test's evidence holds (source.What), the
first source this run reaches that reads it reads it, and one later in the order reads only what those before it
left (source.py says what a source is). Adding a source is its module and its line here."""

from __future__ import annotations

from typing import Collection

from . import cephexporter, prometheus
from .source import ADMIN_SOCKET, CEPH_TELL, SSH_PROC, Reach, Source, What, WindowSource

# ceph-exporter before `ceph tell`: where an operator runs it (cephadm from Reef on), a toolbox reads what was
# deployed to be read; the mgr module after it: its counters reach it through the OSDs' reports (mgr_stats_period)
# and its own collection (mgr/prometheus/scrape_interval), later than `ceph tell` reads them
SOURCES: tuple[Source, ...] = (SSH_PROC, ADMIN_SOCKET, prometheus.NODE_EXPORTER, prometheus.CADVISOR,
                               cephexporter.CEPH_EXPORTER, CEPH_TELL, cephexporter.MGR_MODULE,
                               prometheus.PROCESS_EXPORTER)


def chosen(reach: Reach, what: What) -> list[Source]:
    """The sources this run reaches that read `what`, in order."""
    return [s for s in SOURCES if what in s.reads and s.reachable(reach)]


def window_sources(reach: Reach, whats: Collection[What], before: Source | None = None) -> list[WindowSource]:
    """The window sources this run reaches that read any of `whats`, in order; only those ahead of `before` in the
    order when it is given (ceph-exporter ahead of `ceph tell`)."""
    order = [s for s in SOURCES if set(whats) & s.reads and s.reachable(reach)]
    if before is not None and before in order:
        order = order[:order.index(before)]
    return [s for s in order if isinstance(s, WindowSource)]
