"""A run's analysis as its results come: `RunAnalyzer` remembers the baselines measured so far (and those of an
earlier, resumed part of the run, from its results.jsonl) and gives each cluster result its `analysis`
(verdict.py), with the facts (facts.py) of the cluster it ran on, which the run hands it as `RunFacts`."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.results import Result, RunDir
from ..kinds import NET_BASELINE, kinds_where
from .facts import client_hosts, cluster_of, facts_from_run, shape_clusters, with_clients
from .verdict import MODELLED, analyse

log = logging.getLogger(__name__)

CEILING_SOURCES = kinds_where(ceiling_source=True)
RADOS_RATES = kinds_where(rados_rates=True)    # the RADOS rates RGW's model reads


@dataclass(frozen=True)
class RunFacts:
    """What the analysis needs of a run beside its results, as the run learnt them (run.json records the same for
    the report): the cluster the run found, this machine, and each lab shape's cluster."""

    cluster: dict[str, Any] = field(default_factory=dict)    # also the build a lab shape's baselines ran on
    client: dict[str, Any] = field(default_factory=dict)     # this machine: hostname, cpu_count (hosts.local_facts)
    shapes: dict[str, dict[str, Any]] = field(default_factory=dict)    # variant -> its lab shape's cluster facts

    @classmethod
    def recorded(cls, meta: dict[str, Any]) -> "RunFacts":
        """As an earlier part of the run recorded them in its run.json: a resumed run measures none again."""
        return cls(meta.get("cluster") or {}, (meta.get("hosts") or {}).get("client") or {}, shape_clusters(meta))

    def on_part(self, cluster: dict[str, Any], variants: Iterable[str], baselines: bool) -> "RunFacts":
        """After a lab build: `variants` run on `cluster`, and so do the baselines when the part runs some (it need
        not be the lab the run found)."""
        return replace(self, cluster=cluster if baselines else self.cluster,
                       shapes={**self.shapes, **{v: cluster for v in variants}})


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
    def for_run(cls, facts: RunFacts, rundir: RunDir | None) -> "RunAnalyzer":
        """`rundir`: the run's directory (None: a dry run), whose results so far are its earlier part's."""
        earlier: list[Result] = []
        if rundir is not None:
            try:
                earlier, _ = rundir.results()
            except Exception as exc:  # noqa: BLE001 - analysis must never stop a run
                log.warning("analysis: cannot read the run's results so far: %s", exc)
        return cls(cluster=facts.cluster, shapes=dict(facts.shapes), client_hostname=facts.client.get("hostname"),
                   cpus=facts.client.get("cpu_count"),
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
