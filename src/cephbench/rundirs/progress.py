"""Live progress on the terminal: current test, its parameters, elapsed, ETA, live MiB/s and operations per second
(named as the test's kind counts them: IOPS, objects/s, req/s). Every line is printed whole (soft wrap): a log file
or a pipe gets one line per event, never a test ID broken in two."""

from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from ..kinds import ops_unit
from ..report.format import iops, mib_s, result_figures, seconds
from ..core.resources import Resource
from ..core.results import Result, Test


class ConsoleEvents:
    """The run's progress against its plan: `[i/N]` counts plan tests, so N never grows (a test the run splits into
    parts, the network baseline between hosts known only then, counts once, its parts under its number), and the ETA
    is the estimate of the plan tests not started plus what is left of the current one's."""

    def __init__(self, console: Console, tests: list[Test], quiet: bool = False, run_dir: object = None) -> None:
        self.console = console
        self.run_dir = run_dir
        self.quiet = quiet
        self.total = len(tests)
        self._est = {t.id: t.est_duration_s for t in tests}
        self.done = 0
        self.started = time.monotonic()
        self.current: Test | None = None
        self.current_started = 0.0
        self.bw: float | None = None
        self.ops: float | None = None
        self._live: Live | None = None
        self._begun: dict[str, float] = {}      # plan test id -> when it (its first part) started
        self._ended: set[str] = set()            # plan tests with a result, started or not (a search's skipped steps)

    def _whole(self, test: Test) -> str:
        return test.params.part_of or test.id

    def remaining_s(self) -> float:
        """The plan tests not started, and what the estimate leaves of the current one (none once it overran)."""
        now = time.monotonic()
        left = sum(est for tid, est in self._est.items() if tid not in self._begun and tid not in self._ended)
        if self.current is not None:
            whole = self._whole(self.current)
            left += max(self._est.get(whole, 0.0) - (now - self._begun.get(whole, now)), 0.0)
        return left

    def __enter__(self) -> "ConsoleEvents":
        if self.console.is_terminal and not self.quiet:
            # Live re-renders `self` (see __rich__) twice a second, so elapsed time moves between events.
            self._live = Live(self, console=self.console, refresh_per_second=2, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live:
            self._live.__exit__(*exc)

    def __rich__(self) -> Text:
        return self._render()

    def _render(self) -> Text:
        elapsed = time.monotonic() - self.started
        if self.current is None:
            state = "setting up" if len(self._begun) < self.total else "cleaning up"
            return Text(f"[{len(self._begun)}/{self.total}] {state}  elapsed {seconds(elapsed)}", no_wrap=True,
                        overflow="ellipsis")
        line = (f"[{len(self._begun)}/{self.total}] {self.current.id}  elapsed {seconds(elapsed)}  "
                f"ETA {seconds(self.remaining_s())}")
        if self.bw is not None:
            line += f"  {mib_s(self.bw)} MiB/s"
        if self.ops is not None:
            line += f"  {iops(self.ops)} {ops_unit(self.current.kind) or 'ops/s'}"
        return Text(line, no_wrap=True, overflow="ellipsis")     # one line that redraws, even on 80 columns

    def _refresh(self) -> None:
        if self._live:
            self._live.refresh()

    def test_started(self, test: Test) -> None:
        self._begun.setdefault(self._whole(test), time.monotonic())
        self.current, self.current_started, self.bw, self.ops = test, time.monotonic(), None, None
        if not self._live and not self.quiet:
            self._line(f"[{len(self._begun)}/{self.total}] {test.id} ...")
        self._refresh()

    def live(self, test: Test, bytes_per_s: float | None, ops_per_s: float | None) -> None:
        self.bw, self.ops = bytes_per_s, ops_per_s
        self._refresh()

    def note(self, text: str) -> None:
        self._line(text)

    def test_finished(self, result: Result) -> None:
        self.current = None   # first: the live display redraws from another thread at any moment
        self._ended.add(self._whole(result.test))   # a step past where its search stopped never starts: its time is not to come
        self.done += 1
        m = result.measurement
        fig = result_figures(result) if m else (result.error or "")
        status = result.status + (" !" if result.warnings else "")     # its warning comes with the results
        self._line(f"  {status:<6} {result.test.id}  {fig}")
        self._refresh()

    def _line(self, text: str) -> None:
        self.console.print(text, markup=False, soft_wrap=True)

    def cleanup(self, left: list[Resource], failures: list[tuple[Resource, str]]) -> None:
        from ..core.resources import Refusal
        for r, why in failures:
            self._line(f"cleanup: {why}" if isinstance(why, Refusal) else
                       f"cleanup: could not remove {r.kind} {r.name}: {why}")
        refused = {r for r, why in failures if isinstance(why, Refusal)}
        left = [r for r in left if r not in refused]      # not the run's: no command to remove it
        if left:
            from ..cluster.recovery import how_to_remove
            self._line("left behind: " + ", ".join(f"{r.kind} {r.name}" for r in left))
            for r in left:
                self._line(f"  remove by hand: {how_to_remove(r)}")
            if self.run_dir is not None:
                self._line(f"  or all at once: cephbench cleanup {self.run_dir}")
