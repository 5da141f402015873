"""The network baseline: iperf3 between hosts (not a suite workload: the model reads its figures by name); hooks in
drivers/iperf.py."""

from __future__ import annotations

from .kind import Kind

KIND = Kind("net_baseline", "Baselines", "Network baseline", "baseline", None, {"send": "write"},
            ceiling_source=True, cluster=False, test_overhead_s=1.5, ops_counted=False)
DRIVER = "iperf"
MODEL = None
