"""The root group imports a command's module only when that command runs (issue 23: the test suite starts the CLI
hundreds of times), and its --help still lists every command with the help its docstring gives."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

import cephbench.cli
from cephbench.cli.common import COMMANDS, main

SRC = Path(__file__).resolve().parents[2] / "src"
NOT_COMMANDS = {"common", "__main__"}


def _real(name: str) -> click.Command:
    command = main.get_command(click.Context(main), name)
    assert command is not None, name
    return command


def test_the_table_holds_each_command_under_its_own_name_and_help():
    for name, (_, _, text) in COMMANDS.items():
        command = _real(name)
        assert command.name == name
        assert command.help == text, f"COMMANDS[{name!r}] must give {name}'s docstring word for word"
        assert command.short_help is None and not command.hidden and not command.deprecated, name


def test_every_command_module_is_in_the_table():
    modules = {m.name for m in pkgutil.iter_modules(cephbench.cli.__path__)} - NOT_COMMANDS
    assert modules == {module for module, _, _ in COMMANDS.values()}


def test_help_lists_the_commands_as_click_lists_the_real_ones():
    real = click.Group("cephbench", commands={name: _real(name) for name in COMMANDS})
    for width in (40, 80, 160):
        ctx = click.Context(main, terminal_width=width)
        listed, expected = click.HelpFormatter(width=width), click.HelpFormatter(width=width)
        main.format_commands(ctx, listed)
        real.format_commands(ctx, expected)
        assert listed.getvalue() == expected.getvalue()
        assert "validate" in listed.getvalue()


def test_an_unknown_command_is_refused_as_click_refuses_it():
    for name, said in (("frobnicate", "No such command 'frobnicate'.\n"),
                       ("valdate", "No such command 'valdate'. Did you mean 'validate'?\n")):
        res = subprocess.run([sys.executable, "-m", "cephbench.cli", name], capture_output=True, text=True,
                             env={"PYTHONPATH": str(SRC)})
        # one line, not click's usage block
        assert res.returncode == 2 and res.stderr.startswith(f"cephbench: {said.strip()} (see 'cephbench --help')") \
            and res.stderr.count("\n") == 1, res.stderr


def test_help_imports_no_command_module():
    # a process of its own: this one has imported every command above
    code = ("import sys; from cephbench.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('cephbench.cli.') and m != 'cephbench.cli.common'))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(SRC)},
                         check=True)
    assert "Commands:" in res.stdout
    assert res.stdout.strip().splitlines()[-1] == "[]"


def _imported(args: list[str]) -> list[str]:
    """The cephbench modules a command run in a fresh process imports."""
    code = ("import sys; from cephbench.cli import main\n"
            f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('cephbench'))))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=SRC.parent,
                         env={"PYTHONPATH": str(SRC)}, check=True)
    return res.stdout.strip().splitlines()[-1].split()


def test_a_command_imports_only_what_its_path_uses():
    # what a path does not use is not imported (issue 23): run's machinery for its --help, the lab for its --help,
    # the drivers and the lab for a suite that has neither baselines nor lab shapes
    run_help = _imported(["run", "--help"])
    assert not [m for m in run_help if m.startswith(("cephbench.run.", "cephbench.rundirs", "cephbench.suite",
                                                     "cephbench.report.terminal"))]
    assert "cephbench.lab.lab" not in _imported(["lab", "up", "--help"])
    unused = ("cephbench.drivers.", "cephbench.lab", "cephbench.hosts.", "cephbench.report.terminal")
    assert not [m for m in _imported(["validate", "suites/rados-sweep.yaml"]) if m.startswith(unused)]


def test_commands_that_print_lines_alone_never_import_rich():
    # its Console is made at the first table (issue 39: rich is a fifth of a short command's start-up)
    code = ("import sys; from cephbench.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('rich' in sys.modules, file=sys.stderr)")
    for args in (["--version"], ["--help"], ["validate", "suites/rados-sweep.yaml"], ["show", "/nonexistent"]):
        res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=SRC.parent,
                             env={"PYTHONPATH": str(SRC)})
        assert res.stdout.strip() or res.stderr.startswith("cephbench: "), args
        assert res.stderr.splitlines()[-1] == "False", (args, res.stderr)


PLAIN = ["", "a: b", "two\nlines", "trailing  ", "estimated 4m10s (docs/model.md, \"The search\"): x", "[bold]x[/]",
         "x" * 300]
# what rich changes, or may: an emoji code (any `:name:` it knows, "a:b:c" too), a tab, a control code, not ASCII
NOT_PLAIN = ["http://prom:9090/", ":smile:", "a:b:c", "tab\there", "a\rb", "\x1b[31mred", "ü"]


def test_a_line_printed_before_the_console_exists_is_what_rich_prints(capsys):
    from rich.console import Console
    from cephbench.cli.common import _LazyConsole
    for line in PLAIN + NOT_PLAIN:
        lazy = _LazyConsole(stderr=False)
        lazy.print(line, markup=False)
        direct = Console(highlight=False, soft_wrap=True, width=160)
        direct.print(line, markup=False)
        written = capsys.readouterr().out
        half = len(written) // 2
        assert written[:half] == written[half:], line
        # a plain line went out without the Console; the rest through it
        assert (lazy._console is None) == (line in PLAIN), line


CUT_SHORT = """
import sys

class CutShort:
    # pydantic turns an interrupt while it builds a model's validator into a SchemaError caused by it
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:
                raise RuntimeError("Error building validator") from exc
        return None

sys.meta_path.insert(0, CutShort())
sys.argv = ["cephbench", *{args!r}]
from cephbench.entry import main
main()
"""


@pytest.mark.parametrize("module, args", [
    ("cephbench.run.launch", ["run", "/nonexistent.yaml"]),            # imported in the command, not at its top
    ("cephbench.cli.validate", ["validate", "/nonexistent.yaml"]),      # a command's module, imported by the group
])
def test_an_interrupt_that_cuts_a_commands_imports_short_is_one_line(module, args):
    res = subprocess.run([sys.executable, "-c", CUT_SHORT.format(module=module, args=args)], capture_output=True,
                         text=True, env={"PYTHONPATH": str(SRC)})
    assert (res.returncode, res.stderr) == (130, "cephbench: interrupted\n")
