"""report.html: one self-contained page (inline CSS, inline SVG charts, no network fetches)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jinja2 import Environment, PackageLoader, select_autoescape

from ..kinds import KINDS
from ..core.results import Result
from . import charts, osd_bench, variants
from .curves import report_curves
from .sections import KEY_HEADERS, ReportData, Section

EVIDENCE_LEVELS = ("RADOS", "RBD", "RGW", "OSD")     # levels whose results carry Ceph's and the hosts' evidence
BREAKDOWN_LEVELS = ("RADOS", "RBD", "RGW")           # client latency split by the OSDs' counters


@dataclass
class Chart:
    id: str
    title: str
    svg: str
    small: bool = False           # drawn two to a row


@dataclass
class SectionPictures:
    """What a level's section shows besides its tables: charts, and one line per kind of evidence not measured."""
    charts: list[Chart] = field(default_factory=list)
    evidence: list[Chart] = field(default_factory=list)     # latency breakdown, then utilization per test
    missing: list[str] = field(default_factory=list)


def section_charts(section: Section) -> list[Chart]:
    out: list[Chart] = []
    by_workload: dict[str, list[Result]] = {}
    for r in section.results:
        by_workload.setdefault(r.test.workload, []).append(r)
    for name, rs in by_workload.items():
        svg = charts.timeseries(rs)
        if svg:
            out.append(Chart(f"ts-{section.level}-{name}", f"{name}: {charts.timeseries_caption(rs)} over time", svg))
        # what each kind's throughput is drawn against (kind.swept_charts), and its processes
        kinds = [KINDS[k] for k in dict.fromkeys(r.test.kind for r in rs) if k in KINDS]
        for param in dict.fromkeys([*(p for k in kinds for p in k.swept_charts), "instances"]):
            svg = charts.sweep(rs, param)
            if svg:
                out.append(Chart(f"sweep-{section.level}-{name}-{param}",
                                 f"{name}: throughput against {param.replace('_', ' ')}", svg))
        svg = charts.percentiles(rs)
        if svg:
            out.append(Chart(f"pct-{section.level}-{name}", f"{name}: latency percentiles", svg))
        for r in rs:
            if KINDS.get(r.test.kind) is not None and KINDS[r.test.kind].layout == "osd":
                svg = osd_bench.osd_bars(r)
                if svg:
                    out.append(Chart(f"osd-{r.test.id}", f"{r.test.id}: OSD bench per OSD", svg))
            svg = charts.client_bars(r)
            if svg:
                out.append(Chart(f"clients-{r.test.id}", f"{r.test.id}: per client, over the common window", svg))
    return out


def _ids(rs: list[Result]) -> str:
    ids = [r.test.id for r in rs]
    return ", ".join(ids) if len(ids) <= 4 else f"{', '.join(ids[:3])} and {len(ids) - 3} more"


def _why_no_breakdown(r: Result) -> str:
    if r.evidence is None:
        return "no evidence on the result (an import, or a run from before evidence was collected)"
    if not r.evidence.osds:
        return "no OSD counters were read" + (f" ({r.evidence.notes[0]})" if r.evidence.notes else "")
    return "the OSDs counted no op of the test's kind, or the tool gave no mean latency"


def _read_how(rs: list[Result]) -> str:
    """How the counters were read, when not all through the admin sockets: a reader of the report can tell."""
    told = sorted({o.osd for r in rs if r.evidence is not None for o in r.evidence.osds if o.source == "ceph tell"})
    if not told:
        return ""
    return f" (read through `ceph tell`, the admin socket out of reach: {', '.join(f'osd.{n}' for n in told)})"


def evidence_pictures(section: Section) -> SectionPictures:
    """The latency breakdown of the level's tests in one chart, and each test's device and link utilization;
    evidence that is missing is one line ("not measured: …"), never an empty chart."""
    out = SectionPictures()
    if section.level not in EVIDENCE_LEVELS:
        return out
    measured = [r for r in section.results if r.status == "ok" and r.measurement is not None]
    if section.level in BREAKDOWN_LEVELS:
        svg = charts.latency_breakdown(measured)
        if svg:
            out.evidence.append(Chart(f"breakdown-{section.level}",
                                      f"{section.level}: where each test's mean latency went, from the OSDs' perf "
                                      f"counters{_read_how(measured)} (share of the mean; ms in each part)", svg))
        without: dict[str, list[Result]] = {}
        for r in measured:
            if (r.analysis is None or r.analysis.breakdown is None) and r.analysis is not None \
                    and r.analysis.ceiling_bytes_per_s is not None:
                without.setdefault(_why_no_breakdown(r), []).append(r)
        out.missing += [f"not measured: the latency breakdown of {_ids(rs)}: {why}" for why, rs in without.items()]
    no_series = []
    for r in measured:
        svg = charts.utilization(r)
        if svg:
            out.evidence.append(Chart(f"util-{r.test.id}", f"{r.test.id}: throughput, OSD devices busy and links "
                                      "against their speed, per second (host series from their watch's start)", svg,
                                      small=True))
        else:
            no_series.append(r)
    no_series = [r for r in no_series if r.evidence is not None or section.level in BREAKDOWN_LEVELS]
    if no_series:
        out.missing.append(f"not measured: device and link utilization of {_ids(no_series)}: their evidence has "
                           "no per-second device or link series")
    return out


def render(data: ReportData) -> tuple[str, int]:
    """The page, and how many charts it holds (the browser test counts them)."""
    env = Environment(loader=PackageLoader("cephbench.report", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    gap_charts = {tid: Chart(f"gap-{tid}", f"{g.title}: from the hardware baseline through the ceiling to what "
                             "was measured", charts.gap(g)) for tid, g in data.gaps.items()}
    sections = [(s, section_charts(s), evidence_pictures(s)) for s in data.sections]
    # the Variants section: the summary table, then each level's chart over its table
    charts_by_table = {title: Chart(cid, caption, svg)
                       for cid, caption, svg, title in variants.chart_list(data.variants)}
    variant_parts = [(t, charts_by_table.get(t.title)) for t in variants.tables(data.variants)]
    curves = [(t, Chart(f"curve-{i}", t.title, svg) if svg else None, text)
              for i, (t, svg, text) in enumerate(report_curves([r for s in data.sections for r in s.results]))]
    n = len(gap_charts) + len(charts_by_table) + sum(len(c) + len(p.evidence) for _, c, p in sections)
    n += sum(1 for _, c, _ in curves if c)
    return env.get_template("report.html.j2").render(
        data=data, sections=sections, gap_charts=gap_charts, key_headers=KEY_HEADERS, chart_count=n,
        variant_parts=variant_parts, curves=curves,
        variant_notes=variants.notes(data.variants) if data.variants else []), n
