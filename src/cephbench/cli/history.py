"""`cephbench history`: the catalog of every run and import, and trends across runs."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.errors import UserError
from .common import out, _warn_corrupt


def _history_filters(f):
    for opt in reversed([
        click.option("--suite", help="Only runs of this suite."),
        click.option("--fsid", "--cluster", "fsid", help="Only runs on this cluster (fsid or its beginning)."),
        click.option("--ceph-version", "ceph_version", help="Only runs on this Ceph version (or its beginning, "
                     "e.g. 16.2)."),
        click.option("--since", metavar="DATE", help="Only runs started on or after DATE (YYYY-MM-DD[THH:MM], UTC)."),
        click.option("--until", metavar="DATE", help="Only runs started before the end of DATE."),
    ]):
        f = opt(f)
    return f


def _filters(ctx: click.Context, **given: str | None):
    """The history filters given to `history` and to its subcommand, the subcommand's winning."""
    from ..rundirs.history import Filters
    merged = {**(ctx.obj or {}).get("filters", {}), **{k: v for k, v in given.items() if v is not None}}
    return Filters.from_options(**merged)


@click.group(invoke_without_command=True)
@click.option("--db", type=click.Path(path_type=Path), help="Catalog file (default $CEPHBENCH_HISTORY, else "
              "$XDG_DATA_HOME/cephbench/history.sqlite).")
@click.option("--trend", "trend_metric", metavar="METRIC", help="Follow one test across runs: bytes_per_s, "
              "ops_per_s, lat_mean_ns or lat_p99_ns (or bw, iops, lat, p99).")
@click.option("--test", "test_match", metavar="MATCH", help="With --trend: 'KIND key=value ...' (parameters that "
              "must be equal) or a part of the test id.")
@click.option("--pool-profile", "pool_profile", metavar="PROFILE", help="With --trend: only tests on this pool "
              "profile, e.g. 'replicated size 3' or 'EC 2+1'.")
@click.option("--variant", metavar="NAME", help="With --trend: only tests of this variant ('none': without one).")
@click.option("--release", metavar="NAME", help="With --trend: only runs that record this Ceph release in run.json "
              "('none': without one).")
@click.option("--ignore", "ignore", multiple=True, metavar="KEY", help="With --trend: a parameter that does not "
              "set configurations apart (repeatable), e.g. duration_s; never the pool profile, variant or release.")
@_history_filters
@click.pass_context
def history(ctx: click.Context, db: Path | None, trend_metric: str | None, test_match: str | None,
            pool_profile: str | None, variant: str | None, release: str | None, ignore: tuple[str, ...],
            **filters) -> None:
    """The catalog of every run and import: list them, or follow one test across runs (--trend)."""
    ctx.obj = {"db": db, "filters": filters}
    if trend_metric or test_match:
        if not (trend_metric and test_match):
            raise UserError("--trend and --test go together", "e.g. --trend bytes_per_s --test "
                            "'rados_bench phase=write object_size=4MiB'", where="--trend" if test_match else "--test")
        _history_trend(ctx, trend_metric, test_match, pool_profile, variant, release, ignore)
    elif pool_profile or variant or release or ignore:
        raise UserError("--pool-profile, --variant, --release and --ignore choose what a trend follows",
                        "give them with --trend METRIC --test MATCH",
                        where="--pool-profile" if pool_profile else "--variant" if variant else
                        "--release" if release else "--ignore")
    elif ctx.invoked_subcommand is None:
        ctx.invoke(history_list)


def _history_trend(ctx: click.Context, metric: str, match: str, pool_profile: str | None, variant: str | None,
                   release: str | None, ignore: tuple[str, ...]) -> None:
    import shlex
    from ..report.textout import Column, print_table
    from ..rundirs.history import NEVER_MIXED, History, format_time, metric_name, series
    from ..core.identity import PARTS
    from ..report.compare_render import value
    from ..analysis.compare import METRICS
    name = metric_name(metric)
    m = next(x for x in METRICS if x.name == name)
    filters = _filters(ctx)
    with History.open(ctx.obj["db"], create=False) as h:
        points = h.trend(name, match, filters, pool_profile, variant, ignore, release)
    if not points:
        raise UserError(f"no catalogued result matches {match!r} with a {name} figure",
                        "see the runs with 'cephbench history list'", where="--test")
    groups = series(points)
    for i, s in enumerate(groups, 1):
        title = f"{m.label} of {match}, oldest first"
        if len(groups) > 1:
            title += f" — configuration {i} of {len(groups)}: {s.title()}"
        figure = f"median {m.label}"
        base = s.points[0].median
        rows = [[format_time(p.run.started_unix), Path(p.run.path).name, p.run.ceph_version or "-", p.label,
                 str(len(p.values)), value(m, p.median),
                 f"{(p.median / base - 1) * 100:+.1f}%" if base else "-", "missing" if p.run.missing else ""]
                for p in s.points]
        # the terminal's one table code: whole columns left out by rank on a narrow terminal, one line naming them
        # (docs/report.md, "Narrow terminals"); a run, a test and a figure are never cut
        print_table(out, title, [Column(h, _cell(i), right=h in ("n", figure, "Δ% vs first"),
                                        rank=TREND_RANKS.get(h, 0))
                                 for i, h in enumerate(("started (UTC)", "run", "ceph", "test", "n", figure,
                                                        "Δ% vs first", ""))], rows)
    if len(groups) > 1:
        apart = list(groups[0].apart)
        picks = []
        for k in (k for k in apart if k in NEVER_MIXED):
            pickable = [s.apart[k] for s in groups if s.apart[k] not in ("unknown", "none") or k in PARTS]
            if pickable:
                picks.append(f"{NEVER_MIXED[k]} {shlex.quote(pickable[0])}")
        others = [k for k in apart if k not in NEVER_MIXED]
        how = picks + ([f"more key=value pairs in --test ({', '.join(others)}), or --ignore KEY for a parameter "
                        f"that should not set them apart"] if others else [])
        out.print(f"{len(groups)} configurations match {match!r} (they differ in {', '.join(apart)}): each has its "
                  f"own table and its own 'vs first'. To follow one, give {'; or '.join(how)}.",
                  markup=False, soft_wrap=True)


# on a narrow terminal the highest rank goes first, whole (docs/report.md, "Narrow terminals"); the rest stay
TREND_RANKS = {"started (UTC)": 3, "ceph": 2, "n": 1}
LIST_RANKS = {"fsid": 4, "failed": 3, "tests": 2, "ceph": 1}


def _cell(i: int):
    return lambda row: row[i]


@history.command("list")
@_history_filters
@click.pass_context
def history_list(ctx: click.Context, **filters) -> None:
    """Catalogued runs, oldest first; a run whose directory is gone is marked missing."""
    from ..report.textout import Column, print_table
    from ..rundirs.history import History, NoCatalog, format_time
    chosen = _filters(ctx, **filters)
    try:
        h = History.open(ctx.obj["db"], create=False)
    except NoCatalog as exc:            # nothing catalogued yet: nothing to list, and no file made by looking
        if ctx.obj["db"] is not None:
            # a path the user typed that names nothing is a mistake (a typo, a mount not there), not an empty history
            raise UserError(f"{ctx.obj['db']} does not exist: no catalog there",
                            "give the path of a catalog that 'cephbench run', 'import' or 'history add' wrote, or "
                            "leave --db out for the default ($CEPHBENCH_HISTORY, else $XDG_DATA_HOME/cephbench/"
                            "history.sqlite)", where="--db") from None
        out.print(exc.one_line(), markup=False)
        return
    with h:
        runs = h.runs(chosen)
        db_path = h.path
    if not runs:
        out.print(f"no runs in {db_path}" + (" match the filters" if any(filters.values()) or any(
            ctx.obj["filters"].values()) else ""), markup=False)
        return
    rows = [[format_time(r.started_unix), r.suite or "-", str(r.tests), str(r.failed), r.ceph_version or "-",
             (r.fsid or "-")[:8], r.path, "missing" if r.missing else ("imported" if r.imported else "")]
            for r in runs]
    print_table(out, f"History ({db_path})",
                [Column(h, _cell(i), right=h in ("tests", "failed"), rank=LIST_RANKS.get(h, 0))
                 for i, h in enumerate(("started (UTC)", "suite", "tests", "failed", "ceph", "fsid", "run directory",
                                        "state"))], rows,
                row_style=lambda row: "red" if row[-1] == "missing" else "")


@history.command("add")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.pass_context
def history_add(ctx: click.Context, run_dirs: tuple[Path, ...]) -> None:
    """Catalogue run directories by hand (again: their rows are replaced)."""
    from ..rundirs.history import History, checked_meta
    for d in run_dirs:
        checked_meta(d)                 # every directory checked before the catalog is touched
    with History.open(ctx.obj["db"]) as h:
        for d in run_dirs:
            n, bad = h.add(d)
            _warn_corrupt(Path(d), bad)
            out.print(f"catalogued {d}: {n} result(s)", markup=False)

