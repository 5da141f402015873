"""The verdict's rules in their order: the one place that says which rule comes before which.

A result's bottleneck is the answer of the first rule that answers. The rules that read a test's evidence come
first (`EVIDENCE_RULES`, rules_evidence.py); when they name nothing (or the result carries no evidence), the rules
that read its ceiling and the hosts' CPU decide (`CEILING_RULES`, rules_ceiling.py). The order is the priority: a
cap set outside the cluster's hardware (a cgroup throttle, a CPU limit) first, then one OSD slower than its peers,
the links, other clients, the scheduler, the devices, and the CPUs after them, since a starved CPU slows everything
else. docs/model.md's table "The rules, in order" shows both tuples, and tests/unit/test_rules_order.py fails when
the table and these tuples differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.results import Evidence, LatencyBreakdown, Result
from .breakdown import attribution
from .cpusplit import ALONE_WORDS, alone_part, not_alone
from .model import Ceiling, mibs
from . import rules_ceiling, rules_evidence
from .rules_ceiling import CeilingFacts, binding_term, busy_host_cpu, small_ops
from .rules_evidence import (EvidenceFacts, EvidenceVerdict, at_ceiling, busy_cpu, daemon_at_cpu_limit,
                             device_at_throttle, device_busy, evidence_missing, facts_of, latency, link_at_speed,
                             one_op_in_flight, other_clients, queued_for_capacity, scheduler_limit, slow_osd)

EvidenceRule = Callable[[EvidenceFacts], "EvidenceVerdict | None"]
CeilingRule = Callable[[CeilingFacts], "tuple[str, str] | None"]

EVIDENCE_RULES: tuple[EvidenceRule, ...] = (
    device_at_throttle,
    daemon_at_cpu_limit,
    slow_osd,
    link_at_speed,
    other_clients,
    scheduler_limit,
    device_busy,
    one_op_in_flight,
    busy_cpu,
    at_ceiling,
    evidence_missing,
    queued_for_capacity,
    latency,
)

CEILING_RULES: tuple[CeilingRule, ...] = (
    busy_host_cpu,
    small_ops,
    binding_term,
)

ALONE = ALONE_WORDS


def first_evidence_rule(f: EvidenceFacts) -> tuple[EvidenceRule, EvidenceVerdict]:
    """The first evidence rule that answers, and its verdict (`latency` always does)."""
    for rule in EVIDENCE_RULES:
        if (v := rule(f)) is not None:
            return rule, v
    raise AssertionError("the last evidence rule always answers")      # pragma: no cover


def first_ceiling_rule(f: CeilingFacts) -> tuple[CeilingRule, tuple[str, str]]:
    """The first ceiling rule that answers, and its (bottleneck, what the reason adds) (`binding_term` always does)."""
    for rule in CEILING_RULES:
        if (v := rule(f)) is not None:
            return rule, v
    raise AssertionError("the last ceiling rule always answers")       # pragma: no cover


def from_evidence(result: Result, efficiency: float | None, b: LatencyBreakdown | None,
                  clients: set[str] | None = None, rotational: dict[int, bool] | None = None) -> EvidenceVerdict:
    """What the evidence says limited `result` (which must carry evidence), its breakdown's largest part attributed
    where the evidence puts it (breakdown.attribution). `rotational`: each OSD's flag from its metadata, which says
    whether mClock's hdd or ssd capacity applies."""
    _, v = first_evidence_rule(facts_of(result, efficiency, b, clients, rotational))
    if ALONE not in v.sentence:
        # whatever limited the test, a host whose CPUs others used is said: the result is not the cluster's alone
        for s in not_alone(result.hosts, (result.evidence or Evidence()).cpu)[:1]:
            if s.line() not in v.lines:
                v.lines.append(s.line())
            v.sentence = f"{v.sentence}; {alone_part(s)}" if v.sentence else f"measured: {alone_part(s)}"
    said = attribution(b, v.bottleneck) if b is not None else None
    if said is not None:
        at = next((i for i, ln in enumerate(v.lines) if ln.startswith(f"latency {b.client_s * 1000:.2f} ms = ")),
                  None)
        if at is not None:
            v.lines.insert(at + 1, f"breakdown: {said}")
    return v


@dataclass(frozen=True)
class Verdict:
    ceiling_bytes_per_s: float | None
    ceiling_ops_per_s: float | None
    efficiency: float | None
    bottleneck: str
    reason: str


def judge(c: Ceiling, measured_bytes_per_s: float | None, label: str, cpus: int | None = None,
          cpu_busy: float | None = None, cpu_host: str = "the client host",
          measured: tuple[str, str] | None = None) -> Verdict:
    """measured / ceiling, the bottleneck, and a sentence a person can check with a calculator.

    `measured` is (bottleneck, sentence) from the test's evidence (from_evidence, the evidence rules' answer): it
    names the resource that was actually saturated, before the ceiling rules' inference from CPU and op size."""
    if c.bytes_per_s is None or measured_bytes_per_s is None:
        missing = "no disk or network baseline in this run" if c.bytes_per_s is None else "no measurement"
        if measured is not None:
            return Verdict(None, None, None, measured[0],
                           f"{label}: no ceiling ({missing}); {measured[1]}; bottleneck: {measured[0]}")
        return Verdict(None, None, None, "unknown", f"{label}: no ceiling ({missing})")
    eff = measured_bytes_per_s / c.bytes_per_s
    b = c.binding
    others = sorted((t for t in c.terms if t is not b), key=lambda t: t.bytes_per_s)
    text = (f"{label}: {mibs(measured_bytes_per_s)} = {eff:.0%} of a {mibs(c.bytes_per_s)} ceiling "
            f"({b.formula})")
    if others:
        text += f"; next: {others[0].bottleneck} {mibs(others[0].bytes_per_s)} ({others[0].formula})"
    if measured is not None:
        bottleneck, said = measured[0], f"; {measured[1]}"
    else:
        _, (bottleneck, said) = first_ceiling_rule(CeilingFacts(c, eff, cpus, cpu_busy, cpu_host))
    text += said
    if eff > 1.05:
        text += ("; above the ceiling: a baseline under-measured what this test used (a loaded host, a short "
                 "baseline) or a cache served it")
    text += f"; bottleneck: {bottleneck}"
    if c.notes:
        text += " (" + "; ".join(dict.fromkeys(c.notes)) + ")"
    return Verdict(c.bytes_per_s, c.ops_per_s, eff, bottleneck, text)
