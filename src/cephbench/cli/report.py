"""`cephbench report`: report.html and report.md written into a run directory."""

from __future__ import annotations

import time
from pathlib import Path

import click

from .common import out, _open_run


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def report(run_dir: Path) -> None:
    """Write report.html (self-contained, with charts) and report.md into a run directory."""
    rundir, results = _open_run(run_dir)
    t0 = time.monotonic()
    from ..report.write import write_report
    html_path, md_path, charts = write_report(rundir)
    out.print(f"report: {html_path} ({len(results)} tests, {charts} charts, {time.monotonic() - t0:.1f} s); "
              f"{md_path}")
