"""The rbd_bench workload: each io_type of a group in turn on the group's images, with `rbd bench`.

The images (created, prefilled, removed) are rbd_images.py's; the tool's command line and parser are
rbd_bench_tool.py's.
"""

from __future__ import annotations

from typing import Iterator

from ..hosts import CommandResult, Spawn
from ..results import Measurement, Test
from . import rbd_images
from .base import Outcome, RunContext, measure, run_group_timeout
from .rados_bench import aggregate
from .rbd_bench_tool import RbdBenchCommand, live_figures, parse

TIMEOUT_RC = 124                     # what `timeout` returns when it had to stop the command


def _accept(duration_bound: bool):
    return lambda r: r.ok or (duration_bound and r.returncode == TIMEOUT_RC and not r.timed_out)


def run_group(ctx: RunContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    """Images for the group, prefilled when asked; then each io_type in order on the same images."""
    if not any(t.id in todo for t in group):
        return
    with rbd_images.group_images(ctx, group) as images:
        for test, started, notes, warnings in rbd_images.tests_to_run(ctx, group, todo, images):
            p = test.params
            duration = p.get("duration_s")
            cmds = [RbdBenchCommand(spec=s, io_type=p["phase"], io_size=p["io_size"], io_threads=p["io_threads"],
                                    io_pattern=p["io_pattern"], rw_mix_read=p["rw_mix_read"],
                                    io_total=None if duration else p["io_total"], duration_s=duration)
                    for s in images.specs]
            raw_dir = ctx.rundir.raw_dir(test.id) if ctx.rundir else None
            spawns = [Spawn(c.argv(ctx.target.client_args()),
                            raw_dir / f"rbd-bench-{p['phase']}-img{i}.txt" if raw_dir else None)
                      for i, c in enumerate(cmds)]
            timeout = run_group_timeout(duration or p["io_total"] / rbd_images.PREFILL_MIN_BYTES_PER_S)

            def parse_all(results: list[CommandResult]) -> Measurement:
                m = aggregate([parse(r.stdout) for r in results])
                m.extra.update(images.describe())
                return m

            outcome = measure(ctx, test, started, spawns, timeout, parse_all, tool=f"rbd bench {p['phase']}",
                              notes=notes, warnings=warnings, live=live_figures, accept=_accept(duration is not None))
            if outcome is None:
                continue
            later = any(t.id in todo for t in group[group.index(test) + 1:])
            if duration is not None and later:   # stopped by SIGINT: let the next test find the image free
                outcome.notes += rbd_images.wait_unwatched(ctx, images)
            yield outcome
