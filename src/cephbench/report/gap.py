"""The verdict as a picture: per level, from the hardware baseline through the ceiling after replication or EC
to what was measured (report.html's gap charts; charts.gap draws them).

The figures are the model's (analysis/): the run's baselines give the same ClusterFacts the run's analysis used,
and `model.ceiling` gives each term after replication, EC and the journal. This module only pairs each term with
the hardware it came from (the pale bar) and checks that it still agrees with the result's stored analysis: a
result analysed by another cephbench (an import, an older run) keeps its stored ceiling, drawn as one row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis import (CEILING_SOURCES, MODELLED, client_hosts, cluster_of, facts_from_run, op_of, op_size_of,
                        shape_clusters, with_clients)
from ..analysis.model import ClusterFacts, Pool, Term, ceiling, osd_bench_ceiling, per_disk_rate
from ..kinds import NET_BASELINE, level_of, ops_unit
from ..core.results import Result

AGREE = 0.02          # a recomputed ceiling within 2% of the stored one is the same ceiling


@dataclass(frozen=True)
class GapRow:
    resource: str                 # what the row is: "disks", "journal devices", "public network", ...
    name: str                     # the term's name in the model: "replication/EC write amplification" for disks
    hardware: float | None        # bytes/s the hardware gives for this op (its baseline), before the divisions
    ceiling: float | None         # bytes/s after them (the model's term); None: hardware only
    formula: str
    limit: bool = False           # the term that sets the ceiling


@dataclass(frozen=True)
class Gap:
    title: str                    # "RADOS write"
    test_id: str
    measured_bytes_per_s: float
    measured_ops_per_s: float | None
    op_size: int | None
    ceiling_bytes_per_s: float
    efficiency: float
    bottleneck: str               # what the analysis named (from the evidence when there was some)
    rows: list[GapRow]
    ops_unit: str = "ops/s"       # what the test's kind calls its operations per second (kinds.ops_unit)


class Facts:
    """The run's ClusterFacts, computed once per lab shape for every chart of a report."""

    def __init__(self, meta: dict[str, Any], results: list[Result]) -> None:
        client = (meta.get("hosts") or {}).get("client") or {}
        self.sources = [r for r in results if r.test.kind in CEILING_SOURCES]
        self.net = [r for r in self.sources if r.test.kind == NET_BASELINE]
        self.cluster: dict[str, Any] = meta.get("cluster") or {}
        self.shapes = shape_clusters(meta)
        self.client = (client.get("hostname"), client.get("cpu_count"))
        self._facts: dict[str | None, ClusterFacts | None] = {}

    def of(self, result: Result) -> ClusterFacts | None:
        shape = result.test.variant if result.test.variant in self.shapes else None
        if shape not in self._facts:
            try:
                self._facts[shape] = facts_from_run(cluster_of(result, self.cluster, self.shapes), self.sources,
                                                    *self.client)
            except (TypeError, ValueError, KeyError, AttributeError):   # a run.json from elsewhere: stored ceilings
                self._facts[shape] = None
        facts, clients = self._facts[shape], client_hosts(result)
        if facts is not None and clients:
            return with_clients(facts, self.net, clients)
        return facts


DISK_NAMES = ("disks", "replication/EC write amplification", "journal double write")


def _resource(t: Term) -> str:
    """What a term's bar stands for: the model names the disks' term after the factor that makes it bind."""
    if "journal devices" in t.formula:
        return "journal devices"
    if t.formula.startswith("one disk alone"):
        return "one disk"
    return "disks" if t.bottleneck in DISK_NAMES else t.bottleneck


def _hardware(t: Term, f: ClusterFacts, op: str, size: int) -> float | None:
    """What the hardware behind a term gives for this op before replication, EC or the journal divide it."""
    if t.bottleneck == "client network":
        return None                                  # nothing divides a client's link
    if t.bottleneck == "public network":
        return f.osd_hosts * f.public_bytes_per_s if f.public_bytes_per_s else None
    if t.bottleneck == "cluster network":
        return f.osd_hosts * f.cluster_bytes_per_s if f.cluster_bytes_per_s else None
    if t.formula.startswith("one disk alone"):
        return f.disk.write_alone_bytes_per_s
    if "journal devices" in t.formula:
        return f.journal_devices * f.journal_write_bytes_per_s if f.journal_write_bytes_per_s else None
    d = f.disk
    rate = per_disk_rate(size, d.write_bytes_per_s, d.write_iops)[0] if op == "write" else \
        (per_disk_rate(size, d.read_bytes_per_s, d.read_iops)[0]
         or per_disk_rate(size, d.write_bytes_per_s, d.write_iops)[0])
    return f.osds * rate if rate else None


def _hardware_only(f: ClusterFacts, op: str, size: int) -> list[GapRow]:
    """The disks' and the OSD hosts' links' figures, for a level whose ceiling is not the model's terms (RGW)."""
    rows = []
    disks = _hardware(Term("disks", 0.0, ""), f, op, size)
    if disks:
        rows.append(GapRow("disks (hardware)", "disks", disks, None, f"{f.osds} disks from the disk baseline"))
    if f.public_bytes_per_s:
        rows.append(GapRow("public network (hardware)", "public network", f.osd_hosts * f.public_bytes_per_s, None,
                           f"{f.osd_hosts} OSD hosts' links from the network baseline"))
    return rows


def _terms(result: Result, f: ClusterFacts, op: str, size: int) -> list[Term] | None:
    """The model's terms for this result, or None when they do not give its stored ceiling."""
    a = result.analysis
    if level_of(result.test.kind) == "OSD":
        c = osd_bench_ceiling(f, size)
    elif result.test.kind in MODELLED:
        c = ceiling(f, op, size, Pool.from_profile(result.test.params.pool_profile))  # type: ignore[arg-type]
    else:
        return None
    if not c.bytes_per_s or a is None or not a.ceiling_bytes_per_s or \
            abs(c.bytes_per_s - a.ceiling_bytes_per_s) > AGREE * a.ceiling_bytes_per_s:
        return None
    return c.terms


def gap_of(result: Result, title: str, facts: Facts) -> Gap | None:
    """The gap chart of one result; None when it has no ceiling (nothing to draw: the text says why)."""
    a, m = result.analysis, result.measurement
    if a is None or m is None or not m.bytes_per_s or not a.ceiling_bytes_per_s or a.efficiency is None:
        return None
    op, size = op_of(result) or "write", op_size_of(result)
    f = facts.of(result)
    rows: list[GapRow] = []
    terms = _terms(result, f, op, size) if f is not None and size else None
    if terms:
        binding = min(terms, key=lambda t: t.bytes_per_s)
        for t in sorted(terms, key=lambda t: -t.bytes_per_s):    # widest first: the funnel narrows downwards
            hw = _hardware(t, f, op, size)                       # type: ignore[arg-type]
            rows.append(GapRow(_resource(t), t.bottleneck, hw if hw and hw > t.bytes_per_s * 1.001 else None,
                               t.bytes_per_s, t.formula, t is binding))
    else:
        if f is not None and size:
            rows += _hardware_only(f, op, size)
        label = f"{level_of(result.test.kind) or result.test.kind} ceiling"
        rows.append(GapRow(label, label, None, a.ceiling_bytes_per_s,
                           a.reason or "", True))
    return Gap(title, result.test.id, m.bytes_per_s, m.ops_per_s, size, a.ceiling_bytes_per_s, a.efficiency,
               a.bottleneck or "unknown", rows, ops_unit(result.test.kind) or "ops/s")
