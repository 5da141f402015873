"""The cluster and its guards: Ceph as a client sees it (ceph.py), the run marker, health and capacity
guards, the cluster's own limits, and what a dead run left (recovery.py)."""
