"""report.html: one self-contained page (inline CSS, inline SVG charts, no network fetches)."""

from __future__ import annotations

from dataclasses import dataclass

from jinja2 import Environment, PackageLoader, select_autoescape

from ..kinds import KINDS
from ..results import Result
from . import charts
from .sections import ReportData, Section

SWEEP_PARAMS = ("object_size", "block_size", "concurrency", "iodepth", "instances")


@dataclass
class Chart:
    id: str
    title: str
    svg: str


def section_charts(section: Section) -> list[Chart]:
    out: list[Chart] = []
    by_workload: dict[str, list[Result]] = {}
    for r in section.results:
        by_workload.setdefault(r.test.workload, []).append(r)
    for name, rs in by_workload.items():
        svg = charts.timeseries(rs)
        if svg:
            out.append(Chart(f"ts-{section.level}-{name}", f"{name}: {charts.timeseries_caption(rs)} over time", svg))
        for param in SWEEP_PARAMS:
            svg = charts.sweep(rs, param)
            if svg:
                out.append(Chart(f"sweep-{section.level}-{name}-{param}",
                                 f"{name}: throughput against {param.replace('_', ' ')}", svg))
        svg = charts.percentiles(rs)
        if svg:
            out.append(Chart(f"pct-{section.level}-{name}", f"{name}: latency percentiles", svg))
        for r in rs:
            if KINDS.get(r.test.kind) is not None and KINDS[r.test.kind].layout == "osd":
                svg = charts.osd_bars(r)
                if svg:
                    out.append(Chart(f"osd-{r.test.id}", f"{r.test.id}: OSD bench per OSD", svg))
            svg = charts.client_bars(r)
            if svg:
                out.append(Chart(f"clients-{r.test.id}", f"{r.test.id}: per client, over the common window", svg))
    return out


def render(data: ReportData) -> tuple[str, int]:
    """The page, and how many charts it holds (the browser test counts them)."""
    env = Environment(loader=PackageLoader("cephbench.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    sections = [(s, section_charts(s)) for s in data.sections]
    n = sum(len(c) for _, c in sections)
    return env.get_template("report.html.j2").render(data=data, sections=sections, chart_count=n), n
