"""RGW's ceiling: an S3 operation as the RADOS operations it becomes, plus the RGW host's link and CPU.

Pure. What RGW (Pacific) does per operation:

  PUT of S bytes   the data: a head object with the first 4 MiB (rgw_max_chunk_size) and S/4 MiB tail objects
                   of up to 4 MiB (rgw_obj_stripe_size), written at min(S, 4 MiB) a piece; the bucket index: two
                   small omap writes on the index object (prepare and complete), not in the client's bytes
  GET of S bytes   the data read: the head and tail objects, min(S, 4 MiB) a piece

So a PUT's RADOS time is S / (the RADOS write rate at that piece size) + 2 / (the RADOS small-write op rate),
and its ceiling in bytes/s is S over that time. The RADOS rates come from a rados bench of the same run at that
size and direction (the nearest size measured), else from the model's ceiling from the run's baselines. The RGW
host's link passes every byte once each way (client ↔ RGW ↔ OSDs); its CPU is read as for any other host.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.results import HostLoad
from ..core.units import exact_size
from .model import SMALL_OP, Ceiling, Pool, Term, mibs

STRIPE = 4 * 1024**2          # rgw_max_chunk_size / rgw_obj_stripe_size (Pacific defaults)
INDEX_OPS_PER_PUT = 2         # bucket index prepare + complete
DATA_POOL, INDEX_POOL = ".rgw.buckets.data", ".rgw.buckets.index"   # <zone>.rgw.buckets.…


def rgw_hosts(cluster: dict[str, Any]) -> set[str]:
    """Hosts running an RGW, from `ceph status`'s service map (in the run's cluster facts)."""
    services = (((cluster.get("status") or {}).get("servicemap") or {}).get("services") or {})
    daemons = ((services.get("rgw") or {}).get("daemons") or {})
    return {d["metadata"]["hostname"] for d in daemons.values()
            if isinstance(d, dict) and (d.get("metadata") or {}).get("hostname")}


def rgw_pool(cluster: dict[str, Any], suffix: str) -> Pool | None:
    """The replicated pool RGW keeps its data (or bucket index) in, from run.json's `ceph osd pool ls detail`: the
    rgw application's pool named <zone>SUFFIX (the first, for several zones). None when there is none, or when it
    is erasure coded (its k and m are in its profile, not in the pool's entry)."""
    pools = cluster.get("pools")
    for p in sorted((p for p in (pools if isinstance(pools, list) else []) if isinstance(p, dict)),
                    key=lambda p: str(p.get("pool_name"))):
        if str(p.get("pool_name", "")).endswith(suffix) and "rgw" in (p.get("application_metadata") or {}):
            return Pool(size=int(p["size"])) if p.get("type") == 1 and isinstance(p.get("size"), int) else None
    return None


@dataclass(frozen=True)
class RadosFigure:
    """A rados bench result of the run, as RGW's model needs it."""

    op: str                 # write or read
    size: int
    bytes_per_s: float
    ops_per_s: float | None
    label: str              # "rados bench write 4MiB of this run"


def rados_rate(rados: Iterable[RadosFigure], op: str, size: int) -> tuple[float, str] | None:
    """(bytes/s, where it comes from) of the run's rados bench nearest to `size` (by ratio) in `op`."""
    cands = [f for f in rados if f.op == op and f.bytes_per_s]
    if not cands:
        return None
    f = min(cands, key=lambda f: (abs(math.log(f.size / size)), -f.bytes_per_s))   # nearest by ratio
    return f.bytes_per_s, f.label


def rgw_ceiling(op: str, size: int, data: tuple[float, str] | None, index_ops_per_s: tuple[float, str] | None,
                link_bytes_per_s: tuple[float, str] | None) -> Ceiling:
    """The terms: RADOS (data, and the bucket index for PUTs) and the RGW host's link."""
    terms: list[Term] = []
    if data:
        rate, src = data
        t = size / rate
        formula = f"{exact_size(size)} at {mibs(rate)} ({src})"
        if op == "write" and index_ops_per_s:
            t += INDEX_OPS_PER_PUT / index_ops_per_s[0]
            formula += f" + {INDEX_OPS_PER_PUT} bucket index writes at {index_ops_per_s[0]:,.0f} ops/s " \
                       f"({index_ops_per_s[1]})"
        terms.append(Term("RADOS (bucket index)" if op == "write" and index_ops_per_s and
                          INDEX_OPS_PER_PUT / index_ops_per_s[0] > size / rate else "RADOS", size / t,
                          f"RADOS: {formula} per {'PUT' if op == 'write' else 'GET'}"))
    if link_bytes_per_s:
        terms.append(Term("RGW host network", link_bytes_per_s[0], f"RGW host link {link_bytes_per_s[1]}"))
    binding = min(terms, key=lambda t: t.bytes_per_s) if terms else None
    return Ceiling(op=op, op_size=size, terms=terms, bottleneck=binding.bottleneck if binding else "unknown")


def small_write_ops(rados: Iterable[RadosFigure]) -> tuple[float, str] | None:
    """The run's fastest small RADOS write in ops/s: what a bucket index omap write costs at most."""
    small = [f for f in rados if f.op == "write" and f.ops_per_s and f.size <= SMALL_OP]
    if not small:
        return None
    f = max(small, key=lambda f: f.ops_per_s or 0.0)
    return float(f.ops_per_s or 0.0), f.label


def rgw_host_load(hosts: list[HostLoad], names: set[str]) -> HostLoad | None:
    mine = [h for h in hosts if h.host in names or "rgw" in h.role.lower()]
    return max(mine, key=lambda h: h.cpu_busy_median, default=None)
