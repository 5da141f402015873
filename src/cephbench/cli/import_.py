"""`cephbench import`: raw tool output turned into a run directory."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..core.errors import UserError
from ..report.terminal import print_results
from .common import out, _catalog


@click.command("import")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Run directory (default ./cephbench-runs/<UTC timestamp>-import).")
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE",
              help="Add (or override) a parameter of every imported test, e.g. ceph_version=0.48 or phase=seq "
                   "(repeatable).")
@click.option("--date", "date", metavar="DATE", help="When the files were measured: YYYY-MM-DD[THH:MM[:SS]], UTC "
              "unless an offset follows (default: the date in each output, else the file's modification time).")
@click.option("--db", type=click.Path(path_type=Path), help="History catalog (default: see 'cephbench history').")
def import_(files: tuple[Path, ...], out_dir: Path | None, labels: tuple[str, ...], date: str | None,
            db: Path | None) -> None:
    """Turn raw rados bench, fio, rbd bench, iperf3, loadgen or osd bench output into a run directory."""
    from ..rundirs.history import format_time, parse_date
    from ..rundirs.importer import import_files, parse_labels
    when = parse_date(date, where="--date") if date is not None else None
    if when is not None and when > time.time():
        raise UserError(f"{date!r} is in the future", "give the date the files were measured", where="--date")
    if when is not None and when < 0:
        raise UserError(f"{date!r} is before 1970", "give the date the files were measured", where="--date")
    rundir, results = import_files(list(files), out_dir, parse_labels(labels), when)
    print_results(out, results)
    out.print(f"imported {len(results)} file(s): {rundir.path}", markup=False)
    for src in rundir.meta()["sources"]:
        how = {"--date": "from --date", "content": "from the output",
               "file time": "from the file's modification time: the output carries no date (give --date)"}
        out.print(f"  {src['test']}: measured {format_time(src['measured_unix'])} UTC, "
                  f"{how.get(src['date_from'], src['date_from'])}", markup=False, soft_wrap=True)
    _catalog(rundir.path, db)
