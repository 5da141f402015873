"""The run marker: a config-key `cephbench/runs/<run id>` on the cluster while a run is in progress.

It says who runs (host, PID, start, run directory) so that a second run warns, and how many raw bytes the run's
current write may still add (`reserved_raw_bytes`), so that the capacity guard of every run counts the others'
writes before they land: two runs that each fit alone cannot together pass the limit.
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cluster import Cluster

PREFIX = "cephbench/runs/"


def key(run_id: str) -> str:
    return PREFIX + run_id


def value(run_dir: str | None, started_unix: float, reserved_raw_bytes: int = 0, unseen_raw_bytes: int = 0,
          unseen_until_unix: float = 0.0) -> str:
    """`unseen_raw_bytes`: what the run's last write added that `ceph df` may not count before
    `unseen_until_unix` (the mgr reports usage a stats period or two late)."""
    return json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "started_unix": round(started_unix),
                       "run_dir": run_dir, "reserved_raw_bytes": int(reserved_raw_bytes),
                       **({"unseen_raw_bytes": int(unseen_raw_bytes), "unseen_until_unix": round(unseen_until_unix, 1)}
                          if unseen_raw_bytes else {})})


def parse_dump(dump: Any) -> list[dict[str, Any]]:
    """`ceph config-key dump cephbench/runs/` -> one dict per run marker (run_id, host, pid, ...)."""
    runs = []
    for k, v in sorted((dump or {}).items()) if isinstance(dump, dict) else []:
        try:
            info = json.loads(v)
        except (TypeError, ValueError):
            info = {}
        runs.append({"run_id": str(k).removeprefix(PREFIX), **(info if isinstance(info, dict) else {})})
    return runs


def reserved_by_others(runs: list[dict[str, Any]], run_id: str, now_unix: float | None = None) -> int:
    """Raw bytes other runs may add (their writes in progress) or have added unseen by `ceph df` yet."""
    now = time.time() if now_unix is None else now_unix
    total = 0
    for r in runs:
        if r["run_id"] == run_id:
            continue
        try:
            total += int(r.get("reserved_raw_bytes") or 0)
            if float(r.get("unseen_until_unix") or 0) > now:
                total += int(r.get("unseen_raw_bytes") or 0)
        except (TypeError, ValueError):     # another version's or a damaged marker: it reserves nothing we can read
            continue
    return total


def read_runs(cluster: "Cluster") -> list[dict[str, Any]]:
    """The markers on the cluster, one dict per run in progress (raises what the config-key read raises)."""
    return parse_dump(cluster.ceph_json("config-key", "dump", PREFIX))
