"""fio on RBD images: librbd (fio's rbd engine) or krbd (`rbd map` + libaio on /dev/rbdN).

A group's images are created and prefilled once (rbd_images); each rw phase is
one fio process with one job per image (times numjobs), time-based, json+ output
and per-second logs. Jobs over several images are aggregated by fio.py: summed
bandwidth and IOPS, latency percentiles from the merged histograms.

With `clients:` (librbd only: krbd maps into this machine's kernel, and preflight refuses it), every client host
has its own `images` images, created and prefilled from here once per group, and runs one fio on them; the fios
start together and are merged exactly (fio_run.measure_fio, drivers/instances.py), each client kept as an instance.
A search of the hosts (`clients: auto`) makes the images of its largest step's hosts once; each step runs on its own.

The group's lifecycle is the core's (drivers/lifecycle.py) through fio_run.FioOnImages; this module says only how
krbd differs and each image's job.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Iterator

from ..core.errors import UserError
from ..core.results import Test
from . import lifecycle, rbd_images
from .rbd_images import preflight  # noqa: F401 - its hook: the images' checks (drivers/registry.py)
from .base import DriverContext, Outcome
from .fio import FioJob
from .fio_run import FioOnImages, image_job_options
from .lifecycle import Step


def jobs_for(test: Test, images: rbd_images.Images, client_id: str | None, krbd: bool) -> list[FioJob]:
    """One fio job per image (each cloned numjobs times), all running together."""
    common = image_job_options(test, direct=True)
    jobs = []
    for i, name in enumerate(images.names):
        if krbd:
            jobs.append(FioJob(name=f"img{i}", engine="libaio", options={"filename": images.devices[i]}, **common))
        else:
            opts = {"pool": images.pool, "rbdname": name, "clientname": client_id or "admin"}
            jobs.append(FioJob(name=f"img{i}", engine="rbd", options=opts, **common))
    return jobs


def _krbd(test: Test) -> bool:
    return test.params["client"] == "krbd"


class FioRbd(FioOnImages):
    def unavailable(self, ctx: DriverContext, group: list[Test]) -> str | None:
        return rbd_images.krbd_unavailable(ctx) if _krbd(group[0]) else None

    def resources(self, ctx: DriverContext, group: list[Test]) -> AbstractContextManager[rbd_images.Images]:
        krbd = _krbd(group[0])
        owners = ctx.clients_of_group(group)
        if krbd and owners:        # preflight refuses it; never run krbd anywhere but here
            raise UserError("krbd maps images into this machine's kernel only; it does not run on client hosts",
                            where=f"workload {group[0].workload}: clients")
        return rbd_images.group_images(ctx, group, krbd=krbd, owners=[c.name for c in owners])

    def tool(self, test: Test) -> str:
        return "fio krbd" if _krbd(test) else "fio rbd"

    def described(self, test: Test) -> dict[str, Any]:
        p = test.params
        return {"client": "krbd" if _krbd(test) else "librbd", "iodepth": p["iodepth"], "numjobs": p["numjobs"]}

    def jobs(self, step: Step[rbd_images.Images], client: Any, there: Any) -> list[FioJob]:
        images = step.res.of(client.name) if client else step.res
        return jobs_for(step.test, images, step.ctx.target.id, _krbd(step.test))


HOOKS = FioRbd()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    return lifecycle.run_group(HOOKS, ctx, group, todo)
