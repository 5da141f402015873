"""A run's analysis as its results come: `RunAnalyzer` remembers the baselines measured so far (and those of an
earlier, resumed part of the run) and gives each cluster result its `analysis` (verdict.py), with the facts
(facts.py) of the cluster it ran on."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..core.results import Result
from ..kinds import NET_BASELINE, kinds_where
from .facts import client_hosts, cluster_of, facts_from_run, shape_clusters, with_clients
from .verdict import MODELLED, analyse

log = logging.getLogger(__name__)

CEILING_SOURCES = kinds_where(ceiling_source=True)
RADOS_RATES = kinds_where(rados_rates=True)    # the RADOS rates RGW's model reads


@dataclass
class RunAnalyzer:
    """Attaches analysis to each result of a run as it finishes; baselines are remembered as they come."""

    cluster: dict[str, Any] = field(default_factory=dict)
    shapes: dict[str, dict[str, Any]] = field(default_factory=dict)    # variant -> its lab shape's cluster facts
    client_hostname: str | None = None
    cpus: int | None = None
    seen: list[Result] = field(default_factory=list)
    rados: list[Result] = field(default_factory=list)      # the run's rados bench results: RGW's RADOS rates

    @classmethod
    def for_run(cls, ctx: Any) -> "RunAnalyzer":
        meta: dict[str, Any] = {}
        earlier: list[Result] = []
        if getattr(ctx, "rundir", None) is not None:
            try:
                meta = ctx.rundir.meta()
                earlier, _ = ctx.rundir.results()
            except Exception as exc:  # noqa: BLE001 - analysis must never stop a run
                log.warning("analysis: cannot read the run directory: %s", exc)
        client = (meta.get("hosts") or {}).get("client") or {}
        return cls(cluster=meta.get("cluster") or {}, shapes=shape_clusters(meta),
                   client_hostname=client.get("hostname"), cpus=client.get("cpu_count"),
                   seen=[r for r in earlier if r.test.kind in CEILING_SOURCES],
                   rados=[r for r in earlier if r.test.kind in RADOS_RATES])

    def attach(self, result: Result) -> Result:
        if result.test.kind in CEILING_SOURCES:
            self.seen.append(result)
            if result.test.kind not in MODELLED:
                return result
        try:
            cluster = cluster_of(result, self.cluster, self.shapes)
            facts = facts_from_run(cluster, self.seen, self.client_hostname, self.cpus)
            clients = client_hosts(result)
            if facts is not None and clients:
                facts = with_clients(facts, [r for r in self.seen if r.test.kind == NET_BASELINE], clients)
            result.analysis = analyse(result, facts, self.rados, cluster)
            if result.test.kind in RADOS_RATES:
                self.rados.append(result)
        except Exception as exc:  # noqa: BLE001 - a model bug must not lose a measured result
            log.warning("analysis of %s failed: %s", result.test.id, exc)
        return result
