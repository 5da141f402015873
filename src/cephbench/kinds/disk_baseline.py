"""The disk baseline: fio on the OSDs' drives or given paths (not a suite workload: the model reads its figures by
name); hooks in drivers/disk_baseline.py."""

from __future__ import annotations

from .kind import RW_DIRECTIONS, Kind

KIND = Kind("disk_baseline", "Baselines", "Disk baseline", "baseline", None, dict(RW_DIRECTIONS),
            ceiling_source=True, cluster=False, test_overhead_s=1.0)
DRIVER = "disk_baseline"
MODEL = None
