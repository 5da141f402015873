"""fio on RBD images: librbd (fio's rbd engine) or krbd (`rbd map` + libaio on /dev/rbdN).

A group's images are created and prefilled once (rbd_images); each rw phase is
one fio process with one job per image (times numjobs), time-based, json+ output
and per-second logs. Jobs over several images are aggregated by fio.py: summed
bandwidth and IOPS, latency percentiles from the merged histograms.

With `clients:` (librbd only: krbd maps into this machine's kernel, and preflight refuses it), every client host
has its own `images` images, created and prefilled from here once per group, and runs one fio on them; the fios
start together and are merged exactly (fio_run.measure_fio, drivers/instances.py), each client kept as an instance.
A search of the hosts (`clients: auto`) makes the images of its largest step's hosts once; each step runs on its own.
"""

from __future__ import annotations

from typing import Iterator

from ..core.errors import UserError
from ..core.results import Measurement, Test
from . import rbd_images
from .rbd_images import preflight  # noqa: F401 - its hook: the images' checks (drivers/registry.py)
from .base import DriverContext, Outcome, now, run_group_timeout
from .fio import FioJob
from .fio_run import FioRun, measure_fio
from .rounds import in_rounds
from .search import Searches


def jobs_for(test: Test, images: rbd_images.Images, client_id: str | None, krbd: bool) -> list[FioJob]:
    """One fio job per image (each cloned numjobs times), all running together."""
    p = test.params
    common = dict(rw=p["phase"], bs=p["block_size"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                  runtime_s=p["duration_s"], ramp_s=p["ramp"] or None, time_based=True, direct=True,
                  rwmixread=p["rwmixread"] if p["phase"] == "randrw" else None)
    jobs = []
    for i, name in enumerate(images.names):
        if krbd:
            jobs.append(FioJob(name=f"img{i}", engine="libaio", options={"filename": images.devices[i]}, **common))
        else:
            opts = {"pool": images.pool, "rbdname": name, "clientname": client_id or "admin"}
            jobs.append(FioJob(name=f"img{i}", engine="rbd", options=opts, **common))
    return jobs


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    if not any(t.id in todo for t in group):
        return
    first = group[0].params
    krbd = first["client"] == "krbd"
    if krbd:
        why = rbd_images.krbd_unavailable(ctx)
        if why:
            ctx.events.note(why)
            for t in group:
                if t.id in todo:
                    started, _ = now()
                    yield Outcome(t, started, 0.0, error=why, skipped=True)
            return
    tool = "fio krbd" if krbd else "fio rbd"
    # every client host of the group (a search of them, `clients: auto`: its largest step's), each with images of
    # its own, made and prefilled once; each test runs on its own hosts
    owners = ctx.clients_of_group(group)
    if krbd and owners:        # preflight refuses it; never run krbd anywhere but here
        raise UserError("krbd maps images into this machine's kernel only; it does not run on client hosts",
                        where=f"workload {group[0].workload}: clients")
    searches = Searches()      # iodepth: auto, clients: auto
    with rbd_images.group_images(ctx, group, krbd=krbd, owners=[c.name for c in owners]) as images:
        for test, started, notes, warnings in rbd_images.tests_to_run(ctx, group, todo, images, searches.over):
            p = test.params
            clients = ctx.clients_of(test)
            described = {"client": "krbd" if krbd else "librbd", "iodepth": p["iodepth"], "numjobs": p["numjobs"]}

            def parse(run: FioRun, client, p=p, described=described) -> Measurement:
                m = run.measurement(p["phase"], tool, keep_bins=client is not None)
                m.extra.update({**(images.of(client.name) if client else images).describe(), **described})
                return m

            def one_round(n: int, test=test, p=p, parse=parse, clients=clients) -> Outcome | None:
                return measure_fio(ctx, test, started, f"{test.id}/round{n}" if n else test.id, clients,
                                   lambda c: jobs_for(test, images.of(c.name) if c else images, ctx.target.id, krbd),
                                   parse, run_group_timeout(p["duration_s"] + p["ramp"]), tool=tool,
                                   notes=list(notes), warnings=warnings)

            outcome = in_rounds(test, one_round)
            if outcome is not None:
                if clients and outcome.measurement is not None:     # the step's hosts' images
                    outcome.measurement.extra.update({**images.of(*(c.name for c in clients)).describe(),
                                                      **described})
                yield searches.after(outcome)
        yield from searches.skipped_in(group, todo)
