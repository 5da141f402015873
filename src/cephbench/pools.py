"""Benchmark pools: created for a group, registered for cleanup, never anyone else's."""

from __future__ import annotations

from concurrent.futures import wait
from typing import Any

from .drivers.base import RunContext
from .errors import OperationFailed, PermissionDenied
from .interrupts import held
from .mon import MonReply
from .resources import Resource


def failure_domain(ctx: RunContext, profile: dict[str, Any]) -> str:
    return profile.get("failure_domain") or ("osd" if ctx.target.is_lab else "host")


def _ceph(ctx: RunContext, *args: str) -> MonReply | None:
    """A cluster-changing `ceph` command, sent to the mon over the run's connection: run it whole (an interrupt
    waits for it), or in a dry run print it as the command line a user could type (and return None)."""
    def action() -> MonReply:
        with held():
            return ctx.cluster.ceph_ok(*args)
    return ctx.change(["ceph", *args], action)


def _make(ctx: RunContext, resource: Resource, *args: str) -> MonReply | None:
    """A create whose resource is in the ledger already: one the mon refuses (no rights) was never made, and
    cleanup must not try (and fail) to remove it."""
    try:
        return _ceph(ctx, *args)
    except PermissionDenied:
        ctx.ledger.forget(resource)
        raise


def _create(ctx: RunContext, name: str, *args: str) -> None:
    """`ceph osd pool create NAME ...`, which succeeds on an existing pool saying so: never adopt what we did not
    create. The mon's answer decides, with no read before it (a read would wait for the changes in flight, such
    as the scrub flags, which this create is meant to join in one osdmap commit)."""
    pool = Resource("pool", name)
    reply = _make(ctx, pool, "osd", "pool", "create", name, *args)
    if reply is not None and "already exists" in reply.status:
        ctx.ledger.forget(pool)
        raise OperationFailed(f"pool {name} already exists; cephbench will not use a pool it did not create")


def create_pool(ctx: RunContext, name: str, profile: dict[str, Any], application: str = "rados") -> str:
    c = ctx.cluster
    pg = str(profile["pg_num"])
    # Size and autoscale mode at creation: each separate command costs a mon round trip (an osdmap epoch).
    # Each pool and profile is in the ledger before it is created, so that no exit path can miss it;
    # removing one that was never made is not an error.
    if profile["type"] == "replicated":
        _register_pool(ctx, name)
        _create(ctx, name, pg, pg, "replicated", f"--size={profile['size']}", "--autoscale-mode=off")
        if profile.get("min_size"):
            _ceph(ctx, "osd", "pool", "set", name, "min_size", str(profile["min_size"]))
    else:
        ec = f"{name}-ec"
        fd = failure_domain(ctx, profile)
        ctx.ledger.add(Resource("ec-profile", ec),
                       lambda: ctx.change(["ceph", "osd", "erasure-code-profile", "rm", ec],
                                          lambda: c.delete_ec_profile(ec)))
        _make(ctx, Resource("ec-profile", ec), "osd", "erasure-code-profile", "set", ec, f"k={profile['k']}",
              f"m={profile['m']}", f"plugin={profile['plugin']}", f"crush-failure-domain={fd}")
        _register_pool(ctx, name)
        _create(ctx, name, pg, pg, "erasure", ec, "--autoscale-mode=off")
    enable = ("osd", "pool", "application", "enable", name, application)
    if ctx.dry_run:
        _ceph(ctx, *enable)
        return name
    # The tag is one more osdmap commit (~1 s: the mon makes one per paxos_propose_interval) that the PGs need not
    # wait for: it is sent while they peer. Not held against signals: the pool is in the ledger, and a tag half
    # made goes with it; but never left in flight.
    (tagged,) = c.send(enable)
    try:
        c.wait_active_clean(timeout_s=300)
    except OperationFailed as exc:
        raise OperationFailed(f"pool {name}: {exc}") from exc
    finally:
        wait([tagged])
    tagged.result()
    return name


def _register_pool(ctx: RunContext, name: str) -> None:
    ctx.ledger.add(Resource("pool", name),
                   lambda: ctx.change(["ceph", "osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it"],
                                      lambda: ctx.cluster.delete_pool(name)))


def remove_pool(ctx: RunContext, name: str) -> None:
    """Remove a pool this run created (and its EC profile) now, not at the end of the run."""
    for r in reversed(ctx.ledger.pending()):
        if r.name in (name, f"{name}-ec"):
            ctx.ledger.release_one(r)
