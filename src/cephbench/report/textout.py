"""Text output that fits where it goes: the style of every terminal table, a table printed whole, and the warnings,
errors and notes under the tables.

A file or a pipe has no width: a table is printed there at its natural width, never wrapped or cut, so that a row
stays one line for grep. On a terminal it is printed at the terminal's width (terminal.py leaves out columns first).
No line ends in blanks. Only warnings and errors are marked ("!"); notes are information and printed plain, once per
text with every test that has it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from rich import box
from rich.console import Console, RenderableType
from rich.measure import Measurement as Width
from rich.cells import cell_len
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from ..core.results import Result
from .clients import clients_of, spread_line
from .format import messages

WIDE = 10_000       # wide enough for any table: what it measures at is its natural width


def plain_table(title: str) -> Table:
    """Every results table's style: no rules but under the header, two spaces between columns, so that a row is a
    test and its figures as `ceph osd df` prints them (grep and awk read it; 80 columns hold more of it)."""
    return Table(title=title, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, show_edge=False,
                 pad_edge=False, collapse_padding=True)


def natural_width(console: Console, renderable: RenderableType) -> int:
    return Width.get(console, console.options.update_width(WIDE), renderable).maximum


@dataclass(frozen=True)
class Column:
    """A table's column: its header, the cell of each row, and its rank for a narrow terminal."""

    header: str
    cell: Callable[[Any], str]
    right: bool = True
    # on a narrow terminal, columns are left out from the highest rank down; 0 is never left out
    rank: int = 0


RowStyle = Callable[[Any], str]         # a row's style ("bold", "red"), "" for none
RowEnds = Callable[[Any], bool]         # a row that ends a section (a rule under it)


def _table(title: str, columns: Sequence[Column], rows: Sequence[Any], row_style: RowStyle | None = None,
           ends_section: RowEnds | None = None) -> Table:
    t = plain_table(title)
    for c in columns:
        # a cell is never wrapped or cut (a row stays one line that grep and awk read, an id and a figure whole): a
        # narrow terminal leaves out whole columns instead; a row too long even then is printed whole, wider than
        # the terminal (print_whole makes each column as wide as its widest cell, so that rich crops none)
        t.add_column(c.header, justify="right" if c.right else "left", no_wrap=True, overflow="fold")
    for r in rows:
        t.add_row(*(c.cell(r) for c in columns), style=row_style(r) if row_style else None,
                  end_section=bool(ends_section(r)) if ends_section else False)
    return t


def fitted_table(console: Console, title: str, columns: Sequence[Column], rows: Sequence[Any],
                 row_style: RowStyle | None = None, ends_section: RowEnds | None = None) -> tuple[Table, list[str]]:
    """A table of `rows`, and the headers left out so that it fits the terminal (none off a terminal: a file or a
    pipe gets every column at the table's natural width). Columns go whole, highest rank first (each table's order
    is in docs/report.md, "Narrow terminals"); rank 0 stays, so a row may still be wider than the terminal."""
    left_out: list[str] = []
    columns = list(columns)
    table = _table(title, columns, rows, row_style, ends_section)
    while console.is_terminal and natural_width(console, table) > console.width:
        droppable = [c for c in columns if c.rank > 0]
        if not droppable:
            break
        # a column with no figure in any row goes first (rados bench prints no percentiles: its curves' p99 column
        # of dashes would stay where its mean, the one latency it has, went)
        empty = [c for c in droppable if all(c.cell(r).strip() in ("", "-") for r in rows)]
        drop = max(empty or droppable, key=lambda c: c.rank)
        columns = [c for c in columns if c is not drop]
        left_out.append(drop.header)
        table = _table(title, columns, rows, row_style, ends_section)
    return table, left_out


def print_left_out(console: Console, left_out: Sequence[str]) -> None:
    if left_out:
        console.print(f"left out to fit {console.width} columns: {', '.join(dict.fromkeys(left_out))} (`| cat` "
                      "shows them)", markup=False, style="dim", soft_wrap=True)


def print_table(console: Console, title: str, columns: Sequence[Column], rows: Sequence[Any],
                row_style: RowStyle | None = None, ends_section: RowEnds | None = None) -> None:
    """Every terminal table but the kinds' and the baselines' (which print their line once under the group): the
    table fitted to the terminal, whole, and under it the one line naming the columns it left out."""
    table, left_out = fitted_table(console, title, columns, rows, row_style, ends_section)
    print_whole(console, table)
    print_left_out(console, left_out)


def _rstrip(line: list[Segment]) -> list[Segment]:
    """A rendered line without the padding its last cells leave at its end."""
    out = list(line)
    while out and not out[-1].control and not out[-1].text.strip():
        out.pop()
    if out and not out[-1].control:
        out[-1] = Segment(out[-1].text.rstrip(), out[-1].style)
    return out


def _keep_words_whole(table: Table) -> None:
    """No figure or name is cut to fit a terminal ("37,0…" would be a wrong number): each column is at least as wide
    as the longest word of its header and cells, so that only headers and cells of several words wrap, and a column
    that never wraps as wide as its widest cell (else rich, short of room, crops it: "+0.0%" read "+0.0")."""
    for column in table.columns:
        texts = [Text.from_markup(c).plain for c in [column.header, *column.cells] if isinstance(c, str)]
        pieces = texts if column.no_wrap else [w for t in texts for w in t.split()]
        column.min_width = max(column.min_width or 0, max((cell_len(w) for w in pieces), default=0))


def print_whole(console: Console, renderable: RenderableType) -> None:
    """Print a table whole: at the console's width on a terminal (wider when its words do not fit: the terminal
    then wraps the lines, but nothing is lost), at the table's natural width anywhere else (a file or a pipe has no
    width: wrapping there would only break lines), with no trailing blanks either way."""
    if isinstance(renderable, Table) and isinstance(renderable.title, str) and renderable.title:
        # the title is a line of its own, never wrapped to the width of a narrow table
        console.print(renderable.title, markup=False, highlight=False, soft_wrap=True,
                      style=renderable.title_style or "table.title")
        renderable.title = None
    if console.is_terminal:
        if isinstance(renderable, Table):
            _keep_words_whole(renderable)
        least = Width.get(console, console.options.update_width(WIDE), renderable).minimum
        width = max(console.width, least)
    elif isinstance(renderable, Table) and not renderable.expand:
        # a table that does not expand is laid out at its natural width in any room as wide or wider: rendered in
        # WIDE's it is, without measuring it first (rich measures every cell again to lay it out; measuring first was
        # a third of `show`'s CPU for its tables, issue 39)
        width = WIDE
    else:
        width = max(console.width, natural_width(console, renderable))
    segments: list[Segment] = []
    for line in console.render_lines(renderable, console.options.update_width(width), pad=False):
        segments += [*_rstrip(line), Segment.line()]
    console.print(Segments(segments), crop=False, end="")


def print_messages(console: Console, results: list[Result]) -> None:
    """Warnings and errors, marked "!", then each clients' spread ("~"), then notes, which are information: plain."""
    warnings, errors, notes = messages(results)
    spreads = [(r.test.id, spread_line(c)) for r in results if (c := clients_of(r)) is not None]
    if warnings:
        console.print("Warnings (results marked ! are not counted in the verdict)", style="bold")
        for ids, text in warnings:
            console.print(f"  ! {', '.join(ids)}: {text}", markup=False, soft_wrap=True)
    if errors:
        console.print("Errors", style="bold")
        for test_id, text in errors:
            console.print(f"  ! {test_id}: {text}", markup=False, soft_wrap=True)
    if spreads or notes:
        console.print("Notes", style="bold")
    for test_id, text in spreads:
        console.print(f"  ~ {test_id}: {text}", markup=False, soft_wrap=True)
    for ids, text in notes:
        console.print(f"  {', '.join(ids)}: {text}", markup=False, soft_wrap=True)
