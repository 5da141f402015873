"""The run's RADOS namespace in a pool it did not create (`pools: {p: {existing: NAME}}`): the objects of a kind
whose objects may go there (its KIND.existing_pools: rados bench) go in a namespace of the run's own name, so that
what the run wrote, and only that, is removed, even after a kill -9 cut a write short (rados bench then leaves no
record of its objects). Its ledger entry, proof and order are kinds/rados_bench.py's RADOS_NAMESPACE."""

from __future__ import annotations

from typing import Any

from ..core.errors import OperationFailed
from ..core.resources import Resource
from ..hosts.local import LocalHost
from ..kinds.rados_bench import RADOS_NAMESPACE
from .base import DriverContext


def own_namespace(ctx: DriverContext, pool: str, profile: dict[str, Any], name: str) -> str | None:
    """In an existing pool, the RADOS namespace `name` (the run's) that the group's objects go in, in the ledger
    before anything is written there; None in a pool of the run's own (deleted whole)."""
    if not profile.get("existing"):
        return None
    args = ctx.target.client_args()
    ctx.ledger.add(Resource(RADOS_NAMESPACE.name, f"{pool}/{name}"),
                   lambda: ctx.change(namespace_argv([], pool, name, "cleanup", "--prefix", "benchmark_data"),
                                      lambda: remove_namespace(ctx.host, args, pool, name)))
    return name


def release_namespaces(ctx: DriverContext, pool: str) -> None:
    """Remove the run's namespaces in an existing pool now, not at the end of the run."""
    for r in reversed(ctx.ledger.pending()):
        if r.kind == RADOS_NAMESPACE.name and r.name.rsplit("/", 1)[0] == pool:
            ctx.ledger.release_one(r)


def namespace_argv(client_args: list[str], pool: str, namespace: str, *args: str) -> list[str]:
    return ["rados", *client_args, "-p", pool, "-N", namespace, *args]


def remove_namespace_entry(ctx: DriverContext, entry: Resource) -> None:
    """RADOS_NAMESPACE's remover (kinds/rados_bench.py): its ledger entry names "<pool>/<namespace>"."""
    remove_namespace(ctx.host, ctx.target.client_args(), *entry.name.rsplit("/", 1))


def remove_namespace(host: LocalHost, client_args: list[str], pool: str, namespace: str) -> None:
    """Every object in the run's namespace of a pool it did not create: rados bench's data objects (removed in
    parallel by its own cleanup), then what else is there (its runs' metadata objects). A pool that is gone took
    them with it."""
    res = host.run(namespace_argv(client_args, pool, namespace, "cleanup", "--prefix", "benchmark_data"),
                   timeout_s=900)
    if not res.ok and "No such file or directory" in res.stderr and "error opening pool" in res.stderr:
        return
    _check(res, f"rados -p {pool} -N {namespace} cleanup")
    listed = host.run(namespace_argv(client_args, pool, namespace, "ls"), timeout_s=300)
    _check(listed, f"rados -p {pool} -N {namespace} ls")
    names = [n for n in listed.stdout.splitlines() if n]
    for i in range(0, len(names), 200):
        _check(host.run(namespace_argv(client_args, pool, namespace, "rm", *names[i:i + 200]), timeout_s=300),
               f"rados -p {pool} -N {namespace} rm")


def _check(res: Any, what: str) -> None:
    if not res.ok:
        raise OperationFailed(f"{what} failed: {(res.stderr or res.stdout).strip()[-300:]}")
