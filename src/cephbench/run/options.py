"""A suite's variants on a cluster: every option checked against `ceph config help` before the run changes
anything, a variant applied (`ceph config set`) and verified (every daemon of its target reports the value,
`ceph config show`) before the tests that use it, and every option put back as it was through the run's ledger.

Two runs that change one option would undo each other: the second records the first's value as the one to put
back (and puts it back after the first removed it), and the first's restore changes the second's variant in the
middle of its tests. So the options a run's variants change are in its marker (cluster/marker.py), and a run that finds
one of them in another run's marker is refused before anything changes (claim_options).

The pure part (order, value checks, restore commands, the ledger record) is in core/variant_plan.py.
"""

from __future__ import annotations

import logging
import math
import random
import time
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..cluster import marker
from ..cluster.ceph import Cluster
from ..suite.config import Settings, Suite
from ..drivers.base import RunContext
from ..core.errors import OperationFailed, PermissionDenied, UserError
from ..core.interrupts import held
from ..core.resources import CONFIG_OPTION, Resource
from ..core.results import OptionInForce, Test, VariantInForce
from ..core.stale import config_version, history_state
from ..core.variant_plan import (OptionSpec, Restore, VariantSpec, checked_value, close_name, daemon_type,
                                 is_one_daemon, needs_restart, previous_value, set_argv, split_who, switch)

log = logging.getLogger(__name__)

VERIFY_TIMEOUT_S = 30.0     # from `config set` until every daemon reports the value (or a restarted OSD is back)
POLL_S = 0.5
CLAIM_TRIES = 3             # runs that claim one option at the same instant both step back, then try again ...
CLAIM_BACKOFF_S = (0.2, 1.5)    # ... each after its own random pause, so that one of them gets it


class VariantFailed(Exception):
    """A variant could not be put in force: each of its tests fails with this line."""


# ---- before anything changes ---------------------------------------------------------------------------------

def option_help(cluster: Cluster, name: str) -> dict[str, Any] | None:
    """`ceph config help NAME -f json`; None when Ceph has no such option."""
    try:
        h = cluster.ceph_json("config", "help", name)
    except OperationFailed as exc:
        if "ENOENT" in str(exc):
            return None
        raise
    return h if isinstance(h, dict) else None


def check(cluster: Cluster, suite: Suite, is_lab: bool) -> dict[str, dict[str, Any]]:
    """Every option of every variant against Ceph's own description of it, before the run changes anything:
    UserError (exit 2) naming the YAML path for an option that does not exist, a value it refuses, or one that
    needs a restart the suite does not allow. Returns each option's description."""
    helps: dict[str, dict[str, Any]] = {}
    known: list[str] | None = None
    for spec in suite.variant_specs():
        for opt in spec.options:
            if opt.name not in helps:
                h = option_help(cluster, opt.name)
                if h is None:
                    if known is None:
                        known = [str(n) for n in cluster.ceph_json("config", "ls") or []]
                    raise UserError(f"Ceph has no option {opt.name!r}{close_name(opt.name, known)}",
                                    "'ceph config ls' lists them", where=f"{opt.path}.name")
                helps[opt.name] = h
            try:
                checked_value(helps[opt.name], opt.value)
            except ValueError as exc:
                raise UserError(str(exc), f"'ceph config help {opt.name}' describes it",
                                where=spec.value_path(opt)) from None
            if needs_restart(helps[opt.name]):
                _check_restart(opt.name, opt.who, f"{opt.path}.name", suite.settings, is_lab)
    return helps


def _check_restart(name: str, who: str, where: str, settings: Settings, is_lab: bool) -> None:
    what = f"{name} is read only when a daemon starts"
    if not settings.variant_restarts:
        raise UserError(f"{what}, and this suite does not allow restarts",
                        "use an option that changes at runtime; on the lab, settings.variant_restarts: true lets "
                        "cephbench restart the lab's OSDs for it", where=where)
    if not is_lab:
        raise UserError(f"{what}, and cephbench restarts daemons only on its own lab",
                        "restart the daemons yourself between runs, or use an option that changes at runtime",
                        where=where)
    if daemon_type(who) != "osd":
        raise UserError(f"{what}, and cephbench restarts only the lab's OSDs, not {who}",
                        "give it for osd (who: osd)", where=where)


def claim_options(ctx: RunContext, wanted: dict[tuple[str, str], OptionSpec], sent: Sequence[Future],
                  pause: Callable[[float], None] = time.sleep) -> None:
    """The run's variants' options are in its marker (`sent`, mark_run's write); once it landed, the others'
    markers are read. An option another run changes too is refused (UserError, exit 2) before anything changes.
    Written first, then read, as the capacity reservation (RunContext.reserve_write): of two runs that claim at
    once, at least one sees the other, so they never both go on. Both may see each other: both step back (their
    markers without options), and each looks again after a random pause; one whose rival stepped back claims
    again, one whose rival holds the option is refused."""
    wait(sent)
    names = {name for _, name in wanted}
    clash = _others(ctx, names)
    for _ in range(CLAIM_TRIES - 1):
        if not clash:
            return
        ctx.marker_state.options = ()
        ctx.write_marker()
        wait_s = random.uniform(*CLAIM_BACKOFF_S)
        log.info("%s claims %s too: stepping back for %.2f s", marker.describe(clash[0][0]), clash[0][2], wait_s)
        pause(wait_s)
        clash = _others(ctx, names)
        if clash:
            break               # it holds the option (or claimed it again first): it keeps it
        ctx.marker_state.options = tuple(wanted)
        ctx.write_marker()
        clash = _others(ctx, names)
    if not clash:
        return
    if ctx.marker_state.options:
        ctx.marker_state.options = ()
        ctx.write_marker()
    run, who, name = clash[0]
    opt = next(o for k, o in wanted.items() if k[1] == name)
    raise UserError(f"{marker.describe(run)} changes {name} ({who}) on this cluster, and two runs that change one "
                    "option undo each other's variant",
                    "run this suite after it ends; if it died, 'cephbench cleanup "
                    f"{run.get('run_dir') or 'RUN_DIR'}' puts the option back", where=f"{opt.path}.name")


def _others(ctx: RunContext, names: set[str]) -> list[tuple[dict[str, Any], str, str]]:
    try:
        return marker.options_of_others(marker.read_runs(ctx.cluster), ctx.run_id, names)
    except (OperationFailed, UserError) as exc:     # a key that may not read config-keys: as the capacity guard
        log.warning("other runs' variant options unknown (config-key dump): %s", exc)
        return []


# ---- during the run ------------------------------------------------------------------------------------------

@dataclass
class VariantState:
    """The run's variants on the cluster: what this run has set, what each option was before, the variant in
    force and what its daemons reported."""

    ctx: RunContext
    specs: dict[str, VariantSpec]
    helps: dict[str, dict[str, Any]] = field(default_factory=dict)
    current: str | None = None
    applied: dict[tuple[str, str], str] = field(default_factory=dict)      # (who, name) -> value this run set
    originals: dict[tuple[str, str], Restore] = field(default_factory=dict)
    in_force: dict[str, VariantInForce] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    @classmethod
    def for_suite(cls, ctx: RunContext, suite: Suite) -> "VariantState":
        return cls(ctx, {s.name: s for s in suite.variant_specs()})

    @property
    def cluster(self) -> Cluster:
        return self.ctx.cluster

    def options(self, tests: Sequence[Test]) -> dict[tuple[str, str], OptionSpec]:
        """Every option the variants of these tests change, once each: what the run's marker claims."""
        used = {t.variant for t in tests}
        return {o.key: o for name, spec in self.specs.items() if name in used for o in spec.options}

    def enter(self, name: str) -> VariantInForce:
        """Put variant `name` in force (from whatever is in force now) and return what the daemons run with;
        VariantFailed when it cannot be: a daemon that does not report it, a change the cluster refused."""
        if name in self.failed:
            raise VariantFailed(self.failed[name])
        if name == self.current:
            return self.in_force[name]
        self.current = None
        try:
            record = self._switch(self.specs[name])
        except VariantFailed as exc:
            self.failed[name] = str(exc)
            raise
        except PermissionDenied:
            raise
        except (OperationFailed, UserError) as exc:
            msg = f"variant {name}: {exc.one_line() if isinstance(exc, UserError) else exc}"
            self.failed[name] = msg
            raise VariantFailed(msg) from None
        self.current = name
        self.in_force[name] = record
        return record

    def _help(self, name: str) -> dict[str, Any]:
        if name not in self.helps:
            self.helps[name] = option_help(self.cluster, name) or {"name": name}
        return self.helps[name]

    def _switch(self, spec: VariantSpec) -> VariantInForce:
        target = {opt.key: checked_value(self._help(opt.name), opt.value) for opt in spec.options}
        back, to_set = switch(self.applied, target)
        dump = self.cluster.ceph_json("config", "dump") if any(k not in self.originals for k in to_set) else []
        restart = False
        for key in back:                        # an option of the previous variant that this one leaves alone
            r = self.originals[key]
            with held():
                self._restore(r)
                self.ctx.ledger.forget(Resource(CONFIG_OPTION, r.encode()))
                del self.applied[key]
            restart = restart or r.restart
        for key in to_set:
            who, name = key
            if key not in self.originals:
                self.originals[key] = Restore(who, name, previous_value(dump, who, name),
                                              restart=needs_restart(self._help(name)))
            r = self.originals[key]
            res = Resource(CONFIG_OPTION, r.encode())
            if res not in self.ctx.ledger.pending() and not self.ctx.dry_run:
                # where the configuration's history stood: what tells cleanup the option is still the run's
                res = Resource(res.kind, res.name, history_state(self.ctx.run_id, set_to=target[key],
                                                                 config_version_before=config_version(self.cluster)))
            with held():                        # the restore is in the ledger before the change is sent
                if res not in self.ctx.ledger.pending():
                    self.ctx.ledger.add(res, lambda r=r: self._restore(r, at_end=True))
                elif not self.ctx.dry_run:      # each value the run sets: cleanup undoes only one of them
                    self.ctx.ledger.record_value(res, "set_to", target[key])
                argv = set_argv(who, name, target[key])
                self.ctx.change(argv, lambda argv=argv: self.cluster.ceph_ok(*argv[1:]))
                self.applied[key] = target[key]
            restart = restart or r.restart
        if restart and not self.ctx.dry_run:
            if self.ctx.restart_lab_osds is None:       # the preflight refuses this: a lab is gone?
                raise VariantFailed(f"variant {spec.name}: an option needs the OSDs restarted and the target is "
                                    "not a lab")
            log.info("variant %s: restarting the lab's OSDs", spec.name)
            self.ctx.restart_lab_osds()
        return self._verify(spec, target)

    def _restore(self, r: Restore, at_end: bool = False) -> None:
        """One option back to what it was; the lab's OSDs restarted when it is read only at start (at the run's
        end; between variants the next variant's restart follows)."""
        with held():
            self.ctx.change(r.argv(), lambda: self.cluster.ceph_ok(*r.argv()[1:]))
        if at_end and r.restart and not self.ctx.dry_run and self.ctx.restart_lab_osds is not None:
            self.ctx.restart_lab_osds()

    def _verify(self, spec: VariantSpec, target: dict[tuple[str, str], str]) -> VariantInForce:
        """Every daemon of each option's target reports the value the configuration database now holds."""
        options = []
        if self.ctx.dry_run:
            return VariantInForce(name=spec.name, options=[
                OptionInForce(who=o.who, name=o.name, value=target[o.key], previous=self.originals[o.key].previous,
                              note="dry run: not applied") for o in spec.options])
        dump = self.cluster.ceph_json("config", "dump") if spec.options else []
        deadline = time.monotonic() + VERIFY_TIMEOUT_S
        for opt in spec.options:
            stored = previous_value(dump, opt.who, opt.name)
            expected = stored if stored is not None else target[opt.key]
            daemons, note = self._daemons(opt.who, opt.name, expected)
            reported = self._wait_reported(daemons, opt.name, expected, deadline)
            wrong = [d for d in daemons if not same_value(reported.get(d), expected)]
            if wrong:
                d = wrong[0]
                raise VariantFailed(
                    f"variant {spec.name}: {d} runs with {opt.name} = {reported.get(d) or '(nothing reported)'}, "
                    f"not {expected}, {VERIFY_TIMEOUT_S:g} s after 'ceph config set {opt.who} {opt.name} "
                    f"{target[opt.key]}'" + (f" ({len(wrong)} daemons)" if len(wrong) > 1 else "")
                    + "; a value in the daemon's ceph.conf or command line, or a setting for a narrower target, "
                    f"wins over it: see 'ceph config show {d}'")
            options.append(OptionInForce(who=opt.who, name=opt.name, value=expected,
                                         previous=self.originals[opt.key].previous, reported=reported, note=note))
        return VariantInForce(name=spec.name, options=options)

    def _wait_reported(self, daemons: list[str], name: str, expected: str, deadline: float) -> dict[str, str]:
        reported: dict[str, str] = {}
        pending = list(daemons)
        while True:
            for d in list(pending):
                value = self._shown(d, name)
                if value is not None:
                    reported[d] = value
                if same_value(value, expected):
                    pending.remove(d)
            if not pending or time.monotonic() > deadline:
                return reported
            time.sleep(POLL_S)

    def _shown(self, daemon: str, name: str) -> str | None:
        """What a daemon reports it runs with (`ceph config show`: the mgr's copy of its report); None when the
        mgr has no report of it (yet)."""
        try:
            return self.cluster.ceph_ok("config", "show", daemon, name).out.decode(errors="replace").strip()
        except OperationFailed:
            return None

    def _daemons(self, who: str, name: str, expected: str) -> tuple[list[str], str | None]:
        """The daemons that must report the option, and a note on those not asked."""
        t = daemon_type(who)
        if is_one_daemon(who):
            if t in ("osd", "mon", "mgr"):
                return [split_who(who)[0]], None
            return [], f"{who} not asked (cephbench asks OSDs, monitors and managers); it reads the option from " \
                       "the monitors when it starts"
        if t not in ("osd", "mon", "global"):
            return [], f"the {t} daemons are not asked (cephbench asks OSDs and monitors); a client reads the " \
                       "option when it starts, as every tool cephbench starts afterwards does"
        names: list[str] = []
        note = None
        if t in ("osd", "global"):
            osds = (self.cluster.ceph_json("osd", "dump") or {}).get("osds", [])
            names += [f"osd.{o['osd']}" for o in osds if o.get("up")]
            down = [f"osd.{o['osd']}" for o in osds if not o.get("up")]
            if down:
                note = f"{', '.join(down)} down, not asked"
        if t in ("mon", "global"):
            names += [f"mon.{m}" for m in (self.cluster.status() or {}).get("quorum_names", [])]
        if split_who(who)[1]:                   # a mask: the daemons the monitors give this value
            names = [d for d in names if same_value(self._mon_value(d, name), expected)]
        return names, note

    def _mon_value(self, daemon: str, name: str) -> str | None:
        try:
            return self.cluster.ceph_ok("config", "get", daemon, name).out.decode(errors="replace").strip()
        except OperationFailed:
            return None


def same_value(reported: str | None, expected: str) -> bool:
    """A daemon's value equals the stored one: as text, or as numbers (0.5 and 0.500000)."""
    if reported is None:
        return False
    if reported == expected:
        return True
    try:
        a, b = float(reported), float(expected)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def restore_recorded(ctx: RunContext, name: str) -> None:
    """What a run that died left (a ledger record): the option back as it was, and the lab's OSDs restarted when
    the option is read only at start."""
    r = Restore.decode(name)
    ctx.cluster.ceph_ok(*r.argv()[1:])
    if r.restart:
        if ctx.restart_lab_osds is not None:
            ctx.restart_lab_osds()
        else:
            log.warning("%s restored in the configuration; the OSDs run with the variant's value until they restart",
                        r.name)
