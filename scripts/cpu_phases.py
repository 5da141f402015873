"""How busy the machine's CPUs were in each phase of `make test-lab`: where the suite's wall time waits and where it
computes, which says whether more parallel shares would shorten it; and, over all phases, the CPU-seconds the suite
kept busy and so the least time that work takes on this machine's CPUs however it is packed.

build/cpu.log: `<unix s> <the cpu line of /proc/stat>` every 2 s; build/phases.log: `<unix s> <phase name>` as each
phase starts, `<unix s> end` at the end."""

from __future__ import annotations

import os
import sys

USER_HZ = os.sysconf("SC_CLK_TCK")      # /proc/stat's unit


def busy_between(samples: list[tuple[float, list[int]]], start: float, end: float) -> tuple[float, float, int] | None:
    """(the share of the CPUs busy, busy CPU-seconds, the CPUs counted) between two times; None: fewer than two
    samples."""
    inside = [s for s in samples if start <= s[0] <= end]
    if len(inside) < 2:
        return None
    (_, a), (_, b) = inside[0], inside[-1]
    total = sum(b) - sum(a)
    idle = (b[3] + b[4]) - (a[3] + a[4])          # idle + iowait
    span = inside[-1][0] - inside[0][0]
    if total <= 0 or span <= 0:
        return None
    # /proc/stat's cpu line sums every CPU: its ticks over the samples' span are the CPUs there were
    cpus = max(1, round(total / USER_HZ / span))
    return (total - idle) / total, (total - idle) / USER_HZ, cpus


def main(cpu_log: str, phases_log: str) -> None:
    samples = []
    for line in open(cpu_log):
        parts = line.split()
        if len(parts) > 5 and parts[1] == "cpu":
            samples.append((float(parts[0]), [int(x) for x in parts[2:]]))
    marks = [(float(t), name) for t, name in (ln.split(maxsplit=1) for ln in open(phases_log) if ln.strip())]
    for (t0, name), (t1, _) in zip(marks, marks[1:]):
        busy = busy_between(samples, t0, t1)
        shown = f"{busy[0]:.0%} busy ({busy[1]:.0f} CPU-s)" if busy is not None else "not sampled"
        print(f"phase {name.strip()}: {t1 - t0:.0f} s, CPUs {shown}")
    whole = busy_between(samples, marks[0][0], marks[-1][0]) if marks else None
    if whole is not None:
        _, cpu_s, cpus = whole
        print(f"all phases: {marks[-1][0] - marks[0][0]:.0f} s, {cpu_s:.0f} CPU-s busy on {cpus} CPUs: this work "
              f"takes at least {cpu_s / cpus:.0f} s on them, however it is packed")


if __name__ == "__main__":
    main(*sys.argv[1:3])
