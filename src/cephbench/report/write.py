"""Write report.md and report.html into a run directory."""

from __future__ import annotations

from pathlib import Path

from ..core.results import RunDir
from . import html, markdown
from .sections import build


def write_report(rundir: RunDir) -> tuple[Path, Path, int]:
    """Returns the paths of report.html and report.md, and the number of charts."""
    data = build(rundir)
    page, charts = html.render(data)
    html_path = rundir.path / "report.html"
    md_path = rundir.path / "report.md"
    html_path.write_text(page, encoding="utf-8")
    md_path.write_text(markdown.render(data), encoding="utf-8")
    return html_path, md_path, charts
