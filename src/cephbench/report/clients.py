"""What the report shows of a result whose instances ran on several client hosts: each client's figures
(core/merge.py wrote them into extra.clients) and how far apart the clients started and stopped."""

from __future__ import annotations

from typing import Any

from ..core.results import Measurement, Result
from .format import pct, seconds, span


def client_hosts(m: Measurement | None) -> list[str]:
    """The distinct hosts of a measurement's instances, in order."""
    return list(dict.fromkeys(i.host for i in m.instances if i.host)) if m else []


def clients_of(r: Result) -> dict[str, Any] | None:
    """extra.clients of a result whose instances come from more than one host; for a merge made without start
    and end times, a summary of the instances' own whole-run figures. None for any other result."""
    m = r.measurement
    if m is None or len(client_hosts(m)) < 2:
        return None
    found = m.extra.get("clients")
    if isinstance(found, dict) and isinstance(found.get("per_client"), list):
        return found
    per: dict[str, dict[str, Any]] = {}
    for i in m.instances:
        c = per.setdefault(i.host or "local", {"host": i.host or "local", "instances": 0, "bytes_per_s": 0.0,
                                               "ops_per_s": 0.0, "duration_s": i.duration_s,
                                               "lat_mean_ns": i.latency.mean_ns,
                                               "lat_p99_ns": i.latency.percentiles_ns.get("99")})
        c["instances"] += 1
        c["bytes_per_s"] += i.bytes_per_s or 0.0
        c["ops_per_s"] += i.ops_per_s or 0.0
    key = "bytes_per_s" if any(c["bytes_per_s"] for c in per.values()) else "ops_per_s"
    total = sum(c[key] for c in per.values())
    for c in per.values():
        c["share"] = c[key] / total if total else None
    return {"per_client": list(per.values()), "imbalanced": [], "notes": [], "hosts": len(per)}


def spread_line(c: dict[str, Any]) -> str:
    """One line: how many clients, their start and end spread, the common window, who was slow."""
    bits = [f"{c.get('hosts', len(c['per_client']))} clients"]
    if c.get("window_s") is not None:
        bits += [f"start spread {span(c.get('start_spread_s'))}", f"end spread {span(c.get('end_spread_s'))}",
                 f"first done {seconds(c.get('first_done_s'))}, last done {seconds(c.get('last_done_s'))}",
                 f"figures over the common window of {seconds(c.get('window_s'))}"]
    else:
        bits.append("no start and end times: each client's whole run")
    slow = {p["host"]: p.get("below_others") for p in c["per_client"]}
    for host in c.get("imbalanced") or []:
        bits.append(f"client {host} {pct(slow.get(host))} below the others (imbalance)")
    return ", ".join(bits)
