"""`ceph tell osd.N bench`: every OSD writes alone; slow drives stand out.

Each OSD writes `total` bytes in `block_size` writes straight to its store,
without replication or the network: a per-drive ceiling as Ceph sees it.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from typing import Any, Iterator

from ..results import Measurement
from . import ParseError
from .figures import checked, count, mapping, number
from .base import Outcome, RunContext, now
from ..results import Test

# at most 20 digits: a 64-bit count (and int() refuses strings of more than 4300 digits)
_LIMIT_RE = re.compile(r"'count' values greater than (\d{1,20})(?!\d)")


def argv(client_args: list[str], osd_id: int, total: int, block_size: int) -> list[str]:
    return ["ceph", *client_args, "tell", f"osd.{osd_id}", "bench", str(total), str(block_size), "-f", "json"]


def parse(text: str) -> Measurement:
    """The JSON `ceph tell osd.N bench -f json` prints (pretty or compact)."""
    try:
        data = mapping(json.loads(text), "the document")
        written, elapsed = number(data["bytes_written"], "bytes_written"), number(data["elapsed_sec"], "elapsed_sec")
        bs = count(data["blocksize"], "blocksize")
        bw, iops = number(data["bytes_per_sec"], "bytes_per_sec"), number(data["iops"], "iops")
    except (ValueError, KeyError, RecursionError) as exc:      # ValueError: bad JSON, and every ParseError
        raise ParseError(f"not the output of ceph tell osd.N bench: {exc}") from exc
    return checked(Measurement(tool="ceph tell osd bench", op="write", duration_s=elapsed, bytes_total=written,
                               ops_total=written / bs if bs else None, bytes_per_s=bw, ops_per_s=iops,
                               op_size_bytes=bs))


def limit_from_error(text: str) -> int | None:
    """The OSD refuses small-block runs above osd_bench_small_size_max_iops x duration; it says the limit."""
    m = _LIMIT_RE.search(text)
    return int(m.group(1)) if m else None


def flag_slow(per_osd: dict[str, float], threshold: float) -> dict[str, Any]:
    """OSDs more than `threshold` below the median bandwidth."""
    if not per_osd:
        return {"median_bytes_per_s": None, "slow": []}
    median = statistics.median(per_osd.values())
    slow = sorted(k for k, v in per_osd.items() if v < median * (1 - threshold))
    return {"median_bytes_per_s": median, "slow": slow, "threshold": threshold}


def run_group(ctx: RunContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    for test in group:
        if test.id not in todo:
            continue
        started, t0 = now()
        ctx.events.test_started(test)
        total, bs = test.params["total"], test.params["block_size"]
        osds = ctx.cluster.osd_ids() if not ctx.dry_run else []
        if ctx.dry_run:
            ctx.planned.append(" ".join(argv(ctx.target.client_args(), 0, total, bs)).replace("osd.0", "osd.N"))
            continue
        per_osd: dict[str, Measurement] = {}
        commands, raw, notes, errors = [], [], [], []
        for osd in osds:
            this_total = total
            for _attempt in range(2):
                res = ctx.host.run(argv(ctx.target.client_args(), osd, this_total, bs), timeout_s=600)
                raw.append(ctx.rundir.write_raw(test.id, f"osd.{osd}.json", res.stdout + res.stderr))
                commands.append(res.cmdline)
                limit = None if res.ok else limit_from_error(res.stderr)
                if limit and limit < this_total:
                    notes.append(f"osd.{osd}: the OSD limits {bs}-byte bench runs to {limit} bytes "
                                 "(osd_bench_small_size_max_iops); ran that")
                    this_total = limit
                    continue
                break
            if not res.ok:
                errors.append(f"osd.{osd}: {res.error_text()}")
                continue
            try:
                per_osd[f"osd.{osd}"] = parse(res.stdout)
            except ParseError as exc:
                errors.append(f"osd.{osd}: {exc}")
            ctx.events.live(test, per_osd[f"osd.{osd}"].bytes_per_s if f"osd.{osd}" in per_osd else None, None)
        if not per_osd:
            yield Outcome(test, started, time.monotonic() - t0, error="; ".join(errors) or "no OSDs",
                          commands=commands, raw=raw, notes=notes)
            continue
        bws = {k: m.bytes_per_s or 0.0 for k, m in per_osd.items()}
        slow = flag_slow(bws, test.params["slow_threshold"])
        for name in slow["slow"]:
            notes.append(f"{name} is slow: {bws[name] / 2**20:.1f} MiB/s, more than "
                         f"{test.params['slow_threshold']:.0%} below the median {slow['median_bytes_per_s'] / 2**20:.1f} MiB/s")
        notes += errors
        values = list(bws.values())
        m = Measurement(
            tool="ceph tell osd bench", op="write",
            duration_s=max(x.duration_s for x in per_osd.values()),
            bytes_total=sum(x.bytes_total or 0 for x in per_osd.values()),
            bytes_per_s=statistics.median(values), bytes_per_s_min=min(values), bytes_per_s_max=max(values),
            ops_per_s=statistics.median([x.ops_per_s or 0 for x in per_osd.values()]),
            op_size_bytes=bs,
            extra={"per_osd": {k: {"bytes_per_s": v.bytes_per_s, "ops_per_s": v.ops_per_s,
                                   "duration_s": v.duration_s, "bytes_total": v.bytes_total}
                               for k, v in per_osd.items()},
                   "median_bytes_per_s": slow["median_bytes_per_s"], "slow_osds": slow["slow"],
                   "slow_threshold": slow["threshold"], "aggregate": "median over OSDs"},
        )
        yield Outcome(test, started, time.monotonic() - t0, measurement=m, commands=commands, raw=raw, notes=notes,
                      error=None)
