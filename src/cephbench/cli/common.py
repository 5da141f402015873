"""The root `cephbench` group, its consoles and exit codes, and what several commands share."""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import click

from .. import __version__
from ..core.errors import OperationFailed, UserError, one_line
from ..core.interrupts import caused_by_interrupt, exit_interrupted, sigterm_interrupts
from ..core.units import MAX_INT

if TYPE_CHECKING:
    from rich.console import Console

    from ..core.results import Result, RunDir
    from ..suite.plan import Estimate, Plan


# what rich's print(text, markup=False) writes as it is: printable ASCII lines with no `:name:` (rich makes an emoji
# of any it knows, even in "a:b:c"); tabs, carriage returns and other control codes it changes
_PLAIN = re.compile(r"[ -~\n]*")
_EMOJI_CODE = re.compile(r":\S*?:")
_MAKING = threading.RLock()


class _LazyConsole:
    """A rich Console made when first needed. Importing rich is a good part of a start-up that prints only lines
    (--version, --help, validate, every refusal): a line rich would write unchanged is written here, to the stream
    rich would write it to and flushed as rich flushes, until the Console exists; from then on (a table, markup, a
    live display) every call goes to the Console."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def _stream(self):
        return sys.stderr if self._stderr else sys.stdout

    def _rich(self) -> Console:
        with _MAKING:           # one Console, however many threads print first (a live display holds to it)
            if self._console is None:
                from rich.console import Console
                # piped output (CI logs, `| tee`) gets wide tables instead of rich's 80-column default
                self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True,
                                        width=None if self._stream().isatty() else 160)
        return self._console

    def print(self, *objects, **kwargs) -> None:
        if (self._console is None and kwargs == {"markup": False} and len(objects) == 1
                and isinstance(text := objects[0], str) and _PLAIN.fullmatch(text) and not _EMOJI_CODE.search(text)):
            stream = self._stream()
            stream.write(text + "\n")
            stream.flush()
            return
        self._rich().print(*objects, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._rich(), name)

    def __enter__(self):            # rich's Live holds its console in a `with`
        return self._rich().__enter__()

    def __exit__(self, *exc) -> None:
        self._rich().__exit__(*exc)


out = _LazyConsole(stderr=False)
err = _LazyConsole(stderr=True)


# Each command: its module in cephbench.cli, the function click made of it, and its help as its docstring says
# (tests/unit/test_cli_commands.py holds the two to the same words). The module is imported only when its command
# runs: one command's imports (the lab, pydantic's models, the report) are no other's start-up cost.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "baseline": ("baseline", "baseline", "What the hardware can do: disks (fio, direct I/O) and network (iperf3), to "
                 "compare the cluster with."),
    "cleanup": ("cleanup", "cleanup", "Remove what a run that died (kill -9, a crash) left: pools, flags, images, "
                "users, its tool processes."),
    "compare": ("compare", "compare", "Compare runs: RUN_A against RUN_B [RUN_C ...], test by test, with significance "
                "from the repeats."),
    "export": ("export", "export_", "Export a run's results for spreadsheets, CI or Prometheus/Grafana "
               "(docs/exports.md)."),
    "history": ("history", "history", "The catalog of every run and import: list them, or follow one test across "
                "runs (--trend)."),
    "import": ("import_", "import_", "Turn raw rados bench, fio, rbd bench, iperf3, loadgen or osd bench output into "
               "a run directory."),
    "lab": ("lab", "lab", "A real local Ceph cluster (mon, mgr, OSDs on BlueStore files, RGW) for trying and "
            "testing."),
    "report": ("report", "report", "Write report.html (self-contained, with charts) and report.md into a run "
               "directory."),
    "run": ("run", "run", "Run a suite against a cluster (-c, CEPH_CONF, the suite's target:) or the local lab "
            "(--lab)."),
    "show": ("show", "show", "Print the results of a run directory."),
    "suite": ("suite", "suite", "Suites from other tools."),
    "validate": ("validate", "validate", "Check a suite and print the expanded plan, without contacting a cluster."),
}


@contextlib.contextmanager
def start_up() -> Iterator[None]:
    """The imports of a start, before the command has changed anything: an interrupt that cuts them short ends the
    process as one during entry.py's own imports does, one line and exit 130 (os._exit: a handled interrupt inside
    the `exec` of a half-made module would still end the interpreter by SIGINT, and its clean-up may fail)."""
    try:
        yield
    except BaseException as exc:  # noqa: BLE001 - anything an interrupt cut short
        if caused_by_interrupt(exc):
            exit_interrupted()
        raise


class Main(click.Group):
    """Turns the errors a user can fix into one line and exit 2; failures into exit 1. Its commands are COMMANDS,
    each imported when it is run (or its own --help asked for); the group's --help lists them from the table."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        with start_up():
            return _checked(getattr(importlib.import_module(f"{__package__}.{module}"), attr))

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                            list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:    # click suggests a near name from the loaded commands only
            raise click.exceptions.NoSuchCommand(exc.command_name, possibilities=COMMANDS, ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing, given stand-ins that carry each command's help: no command module is imported
        stand_ins = {name: click.Command(name, help=text) for name, (_, _, text) in COMMANDS.items()}
        click.Group(commands=stand_ins).format_commands(ctx, formatter)

    def main(self, *args, standalone_mode: bool = True, **kwargs):
        """click's own errors (an unknown option or command, a value its type refuses, a missing argument) as every
        other bad input: one line, exit 2, in place of click's usage block."""
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Abort:          # an interrupt while click parsed
            _finish("cephbench: interrupted", 130)
        except click.exceptions.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            names, up = [], ctx
            while up is not None and up.parent is not None:     # the command's words, not how Python was run
                names.insert(0, up.info_name or "")
                up = up.parent
            path = " ".join(["cephbench", *names])
            where = " ".join(names) + ": " if names else ""
            text = exc.format_message()
            if isinstance(exc, click.exceptions.NoArgsIsHelpError) and isinstance(ctx.command, click.Group):
                # a group alone: its help is many lines; which commands it has is one
                text = f"a command is missing: {', '.join(ctx.command.list_commands(ctx))}"
            _finish(f"cephbench: {one_line(where + text)} (see '{path} --help')", 2)
        # --help and --version end with their exit code; a command that returned ends with 0
        sys.exit(rv if isinstance(rv, int) and not isinstance(rv, bool) else 0)

    def invoke(self, ctx: click.Context):
        sigterm_interrupts()    # a SIGTERM during preflight or set-up exits like Ctrl-C, not mid-change
        try:
            return super().invoke(ctx)
        except UserError as exc:
            _finish(f"cephbench: {exc.one_line()}", 2)
        except OperationFailed as exc:
            _finish(f"cephbench: {one_line(str(exc))}", 1)
        except KeyboardInterrupt:
            _finish("cephbench: interrupted", 130)
        except Exception as exc:
            # an interrupt that cut short an import inside the command (pydantic builds its validators while the
            # suite's schema is imported, and turns the interrupt into a SchemaError) is the interrupt
            if not caused_by_interrupt(exc):
                raise
            _finish("cephbench: interrupted", 130)


class _Given:
    """Mixed into a flag's own type (which stays its class too: click reads a range's bounds from it for --help),
    refusing first what no flag means: an empty or blank value (an empty path is the current directory to Path, an
    empty release the host's own), a number that is not finite (nan compares false with every threshold), or a
    whole number past MAX_INT."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value.strip():
            self.fail("is empty; give a value" + (", or leave the option out" if isinstance(param, click.Option)
                                                   else ""), param, ctx)
        value = super().convert(value, param, ctx)
        if isinstance(value, float) and not math.isfinite(value):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            self.fail(f"{value} is past the largest number any tool takes ({MAX_INT})", param, ctx)
        return value


def _checked(cmd: click.Command) -> click.Command:
    """A command (and a group's every command) whose text, path and number flags and arguments are _Given: bad
    values of every command refused alike, before the command runs."""
    for param in cmd.params:
        kind = type(param.type)
        if issubclass(kind, (click.types.StringParamType, click.Path, click.types.FloatParamType,
                             click.types.IntParamType)) and not issubclass(kind, _Given):
            given = object.__new__(type(f"Given{kind.__name__}", (_Given, kind), {}))
            given.__dict__.update(vars(param.type))
            param.type = given
    for sub in getattr(cmd, "commands", {}).values():
        _checked(sub)
    return cmd


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


def estimate_text(e: Estimate) -> str:
    """An estimate as validate and run both print it: `about 4m10s`, and where a search may stop early, the least
    the run can take (plan.least_s: each search as short as it can be) and its length when every search runs to its
    max."""
    from ..report.format import seconds
    if not e.ranged:
        return f"about {seconds(e.expected_s)}"
    return (f"about {seconds(e.expected_s)} (at least {seconds(e.shortest_s)}, {seconds(e.longest_s)} if every "
            "search runs to its max)")


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
    from ..core.results import RunDir
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



OUT_HINT = "give --out a new path or a regular file you may write"


# the files of a run directory a command reads: an --out that names one would replace the run's own data
RUN_FILES = ("run.json", "results.jsonl", "resources.json")


def check_out(path: Path | None, inputs: tuple[Path, ...] = ()) -> None:
    """`--out FILE` refused before the command does its work, not after (what write_out will refuse), and when it
    is the very file the command reads (`export RUN --out RUN/results.jsonl` would put the export in its place)."""
    if path is None:
        return
    from ..core.userfiles import writable
    target = writable(path, OUT_HINT, where="--out")
    for given in inputs:
        try:
            same = os.path.samefile(target, given)
        except OSError:         # either is not there (yet): not the same file
            continue
        if same:
            what = "a file" if str(path) == str(given) else f"{given}, a file"
            raise UserError(f"{path} is {what} this command reads: not written", "give --out another file",
                            where="--out")


def write_out(path: Path, text: str) -> None:
    """`--out FILE` of every command, through the one writer (core/userfiles.py): the whole text or nothing, since
    a reader such as Prometheus' textfile collector must never see half a file, and only a new path or a regular
    file (never /dev/full, a FIFO, or a link out of its directory); anything else is the user's to fix."""
    from ..core.userfiles import write_file
    write_file(path, text, OUT_HINT, where="--out")
