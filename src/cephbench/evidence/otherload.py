"""Other clients' load: the client I/O of pools this run did not create, over a test's own window (pure, but for
the sampler at the end: no I/O).

The figures are differences of each pool's cumulative client counters (`ceph df detail -f json`: `rd`, `rd_bytes`,
`wr`, `wr_bytes`) read before the load and after it, over the seconds between the two readings. The mon's rates
(`ceph osd pool stats`' `client_io_rate`) are not used: they are smoothed over several stats periods, so another
client's burst that ended before a test still showed as its load for ~8 s on the lab (mgr stats period 1 s) and
would for ~30 s on a cluster of the default 5 s, and a short test that followed it was marked (CI, stop 32). The
counters lag too, by up to a stats period, but by the same at both ends: the window is shifted, not widened.

A daemon's own housekeeping is told apart from other clients by pool and by rate: an RGW writes its log, control
and meta pools (data log, gc, notify: a few to tens of small ops a second, ~0 bytes) and the mgr its `.mgr` /
`device_health_metrics` pool whenever it likes, on every cluster that has them. Such I/O under BUSY_BYTES_PER_S is
background, kept apart and reported, never a reason to distrust a result; bytes beyond it on those pools are a
client's. Scrub is not client I/O at all: the pools' client counters do not count it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from cephbench.core.poll import Pending, Poll
from cephbench.core.results import OtherLoad

MIB = 1024 ** 2
# another client's I/O at least this fast is named: below it, a mon's rounding and our own pools' stragglers
BUSY_BYTES_PER_S = 1 * MIB
BUSY_OPS_PER_S = 10.0
# pools daemons write on their own: RGW's (<zone>.rgw.log/.control/.meta/.otp, and .rgw.root), the mgr's
HOUSEKEEPING_SUFFIXES = (".rgw.log", ".rgw.control", ".rgw.meta", ".rgw.otp", ".rgw.root")
HOUSEKEEPING_POOLS = frozenset({".mgr", "device_health_metrics"})


def housekeeping(pool: str) -> bool:
    """A pool a daemon writes on its own (RGW's log/control/meta, the mgr's), not a client's data."""
    return pool in HOUSEKEEPING_POOLS or pool.endswith(HOUSEKEEPING_SUFFIXES)


@dataclass
class PoolIo:
    read_bytes_per_s: float = 0.0
    write_bytes_per_s: float = 0.0
    ops_per_s: float = 0.0
    pools: list[str] = field(default_factory=list)
    background_bytes_per_s: float = 0.0      # daemons' own housekeeping (housekeeping()), apart from clients'
    background_ops_per_s: float = 0.0
    background_pools: list[str] = field(default_factory=list)
    by_pool: dict[str, dict[str, float]] = field(default_factory=dict)
    window_s: float | None = None


@dataclass(frozen=True)
class PoolCounts:
    """One pool's client I/O since it was made (`ceph df detail`'s stats): ops and bytes read and written."""
    read_ops: int = 0
    read_bytes: int = 0
    write_ops: int = 0
    write_bytes: int = 0


def _count(stats: dict[str, Any], key: str) -> int | None:
    v = stats.get(key)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else None


def pool_counts(doc: Any) -> dict[str, PoolCounts]:
    """`ceph df detail -f json` -> each pool's cumulative client counters by name. A pool whose entry does not read
    (no name, a counter missing or not a count: `ceph df` without `detail` has none) is left out."""
    out: dict[str, PoolCounts] = {}
    for pool in (doc.get("pools") if isinstance(doc, dict) else None) or []:
        if not isinstance(pool, dict) or not isinstance(pool.get("name"), str) or not isinstance(pool.get("stats"), dict):
            continue
        got = [_count(pool["stats"], k) for k in ("rd", "rd_bytes", "wr", "wr_bytes")]
        if all(v is not None for v in got):
            out[pool["name"]] = PoolCounts(*got)      # type: ignore[arg-type]
    return out


def others_between(before: dict[str, PoolCounts], after: dict[str, PoolCounts], seconds: float, ours_prefix: str,
                   also_ours: frozenset[str] = frozenset()) -> PoolIo:
    """The client I/O per second of pools whose name does not start with `ours_prefix` (this run's pools:
    "cephbench-<run id>-") and is not in `also_ours` (the pools an RGW test writes through the gateway), between two
    `pool_counts` readings `seconds` apart. A pool made between them counts from zero; one gone by the second is
    left out, as is one whose counters went back (deleted and made again under its name: what it did is unknown).
    A housekeeping pool's I/O under BUSY_BYTES_PER_S is background, not a client's."""
    out = PoolIo()
    if seconds <= 0:
        return out
    for name, end in after.items():
        if name.startswith(ours_prefix) or name in also_ours:
            continue
        start = before.get(name, PoolCounts())
        deltas = (end.read_ops - start.read_ops, end.read_bytes - start.read_bytes,
                  end.write_ops - start.write_ops, end.write_bytes - start.write_bytes)
        if min(deltas) < 0 or not any(deltas):
            continue
        read_ops, read, write_ops, write = (d / seconds for d in deltas)
        if housekeeping(name) and read + write < BUSY_BYTES_PER_S:
            out.background_bytes_per_s += read + write
            out.background_ops_per_s += read_ops + write_ops
            out.background_pools.append(name)
        else:
            out.read_bytes_per_s += read
            out.write_bytes_per_s += write
            out.ops_per_s += read_ops + write_ops
            out.pools.append(name)
            out.by_pool[name] = {"read_bytes_per_s": read, "write_bytes_per_s": write,
                                 "ops_per_s": read_ops + write_ops}
    out.window_s = seconds if out.by_pool else None
    return out


def rgw_pools(doc: Any) -> frozenset[str]:
    """`ceph osd pool ls detail -f json` -> the pools enabled for the rgw application: an RGW test's load lands
    there, under the gateway's names, not ours."""
    return frozenset(p["pool_name"] for p in doc if isinstance(p, dict) and isinstance(p.get("pool_name"), str)
                     and "rgw" in (p.get("application_metadata") or {})) if isinstance(doc, list) else frozenset()


def other_load(io: PoolIo) -> OtherLoad | None:
    """What a result records; None when no pool but ours did any client I/O."""
    if not (io.pools or io.background_pools):
        return None
    return OtherLoad(read_bytes_per_s=io.read_bytes_per_s, write_bytes_per_s=io.write_bytes_per_s,
                     ops_per_s=io.ops_per_s, pools=sorted(io.pools),
                     background_bytes_per_s=io.background_bytes_per_s,
                     background_ops_per_s=io.background_ops_per_s, background_pools=sorted(io.background_pools),
                     by_pool=io.by_pool, window_s=io.window_s)


_NOT_MEASURED = "other clients' load not measured"
# how long the reading at a test's end may take before the test goes on without the figure: a monitor that stopped
# answering must not hold every test up for the whole connect timeout
END_READING_WAIT_S = 5.0


class OtherLoadSampler:
    """Reads the pools' counters through the run's connection when made (before the test's load; polled, so the
    tools' loop never waits on it) and again at `result()`, after the load. A reading that fails is said once."""

    def __init__(self, cluster: Any, ours_prefix: str, through_rgw: bool = False) -> None:
        self._cluster = cluster
        self._ours = ours_prefix
        self._also: frozenset[str] = frozenset()
        self.notes: list[str] = []
        if through_rgw:
            # another S3 client of the same gateway is then not told apart from the test's own load
            try:
                self._also = rgw_pools(cluster.ceph_json("osd", "pool", "ls", "detail"))
            except Exception as exc:    # noqa: BLE001 - without the list, RGW's pools count as others'
                self.notes.append(f"RGW's pools unknown (ceph osd pool ls detail: {exc})")
        self._before: tuple[float, dict[str, PoolCounts]] | None = None
        self._failed = False
        self._first = Poll(self._read)

    def _read(self) -> tuple[float, dict[str, PoolCounts]]:
        counts = pool_counts(self._cluster.ceph_json("df", "detail"))
        return time.monotonic(), counts

    def sample(self) -> None:
        """At a tick: take the first reading once it came back (nothing else is asked while the load runs)."""
        if self._before is not None or self._failed:
            return
        try:
            self._before = self._first()
        except Pending:
            pass
        except Exception as exc:    # noqa: BLE001 - the evidence is optional; the test goes on without it
            self._failed = True
            self.notes.append(f"{_NOT_MEASURED} (ceph df detail: {exc})")

    def result(self) -> OtherLoad | None:
        self.sample()
        if self._before is None:
            if not self._failed:
                self.notes.append(f"{_NOT_MEASURED}: the monitor had not answered `ceph df detail` by the test's end")
            return None
        try:
            at, after = Poll(self._read, wait_s=END_READING_WAIT_S)()
        except Pending:
            self.notes.append(f"{_NOT_MEASURED}: the monitor did not answer `ceph df detail` within "
                              f"{END_READING_WAIT_S:.0f} s of the test's end")
            return None
        except Exception as exc:    # noqa: BLE001 - as above
            self.notes.append(f"{_NOT_MEASURED} (ceph df detail: {exc})")
            return None
        started, before = self._before
        return other_load(others_between(before, after, at - started, self._ours, self._also))



def without_own(o: OtherLoad, pool: str, read_bytes: float, write_bytes: float, ops: float) -> OtherLoad:
    """`o` with the run's own I/O in an existing pool taken out (issue 35): the run's objects go there (in a
    namespace of its own), so that pool's client counters count them beside any other client's. What is left of
    the pool over the window (never below 0) is other clients'; the pool is left out of `pools` once nothing is.
    `read_bytes`, `write_bytes`, `ops`: the test's own totals (its tool's)."""
    mine = o.by_pool.get(pool)
    if mine is None or not o.window_s:
        return o
    left = {"read_bytes_per_s": max(0.0, mine.get("read_bytes_per_s", 0.0) - read_bytes / o.window_s),
            "write_bytes_per_s": max(0.0, mine.get("write_bytes_per_s", 0.0) - write_bytes / o.window_s)}
    pool_bytes = mine.get("read_bytes_per_s", 0.0) + mine.get("write_bytes_per_s", 0.0)
    # a tool's op is not the pool's: rados bench's write of an object counts as two in `ceph df detail` (6,828 for
    # 3,413 objects, their bytes to 1 KiB), so the ops go with the bytes where both moved, else one for one
    left["ops_per_s"] = (mine.get("ops_per_s", 0.0) * (left["read_bytes_per_s"] + left["write_bytes_per_s"]) / pool_bytes
                         if pool_bytes > 0 and read_bytes + write_bytes > 0
                         else max(0.0, mine.get("ops_per_s", 0.0) - ops / o.window_s))
    # the pool's remainder alone: another client there must be as busy as one anywhere else to be named; less is
    # the counters' lag at the window's edges (the mgr's stats period), the run's own ops counted a moment late
    still = left["read_bytes_per_s"] + left["write_bytes_per_s"] >= BUSY_BYTES_PER_S or left["ops_per_s"] >= BUSY_OPS_PER_S
    left = left if still else {k: 0.0 for k in mine}
    gone = {k: mine[k] - left[k] for k in mine}
    return o.model_copy(update={
        "read_bytes_per_s": max(0.0, o.read_bytes_per_s - gone["read_bytes_per_s"]),
        "write_bytes_per_s": max(0.0, o.write_bytes_per_s - gone["write_bytes_per_s"]),
        "ops_per_s": max(0.0, o.ops_per_s - gone["ops_per_s"]),
        "pools": [p for p in o.pools if p != pool or still],
        "by_pool": {**o.by_pool, pool: left}, "own_pools": sorted({*o.own_pools, pool})})


def busy(o: OtherLoad | None) -> bool:
    """Other clients loaded the cluster enough to change what a test measures."""
    return o is not None and (o.read_bytes_per_s + o.write_bytes_per_s >= BUSY_BYTES_PER_S
                              or o.ops_per_s >= BUSY_OPS_PER_S)


def describe_background(o: OtherLoad | None) -> str | None:
    """The daemons' own I/O during a test, for a note; None when there was none."""
    if o is None or not o.background_pools:
        return None
    return (f"background: the daemons' own housekeeping did {o.background_ops_per_s:,.0f} ops/s, "
            f"{o.background_bytes_per_s / MIB:,.1f} MiB/s (pools {', '.join(o.background_pools)}); "
            "not other clients, so the result stands")


def describe(o: OtherLoad) -> str:
    return (f"{o.write_bytes_per_s / MIB:,.1f} MiB/s written, {o.read_bytes_per_s / MIB:,.1f} MiB/s read, "
            f"{o.ops_per_s:,.0f} ops/s (pools {', '.join(o.pools) or 'not ours'})")
