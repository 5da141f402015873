"""`cephbench compare`: runs compared test by test."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..core.errors import UserError
from .common import RUN_FILES, check_out, out, err, _warn_corrupt, write_out


@click.command()
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "html"]), default="text",
              show_default=True, help="Output format.")
@click.option("--out", "out_file", type=click.Path(path_type=Path), help="Write to FILE instead of the terminal.")
@click.option("--fail-on-regression", "fail_pct", type=float, metavar="PCT",
              help="Exit 1 when a significant change for the worse passes PCT percent (for CI).")
@click.option("--match-on", "match_on", metavar="KEYS",
              help="Match tests on kind and only these parameters (comma-separated), e.g. phase,object_size.")
@click.option("--ignore", "ignore", multiple=True, metavar="KEY", help="Leave this parameter out of the match "
              "(repeatable), e.g. --ignore pool_profile; --ignore release matches runs of two Ceph releases.")
@click.option("--variant", metavar="NAME", help="Compare each run of variants through this variant only, matched "
              "with the tests of runs without variants.")
def compare(runs: tuple[Path, ...], fmt: str, out_file: Path | None, fail_pct: float | None,
            match_on: str | None, ignore: tuple[str, ...], variant: str | None) -> None:
    """Compare runs: RUN_A against RUN_B [RUN_C ...], test by test, with significance from the repeats."""
    from ..analysis.compare import compare_runs, load_run, regressions
    from ..report import compare_render
    if len(runs) < 2:
        raise UserError("give at least two run directories", "cephbench compare RUN_A RUN_B [RUN_C ...]",
                        where="RUNS")
    check_out(out_file, tuple(r / f for r in runs for f in RUN_FILES))
    loaded = []
    for path in runs:
        run = load_run(path)
        _warn_corrupt(run.path, run.corrupt)
        loaded.append(run)
    keys = [k.strip() for k in (match_on or "").split(",") if k.strip()]
    pairs = compare_runs(loaded, keys, ignore, variant=variant)
    if fmt == "text" and out_file is None:
        compare_render.print_text(out, pairs)
    else:
        if fmt == "html":
            text = compare_render.render_html(pairs)
        elif fmt == "markdown":
            pct = [compare_render.pct_change_svg(p, compare_render.letter(i)) for i, p in enumerate(pairs)] \
                if out_file else []
            charts = _beside(out_file, pct, [f"A-vs-{compare_render.letter(i)}" for i in range(len(pairs))])
            svgs = compare_render.curve_svgs(pairs) if out_file else []
            curves = _beside(out_file, svgs, [f"curve-{i + 1}" for i in range(len(svgs))])
            text = compare_render.render_markdown(pairs, charts, curves)
        else:
            text = compare_render.render_text(pairs)
        if out_file is None:
            click.echo(text, nl=False)
        else:
            write_out(out_file, text)
            out.print(f"compare: {out_file}", markup=False)
    if fail_pct is not None:
        bad = regressions(pairs, fail_pct)
        for r in bad:
            err.print(f"regression: {r.text()}", markup=False)
        if bad:
            sys.exit(1)


def _beside(out_file: Path | None, svgs: list[str | None], names: list[str]) -> list[str | None]:
    """Each chart written beside the Markdown file as FILE-NAME.svg, and the file names to link (none without
    --out: Markdown on the terminal links nothing)."""
    if out_file is None:
        return []
    linked: list[str | None] = []
    for svg, name in zip(svgs, names):
        if svg is None:
            linked.append(None)
            continue
        file = f"{out_file.stem}-{name}.svg"
        write_out(out_file.parent / file, svg)
        linked.append(file)
    return linked
