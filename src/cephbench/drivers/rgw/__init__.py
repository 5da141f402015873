"""The rgw workload: cephbench-loadgen against RGW over S3 or Swift.

binary.py finds cephbench-loadgen; credentials.py holds the keys (in memory only); endpoint.py finds RGW;
admin.py makes and removes what radosgw-admin manages (the run's user, stray buckets); parse.py reads loadgen's
document and merges instances exactly (pure); driver.py builds the command and runs a group.
"""

from .driver import preflight, run_group

__all__ = ["preflight", "run_group"]
