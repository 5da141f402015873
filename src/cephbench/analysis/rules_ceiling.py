"""The verdict's rules that read the ceiling and the hosts' CPU, for a result the evidence named nothing for (or
that has no evidence): one small function each, of `CeilingFacts`, returning (bottleneck, what the reason adds) or
None. Their order is not here: rules.py holds it, and docs/model.md's table shows it."""

from __future__ import annotations

from dataclasses import dataclass

from .model import CPU_BUSY, CPU_SUSPECT_BELOW, SMALL_OP, Ceiling

AT_CEILING = 0.9          # efficiency from which busy CPUs are not what held the test


@dataclass(frozen=True)
class CeilingFacts:
    """A result against its ceiling, and the CPUs of the host watched busiest while it ran."""

    ceiling: Ceiling
    efficiency: float
    cpus: int | None = None                  # of that host (None: not known)
    cpu_busy: float | None = None            # its CPUs' busy share in a typical second (None: not measured)
    cpu_host: str = "the client host"        # how the reason names that host


def busy_host_cpu(f: CeilingFacts) -> tuple[str, str] | None:
    """The busiest watched host's CPUs ≥ 80 % busy and the test under 90 % of its ceiling → `CPU`."""
    if f.cpu_busy is None or f.cpu_busy < CPU_BUSY or f.efficiency >= AT_CEILING:
        return None
    n = f"{f.cpus} " if f.cpus else ""
    return "CPU", (f"; the {n}CPUs of {f.cpu_host} were {f.cpu_busy:.0%} busy in a typical second of the test "
                   "(measured), so they ran out before disks or network")


def small_ops(f: CeilingFacts) -> tuple[str, str] | None:
    """Ops of ≤ 64 KiB under 50 % of their ceiling → `CPU` (inferred) when no host's CPU was measured, else
    `unknown` (per-op latency, the CPUs not busy)."""
    if f.ceiling.op_size > SMALL_OP or f.efficiency >= CPU_SUSPECT_BELOW:
        return None
    if f.cpu_busy is None:
        text = (f"; small ops reach {f.efficiency:.0%} of what disks and network allow, so the per-op cost (CPU, "
                "latency) limits them - inferred, not measured")
        return "CPU", text + (f"; this host has {f.cpus} CPUs" if f.cpus else "")
    return "unknown", (f"; small ops reach {f.efficiency:.0%} of what disks and network allow, yet the CPUs of "
                       f"{f.cpu_host} were only {f.cpu_busy:.0%} busy: per-op latency (round trips, queueing, too few "
                       "ops in flight) limits them, not throughput")


def binding_term(f: CeilingFacts) -> tuple[str, str]:
    """Else → the ceiling's smallest term, the resource the model says binds (`disks`, `public network`, …)."""
    return f.ceiling.bottleneck, ""
