"""Seconds each test module took in `make test-lab` (the shares' junit XML): what tests/lab/conftest.py's
ONE_HOST_COST_S and GROUND_TRUTH_COST_S balance the shares by. Prints each share's total and each module's,
costliest first."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def main(paths: list[str]) -> None:
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as exc:
            print(f"{path}: not read ({exc})")
            continue
        per: dict[str, float] = defaultdict(float)
        cpu: dict[str, float] = defaultdict(float)
        for case in root.iter("testcase"):
            module = (case.get("classname") or "").rsplit(".", 1)[-1] + ".py"
            per[module] += float(case.get("time") or 0.0)
            for prop in case.iter("property"):
                if prop.get("name") == "cpu_s":
                    cpu[module] += float(prop.get("value") or 0.0)
        parts = ", ".join(f'"{m}": {s:.0f}' for m, s in sorted(per.items(), key=lambda kv: -kv[1]))
        print(f"{path}: {sum(per.values()):.0f} s in tests: {parts}")
        if cpu:         # CEPHBENCH_TEST_CPU=1: each module's CPU seconds, its lab's daemons included
            parts = ", ".join(f'"{m}": {s:.0f}' for m, s in sorted(cpu.items(), key=lambda kv: -kv[1]))
            print(f"{path}: {sum(cpu.values()):.0f} CPU s in tests: {parts}")


if __name__ == "__main__":
    main(sys.argv[1:])
