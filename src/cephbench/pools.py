"""Benchmark pools: created for a group, registered for cleanup, never anyone else's."""

from __future__ import annotations

from typing import Any

from .drivers.base import RunContext
from .errors import OperationFailed
from .resources import Resource


def failure_domain(ctx: RunContext, profile: dict[str, Any]) -> str:
    return profile.get("failure_domain") or ("osd" if ctx.target.is_lab else "host")


def create_pool(ctx: RunContext, name: str, profile: dict[str, Any], application: str = "rados") -> str:
    c = ctx.cluster
    if not ctx.dry_run and name in c.pool_names():
        # `ceph osd pool create` succeeds on an existing pool: never adopt what we did not create
        raise OperationFailed(f"pool {name} already exists; cephbench will not use a pool it did not create")
    pg = str(profile["pg_num"])
    base = ["ceph", "osd", "pool"]
    if profile["type"] == "replicated":
        ctx.change([*base, "create", name, pg, pg, "replicated"],
                   lambda: c.ceph_ok("osd", "pool", "create", name, pg, pg, "replicated"))
        _register_pool(ctx, name)
        ctx.change([*base, "set", name, "size", str(profile["size"]), "--yes-i-really-mean-it"],
                   lambda: c.ceph_ok("osd", "pool", "set", name, "size", str(profile["size"]),
                                     "--yes-i-really-mean-it"))
        if profile.get("min_size"):
            ctx.change([*base, "set", name, "min_size", str(profile["min_size"])],
                       lambda: c.ceph_ok("osd", "pool", "set", name, "min_size", str(profile["min_size"])))
    else:
        ec = f"{name}-ec"
        fd = failure_domain(ctx, profile)
        ctx.change(["ceph", "osd", "erasure-code-profile", "set", ec, f"k={profile['k']}", f"m={profile['m']}",
                    f"plugin={profile['plugin']}", f"crush-failure-domain={fd}"],
                   lambda: c.create_ec_profile(ec, profile["k"], profile["m"], profile["plugin"], fd))
        ctx.ledger.add(Resource("ec-profile", ec),
                       lambda: ctx.change(["ceph", "osd", "erasure-code-profile", "rm", ec],
                                          lambda: c.delete_ec_profile(ec)))
        ctx.change([*base, "create", name, pg, pg, "erasure", ec],
                   lambda: c.ceph_ok("osd", "pool", "create", name, pg, pg, "erasure", ec))
        _register_pool(ctx, name)
    ctx.change([*base, "set", name, "pg_autoscale_mode", "off"],
               lambda: c.ceph_ok("osd", "pool", "set", name, "pg_autoscale_mode", "off"))
    ctx.change([*base, "application", "enable", name, application],
               lambda: c.ceph_ok("osd", "pool", "application", "enable", name, application))
    if not ctx.dry_run:
        try:
            c.wait_active_clean(timeout_s=300)
        except OperationFailed as exc:
            raise OperationFailed(f"pool {name}: {exc}") from exc
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
