"""`cephbench export`: a run's results as CSV, JSON, OpenMetrics or Grafana annotations."""

from __future__ import annotations

from pathlib import Path

import click

from .common import RUN_FILES, check_out, err, write_out


@click.command("export")
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "openmetrics", "grafana-annotations"]),
              required=True,
              help="csv (a row per test), json (a list of results), openmetrics (Prometheus textfile/Pushgateway) "
                   "or grafana-annotations (one region per test, the body of Grafana's POST /api/annotations).")
@click.option("--out", "out_file", type=click.Path(path_type=Path), help="Write to FILE instead of stdout.")
def export_(run_dir: Path, fmt: str, out_file: Path | None) -> None:
    """Export a run's results for spreadsheets, CI or Prometheus/Grafana (docs/exports.md)."""
    from ..rundirs.export import export
    check_out(out_file, tuple(run_dir / f for f in RUN_FILES))
    text = export(run_dir, fmt)
    if out_file is None:
        click.echo(text, nl=False)
        return
    write_out(out_file, text)
    err.print(f"exported {run_dir} as {fmt}: {out_file}", markup=False)
