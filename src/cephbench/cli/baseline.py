"""`cephbench baseline`: what the disks and the network can do, as a run of its own."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..core.errors import UserError
from ..lab.multihost import size_flag as _size_option
from ..rundirs.progress import ConsoleEvents
from ..report.format import seconds
from ..core.units import format_size
from .common import out, err


@click.group()
def baseline() -> None:
    """What the hardware can do: disks (fio, direct I/O) and network (iperf3), to compare the cluster with."""


def _duration_option(value: str, flag: str) -> float:
    from ..core.units import parse_duration
    try:
        d = parse_duration(value)
    except ValueError as exc:
        raise UserError(str(exc), where=flag) from None
    if d <= 0:
        raise UserError(f"{value!r} must be longer than zero", where=flag)
    return d


@baseline.command("disk")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--size", default="1GiB", show_default=True, help="Test file size per path.")
@click.option("--runtime", default="10s", show_default=True, help="Run time of each fio step.")
@click.option("--pattern", "patterns", multiple=True, help="Only these patterns (repeatable; default all).")
@click.option("--allow-raw-device", is_flag=True, help="Allow a block device that holds nothing (it is overwritten).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Run directory for the results.")
def baseline_disk(paths: tuple[Path, ...], size: str, runtime: str, patterns: tuple[str, ...],
                  allow_raw_device: bool, out_dir: Path | None) -> None:
    """fio on each PATH alone, then on all at once: dd-equivalent, sequential 1/4 MiB, random 4 KiB qd 1/32."""
    from ..drivers import disk_baseline
    from ..kinds.disk_baseline import DEFAULT_PATTERNS, PATTERNS, make_tests, test_params
    nbytes, secs = _size_option(size, "--size"), _duration_option(runtime, "--runtime")
    unknown = [p for p in patterns if p not in PATTERNS]
    if unknown:
        raise UserError(f"unknown pattern {unknown[0]!r}; use one of {', '.join(PATTERNS)}",
                        where="--pattern")
    targets = disk_baseline.check_paths(list(paths), nbytes, allow_raw_device, ".cephbench-preflight.dat")
    tests = make_tests(list(patterns) or DEFAULT_PATTERNS,
                       test_params([str(p) for p in paths], nbytes, secs, allow_raw_device))
    _run_baseline("disk", tests, out_dir, f"disk baseline of {len(targets)} path(s), {format_size(nbytes)} test "
                  f"files, {seconds(secs)} per step")


def _run_baseline(what: str, tests: list, out_dir: Path | None, intro: str) -> None:
    """The baseline's tests as a run of their own, through the runner as a suite's baselines (ledger, host watch,
    cleanup on every exit); the tables, then exit 1 when a test failed, 130 when interrupted."""
    from ..run.launch import prepare_baseline, start
    from ..report.baseline import print_baselines
    prep = prepare_baseline(what, tests, out_dir)
    rundir = prep.rundir
    assert rundir is not None
    out.print(f"{intro}; results in {rundir.path}")
    events = ConsoleEvents(err, prep.todo, run_dir=rundir.path)
    with events:
        summary = start(prep, events)
    print_baselines(out, summary.results)
    out.print(f"results: {rundir.path}")
    for r, why in summary.cleanup_failed:
        err.print(f"cephbench: could not remove {r.kind} {r.name}: {why} (listed in {rundir.path}/resources.json; "
                  f"cephbench cleanup {rundir.path})", markup=False)
    if summary.interrupted:
        err.print("interrupted: finished results are kept", markup=False)
        sys.exit(130)
    if summary.failed or summary.cleanup_failed:
        sys.exit(1)


@baseline.command("network")
@click.option("--hosts", "hosts", default="localhost", show_default=True,
              help="Comma-separated hosts (others reached with ssh).")
@click.option("--streams", default=4, show_default=True, type=click.IntRange(1, 128), help="Parallel streams.")
@click.option("--duration", default="10s", show_default=True, help="Duration of each iperf3 test.")
@click.option("--port", type=int, default=None, help="First server port (default: a free port).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Run directory for the results.")
def baseline_network(hosts: str, streams: int, duration: str, port: int | None, out_dir: Path | None) -> None:
    """iperf3 between every ordered pair (1 and N streams) and from each host to all others at once."""
    from ..drivers import iperf
    secs = _duration_option(duration, "--duration")
    names = [h.strip() for h in hosts.split(",") if h.strip()]
    if not names:
        raise UserError("give at least one host", where="--hosts")
    if port is not None:
        iperf.check_port(port)
    iperf.resolve_hosts(names)      # refused in one line before the run directory exists
    tests = iperf.make_tests(names, streams, secs, port)
    _run_baseline("network", tests, out_dir, f"network baseline between {', '.join(names)}: {len(tests)} iperf3 "
                  f"tests of {seconds(secs)}")

