"""`cephbench suite`: suites from other tools (CBT)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import check_out, err, write_out


@click.group()
def suite() -> None:
    """Suites from other tools."""


@suite.command("from-cbt")
@click.argument("cbt_yaml", metavar="CBT.yaml", type=click.Path(path_type=Path))
@click.option("--out", "out_file", type=click.Path(path_type=Path), help="Write the suite to FILE (default stdout).")
def suite_from_cbt(cbt_yaml: Path, out_file: Path | None) -> None:
    """Translate CBT's radosbench, librbdfio and rawfio benchmarks into a cephbench suite (docs/suites.md)."""
    from ..rundirs.cbt import translate_file
    check_out(out_file, (cbt_yaml,))
    text, unmapped = translate_file(cbt_yaml)
    for line in unmapped:
        err.print(f"cephbench: not translated: {line}", markup=False)
    if out_file is None:
        click.echo(text, nl=False)
        return
    write_out(out_file, text)
    err.print(f"suite: {out_file} ({len(unmapped)} key(s) not translated); check it with "
              f"'cephbench validate {out_file}'", markup=False)

