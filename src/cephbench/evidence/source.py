"""What an evidence source is: what it can read (What) and whether this run reaches it (Reach); a window source
reads after the test what it is asked (Ask) and gives back what it found (Found). The registry, in order, is
sources.py.

Two kinds of source. A live one is read while the tools run, or right at their start and end: ssh and /proc (the
host watches, evidence/watch.py), an OSD's admin socket and `ceph tell` (evidence/osdread.py). A window source is
read after the test, over its window: Prometheus' exporters (node-exporter, cAdvisor, ceph-exporter, the mgr's
prometheus module, process-exporter); each has `read(ask)` and gives back what it found (`Found`), which the run
puts with the rest (drivers/base.py). For one thing (What), the first reachable source in the order that has it
reads it; a source later in the order reads only what those before it left. Adding a source is its module and its
line in sources.py's `SOURCES`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

from ..core.results import DeviceLoad, HostLoad, LinkLoad, ProcessCpu


class What(enum.Enum):
    HOST_CPU = "host CPU"
    DEVICES = "devices"
    LINKS = "links"
    DAEMON_CPU = "daemon CPU"          # a daemon's process or container on its host: its CPU, limit, throttling
    OSD_CPU = "OSD CPU"                # each OSD's CPU seconds over the test, for its CPU per op
    OSD_COUNTERS = "OSD counters"


@dataclass(frozen=True)
class Reach:
    """What this run can reach."""
    ssh: bool                   # ssh is installed and the suite lets it watch the OSD hosts
    prometheus: str | None      # the operator's Prometheus (settings.prometheus, --prometheus, CEPHBENCH_PROMETHEUS)
    cluster: bool = True        # a librados connection (`ceph tell`); False for `cephbench baseline`


@dataclass
class Ask:
    """What a window source is asked, after a test: the window, and what no source before it has read."""
    prom: Any                           # evidence.prometheus.Prometheus
    metadata: list[dict[str, Any]]      # `ceph osd metadata`
    start: float
    end: float                          # the tools' window (unix s); start == end: what it holds now, no waiting
    hosts: list[str] = field(default_factory=list)          # OSD hosts whose devices and links are wanted
    unwatched: list[str] = field(default_factory=list)      # OSD hosts whose CPU no watch read
    osds: dict[int, str] = field(default_factory=dict)      # OSD -> its host: OSDs whose counters are unread
    cpu_osds: dict[int, str] = field(default_factory=dict)  # OSD -> its host: OSDs whose CPU seconds are unread
    mgr_services: dict[str, str] = field(default_factory=dict)  # `ceph mgr services` (the prometheus module's URL)
    config: Callable[[str, str], str | None] = lambda who, name: None     # `ceph config get who name`


@dataclass
class Found:
    """What a window source read."""
    devices: list[DeviceLoad] | None = None         # None: not read (the watch's stay)
    links: list[LinkLoad] | None = None
    hosts: list[HostLoad] = field(default_factory=list)
    processes: dict[str, list[ProcessCpu]] = field(default_factory=dict)   # host -> its daemons' CPU
    counters: dict[int, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)  # OSD -> dumps
    sources: dict[int, str] = field(default_factory=dict)      # OSD -> where its counters came from
    cpu_s: dict[int, float] = field(default_factory=dict)      # OSD -> its CPU seconds over the test
    notes: list[str] = field(default_factory=list)


@runtime_checkable
class Source(Protocol):
    name: str
    reads: frozenset[What]

    def reachable(self, reach: Reach) -> bool: ...


@runtime_checkable
class WindowSource(Source, Protocol):
    def read(self, ask: Ask) -> Found: ...


@dataclass(frozen=True)
class Live:
    """A source the run reads while its tools run (its reading is the watch's, osdread's)."""
    name: str
    reads: frozenset[What]
    needs: Callable[[Reach], bool]

    def reachable(self, reach: Reach) -> bool:
        return self.needs(reach)


SSH_PROC = Live("ssh and /proc", frozenset({What.HOST_CPU, What.DEVICES, What.LINKS, What.DAEMON_CPU}),
                lambda r: r.ssh)
# an OSD's socket is reached here, or over ssh: osdread.py tries it for every OSD and says which it reached
ADMIN_SOCKET = Live("admin socket", frozenset({What.OSD_COUNTERS, What.OSD_CPU}), lambda r: r.cluster)
CEPH_TELL = Live("ceph tell", frozenset({What.OSD_COUNTERS}), lambda r: r.cluster)
