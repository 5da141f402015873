"""`cephbench cleanup`: what a dead run left, removed."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import out, err, start_up


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("-c", "--conf", type=click.Path(path_type=Path), help="ceph.conf (default: the one run.json names).")
@click.option("-k", "--keyring", type=click.Path(path_type=Path), help="Keyring (default: the one run.json names).")
@click.option("--id", "client_id", help="Client id (default: the one run.json names).")
def cleanup(run_dir: Path, conf: Path | None, keyring: Path | None, client_id: str | None) -> None:
    """Remove what a run that died (kill -9, a crash) left: pools, flags, images, users, its tool processes."""
    with start_up():
        from ..run.launch import RunRequest, cleanup as clean
        from ..cluster.recovery import Refusal, how_to_remove
    removed, failed = clean(run_dir, RunRequest(conf=conf, keyring=keyring, client_id=client_id),
                            say=lambda m: out.print(f"  {m}", markup=False))
    if not removed and not failed:
        out.print(f"{run_dir}: nothing left behind", markup=False)
        return
    out.print(f"{run_dir}: removed {len(removed)} thing(s) the run left", markup=False)
    for r, why in failed:       # a refusal is not the run's to remove: no command for it either
        err.print(f"cephbench: {why}" if isinstance(why, Refusal) else
                  f"cephbench: could not remove {r.kind} {r.name}: {why}; by hand: {how_to_remove(r)}", markup=False)
    if failed:
        sys.exit(1)
