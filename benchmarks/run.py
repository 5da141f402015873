#!/usr/bin/env python3
"""Runs the performance checks: `make bench` (all) or `make bench NAME=lab` (one).

Each benchmark is a module bench_<name>.py with a main() that prints, as its last
line, `RESULT <name> key=value ...`. These are measurements, never pass/fail tests:
the machines are shared and noisy, so A/B comparisons alternate within one run and
report ratios.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))


def available() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def main(argv: list[str]) -> int:
    names = [a for a in argv if a] or available()
    unknown = [n for n in names if n not in available()]
    if unknown:
        print(f"bench: unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(available())}",
              file=sys.stderr)
        return 2
    for name in names:
        print(f"== bench {name}", flush=True)
        importlib.import_module(f"bench_{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
