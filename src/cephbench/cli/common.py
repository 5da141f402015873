"""The root `cephbench` group, its consoles and exit codes, and what several commands share."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from pathlib import Path

import click
from rich.console import Console

from .. import __version__
from ..core.errors import OperationFailed, UserError
from ..suite.plan import Plan
from ..core.interrupts import sigterm_interrupts
from ..core.results import Result, RunDir


# Piped output (CI logs, `| tee`) gets wide tables instead of rich's 80-column default.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True, width=None if sys.stderr.isatty() else 160)


class Main(click.Group):
    """Turns the errors a user can fix into one line and exit 2; failures into exit 1."""

    def invoke(self, ctx: click.Context):
        sigterm_interrupts()    # a SIGTERM during preflight or set-up exits like Ctrl-C, not mid-change
        try:
            return super().invoke(ctx)
        except UserError as exc:
            _finish(f"cephbench: {exc.one_line()}", 2)
        except OperationFailed as exc:
            _finish(f"cephbench: {exc}", 1)
        except KeyboardInterrupt:
            _finish("cephbench: interrupted", 130)


def _finish(line: str, code: int) -> None:
    """The command's last word: a signal while it is said must not turn it into click's "Aborted!" (the command is
    over either way; entry.py ignores signals from the moment the exit leaves the command)."""
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        err.print(line, markup=False)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    sys.exit(code)


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="cephbench")
@click.option("-v", "--verbose", count=True, help="More logging (-vv for debug).")
def main(verbose: int) -> None:
    """Is my Ceph cluster running at its maximum performance, and if not, why?"""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def _print_plan_warnings(plan: Plan) -> None:
    from ..suite.plan import warnings
    for w in warnings(plan):
        err.print(f"warning: {w}", markup=False)


def _warn_corrupt(path: Path, bad) -> None:
    for line in bad:
        err.print(f"cephbench: {path / 'results.jsonl'}:{line.line_no}: unreadable result skipped ({line.reason})",
                  markup=False)


def _open_run(run_dir: Path) -> tuple[RunDir, list[Result]]:
    """A run directory and its readable results; unreadable lines are reported and skipped."""
    rundir = RunDir.open(run_dir)
    results, bad = rundir.results()
    _warn_corrupt(rundir.path, bad)
    return rundir, results


def _catalog(run_dir: Path, db: Path | None = None) -> None:
    """Add a run to the history catalog; a catalog that cannot be written only warns."""
    from ..rundirs.history import History
    try:
        with History.open(db) as h:
            h.add(run_dir)
    except Exception as exc:  # noqa: BLE001 - the run is done and kept: a catalog failure (sqlite3, disk) only warns
        msg = exc.one_line() if isinstance(exc, UserError) else str(exc)
        err.print(f"cephbench: warning: {run_dir} not added to the history catalog: {msg}", markup=False)



def write_out(path: Path, text: str) -> None:
    """The one writer of `--out FILE`: the whole text or nothing, since a reader such as Prometheus' textfile
    collector must never see half a file; a file that cannot be written is the user's to fix."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc.strerror}", "give --out a file you may write",
                        where="--out") from None
