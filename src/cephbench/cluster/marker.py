"""The run marker: a config-key `cephbench/runs/<run id>` on the cluster while a run is in progress.

It says who runs (host, PID, start, run directory) so that a second run warns; how many raw bytes the run's
current write may still add (`reserved_raw_bytes`), so that the capacity guard of every run counts the others'
writes before they land: two runs that each fit alone cannot together pass the limit; and the Ceph options its
variants change (`options`, [who, name] pairs), so that a second run that would change one of them too is refused
(variants.claim_options): each would record the other's value as the one to put back, and undo the other's variant
in the middle of its tests; and the scrub flags it holds (`scrub_flags`: set by a cephbench run, this one or one
it shares them with), so that a run's end leaves them to the others still holding them (safety.ScrubFlags), and at
its end those it let go of (`scrub_letting_go`), so that a run starting meanwhile knows a cephbench run set them;
and whether it holds mon_allow_pool_delete true for its pools (`pool_delete`, with the value to put back), so that
a run's end leaves it to another run whose pools still need it (run/pooldelete.py).
Every run reads the others' options between two of its tests: a result measured under another run's variant says
so (runner.others_in_force).
"""

from __future__ import annotations

import json
import os
import socket
import time
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from .ceph import Cluster

PREFIX = "cephbench/runs/"


def key(run_id: str) -> str:
    return PREFIX + run_id


def value(run_dir: str | None, started_unix: float, reserved_raw_bytes: int = 0, unseen_raw_bytes: int = 0,
          unseen_until_unix: float = 0.0, options: Iterable[tuple[str, str]] = (),
          scrub_flags: Iterable[str] = (), scrub_letting_go: Iterable[str] = (),
          pool_delete: tuple[str | None, ...] = (), pid_started: int | None = None) -> str:
    """`unseen_raw_bytes`: what the run's last write added that `ceph df` may not count before
    `unseen_until_unix` (the mgr reports usage a stats period or two late); `options`: (who, name) of the options
    the run's variants change; `scrub_flags`: the scrub flags the run holds; `scrub_letting_go`: those its end has
    let go of and is about to unset (unless another run holds them); `pool_delete`: (the value to put back,) while
    the run holds mon_allow_pool_delete true (run/pooldelete.py), empty when it does not."""
    opts = [[who, name] for who, name in options]
    flags, going = list(scrub_flags), list(scrub_letting_go)
    # the process by its start time too (`pid_started`, clock ticks since boot): a cleanup on this host tells a live
    # run (the original of a copied run directory) by it, whatever the wall clock did since
    return json.dumps({"host": socket.gethostname(), "pid": os.getpid(),
                       **({"pid_started": pid_started} if pid_started is not None else {}),
                       "started_unix": round(started_unix),
                       "run_dir": run_dir, "reserved_raw_bytes": int(reserved_raw_bytes),
                       **({"unseen_raw_bytes": int(unseen_raw_bytes), "unseen_until_unix": round(unseen_until_unix, 1)}
                          if unseen_raw_bytes else {}),
                       **({"options": opts} if opts else {}), **({"scrub_flags": flags} if flags else {}),
                       **({"scrub_letting_go": going} if going else {}),
                       **({"pool_delete": {"previous": pool_delete[0]}} if pool_delete else {})})


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


def options_of_others(runs: list[dict[str, Any]], run_id: str, names: Iterable[str] | None = None
                      ) -> list[tuple[dict[str, Any], str, str]]:
    """(run, who, name) for each option of these names (None: of any name) that another run's marker says it
    changes. By name, whatever the target: `osd` and `global` settings of one option decide together what an OSD
    runs with."""
    wanted = None if names is None else set(names)
    out = []
    for r in runs:
        if r["run_id"] == run_id or not isinstance(r.get("options"), list):
            continue
        for o in r["options"]:
            if isinstance(o, list) and len(o) == 2 and (wanted is None or o[1] in wanted):
                out.append((r, str(o[0]), str(o[1])))
    return out


def scrub_flags_of_others(runs: list[dict[str, Any]], not_of: Iterable[str], letting_go: bool = False) -> set[str]:
    """The scrub flags the markers of runs other than those of `not_of` (run ids) hold; with `letting_go`, also
    those an ending run has let go of: set by a cephbench run all the same, and about to be unset."""
    skip = set(not_of)
    held: set[str] = set()
    for r in runs:
        for key in ("scrub_flags", "scrub_letting_go") if letting_go else ("scrub_flags",):
            flags = r.get(key)
            if r["run_id"] not in skip and isinstance(flags, list):
                held.update(f for f in flags if isinstance(f, str))
    return held


def pool_delete_holders(runs: list[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    """The other runs whose markers hold mon_allow_pool_delete true for their pools, each with the value it will
    put back (`pool_delete.previous`: the one before the first of them set it)."""
    return [r for r in runs if r["run_id"] != run_id and isinstance(r.get("pool_delete"), dict)]


def describe(run: dict[str, Any]) -> str:
    """`run 1a2b3c from host h, PID 42, since 10:00:00 UTC`: who another run is, from its marker."""
    since = time.strftime("%H:%M:%S UTC", time.gmtime(run.get("started_unix") or 0))
    return f"run {run['run_id']} from host {run.get('host', '?')}, PID {run.get('pid', '?')}, since {since}"


def read_runs(cluster: "Cluster") -> list[dict[str, Any]]:
    """The markers on the cluster, one dict per run in progress (raises what the config-key read raises)."""
    return parse_dump(cluster.ceph_json("config-key", "dump", PREFIX))
