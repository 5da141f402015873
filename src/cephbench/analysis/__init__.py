"""From a run's baselines and cluster facts to ceilings, efficiency and bottleneck on every cluster result.

This package's root only names what the rest of cephbench uses: the facts of the cluster a result ran on
(facts.py), one result's verdict (verdict.py), a run's results as they come (run.py); model.py does the arithmetic,
rules.py holds the verdict's rules in their order.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .facts import client_hosts, cluster_of, facts_from_run, osd_rotational, shape_clusters, with_clients
    from .run import CEILING_SOURCES, RunAnalyzer, RunFacts
    from .verdict import MODELLED, analyse, op_of, op_size_of

# Each name is imported from its module when first asked for: a command that reads only curves (analysis.curves, for
# `show`) does not pay for the model, the rules and the evidence behind them.
_HOME = {"client_hosts": "facts", "cluster_of": "facts", "facts_from_run": "facts", "osd_rotational": "facts",
         "shape_clusters": "facts", "with_clients": "facts", "CEILING_SOURCES": "run", "RunAnalyzer": "run",
         "RunFacts": "run", "MODELLED": "verdict", "analyse": "verdict", "op_of": "verdict", "op_size_of": "verdict"}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
