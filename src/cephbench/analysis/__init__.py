"""From a run's baselines and cluster facts to ceilings, efficiency and bottleneck on every cluster result.

This package's root only names what the rest of cephbench uses: the facts of the cluster a result ran on
(facts.py), one result's verdict (verdict.py), a run's results as they come (run.py); model.py does the arithmetic,
rules.py holds the verdict's rules in their order.
"""

from .facts import client_hosts, cluster_of, facts_from_run, osd_rotational, shape_clusters, with_clients
from .run import CEILING_SOURCES, RunAnalyzer, RunFacts
from .verdict import MODELLED, analyse, op_of, op_size_of

__all__ = ["CEILING_SOURCES", "MODELLED", "RunAnalyzer", "RunFacts", "analyse", "client_hosts", "cluster_of",
           "facts_from_run", "op_of", "op_size_of", "osd_rotational", "shape_clusters", "with_clients"]
