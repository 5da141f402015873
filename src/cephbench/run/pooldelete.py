"""`mon_allow_pool_delete`: whether the monitors let a run delete the pools it creates, read before anything is
created, and set for one run (`--allow-pool-delete`) through the ledger and put back exactly as it was.

Ceph's default is false, and most production clusters keep it: a run that creates pools there would leave them
behind. So a run that would create pools is refused before anything changes, naming the two ways out:
`--allow-pool-delete`, or a pool that exists (`pools: {p: {existing: NAME}}`), which the run only writes its own
objects in.

The option is set in the configuration database for `mon`. A value in the monitors' ceph.conf or command line wins
over the database: then they never report true, and the run stops before it creates anything. Its ledger entry is
a variant's (`config-option`, variant_plan.Restore): made before the change, it is the last to go at the run's end
(after the pools), and `cephbench cleanup` or `--resume` puts it back after a kill -9, once the configuration's
history shows nobody changed it since (stale.option_history; cluster/recovery.py keeps it until the run's pools went).

Runs share it as they share the scrub flags: a run that finds it true because another cephbench run set it (that
run's marker says so, with the value to put back) holds it too, and a run's end leaves it true while another run in
progress holds it; the last one puts it back. A run killed with -9 keeps holding it (its marker stays) until its
`cephbench cleanup`, which puts it back once no other run holds it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Iterable

from ..cluster import marker
from ..cluster.ceph import POOL_DELETE_HINT, POOL_DELETE_OPTION as OPTION, Cluster
from ..drivers.base import RunContext
from ..core.errors import OperationFailed, PermissionDenied, UserError
from ..core.interrupts import held
from ..core.resources import CONFIG_OPTION, Resource
from ..core.results import Test
from ..core.stale import config_version, history_state
from ..core.variant_plan import Restore, previous_value, set_argv

log = logging.getLogger(__name__)

WHO = "mon"
VERIFY_TIMEOUT_S = 30.0     # from `config set` until every monitor reports true
POLL_S = 0.5


@dataclass(frozen=True)
class PoolDelete:
    stored: str | None          # the configuration database's own setting for `mon` (None: none)
    running: dict[str, str]     # monitor -> the value it runs with

    @property
    def refusing(self) -> list[str]:
        return [m for m, v in self.running.items() if not is_true(v)]

    @property
    def allowed(self) -> bool:
        return bool(self.running) and not self.refusing


def is_true(value: str) -> bool:
    return value.strip().lower() in ("true", "1", "yes", "on")


def read(cluster: Cluster) -> PoolDelete:
    """What the database holds and what each monitor in quorum runs with. A monitor's value from its ceph.conf, its
    command line or `ceph tell` wins over the database: `config show` (the manager's copy of the monitor's report)
    says where its value comes from. When that is the database or the default, the database's answer for the
    monitor (`config get mon.X`) is the one in force: the report lags a change by seconds."""
    stored = previous_value(cluster.ceph_json("config", "dump") or [], WHO, OPTION)
    mons = [f"mon.{m}" for m in (cluster.status() or {}).get("quorum_names") or []] or [WHO]
    running: dict[str, str] = {}
    for daemon in mons:
        value = _local_value(cluster, daemon) if daemon != WHO else None
        if value is None:
            value = cluster.ceph_ok("config", "get", daemon, OPTION).out.decode(errors="replace").strip()
        running[daemon.removeprefix("mon.")] = value
    return PoolDelete(stored, running)


def _local_value(cluster: Cluster, daemon: str) -> str | None:
    """The value a monitor reports from a source above the database; None when the database decides (or the
    manager has no report of it, or the key may not read it)."""
    try:
        shown = cluster.ceph_json("config", "show", daemon)
    except (OperationFailed, PermissionDenied):
        return None
    entry = next((e for e in shown or [] if isinstance(e, dict) and e.get("name") == OPTION), None)
    if entry is None or str(entry.get("source")) in ("default", "mon"):
        return None
    return str(entry.get("value"))


def creates_pools(tests: Iterable[Test]) -> bool:
    """Whether any of these tests makes a pool (and must delete it): a pool profile that does not name an
    existing pool."""
    return any(isinstance(p, dict) and not p.get("existing") for p in (t.params.pool_profile for t in tests))


def preflight(cluster: Cluster, tests: list[Test], allow: bool) -> None:
    """Refuse (UserError, exit 2) a run that would create pools the monitors refuse to delete, unless
    --allow-pool-delete lets it set the option for the run."""
    if not creates_pools(tests):
        return
    state = read(cluster)
    if state.allowed or allow:
        return
    which = ", ".join(f"mon.{m}" for m in state.refusing) if len(state.running) > 1 else ""
    raise UserError(f"the monitors refuse to delete pools ({OPTION} is false{f' on {which}' if which else ''}), "
                    "and this run creates pools it must delete; nothing was created", POOL_DELETE_HINT)


def holders(ctx: RunContext) -> list[dict]:
    """Other runs in progress that hold the option true for their pools (their markers); none when the markers
    cannot be read (a key without config-key rights: then no run shares it)."""
    try:
        return marker.pool_delete_holders(marker.read_runs(ctx.cluster), ctx.run_id)
    except (OperationFailed, UserError):
        return []


def allow_for_run(ctx: RunContext) -> None:
    """--allow-pool-delete: the option true for the run, its restore in the ledger before the change is sent; the
    run goes on once every monitor runs with it. When they all do already: nothing, unless another cephbench run
    set it for its pools (its marker): then this run holds it too, with the value that run will put back, so that
    whichever ends last puts it back and neither's end takes it from under the other's pool deletions."""
    state = read(ctx.cluster)
    others = [] if ctx.dry_run else holders(ctx)
    if state.allowed and not others:
        return                  # the cluster's own setting: not this run's to change or put back
    previous = others[0]["pool_delete"].get("previous") if others else state.stored
    r = Restore(WHO, OPTION, previous if isinstance(previous, str) else None)
    res = Resource(CONFIG_OPTION, r.encode(), "" if ctx.dry_run else history_state(
        ctx.run_id, set_to="true", config_version_before=config_version(ctx.cluster)))
    argv = set_argv(WHO, OPTION, "true")
    with held():
        ctx.ledger.add(res, lambda: _restore(ctx, r))
        ctx.marker_state.pool_delete = (r.previous,)         # in the marker mark_run sends next
        if state.allowed:
            return              # set by the other run: held, not sent again
        try:
            ctx.change(argv, lambda: ctx.cluster.ceph_ok(*argv[1:]))
        except PermissionDenied as exc:
            ctx.ledger.forget(res)      # refused: nothing to put back
            ctx.marker_state.pool_delete = ()
            raise UserError(f"--allow-pool-delete: the cluster refused '{' '.join(argv)}' to client."
                            f"{ctx.target.id or 'admin'} ({exc.message}); nothing was created",
                            "use a key that may set the configuration (mon 'allow *'), or name a pool that exists "
                            "(pools: {NAME: {existing: POOL}})") from None
    if ctx.dry_run:
        return
    deadline = time.monotonic() + VERIFY_TIMEOUT_S
    while not state.allowed:
        if time.monotonic() > deadline:
            raise UserError(f"--allow-pool-delete: {', '.join(f'mon.{m}' for m in state.refusing)} still run with "
                            f"{OPTION} = false {VERIFY_TIMEOUT_S:g} s after '{' '.join(argv)}'",
                            "a value in the monitors' ceph.conf or command line wins over the configuration "
                            "database: remove it there, or name a pool that exists (pools: {NAME: {existing: POOL}})")
        time.sleep(POLL_S)
        state = read(ctx.cluster)


def _restore(ctx: RunContext, r: Restore) -> None:
    """Put the option back, unless another run in progress still holds it for its pools: that run's end will. Once
    put back, a run that started to hold it meanwhile gets it true again."""
    with held():
        if not ctx.dry_run and holders(ctx):
            log.info("%s left true: another cephbench run holds it for its pools", OPTION)
            return
        ctx.change(r.argv(), lambda: ctx.cluster.ceph_ok(*r.argv()[1:]))
        if not ctx.dry_run and holders(ctx):
            argv = set_argv(WHO, OPTION, "true")
            ctx.change(argv, lambda: ctx.cluster.ceph_ok(*argv[1:]))
