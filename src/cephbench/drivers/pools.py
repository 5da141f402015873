"""Benchmark pools: created for a group, registered for cleanup, never anyone else's.

A pool the suite names as existing (`pools: {p: {existing: NAME}}`) is used as it is: never created, changed or
deleted. Its type and size are read at preflight (resolve_existing), and the run's objects go in a RADOS namespace
of the run's own name (drivers/rados_namespace.py: the resource of the kinds whose objects may go there).
"""

from __future__ import annotations

import logging
from concurrent.futures import wait
from typing import Any, Sequence

from ..cluster.ceph import Cluster
from .base import DriverContext
from ..core.errors import OperationFailed, PermissionDenied, UserError
from ..core.interrupts import held
from ..hosts.mon import MonReply
from ..core.resources import Resource
from ..core.results import Test

log = logging.getLogger(__name__)


def failure_domain(ctx: DriverContext, profile: dict[str, Any]) -> str:
    return profile.get("failure_domain") or ("osd" if ctx.target.is_lab else "host")


def _ceph(ctx: DriverContext, *args: str) -> MonReply | None:
    """A cluster-changing `ceph` command, sent to the mon over the run's connection: run it whole (an interrupt
    waits for it), or in a dry run print it as the command line a user could type (and return None)."""
    def action() -> MonReply:
        with held():
            return ctx.cluster.ceph_ok(*args)
    return ctx.change(["ceph", *args], action)


def _make(ctx: DriverContext, resource: Resource, *args: str) -> MonReply | None:
    """A create whose resource is in the ledger already: one the mon refuses (no rights) was never made, and
    cleanup must not try (and fail) to remove it."""
    try:
        return _ceph(ctx, *args)
    except PermissionDenied:
        ctx.ledger.forget(resource)
        raise


def _create(ctx: DriverContext, name: str, *args: str) -> None:
    """`ceph osd pool create NAME ...`, which succeeds on an existing pool saying so: never adopt what we did not
    create. The mon's answer decides, with no read before it (a read would wait for the changes in flight, such
    as the scrub flags, which this create is meant to join in one osdmap commit).

    The monitors answer a create of a pool they already have this way so that a command sent twice does no harm,
    and the monitor client does send a command again: those still unanswered when its session to the monitors is
    reset (a busy monitor, a lost connection). So an "already exists" for a name carrying this run's id (a fresh
    random one, which its marker on the cluster holds: the proof `cleanup` goes by) is this run's own create
    answered the second time: the pool stays in the ledger and is used. Any other name is refused."""
    pool = Resource("pool", name)
    reply = _make(ctx, pool, "osd", "pool", "create", name, *args)
    if reply is not None and "already exists" in reply.status:
        if name.startswith(ctx.name("")):      # "cephbench-<run id>-": the run's own names (ctx.name)
            log.warning("the monitors say pool %s already exists: this run's own create, answered again after the "
                        "monitor client resent it; using it", name)
            return
        ctx.ledger.forget(pool)
        raise OperationFailed(f"pool {name} already exists; cephbench will not use a pool it did not create")


def create_pool(ctx: DriverContext, name: str, profile: dict[str, Any], application: str = "rados") -> str:
    """A pool of the run's own, named `name`; the pool itself for a profile that names an existing pool."""
    if profile.get("existing"):
        return str(profile["existing"])
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
        c.wait_active_clean(timeout_s=300, pool=name)
    except OperationFailed as exc:
        raise OperationFailed(f"pool {name}: {exc}") from exc
    finally:
        wait([tagged])
    tagged.result()
    return name


def _register_pool(ctx: DriverContext, name: str) -> None:
    ctx.ledger.add(Resource("pool", name),
                   lambda: ctx.change(["ceph", "osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it"],
                                      lambda: ctx.cluster.delete_pool(name)))


def remove_pool(ctx: DriverContext, name: str) -> None:
    """Remove a pool this run created (and its EC profile) now, not at the end of the run; an existing pool is
    never removed (the run's namespace in it: drivers/rados_namespace.py release_namespaces)."""
    for r in reversed(ctx.ledger.pending()):
        if r.kind in ("pool", "ec-profile") and r.name in (name, f"{name}-ec"):
            ctx.ledger.release_one(r)


# ---- a pool that exists ------------------------------------------------------------------------------------

def resolve_existing(cluster: Cluster, tests: Sequence[Test]) -> list[Test]:
    """The tests with each existing pool's profile as the cluster has it (type, size or k+m, pg_num: what the
    capacity guard and the model read), beside its name; UserError (exit 2) for a pool that does not exist."""
    wanted = {t.params["pool"]: t.params["pool_profile"]["existing"] for t in tests
              if isinstance(t.params.pool_profile, dict) and t.params["pool_profile"].get("existing")}
    if not wanted:
        return list(tests)
    detail = {str(p.get("pool_name")): p for p in cluster.ceph_json("osd", "pool", "ls", "detail") or []}
    profiles: dict[str, dict[str, Any]] = {}
    for key, name in wanted.items():
        if name not in detail:
            raise UserError(f"pool {name!r} does not exist on this cluster; nothing was created",
                            "name a pool 'ceph osd pool ls' lists, or remove existing to have cephbench create one",
                            where=f"pools.{key}.existing")
        profiles[key] = {**_profile_of(cluster, detail[name]), "existing": name}
    return [t.with_params({**t.params, "pool_profile": profiles[t.params["pool"]]})
            if t.params.get("pool") in profiles else t for t in tests]


def _profile_of(cluster: Cluster, d: dict[str, Any]) -> dict[str, Any]:
    """`osd pool ls detail`'s entry of a pool -> a pool profile of the suite's schema."""
    if d.get("erasure_code_profile") and int(d.get("type") or 1) == 3:
        ec = cluster.ceph_json("osd", "erasure-code-profile", "get", str(d["erasure_code_profile"])) or {}
        return {"type": "erasure", "k": int(ec.get("k", 2)), "m": int(ec.get("m", 1)),
                "plugin": ec.get("plugin", "jerasure"), "pg_num": int(d.get("pg_num") or 0),
                "failure_domain": ec.get("crush-failure-domain"),
                "allow_ec_overwrites": "ec_overwrites" in str(d.get("flags_names", ""))}
    return {"type": "replicated", "size": int(d.get("size") or 3), "min_size": d.get("min_size"),
            "pg_num": int(d.get("pg_num") or 0)}
