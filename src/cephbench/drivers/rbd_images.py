"""RBD images for one group of tests: pools, images, prefill, krbd mappings, removal.

Everything is registered in the run's ledger the moment it exists, so the
cleanup paths of the runner (normal end, failure, Ctrl-C, SIGTERM) remove it:
mappings first, then images, then pools (the ledger releases newest first).
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..cluster.ceph import Cluster
from ..core.settings import Settings
from ..core.errors import OperationFailed, UserError
from ..hosts.local import CommandResult, Spawn
from ..core.interrupts import held
from .pools import create_pool, remove_pool
from ..core.resources import Resource
from ..core.results import Test
from ..cluster.safety import CapacityBudget, amplification
from ..core.units import format_size
from ..kinds.rbd_images import RBD_IMAGE, RBD_MAPPING
from . import rbd_bench_tool   # rbd bench is the prefill tool
from .base import DriverContext, run_group_timeout, safe_name
from .instances import run_instances
from .lifecycle import Hooks, Step, reads

log = logging.getLogger(__name__)

MIB = 1024**2
# image metadata of an EC data pool goes here unless the suite names a metadata_pool
DEFAULT_METADATA_PROFILE: dict[str, Any] = {"type": "replicated", "size": 3, "min_size": None, "pg_num": 8}
PREFILL_IO_SIZE = 4 * MIB
PREFILL_THREADS = 16
PREFILL_MIN_BYTES_PER_S = 8 * MIB     # only for the timeout: a prefill slower than this is killed
SYS_BUS_RBD = Path("/sys/bus/rbd")


@dataclass
class Images:
    pool: str                      # image headers (the metadata pool when data_pool is set)
    data_pool: str | None
    names: list[str]
    size_bytes: int
    pools: list[str]               # what this group created, for removal
    prefilled: bool = False
    notes: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)   # krbd: /dev/rbdN per image
    owners: list[str | None] = field(default_factory=list)   # per image: the client host whose it is (None: here)

    @property
    def specs(self) -> list[str]:
        return [f"{self.pool}/{n}" for n in self.names]

    def of(self, *owners: str) -> "Images":
        """The images of these client hosts (what their fios open: one host's, or a step's of a search)."""
        keep = [i for i, o in enumerate(self.owners) if o in owners]
        return Images(pool=self.pool, data_pool=self.data_pool, names=[self.names[i] for i in keep],
                      size_bytes=self.size_bytes, pools=[], prefilled=self.prefilled, notes=list(self.notes),
                      owners=[self.owners[i] for i in keep])

    def describe(self) -> dict[str, Any]:
        """What every RBD Measurement records about its images (extra)."""
        return {"prefilled": self.prefilled, "images": len(self.names), "image_size_bytes": self.size_bytes,
                "data_pool": self.data_pool is not None}


@contextmanager
def group_images(ctx: DriverContext, group: list[Test], krbd: bool = False,
                 owners: Sequence[str] = ()) -> Iterator[Images]:
    """The images of a group, created, prefilled (when asked) and mapped (krbd); removed when the group ends.
    `owners`: client hosts, each with its own `images` images (prefilled from here); none: this machine's."""
    first = group[0].params
    images = create_images(ctx, group[0].group, first, krbd=krbd, owners=owners)
    try:
        if first["prefill"]:
            prefill(ctx, group[0], images)
        if krbd:
            map_images(ctx, images)
        yield images
    finally:
        remove_images(ctx, images)


class OnImages(Hooks[Images]):
    """The lifecycle's hooks every RBD kind shares (drivers/lifecycle.py): the group's images, made, prefilled and
    removed once (one set per client host of the group: a search of them, `clients: auto`, its largest step's), the
    prefill's note on every test, and the read guard's warning. A kind adds its run (`one_round`)."""

    def resources(self, ctx: DriverContext, group: list[Test]) -> AbstractContextManager[Images]:
        return group_images(ctx, group, owners=[c.name for c in ctx.clients_of_group(group)])

    def notes(self, res: Images) -> list[str]:
        return list(res.notes)

    def warnings(self, step: Step[Images]) -> list[str]:
        return read_guard_warnings(step.test, step.res)


def rbd_argv(ctx: DriverContext, *args: str) -> list[str]:
    return ["rbd", *ctx.target.client_args(), *args]


def _check(res: CommandResult, what: str) -> CommandResult:
    if not res.ok:
        raise OperationFailed(f"{what} failed: {res.error_text()}")
    return res


def create_images(ctx: DriverContext, gid: str, params: dict[str, Any], krbd: bool = False,
                  owners: Sequence[str] = ()) -> Images:
    """Pools for the group (an erasure profile becomes the data pool) and `images` images in them, or `images`
    images for each of the client hosts `owners` (named for it: cephbench-<run>-<group>-<client>-imgN)."""
    profile = params["pool_profile"]
    images = Images(pool="", data_pool=None, names=[], size_bytes=params["image_size"], pools=[])
    try:
        if profile["type"] == "erasure":
            meta_profile = params.get("metadata_profile") or DEFAULT_METADATA_PROFILE
            images.pool = create_pool(ctx, ctx.name(gid, "meta"), meta_profile, application="rbd")
            images.pools.append(images.pool)
            data_pool = create_pool(ctx, ctx.name(gid, "data"), profile, application="rbd")
            images.pools.append(data_pool)
            images.data_pool = data_pool
            ctx.change(["ceph", "osd", "pool", "set", data_pool, "allow_ec_overwrites", "true"],
                       lambda: ctx.cluster.ceph_ok("osd", "pool", "set", data_pool, "allow_ec_overwrites", "true"))
        else:
            images.pool = create_pool(ctx, ctx.name(gid), profile, application="rbd")
            images.pools.append(images.pool)
        for owner, i in [(o, i) for o in (list(owners) or [None]) for i in range(params["images"])]:
            name = ctx.name(gid, f"img{i}") if owner is None else ctx.name(gid, safe_name(owner), f"img{i}")
            argv = rbd_argv(ctx, "create", f"{images.pool}/{name}", "--size", f"{params['image_size']}B",
                            "--object-size", f"{params['object_size']}B")
            if images.data_pool:
                argv += ["--data-pool", images.data_pool]
            if krbd:  # what every kernel client maps; object-map and friends need a recent kernel
                argv += ["--image-feature", "layering,exclusive-lock"]
            ctx.change(argv, lambda argv=argv: _check(ctx.host.run(argv, timeout_s=120), "rbd create"))
            _register_image(ctx, f"{images.pool}/{name}")
            images.names.append(name)
            images.owners.append(owner)
    except BaseException:
        try:
            remove_images(ctx, images)
        except Exception as exc:  # noqa: BLE001 - the ledger still holds the rest for the final cleanup
            log.warning("group %s: partial setup not removed yet: %s", gid, exc)
        raise
    return images


def remove_image_spec(ctx: DriverContext, spec: str) -> None:
    """Remove an image this run made ("pool/image"); one whose pool is gone went with it."""
    if spec.split("/", 1)[0] not in ctx.cluster.pool_names():
        return
    res = ctx.host.run(rbd_argv(ctx, "rm", "--no-progress", spec), timeout_s=600)
    if not res.ok and "watchers" in res.stderr:
        # a client killed mid-run (Ctrl-C, timeout) still watches it for up to 30 s; the image's pool,
        # which this run created and removes next, takes it with it
        log.warning("rbd rm %s: still watched by a stopped client; it goes with its pool", spec)
        return
    _check(res, f"rbd rm {spec}")


def unmap_device(ctx: DriverContext, dev: str) -> None:
    _check(ctx.host.run(rbd_argv(ctx, "unmap", dev), timeout_s=120), f"rbd unmap {dev}")


def remove_image(ctx: DriverContext, entry: Resource) -> None:
    """RBD_IMAGE's remover (kinds/rbd_images.py): its ledger entry names the image."""
    remove_image_spec(ctx, entry.name)


def remove_mapping(ctx: DriverContext, entry: Resource) -> None:
    """RBD_MAPPING's remover (kinds/rbd_images.py): its ledger entry names the device."""
    unmap_device(ctx, entry.name)


def _register_image(ctx: DriverContext, spec: str) -> None:
    argv = rbd_argv(ctx, "rm", "--no-progress", spec)
    ctx.ledger.add(Resource(RBD_IMAGE.name, spec), lambda: ctx.change(argv, lambda: remove_image_spec(ctx, spec)))


WATCH_EXPIRY_S = 45.0   # a client that died without closing its image is dropped after osd_client_watch_timeout (30 s)


def wait_unwatched(ctx: DriverContext, images: Images) -> list[str]:
    """Wait until no client watches the images any more; returns a note when it had to wait.

    rbd bench stopped with SIGINT sometimes exits without closing its image: its watch and exclusive lock
    linger until the OSDs time the watch out, and the next client of the image stalls meanwhile.
    """
    if ctx.dry_run:
        return []
    t0 = time.monotonic()
    while True:
        watched = []
        for spec in images.specs:
            res = ctx.host.run(rbd_argv(ctx, "status", "--format", "json", spec), timeout_s=60)
            try:
                if res.ok and json.loads(res.stdout).get("watchers"):
                    watched.append(spec)
            except ValueError:
                pass
        waited = time.monotonic() - t0
        if not watched:
            return [f"after the test, waited {waited:.0f} s for the image watch of the stopped rbd bench to "
                    "expire"] if waited >= 1 else []
        if waited > WATCH_EXPIRY_S:
            return [f"{', '.join(watched)} still watched after {waited:.0f} s: the next test may stall"]
        time.sleep(1.0)


def remove_images(ctx: DriverContext, images: Images) -> None:
    """Unmap, remove the images, then the pools: now, at the end of the group, not at the end of the run.

    An image in a pool of the group goes with its pool: `rbd rm` of an image still watched by a client that was
    just stopped (Ctrl-C, a timeout) waits out the watch (30 s) for nothing. Its ledger entry then finds the pool
    gone, which counts as removed.
    """
    mine = [r for r in reversed(ctx.ledger.pending())
            if (r.kind == RBD_MAPPING.name and r.name in images.devices) or
            (r.kind == RBD_IMAGE.name and r.name in images.specs)]
    failed = []
    for r in mine:
        if r.kind == RBD_IMAGE.name and r.name.split("/", 1)[0] in images.pools:
            failed.append(r)
            continue
        try:
            ctx.ledger.release_one(r)
        except OperationFailed as exc:
            log.warning("%s %s: %s; it goes with its pool", r.kind, r.name, exc)
            failed.append(r)
    for p in reversed(images.pools):
        remove_pool(ctx, p)
    for r in failed:
        if r.kind == RBD_IMAGE.name:
            ctx.ledger.release_one(r)


def prefill(ctx: DriverContext, test: Test, images: Images) -> None:
    """Sequential 4 MiB writes over the whole of every image, all images at once."""
    raw_dir = ctx.rundir.raw_dir(f"{test.group}-prefill") if ctx.rundir else Path("/nonexistent")
    cmds = [rbd_bench_tool.RbdBenchCommand(spec=s, io_type="write", io_size=PREFILL_IO_SIZE,
                                           io_threads=PREFILL_THREADS, io_pattern="seq", io_total=images.size_bytes)
            for s in images.specs]
    spawns = [Spawn(c.argv(ctx.target.client_args()), raw_dir / f"prefill-img{i}.txt") for i, c in enumerate(cmds)]
    ctx.events.note(f"{test.group}: prefilling {len(cmds)} image(s) of {format_size(images.size_bytes)}")
    # what was watched is not the test's: its own run's is (drivers/instances.py puts it on the Outcome)
    ran = run_instances(ctx, test, [(None, sp) for sp in spawns],
                        run_group_timeout(images.size_bytes / PREFILL_MIN_BYTES_PER_S), live=rbd_bench_tool.live_figures)
    if ran is None:   # dry run
        images.prefilled = True
        return
    results = ran.results
    for r in results:
        _check(r, "prefill (rbd bench write)")
    m = [rbd_bench_tool.parse(r.stdout) for r in results]
    secs = max(x.duration_s for x in m)
    bw = sum(x.bytes_per_s or 0 for x in m)
    images.prefilled = True
    images.notes.append(f"prefilled {len(m)} image(s) of {format_size(images.size_bytes)} with sequential 4MiB "
                        f"writes in {secs:.1f} s ({bw / MIB:.0f} MiB/s)")


def read_guard_warnings(test: Test, images: Images) -> list[str]:
    """A read on images that were not prefilled runs only when the suite asked for it, and is flagged."""
    if reads(test) and not images.prefilled:
        return ["NOT PREFILLED: this read ran on images that were never fully written (read_unprefilled: true); "
                "unallocated extents are answered without touching the disks, so the figures are too high"]
    return []


# ---- krbd ---------------------------------------------------------------------------

def krbd_unavailable(ctx: DriverContext) -> str | None:
    """Why the kernel RBD client cannot be used here, or None when it can."""
    if SYS_BUS_RBD.is_dir():
        return None
    if ctx.host.which("modprobe") is None:
        return "krbd skipped: the rbd kernel module is not loaded (no /sys/bus/rbd) and there is no modprobe"
    if ctx.dry_run:
        ctx.planned.append("modprobe rbd")
        return None
    res = ctx.host.run(["modprobe", "rbd"], timeout_s=30)
    if SYS_BUS_RBD.is_dir():
        return None
    why = res.error_text() if not res.ok else "no /sys/bus/rbd after loading it"
    return f"krbd skipped: the rbd kernel module is not available on this host (modprobe rbd: {why})"


def map_images(ctx: DriverContext, images: Images) -> None:
    """`rbd map` every image; each mapping is in the ledger so that every exit path unmaps it."""
    for spec in images.specs:
        argv = rbd_argv(ctx, "map", spec)
        if ctx.dry_run:
            ctx.planned.append(" ".join(argv))
            images.devices.append("/dev/rbdN")
            continue
        with held():    # the device is known only when `rbd map` returns: an interrupt must not cut it short
            res = _check(ctx.host.run(argv, timeout_s=120), f"rbd map {spec}")
        dev = res.stdout.strip().splitlines()[-1].strip()
        ctx.ledger.add(Resource(RBD_MAPPING.name, dev), lambda dev=dev: unmap_device(ctx, dev))
        images.devices.append(dev)


# ---- preflight: before anything is created ---------------------------------------------

def preflight(cluster: Cluster, tests: list[Test], settings: Settings) -> None:
    """Refuse images that would not fit in their pool, before any pool or image exists.

    Groups run one after the other and each removes its images, so every group
    must fit on its own within the capacity guard (max_raw_used).
    """
    for t in tests:
        p = t.params
        if p.get("client") == "krbd" and p.get("clients") is not None:
            raise UserError("krbd maps images into this machine's kernel only; it does not run on client hosts",
                            "use client: librbd for load from client hosts, or drop clients: from this workload",
                            where=f"workload {t.workload}: clients")
    firsts: dict[str, Test] = {}
    hosts: dict[str, int] = {}
    for t in tests:
        firsts.setdefault(t.group, t)
        # each client host has its own images, a search's (`clients: auto`) every host of its largest step ("all"
        # counts as one here: this check does not know the suite's client list)
        c = t.params.get("clients")
        hosts[t.group] = max(hosts.get(t.group, 1), c if isinstance(c, int) else 1)
    if not firsts:
        return
    total, used = cluster.raw_capacity()
    budget = CapacityBudget(total, used, settings.max_raw_used)
    for t in firsts.values():
        p = t.params
        per = hosts[t.group]
        need = p["images"] * p["image_size"] * per
        free = budget.client_bytes(amplification(p["pool_profile"]))
        if need > free:
            raise UserError(
                f"{p['images'] * per} image(s) of {format_size(p['image_size'])} need {format_size(need)} in pool "
                f"{p['pool']!r}, which has room for {format_size(free)} ({budget.describe()})",
                "use a smaller image_size or fewer images", where=f"workload {t.workload}: image_size")
