"""The rbd_bench workload: each io_type of a group in turn on the group's images, with `rbd bench`.

The images (created, prefilled, removed) are rbd_images.py's, the group's lifecycle the core's (drivers/lifecycle.py:
its hooks `RbdBench`); the tool's command line and parser are rbd_bench_tool.py's.

With `clients:`, every client host has its own `images` images (as fio_rbd's clients do: they never write the
same blocks), created and prefilled from here once per group, and runs one rbd bench per image of its own; all
start together and merge (drivers/instances.py), each kept as an instance with its host and its actual start and
end. A search of the hosts (`clients: auto`) makes the images of its largest step's hosts once; each step runs on
its own.
"""

from __future__ import annotations

from typing import Iterator

from ..hosts.local import CommandResult, Spawn
from ..core.results import Measurement, Test
from . import lifecycle, rbd_images
from .rbd_images import preflight  # noqa: F401 - its hook: the images' checks (drivers/registry.py)
from .base import DriverContext, Outcome, run_group_timeout
from .instances import measure_instances
from .lifecycle import Step
from .rounds import round_suffix
from .rbd_bench_tool import RbdBenchCommand, live_figures, parse

class RbdBench(rbd_images.OnImages):
    """rbd_images.OnImages: one rbd bench per image, here or on each client host's own."""

    def one_round(self, step: Step[rbd_images.Images], n: int) -> Outcome | None:
        p = step.test.params
        duration = p.get("duration_s")
        timeout = run_group_timeout(duration or p["io_total"] / rbd_images.PREFILL_MIN_BYTES_PER_S)
        # rbd bench stopped by SIGINT at a duration's end: the next round must find the image free
        waited = rbd_images.wait_unwatched(step.ctx, step.res) if n > 1 else []
        return _measure(step.ctx, step.test, step.started, step.res, step.clients, timeout, step.notes + waited,
                        step.warnings, suffix=round_suffix(n))

    def finish(self, step: Step[rbd_images.Images], outcome: Outcome) -> None:
        if step.test.params.get("duration_s") is not None and step.later:
            # stopped by SIGINT: let the next test find the image free
            outcome.notes += rbd_images.wait_unwatched(step.ctx, step.res)


HOOKS = RbdBench()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    """Images for the group, prefilled when asked; then each io_type in order on the same images
    (drivers/lifecycle.py)."""
    return lifecycle.run_group(HOOKS, ctx, group, todo)


def _spawns(ctx: DriverContext, test: Test, specs: list[str], labels: list[str], client_args: list[str],
            suffix: str = "") -> list[Spawn]:
    """One rbd bench per image, its output in raw/<test>/rbd-bench-<phase>-<label><suffix>.txt."""
    p = test.params
    duration = p.get("duration_s")
    raw_dir = ctx.rundir.raw_dir(test.id) if ctx.rundir else None
    cmds = [RbdBenchCommand(spec=s, io_type=p["phase"], io_size=p["io_size"], io_threads=p["io_threads"],
                            io_pattern=p["io_pattern"], rw_mix_read=p["rw_mix_read"],
                            io_total=None if duration else p["io_total"], duration_s=duration)
            for s in specs]
    return [Spawn(c.argv(client_args), raw_dir / f"rbd-bench-{p['phase']}-{label}{suffix}.txt" if raw_dir
                  else None) for c, label in zip(cmds, labels)]


def _measure(ctx: DriverContext, test: Test, started: tuple[float, float], images: rbd_images.Images,
             clients: list, timeout_s: float, notes: list[str], warnings: list[str],
             suffix: str = "") -> Outcome | None:
    """One rbd bench per image, here; or, with clients, one per image of each client's own, on that client, all
    started at one instant; merged by time (drivers/instances.py). None in a dry run. A client whose rbd bench
    fails fails the test, named (fanout stopped the others)."""
    if clients:
        where = [(c, spec, f"{c.name}-img{i}") for c in clients for i, spec in enumerate(images.of(c.name).specs)]
    else:
        where = [(None, spec, f"img{i}") for i, spec in enumerate(images.specs)]
    spawns = _spawns(ctx, test, [s for _, s, _ in where], [label for *_, label in where],
                     ctx.target.remote_client_args() if clients else ctx.target.client_args(), suffix=suffix)

    def parse_one(i: int, r: CommandResult) -> Measurement:
        m = parse(r.stdout)
        if clients:
            m.extra["image"] = where[i][1]
        return m

    # rbd bench reports no latency to merge: mean-max merges none
    outcome = measure_instances(ctx, test, started, [(c, sp) for (c, _, _), sp in zip(where, spawns)], timeout_s,
                                parse_one, tool=f"rbd bench {test.params['phase']}", latency="mean-max", notes=notes,
                                warnings=warnings, live=live_figures)
    if outcome is not None and outcome.measurement is not None:       # the images this test ran on
        outcome.measurement.extra.update((images.of(*(c.name for c in clients)) if clients else images).describe())
    return outcome
