"""Write report.md and report.html into a run directory (through the one writer: regular files inside it only)."""

from __future__ import annotations

from pathlib import Path

from ..core.results import RunDir
from ..core.userfiles import write_file
from . import html, markdown
from .sections import build


def write_report(rundir: RunDir) -> tuple[Path, Path, int]:
    """Returns the paths of report.html and report.md, and the number of charts."""
    data = build(rundir)
    page, charts = html.render(data)
    html_path = rundir.path / "report.html"
    md_path = rundir.path / "report.md"
    hint = "remove it, or give a run directory of regular files you may write"
    write_file(html_path, page, hint, within=rundir.path)
    write_file(md_path, markdown.render(data), hint, within=rundir.path)
    return html_path, md_path, charts
