"""`cephbench show`: a run directory's results on the terminal."""

from __future__ import annotations

from pathlib import Path

import click

from .common import out, _open_run


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--reasons", is_flag=True, help="Print the efficiency model's reason for every result.")
@click.option("--json", "as_json", is_flag=True, help="The results as a JSON list (as 'export --format json').")
def show(run_dir: Path, reasons: bool, as_json: bool) -> None:
    """Print the results of a run directory."""
    if as_json:
        from ..rundirs.export import export
        click.echo(export(run_dir, "json"), nl=False)
        return
    _, results = _open_run(run_dir)
    if not results:
        out.print(f"{run_dir}: no results yet")
        return
    from ..report.terminal import print_results, print_verdict     # the tables (rich): a run to show first
    print_results(out, results, reasons=reasons)
    print_verdict(out, results)
