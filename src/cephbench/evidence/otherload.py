"""Other clients' load: the client I/O of pools this run did not create, from `ceph osd pool stats -f json`
(pure: no I/O). The mon's rates are its own recent averages, so a sample once a second during a test, averaged,
says what others did meanwhile.

A daemon's own housekeeping is told apart from other clients by pool and by rate: an RGW writes its log, control
and meta pools (data log, gc, notify: a few to tens of small ops a second, ~0 bytes) and the mgr its `.mgr` /
`device_health_metrics` pool whenever it likes, on every cluster that has them. Such I/O under BUSY_BYTES_PER_S is
background, kept apart and reported, never a reason to distrust a result; bytes beyond it on those pools are a
client's. Scrub is not client I/O at all: pool stats count it under recovery, not `client_io_rate`."""

from __future__ import annotations

from collections.abc import Sequence
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


def _rate(io: dict[str, Any], key: str) -> float:
    v = io.get(key, 0)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else 0.0


def others_io(doc: Any, ours_prefix: str, also_ours: frozenset[str] = frozenset()) -> PoolIo:
    """One `ceph osd pool stats -f json` document -> the client I/O of pools whose name does not start with
    `ours_prefix` (this run's pools: "cephbench-<run id>-") and is not in `also_ours` (the pools an RGW test
    writes through the gateway). A housekeeping pool's I/O under BUSY_BYTES_PER_S is background, not a client's.
    Entries that do not read are skipped."""
    out = PoolIo()
    for pool in doc if isinstance(doc, list) else []:
        if not isinstance(pool, dict):
            continue
        name, io = pool.get("pool_name"), pool.get("client_io_rate")
        if (not isinstance(name, str) or name.startswith(ours_prefix) or name in also_ours
                or not isinstance(io, dict)):
            continue
        read, write = _rate(io, "read_bytes_sec"), _rate(io, "write_bytes_sec")
        ops = _rate(io, "read_op_per_sec") + _rate(io, "write_op_per_sec")
        if not (read or write or ops):
            continue
        if housekeeping(name) and read + write < BUSY_BYTES_PER_S:
            out.background_bytes_per_s += read + write
            out.background_ops_per_s += ops
            out.background_pools.append(name)
        else:
            out.read_bytes_per_s += read
            out.write_bytes_per_s += write
            out.ops_per_s += ops
            out.pools.append(name)
    return out


def rgw_pools(doc: Any) -> frozenset[str]:
    """`ceph osd pool ls detail -f json` -> the pools enabled for the rgw application: an RGW test's load lands
    there, under the gateway's names, not ours."""
    return frozenset(p["pool_name"] for p in doc if isinstance(p, dict) and isinstance(p.get("pool_name"), str)
                     and "rgw" in (p.get("application_metadata") or {})) if isinstance(doc, list) else frozenset()


def other_load(samples: Sequence[PoolIo]) -> OtherLoad | None:
    """The mean over a test's samples; None when no sample saw another client's or a daemon's I/O."""
    if not samples or not any(s.pools or s.background_pools for s in samples):
        return None
    n = len(samples)
    return OtherLoad(read_bytes_per_s=sum(s.read_bytes_per_s for s in samples) / n,
                     write_bytes_per_s=sum(s.write_bytes_per_s for s in samples) / n,
                     ops_per_s=sum(s.ops_per_s for s in samples) / n,
                     pools=sorted({p for s in samples for p in s.pools}),
                     background_bytes_per_s=sum(s.background_bytes_per_s for s in samples) / n,
                     background_ops_per_s=sum(s.background_ops_per_s for s in samples) / n,
                     background_pools=sorted({p for s in samples for p in s.background_pools}))


class OtherLoadSampler:
    """Samples `ceph osd pool stats` through the run's connection: once when made (before the test's load), then
    at every tick (a reading late by more than half a second at a later one). A sample that fails is skipped, and
    said once."""

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
        self._samples: list[PoolIo] = []
        # polled (the first reading starts now, before the load): a monitor that does not answer must not hold
        # up the tools' loop
        self._stats = Poll(lambda: cluster.ceph_json("osd", "pool", "stats"))

    def sample(self) -> None:
        try:
            self._samples.append(others_io(self._stats(), self._ours, self._also))
        except Pending:
            pass
        except Exception as exc:    # noqa: BLE001 - the evidence is optional; the test goes on without it
            if not any(n.startswith("other clients' load not sampled") for n in self.notes):
                self.notes.append(f"other clients' load not sampled (ceph osd pool stats: {exc})")

    def result(self) -> OtherLoad | None:
        return other_load(self._samples)


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
