"""One run: executing a plan (runner.py), lab shapes and Ceph option variants between tests, the pool
deletion option, and a run from Python (launch.py)."""
