"""The report's few chart kinds, written as SVG text: line charts (panels stacked on one x axis), vertical bars
with reference lines, and grouped horizontal bars.

matplotlib drew them before: importing it cost ~0.8 s and each chart 0.1-0.4 s, paid at the end of every run.
What the report needs is a page of geometry (scales, nice ticks, a legend) plus escaped text.

Output has no ids, scripts or external references, so any number of charts can share one page; every string
from a run goes through `esc`. Sizes are pixels at the page's scale; a viewBox lets CSS shrink a chart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from markupsafe import escape   # Jinja2's own escaping, already loaded for the page (html's pulls in html.entities)

WIDTH = 912                 # what matplotlib's 9.5 in at 96 dpi gave: the page's charts keep their width
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
TICK_PX = 11
LABEL_PX = 12
LEGEND_PX = 10
CHAR_EM = 0.62              # a generous average glyph width: text measured by it does not overflow
LEGEND_CHARS = 46           # longer legend labels are cut with "…"; the whole label is in the tooltip
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
DASHES = ("", "6 3", "2 2")  # past ten lines the colours repeat: the dash tells the lines apart
GRID = "#000000"
GRID_OPACITY = 0.1

Ticks = list[tuple[float, str]]


def esc(text: object) -> str:
    return str(escape(str(text)))


def series_style(i: int) -> tuple[str, str]:
    """The colour and dash pattern of the i-th line of a chart."""
    return PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)]


def text_width(text: str, px: float) -> float:
    return len(text) * px * CHAR_EM


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"


# ---- ticks and scales ---------------------------------------------------------------------------

def _step(span: float, target: int) -> float:
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))


def tick_text(v: float, step: float) -> str:
    """A tick label with as many decimals as the step needs (0.25 -> 2, 20 -> 0), never "-0"."""
    decimals = next(d for d in range(12) if abs(round(step, d) - step) <= step * 1e-9)
    out = f"{v:.{decimals}f}"
    return "0" if float(out) == 0 else out


def nice_ticks(lo: float, hi: float, target: int = 5) -> tuple[float, float, Ticks]:
    """Round-numbered ticks covering [lo, hi]; returns the axis limits widened to the outer ticks."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = 0.0, 1.0
    if hi - lo <= 0:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad if lo != 0 else lo, hi + pad
    step = _step(hi - lo, target)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    ticks = [(k * step, tick_text(k * step, step)) for k in range(first, last + 1)]
    return first * step, last * step, ticks


def log10_ticks(lo: float, hi: float) -> tuple[float, float, Ticks]:
    """Decades (with 2 and 5 between them when the range is short), limits widened to whole decades."""
    lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if hi_e == lo_e:
        hi_e += 1
    mantissas = (1,) if hi_e - lo_e >= 3 else (1, 2, 5)
    ticks = [(m * 10.0 ** e, f"{m * 10.0 ** e:g}") for e in range(lo_e, hi_e + 1) for m in mantissas
             if m * 10.0 ** e <= 10.0 ** hi_e * (1 + 1e-9)]
    return 10.0 ** lo_e, 10.0 ** hi_e, ticks


@dataclass(frozen=True)
class Scale:
    """Maps data values in [lo, hi] onto pixels [a, b] (b < a for a y axis), linearly or in log space."""
    lo: float
    hi: float
    a: float
    b: float
    log: bool = False

    def __call__(self, v: float) -> float:
        if self.log:
            v, lo, hi = math.log(v), math.log(self.lo), math.log(self.hi)
        else:
            lo, hi = self.lo, self.hi
        span = hi - lo or 1.0
        return self.a + (v - lo) / span * (self.b - self.a)


def _padded(lo: float, hi: float, log: bool, share: float = 0.04) -> tuple[float, float]:
    """Room at both ends so that markers on the first and last value are not cut by the frame."""
    if log:
        llo, lhi = math.log(lo), math.log(hi)
        pad = (lhi - llo) * share or 0.5
        return math.exp(llo - pad), math.exp(lhi + pad)
    pad = (hi - lo) * share or 0.5
    return lo - pad, hi + pad


# ---- drawing ------------------------------------------------------------------------------------

class Canvas:
    """SVG elements, appended in drawing order."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def text(self, x: float, y: float, s: str, px: float = TICK_PX, anchor: str = "start", rotate: float = 0,
             color: str = "#222", weight: str = "", tooltip: str = "") -> None:
        lines = s.split("\n")
        attrs = f'x="{_num(x)}" y="{_num(y)}" font-size="{_num(px)}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if rotate:
            attrs += f' transform="rotate({_num(rotate)} {_num(x)} {_num(y)})"'
        if color != "#222":
            attrs += f' fill="{color}"'
        if weight:
            attrs += f' font-weight="{weight}"'
        title = f"<title>{esc(tooltip)}</title>" if tooltip else ""
        if len(lines) == 1:
            self.parts.append(f"<text {attrs}>{title}{esc(s)}</text>")
            return
        # a multi-line label: each line one em further, the block centred on y
        dy0 = -(len(lines) - 1) * 0.6
        spans = "".join(f'<tspan x="{_num(x)}" dy="{dy0 if i == 0 else 1.2:.1f}em">{esc(ln)}</tspan>'
                        for i, ln in enumerate(lines))
        self.parts.append(f"<text {attrs}>{title}{spans}</text>")

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str = "#333", width: float = 1,
             dash: str = "", opacity: float = 1.0) -> None:
        extra = (f' stroke-dasharray="{dash}"' if dash else "") + (f' stroke-opacity="{opacity}"' if opacity < 1 else "")
        self.parts.append(f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" '
                          f'stroke="{color}" stroke-width="{_num(width)}"{extra}/>')

    def rect(self, x: float, y: float, w: float, h: float, fill: str = "none", stroke: str = "",
             opacity: float = 1.0, tooltip: str = "") -> None:
        extra = (f' stroke="{stroke}"' if stroke else "") + (f' fill-opacity="{opacity}"' if opacity < 1 else "")
        attrs = (f'x="{_num(x)}" y="{_num(y)}" width="{_num(max(w, 0))}" height="{_num(max(h, 0))}" '
                 f'fill="{fill}"{extra}')
        self.parts.append(f"<rect {attrs}><title>{esc(tooltip)}</title></rect>" if tooltip else f"<rect {attrs}/>")

    def series(self, pts: Sequence[tuple[float, float]], color: str, dash: str, marker: bool, label: str) -> None:
        """One line of a chart, its markers and its name as a tooltip, as one group."""
        coords = " ".join(f"{_num(x)},{_num(y)}" for x, y in pts)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out = [f'<g><title>{esc(label)}</title>']
        if len(pts) > 1:
            out.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="1.5"'
                       f' stroke-linejoin="round"{dash_attr}/>')
        if marker or len(pts) == 1:
            out += [f'<circle cx="{_num(x)}" cy="{_num(y)}" r="3" fill="{color}"/>' for x, y in pts]
        out.append("</g>")
        self.parts.append("".join(out))

    def svg(self, width: float, height: float, label: str) -> str:
        w, h = _num(width), _num(height)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
                f'role="img" aria-label="{esc(label)}" font-family="{FONT}" fill="#222">'
                + "".join(self.parts) + "</svg>")


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h


def _y_axis(c: Canvas, r: Rect, scale: Scale, ticks: Ticks, label: str, label_x: float) -> None:
    for v, t in ticks:
        y = scale(v)
        c.line(r.x, y, r.right, y, GRID, 1, opacity=GRID_OPACITY)
        c.line(r.x - 4, y, r.x, y)
        c.text(r.x - 6, y + TICK_PX * 0.35, t, anchor="end")
    c.text(label_x, r.y + r.h / 2, label, px=LABEL_PX, anchor="middle", rotate=-90)


def _x_axis(c: Canvas, r: Rect, scale: Scale, ticks: Ticks, label: str, labels: bool, rotate: bool = False) -> float:
    """Grid and ticks; with `labels`, the tick texts and the axis label. Returns the y below the label."""
    for v, t in ticks:
        x = scale(v)
        c.line(x, r.y, x, r.bottom, GRID, 1, opacity=GRID_OPACITY)
        c.line(x, r.bottom, x, r.bottom + 4)
        if labels and rotate:
            c.text(x + TICK_PX * 0.35, r.bottom + 7, t, anchor="end", rotate=-90)
        elif labels:
            c.text(x, r.bottom + 6 + TICK_PX, t, anchor="middle")
    if not labels:
        return r.bottom
    below = r.bottom + 6 + (max((text_width(t, TICK_PX) for _, t in ticks), default=0) if rotate else TICK_PX)
    if label:
        c.text(r.x + r.w / 2, below + 6 + LABEL_PX, label, px=LABEL_PX, anchor="middle")
        below += 6 + LABEL_PX
    return below


@dataclass(frozen=True)
class LegendItem:
    label: str
    color: str
    dash: str = ""
    shape: str = "line"      # line, marker (line with a dot), box
    opacity: float = 1.0


def _legend_width(items: Sequence[LegendItem]) -> float:
    if not items:
        return 0.0
    return 34 + max(text_width(_cut(i.label, LEGEND_CHARS), LEGEND_PX) for i in items)


def _legend(c: Canvas, x: float, y: float, items: Sequence[LegendItem]) -> None:
    for n, it in enumerate(items):
        cy = y + 7 + n * (LEGEND_PX + 4)
        if it.shape == "box":
            c.rect(x, cy - 5, 18, 10, fill=it.color, opacity=it.opacity)
        else:
            c.line(x, cy, x + 18, cy, it.color, 1.5, dash=it.dash)
            if it.shape == "marker":
                c.parts.append(f'<circle cx="{_num(x + 9)}" cy="{_num(cy)}" r="3" fill="{it.color}"/>')
        cut = _cut(it.label, LEGEND_CHARS)
        c.text(x + 24, cy + LEGEND_PX * 0.35, cut, px=LEGEND_PX, tooltip=it.label if cut != it.label else "")


def _legend_row(c: Canvas, x: float, y: float, items: Sequence[LegendItem]) -> float:
    """The legend as one row of entries from (x, y); returns the y below it."""
    for it in items:
        if it.shape == "box":
            c.rect(x, y - 5, 18, 10, fill=it.color, opacity=it.opacity)
        else:
            c.line(x, y, x + 18, y, it.color, 1.5, dash=it.dash)
        c.text(x + 24, y + LEGEND_PX * 0.35, it.label, px=LEGEND_PX)
        x += 24 + text_width(it.label, LEGEND_PX) + 14
    return y + LEGEND_PX


def _legend_height(n: int) -> float:
    return n * (LEGEND_PX + 4) + 6


def _frame(c: Canvas, r: Rect) -> None:
    c.rect(r.x, r.y, r.w, r.h, stroke="#333")


def _label_band(label: str) -> float:
    return (label.count("\n") + 1) * LABEL_PX * 1.2 + 4


# ---- line charts --------------------------------------------------------------------------------

@dataclass
class Line:
    label: str
    points: list[tuple[float, float]]
    color: str
    dash: str = ""
    marker: bool = False
    labels: tuple[str, ...] = ()        # a text beside each point (a curve's loads), in the order of `points`
    ring: int | None = None             # the point circled (a curve's knee)


@dataclass
class Panel:
    """One y axis of a line chart. `ymin`/`ymax` fix an end; None takes it from the data (rounded to a tick)."""
    ylabel: str
    lines: list[Line] = field(default_factory=list)
    ylog: bool = False
    ymin: float | None = 0.0
    ymax: float | None = None

    def limits(self) -> tuple[float, float, Ticks]:
        ys = [y for ln in self.lines for _, y in ln.points if math.isfinite(y) and (y > 0 or not self.ylog)]
        if self.ylog:
            if not ys:
                return 1.0, 10.0, [(1.0, "1"), (10.0, "10")]
            return log10_ticks(min(ys), max(ys))
        lo = self.ymin if self.ymin is not None else min(ys, default=0.0)
        hi = self.ymax if self.ymax is not None else max(ys, default=1.0)
        t_lo, t_hi, ticks = nice_ticks(lo, max(hi, lo))
        lo = self.ymin if self.ymin is not None else t_lo
        hi = self.ymax if self.ymax is not None else t_hi
        return lo, hi, [(v, t) for v, t in ticks if lo - 1e-9 <= v <= hi + 1e-9]


@dataclass
class XAxis:
    """The shared x axis. `ticks` given: those values and texts (categories, swept values); else nice ticks."""
    label: str
    log: bool = False
    ticks: Ticks | None = None


def thin(points: Sequence[tuple[float, float]], buckets: int) -> list[tuple[float, float]]:
    """At most 2 points per bucket of consecutive points (the lowest and highest, in order): a line with more
    points than the chart has pixels looks the same, its peaks and dips included, at a fraction of the size."""
    if len(points) <= 2 * buckets:
        return list(points)
    out: list[tuple[float, float]] = []
    size = len(points) / buckets
    for b in range(buckets):
        chunk = points[int(b * size):int((b + 1) * size)]
        if not chunk:
            continue
        lo, hi = min(chunk, key=lambda p: p[1]), max(chunk, key=lambda p: p[1])
        out += sorted({lo, hi}, key=lambda p: p[0])
    return out


@dataclass(frozen=True)
class Band:
    """A stretch of the x axis shaded on every panel (seconds a tool measured only in part: not drawn)."""
    x0: float
    x1: float
    label: str


BAND_FILL = "#9aa5b1"
BAND_OPACITY = 0.25


def line_chart(panels: Sequence[Panel], x: XAxis, legend: Sequence[LegendItem], label: str,
               panel_height: float | None = None, width: float = WIDTH, bands: Sequence[Band] = ()) -> str:
    """Panels stacked over one x axis; the legend to the right of the top panel; `bands` shaded on every panel."""
    ys = [(p, *p.limits()) for p in panels]
    tick_w = max((text_width(t, TICK_PX) for _, _, _, ticks in ys for _, t in ticks), default=0)
    left = 8 + max(_label_band(p.ylabel) for p in panels) + tick_w + 8
    legend_w = _legend_width(legend)
    right = 16 + (legend_w + 10 if legend else 0)
    plot_w = width - left - right
    gap, top = 10.0, 10.0
    each = panel_height or (200.0 if len(panels) == 1 else 150.0)
    # the legend never runs past the bottom panel: the panels grow instead
    each = max(each, (_legend_height(len(legend)) - gap * (len(panels) - 1)) / len(panels))

    xs = [px for p in panels for ln in p.lines for px, _ in ln.points] + [v for b in bands for v in (b.x0, b.x1)]
    if x.ticks:
        xs += [v for v, _ in x.ticks]
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    ticks = x.ticks
    if ticks is None:
        lo, hi, ticks = nice_ticks(lo, hi, 8)
        ticks = [(v, t) for v, t in ticks if lo <= v <= hi]
    if x.ticks is not None or not x.log:
        lo, hi = _padded(lo, hi, x.log)
    xscale = Scale(lo, hi, left, left + plot_w, x.log)

    c = Canvas()
    y = top
    bottom = top
    for n, (p, ylo, yhi, yticks) in enumerate(ys):
        r = Rect(left, y, plot_w, each)
        yscale = Scale(ylo, yhi, r.bottom, r.y, p.ylog)
        _y_axis(c, r, yscale, yticks, p.ylabel, 8 + LABEL_PX)
        last = n == len(ys) - 1
        bottom = _x_axis(c, r, xscale, ticks, x.label, labels=last)
        for b in bands:
            x0, x1 = max(xscale(b.x0), r.x), min(xscale(b.x1), r.right)
            c.rect(x0, r.y, x1 - x0, r.h, fill=BAND_FILL, opacity=BAND_OPACITY, tooltip=b.label)
        for ln in p.lines:
            # a value outside fixed limits (a CPU share above 100%) is drawn on the frame, not across the page
            kept = [i for i, (_, py) in enumerate(ln.points) if math.isfinite(py) and (py > 0 or not p.ylog)]
            pts = [(xscale(ln.points[i][0]), min(max(yscale(ln.points[i][1]), r.y), r.bottom)) for i in kept]
            c.series(thin(pts, int(plot_w)), ln.color, ln.dash, ln.marker, ln.label)
            _point_marks(c, ln, kept, pts)
        _frame(c, r)
        y = r.bottom + gap
    if legend:
        _legend(c, left + plot_w + 10, top, legend)
    return c.svg(width, bottom + 8, label)


def _point_marks(c: Canvas, ln: Line, kept: Sequence[int], pts: Sequence[tuple[float, float]]) -> None:
    """Each point's text (up and right of it) and the ringed point of a line."""
    for i, (x, y) in zip(kept, pts):
        if i < len(ln.labels) and ln.labels[i]:
            c.text(x + 5, y - 5, ln.labels[i], px=LEGEND_PX - 1, color=ln.color)
        if ln.ring == i:
            c.parts.append(f'<circle cx="{_num(x)}" cy="{_num(y)}" r="7" fill="none" stroke="{ln.color}" '
                           f'stroke-width="2"><title>{esc(ln.label)}: knee</title></circle>')


# ---- bar charts ---------------------------------------------------------------------------------

@dataclass
class RefLine:
    value: float
    label: str
    color: str
    dash: str = ""


def bar_chart(names: Sequence[str], values: Sequence[float], colors: Sequence[str], ylabel: str,
              refs: Sequence[RefLine] = (), label: str = "", legend: Sequence[LegendItem] = ()) -> str:
    """Vertical bars, one per name, with horizontal reference lines (a median, a threshold)."""
    legend = [*legend, *(LegendItem(r.label, r.color, r.dash) for r in refs)]
    top_value = max([*values, *(r.value for r in refs), 0.0])
    _, yhi, yticks = nice_ticks(0.0, top_value or 1.0)
    tick_w = max(text_width(t, TICK_PX) for _, t in yticks)
    left = 8 + _label_band(ylabel) + tick_w + 8
    right = 16 + _legend_width(legend) + 10
    plot_w = min(max(34.0 * len(names), 260.0), 1340.0 - left - right)
    rotate = len(names) > 12 or max((text_width(n, TICK_PX) for n in names), default=0) > plot_w / len(names)
    r = Rect(left, 10, plot_w, max(200.0, _legend_height(len(legend))))
    yscale = Scale(0.0, yhi, r.bottom, r.y)
    c = Canvas()
    _y_axis(c, r, yscale, yticks, ylabel, 8 + LABEL_PX)
    slot = plot_w / max(len(names), 1)
    for i, (n, v, color) in enumerate(zip(names, values, colors)):
        c.rect(r.x + slot * (i + 0.1), yscale(v), slot * 0.8, r.bottom - yscale(v), fill=color,
               tooltip=f"{n}: {v:.1f} {ylabel}")
    xscale = Scale(-0.5, len(names) - 0.5, r.x, r.right)
    bottom = _x_axis(c, r, xscale, [(i, n) for i, n in enumerate(names)], "", labels=True, rotate=rotate)
    for ref in refs:
        c.line(r.x, yscale(ref.value), r.right, yscale(ref.value), ref.color, 1.2, dash=ref.dash)
    _frame(c, r)
    _legend(c, r.right + 10, r.y, legend)
    return c.svg(r.right + right - 10, bottom + 8, label)


@dataclass
class BarGroup:
    """One bar per category (None: no bar), drawn side by side with the other groups' bars."""
    label: str
    color: str
    values: list[float | None]
    opacity: list[float]


HEADING_PX = LABEL_PX + 10      # the row a block's heading takes


def hbar_chart(categories: Sequence[str], groups: Sequence[BarGroup], xlabel: str, title: str,
               unit: str = "", label: str = "", headings: Sequence[tuple[int, str]] = (),
               legend: Sequence[LegendItem] = (), figures: bool = False) -> str:
    """Horizontal grouped bars around a zero line, categories down the left (first at the top). `headings`
    are (index of a category, text): a heading row across the chart above that category, opening a block.
    With `figures`, each bar's value is written at its end (inside it, in white, where the end has no room)."""
    legend = [*(LegendItem(g.label, g.color, shape="box") for g in groups), *legend]
    cat_chars = 48
    cats = [_cut(cat, cat_chars) for cat in categories]
    heads = dict(headings)
    left = 10 + max((text_width(cat, TICK_PX) for cat in cats), default=0) + 10
    right = 16 + _legend_width(legend) + 10
    plot_w = max(WIDTH - left - right, 300.0)
    row = max(22.0, 9.0 * len(groups) + 10)
    tops: list[float] = []
    at = 0.0
    for i in range(len(categories)):
        at += HEADING_PX if i in heads else 0.0
        tops.append(at)
        at += row
    r = Rect(left, 10 + LABEL_PX + 8, plot_w, max(at, _legend_height(len(legend))))
    vals = [v for g in groups for v in g.values if v is not None]
    lo, hi, ticks = nice_ticks(min([0.0, *vals]), max([0.0, *vals]), 8)
    xscale = Scale(lo, hi, r.x, r.right)
    c = Canvas()
    c.text(r.x + r.w / 2, 10 + LABEL_PX, title, px=LABEL_PX, anchor="middle")
    bottom = _x_axis(c, r, xscale, ticks, xlabel, labels=True)
    bar_h = (row - 6) / max(len(groups), 1)
    fig_px = min(LEGEND_PX, bar_h)
    for i, text in heads.items():
        if 0 <= i < len(tops):
            y = r.y + tops[i] - HEADING_PX
            if i:
                c.line(10, y, r.right, y, "#333", 1, opacity=0.35)
            c.text(10, y + HEADING_PX - 7, text, px=LABEL_PX, weight="bold")
    for i, (full, cat) in enumerate(zip(categories, cats)):
        mid = r.y + tops[i] + row / 2
        c.text(r.x - 6, mid + TICK_PX * 0.35, cat, anchor="end", tooltip=full if cat != full else "")
        for j, g in enumerate(groups):
            v = g.values[i]
            if v is None:
                continue
            y = mid + (j - len(groups) / 2) * bar_h
            x0, x1 = sorted((xscale(0.0), xscale(v)))
            tip = f"{full}: {g.label} {v:+.1f}{unit}"
            c.rect(x0, y, max(x1 - x0, 0.5), bar_h, fill=g.color, opacity=g.opacity[i], tooltip=tip)
            if figures:
                inside = "#fff" if g.opacity[i] >= 1.0 else "#222"    # white on a pale bar would vanish
                _bar_figure(c, f"{v:+.1f}{unit}", v >= 0, x0, x1, r, y + bar_h / 2 + fig_px * 0.35, fig_px, inside)
    c.line(xscale(0.0), r.y, xscale(0.0), r.bottom, "#000", 1)
    _frame(c, r)
    _legend(c, r.right + 10, r.y, legend)
    return c.svg(r.right + right - 10, bottom + 8, label or title)


def _bar_figure(c: Canvas, text: str, positive: bool, x0: float, x1: float, r: Rect, y: float, px: float,
                inside: str) -> None:
    """A bar's value past its end, or inside it (in `inside`'s colour) when the plot ends there."""
    w = text_width(text, px) + 3
    if positive:
        if x1 + w <= r.right:
            c.text(x1 + 3, y, text, px=px)
        else:
            c.text(x1 - 3, y, text, px=px, anchor="end", color=inside)
    elif x0 - w >= r.x:
        c.text(x0 - 3, y, text, px=px, anchor="end")
    else:
        c.text(x0 + 3, y, text, px=px, color=inside)


# ---- bullet and stacked bars (the verdict as a picture) -----------------------------------------

ROW_PX = 24.0
FADED = 0.3                  # the pale bar behind a bullet row


@dataclass(frozen=True)
class BulletRow:
    """One row of a bullet chart: a solid bar (None: none) over an optional pale one that it came from."""
    label: str
    value: float | None
    color: str
    back: float | None = None
    text: str = ""               # in the column right of the bars
    strong: bool = False         # the row that limits: its label and text in bold
    tooltip: str = ""


def _bar_scale(vals: Sequence[float], log: bool, a: float, b: float) -> tuple[Scale, Ticks]:
    """The x scale of horizontal bars: from 0 (linear) or from the decade under the smallest bar (log)."""
    if log:
        lo, hi, ticks = log10_ticks(min(vals), max(vals))
        return Scale(lo, hi, a, b, log=True), ticks
    lo, hi, ticks = nice_ticks(0.0, max(vals, default=1.0) or 1.0, 6)
    return Scale(lo, hi, a, b), ticks


def bullet_chart(rows: Sequence[BulletRow], xlabel: str, headline: str, refs: Sequence[RefLine] = (),
                 legend: Sequence[LegendItem] = (), log: bool = False, label: str = "",
                 width: float = WIDTH) -> str:
    """Horizontal bars, one row each, top to bottom, over one value axis; a headline above them in bold,
    vertical reference lines (a ceiling) labelled above the bars, each row's figures in a column on the right,
    the legend in one row under the axis."""
    vals = [v for r in rows for v in (r.value, r.back) if v is not None and v > 0]
    vals += [ref.value for ref in refs if ref.value > 0]
    vals = vals or [1.0]
    left = 10 + max((text_width(r.label, TICK_PX) for r in rows), default=0) + 10
    text_w = max((text_width(r.text, TICK_PX) for r in rows), default=0)
    right = 12 + text_w + 10
    plot_w = max(width - left - right, 200.0)
    top = 10 + LABEL_PX * 1.3 + 8 + (LEGEND_PX + 6 if refs else 0)
    r = Rect(left, top, plot_w, ROW_PX * len(rows))
    xscale, ticks = _bar_scale(vals, log, r.x, r.right)
    c = Canvas()
    c.text(10, 10 + LABEL_PX * 1.1, headline, px=LABEL_PX * 1.2, weight="bold")
    bottom = _x_axis(c, r, xscale, ticks, xlabel + (" (log scale)" if log else ""), labels=True)
    x0 = xscale(xscale.lo)
    for i, row in enumerate(rows):
        y = r.y + ROW_PX * i
        if row.back is not None and row.back > 0:
            c.rect(x0, y + 3, xscale(row.back) - x0, ROW_PX - 6, fill=row.color, opacity=FADED,
                   tooltip=row.tooltip or row.text)
        if row.value is not None and row.value > 0:
            c.rect(x0, y + 6, max(xscale(row.value) - x0, 1.0), ROW_PX - 12, fill=row.color,
                   tooltip=row.tooltip or row.text)
        mid = y + ROW_PX / 2 + TICK_PX * 0.35
        c.text(r.x - 6, mid, row.label, anchor="end", weight="bold" if row.strong else "")
        c.text(r.right + 12, mid, row.text, weight="bold" if row.strong else "")
    for ref in refs:
        x = xscale(ref.value)
        c.line(x, r.y - 4, x, r.bottom, ref.color, 1.5, dash=ref.dash)
        anchor = "end" if x > r.x + r.w * 0.7 else "start" if x < r.x + r.w * 0.3 else "middle"
        c.text(x, r.y - 7, ref.label, px=LEGEND_PX, anchor=anchor, color=ref.color)
    _frame(c, r)
    if legend:
        bottom = _legend_row(c, r.x, bottom + 14, legend)
    return c.svg(width, bottom + 8, label or headline)


def stacked_bars(categories: Sequence[str], parts: Sequence[LegendItem], values: Sequence[Sequence[float | None]],
                 xlabel: str, title: str, totals: Sequence[str] = (),
                 figures: Sequence[Sequence[str]] = (), width: float = WIDTH) -> str:
    """One horizontal bar per category (first at the top), its parts stacked left to right in the order of
    `parts`; a part's figure (`figures`, else its value) is written inside it when it fits and is its tooltip;
    `totals` in a column right of the bars."""
    cats = [_cut(cat, 40) for cat in categories]
    left = 10 + max((text_width(cat, TICK_PX) for cat in cats), default=0) + 10
    totals = list(totals) or [""] * len(categories)
    text_w = max((text_width(t, TICK_PX) for t in totals), default=0)
    right = 12 + text_w + 10 + _legend_width(parts) + 10
    plot_w = max(width - left - right, 200.0)
    r = Rect(left, 10 + LABEL_PX + 8, plot_w, max(ROW_PX * len(categories), _legend_height(len(parts))))
    sums = [sum(v or 0.0 for v in row) for row in values]
    xscale, ticks = _bar_scale([max(sums, default=1.0) or 1.0], False, r.x, r.right)
    c = Canvas()
    c.text(r.x + r.w / 2, 10 + LABEL_PX, title, px=LABEL_PX, anchor="middle")
    bottom = _x_axis(c, r, xscale, ticks, xlabel, labels=True)
    for i, (full, cat, row) in enumerate(zip(categories, cats, values)):
        y = r.y + ROW_PX * i
        mid = y + ROW_PX / 2 + TICK_PX * 0.35
        c.text(r.x - 6, mid, cat, anchor="end", tooltip=full if cat != full else "")
        at = 0.0
        for j, (part, v) in enumerate(zip(parts, row)):
            if not v or v <= 0:
                continue
            xa, xb = xscale(at), xscale(at + v)
            figure = figures[i][j] if figures else (f"{v:,.2f}" if v < 10 else f"{v:,.0f}")
            c.rect(xa, y + 4, xb - xa, ROW_PX - 8, fill=part.color, tooltip=f"{full}: {part.label} {figure}")
            if text_width(figure, LEGEND_PX) + 4 < xb - xa:
                c.text((xa + xb) / 2, y + ROW_PX / 2 + LEGEND_PX * 0.35, figure, px=LEGEND_PX, anchor="middle",
                       color="#fff")
            at += v
        c.text(r.right + 12, mid, totals[i])
    _frame(c, r)
    _legend(c, r.right + 12 + text_w + 10, r.y, parts)
    return c.svg(width, bottom + 8, title)
