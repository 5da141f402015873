"""How busy the machine's CPUs were in each phase of `make test-lab`: where the suite's wall time waits and where it
computes, which says whether more parallel shares would shorten it (build/cpu.log: `<unix s> <the cpu line of
/proc/stat>` every 2 s; build/phases.log: `<unix s> <phase name>` as each phase starts, `<unix s> end` at the end)."""

from __future__ import annotations

import sys


def busy_between(samples: list[tuple[float, list[int]]], start: float, end: float) -> float | None:
    inside = [s for s in samples if start <= s[0] <= end]
    if len(inside) < 2:
        return None
    (_, a), (_, b) = inside[0], inside[-1]
    total = sum(b) - sum(a)
    idle = (b[3] + b[4]) - (a[3] + a[4])          # idle + iowait
    return (total - idle) / total if total > 0 else None


def main(cpu_log: str, phases_log: str) -> None:
    samples = []
    for line in open(cpu_log):
        parts = line.split()
        if len(parts) > 5 and parts[1] == "cpu":
            samples.append((float(parts[0]), [int(x) for x in parts[2:]]))
    marks = [(float(t), name) for t, name in (ln.split(maxsplit=1) for ln in open(phases_log) if ln.strip())]
    for (t0, name), (t1, _) in zip(marks, marks[1:]):
        busy = busy_between(samples, t0, t1)
        shown = f"{busy:.0%}" if busy is not None else "not sampled"
        print(f"phase {name.strip()}: {t1 - t0:.0f} s, CPUs {shown} busy")


if __name__ == "__main__":
    main(*sys.argv[1:3])
