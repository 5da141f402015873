"""Executes a Plan: preflight, groups in order, one result line per finished test, cleanup always."""

from __future__ import annotations

import logging
import signal
import time
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from itertools import groupby
from typing import Callable, Iterator, Protocol, Sequence

from ..cluster.ceph import Cluster
from ..evidence.rounds import ClusterSeen
from ..drivers.base import Events, Outcome, RunContext
from ..drivers.registry import DRIVERS, PREFLIGHT
from ..drivers.rbd_images import DEFAULT_METADATA_PROFILE
from ..core.errors import OperationFailed, PermissionDenied, UserError
from ..hosts.local import LocalHost
from ..cluster import limits, marker
from . import pooldelete
from ..core.interrupts import held, shielded, sigterm_interrupts
from ..suite.plan import Plan, drops_caches
from ..core.resources import CONFIG_OPTION, Resource
from ..analysis import RunAnalyzer, RunFacts
from ..evidence import otherload
from ..evidence.settings import scheduler_of
from ..evidence.prometheus import Prometheus
from ..hosts.remote import check_osd_hosts
from ..cluster.osd_hosts import osd_hosts
from ..core.results import Result, RunDir, Test, VariantInForce
from ..kinds import PLUGINS, direction_of
from ..core.stale import history_state
from ..cluster.safety import ScrubFlags, preflight_health
from .options import VariantFailed, VariantState, check as check_variants, claim_options

log = logging.getLogger(__name__)


class RunEvents(Events, Protocol):
    def test_finished(self, result: Result) -> None: ...
    def cleanup(self, left: list[Resource], failures: list[tuple[Resource, str]]) -> None: ...


@dataclass
class RunOptions:
    force: bool = False
    keep: bool = False
    dry_run: bool = False
    allow_pool_delete: bool = False     # --allow-pool-delete: mon_allow_pool_delete set for the run (run/pooldelete.py)


@dataclass
class RunSummary:
    results: list[Result] = field(default_factory=list)
    interrupted: bool = False
    left_behind: list[Resource] = field(default_factory=list)
    planned: list[str] = field(default_factory=list)
    lost: str | None = None          # the cluster stopped answering: why the run ended early
    cleanup_failed: list[tuple[Resource, str]] = field(default_factory=list)   # removals that failed or were refused

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r.status == "failed")


def pending_tests(plan: Plan, done: list[Result]) -> list[Test]:
    """Tests with no result yet. Matched by id AND parameters, so every combination counts on its own. A test that
    stands for tests known only at run time (a network baseline between `osd-hosts`) is done once one of them is
    (`part_of`): a resumed run keeps what it measured rather than measure it twice."""
    finished = {(r.test.id, r.test.match_key()) for r in done}
    parts = {r.test.params.part_of for r in done}
    return [t for t in plan.tests if (t.id, t.match_key()) not in finished and t.id not in parts]


def to_result(o: Outcome) -> Result:
    status = "ok" if o.measurement is not None and not o.error else ("skipped" if o.skipped else "failed")
    return Result(test=o.test, status=status, error=o.error, started_unix=o.started_unix, duration_s=o.duration_s,
                  commands=o.commands, raw=o.raw, measurement=o.measurement, notes=o.notes,
                  warnings=o.warnings, search_stop=o.search_stop)


def own_ops_out(result: Result) -> None:
    """A test in an existing pool (`pools: {p: {existing: NAME}}`) writes its objects there, in a namespace of the
    run's: that pool's client counters count the run's own ops beside other clients'. Other clients are what is left
    of it after the test's own (its tool's totals) are taken out (issue 35: every such result was marked as loaded by
    other clients, and the report had no cluster results)."""
    ev, m = result.evidence, result.measurement
    profile = result.test.params.pool_profile
    if ev is None or ev.other_load is None or m is None or not isinstance(profile, dict) or not profile.get("existing"):
        return
    duration = m.duration_s or 0.0
    nbytes = m.bytes_total if m.bytes_total is not None else (m.bytes_per_s or 0.0) * duration
    ops = m.ops_total if m.ops_total is not None else (m.ops_per_s or 0.0) * duration
    pool = ev.other_load.by_pool.get(str(profile["existing"]), {})
    direction = direction_of(result.test.kind, result.test.params.phase, m.op)
    if direction == "write":
        read_share = 0.0
    elif direction == "read":
        read_share = 1.0
    else:       # mixed: its bytes split as the pool's were
        rw = pool.get("read_bytes_per_s", 0.0) + pool.get("write_bytes_per_s", 0.0)
        read_share = pool.get("read_bytes_per_s", 0.0) / rw if rw else 0.5
    ev.other_load = otherload.without_own(ev.other_load, str(profile["existing"]), nbytes * read_share,
                                          nbytes * (1 - read_share), ops)


def preflight(cluster: Cluster, plan: Plan, force: bool, allow_pool_delete: bool = False) -> dict:
    """Everything that can refuse the run, before anything on the cluster changes."""
    status = cluster.check_reachable()
    preflight_health(status, force)
    if plan.suite.settings.prometheus:
        Prometheus(plan.suite.settings.prometheus).check()
    pooldelete.preflight(cluster, plan.tests, allow_pool_delete)
    if plan.suite.variants:
        check_variants(cluster, plan.suite, cluster.target.is_lab)     # every option, before anything changes
    osd_up = int(status.get("osdmap", {}).get("num_up_osds", status.get("osdmap", {}).get("osdmap", {})
                                                .get("num_up_osds", 0)))
    shaped = {v.name for v in plan.suite.variant_specs() if v.lab is not None}
    hosts = replica_hosts(cluster)
    for t in plan.tests:
        profile = t.params.pool_profile
        if profile and not profile.get("existing") and t.variant not in shaped:    # a lab shape's: suite/config.py
            # an RBD image's metadata beside an EC data pool: a replicated pool the suite may not name
            meta = (t.params.get("metadata_profile") or DEFAULT_METADATA_PROFILE
                    if profile["type"] == "erasure" and "image_size" in t.params else None)
            for p, where in ((profile, f"pools.{t.params['pool']}"),
                             (meta, f"pools.{t.params.get('metadata_pool') or t.params['pool']}")):
                try:
                    if p is not None:
                        check_fits_count(p, osd_up, hosts)
                except UserError as exc:
                    exc.where = where
                    if p is meta and not t.params.get("metadata_pool"):
                        exc.hint = (f"an erasure-coded pool's RBD images keep their metadata in a replicated pool of "
                                    f"size {p['size']}: name a smaller one with metadata_pool")
                    raise
    limits.check(plan.suite, plan.tests, limits.read(cluster, status))
    for kind in (p.KIND.name for p in PLUGINS):     # in the registry's order; only the suite's kinds' drivers load
        tests = [t for t in plan.tests if t.kind == kind]
        if tests and kind in PREFLIGHT:
            PREFLIGHT[kind](cluster, tests, plan.suite.settings)
    if drops_caches(plan):
        ssh = plan.suite.settings.ssh
        check_osd_hosts(LocalHost(), osd_hosts(cluster, ssh), ssh)
    return status


def check_fits_count(profile: dict, osd_up: int, hosts: int | None = None) -> None:
    """A pool whose PGs could never be clean, refused before anything is made (else its creation waits 300 s for
    them): more copies than OSDs up, or, where CRUSH puts each replica on a host of its own (`hosts`, the multi-host
    lab's count of hosts with an OSD up), more replicas than such hosts."""
    width = profile["size"] if profile["type"] == "replicated" else profile["k"] + profile["m"]
    what = f"size {width}" if profile["type"] == "replicated" else f"k+m = {width}"
    if width > osd_up:
        raise UserError(f"a pool with {what} needs {width} OSDs up; the cluster has {osd_up}",
                        "use a smaller size or k+m")
    if profile["type"] == "replicated" and hosts is not None and width > hosts:
        raise UserError(f"a pool with {what} needs {width} hosts with an OSD up (the lab's CRUSH rule puts each "
                        f"replica on a host of its own); the lab has {hosts}", "use a smaller size, or more --hosts")


def replica_hosts(cluster: Cluster) -> int | None:
    """The hosts with an OSD up where CRUSH places replicas one per host and cephbench knows it: the multi-host lab
    (lab/conf.py: chooseleaf type 1). None elsewhere: the one-host lab places them per OSD, and another cluster's
    rules are its own."""
    if not cluster.target.is_lab:
        return None
    from ..lab import Lab
    info = Lab(cluster.target.conf.parent).info()
    if info is None or not info.topology:
        return None
    return hosts_with_osd_up(cluster.ceph_json("osd", "tree") or {})


def hosts_with_osd_up(tree: dict) -> int:
    """Host buckets of `ceph osd tree -f json` holding at least one OSD that is up."""
    nodes = {n.get("id"): n for n in tree.get("nodes", [])}
    return sum(1 for n in nodes.values() if n.get("type") == "host"
               and any(nodes.get(c, {}).get("status") == "up" for c in n.get("children", [])))


# readies the lab for a variant; returns the Ceph release the variant's tests run on (None: the run's own)
VariantHook = Callable[[RunContext, str], "str | None"]


def _record_scheduler(rundir: RunDir, result: Result) -> bool:
    """run.json's `osd_scheduler`, from the first result whose evidence read the OSDs' settings (on any cluster: the
    admin sockets or `ceph tell`); a resumed run keeps its first part's. True once recorded."""
    found = scheduler_of(result.evidence.settings) if result.evidence is not None else {}
    if not found:
        return False
    if "osd_scheduler" not in rundir.meta():
        rundir.update_meta(osd_scheduler=found)
    return True


def execute(plan: Plan, ctx: RunContext, events: RunEvents, options: RunOptions,
            todo_tests: list[Test], facts: RunFacts, on_variant: VariantHook | None = None) -> RunSummary:
    """Run the tests of `todo_tests`, in the plan's order; `facts`: the cluster and host facts the run learnt,
    which the analysis is given; `on_variant` readies the lab for a variant (its shape's throttles,
    run/shapes.py) before the variant's options are put in force."""
    summary = RunSummary()
    # ceilings, efficiency and bottleneck from the run's baselines (a resumed run's earlier ones too)
    analyzer = RunAnalyzer.for_run(facts, ctx.rundir)
    todo = {t.id for t in todo_tests}
    scheduler_seen = False
    variants = VariantState.for_suite(ctx, plan.suite) if plan.suite.variants else None
    previous = sigterm_interrupts()
    try:
        wanted = variants.options(todo_tests) if variants is not None else {}
        ctx.marker_state.options = tuple(wanted)
        if ctx.has_cluster:         # `cephbench baseline` measures hardware: no cluster to mark or quiet
            if options.allow_pool_delete and pooldelete.creates_pools(todo_tests):
                pooldelete.allow_for_run(ctx)   # first: a key that may not set it is refused with nothing made
            scrub = take_scrub_flags(ctx)
            sent = mark_run(ctx)
            if wanted and not ctx.dry_run:
                claim_options(ctx, wanted, sent)    # before anything changes: refused if another run changes one
            if ctx.settings.set_noscrub:
                set_scrub_flags(ctx, scrub, sent)
        for _gid, tests_iter in groupby(plan.tests, key=lambda t: t.group):
            group = list(tests_iter)
            if not any(t.id in todo for t in group):
                continue
            driver = DRIVERS[group[0].kind]
            errors: list[str] = []
            for result in _run_variant_group(driver, ctx, group, todo, errors, variants, on_variant):
                analyzer.attach(result)
                summary.results.append(result)
                if ctx.rundir is not None:
                    ctx.rundir.append(result)
                    scheduler_seen = scheduler_seen or _record_scheduler(ctx.rundir, result)
                events.test_finished(result)
                if result.status == "failed":
                    errors.append(result.error or "failed")
            if errors and not options.dry_run and ctx.has_cluster:
                summary.lost = unreachable(ctx)
                if summary.lost:
                    break
    except KeyboardInterrupt:
        summary.interrupted = True
        events.note("interrupted: cleaning up what this run created (Ctrl-C again to skip)")
    finally:
        def first_signal() -> None:
            summary.interrupted = True
            events.note("cleaning up what this run created goes on (Ctrl-C again to skip it)")
        try:
            if summary.lost:                # removals would each wait out the connect timeout: list them instead
                failures = [(r, "not removed: the cluster stopped answering") for r in ctx.ledger.pending()]
            else:
                # a first signal during cleanup must not leave flags or pools behind; after an interrupt, whose
                # message offered to skip, the next one skips
                with shielded(first_signal, after_interrupt=summary.interrupted):
                    failures = ctx.ledger.release(keep=lambda r: options.keep and r.kind not in ("osd-flags",
                                                                                                 CONFIG_OPTION))
            summary.left_behind = [r for r, _ in failures]
            summary.cleanup_failed = list(failures)
            if options.keep:        # what failed stays pending too: listed once
                summary.left_behind += [r for r in ctx.ledger.pending() if r not in summary.left_behind]
            if not summary.lost:            # a lost cluster is said in one line, by whoever shows the summary
                events.cleanup(summary.left_behind, failures)
        except KeyboardInterrupt:
            summary.interrupted = True
            summary.left_behind = ctx.ledger.pending()
            events.cleanup(summary.left_behind, [(r, "cleanup skipped by a second interrupt")
                                                 for r in summary.left_behind])
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        summary.planned = list(ctx.planned)
    return summary


def unreachable(ctx: RunContext) -> str | None:
    """After a failed group: why the cluster cannot be used any more (its conf is gone, no monitor answers), or
    None when it answers and the failure was the test's own, so the run goes on with the next group."""
    conf = ctx.target.conf
    if not conf.is_file():
        return f"{conf} is gone, so no tool can reach the cluster"
    try:
        ctx.cluster.status()
    except (OperationFailed, UserError) as exc:
        return f"the cluster stopped answering ({exc.one_line() if isinstance(exc, UserError) else exc})"
    return None


def mark_run(ctx: RunContext) -> list[Future]:
    """The run's marker (cluster/marker.py) enters the ledger, then is sent beside the run's first changes (the mon
    commits them together: no second of its own). Returns what was sent (nothing in a dry run), for whoever must
    know it landed."""
    k = marker.key(ctx.run_id)
    sent: list = []

    def remove() -> None:
        if sent and sent[0].exception() is not None and not ctx.marker_state.written:
            return          # the mon refused it (a key without config-key rights): there is nothing to remove
        ctx.change(["ceph", "config-key", "rm", k], lambda: ctx.cluster.ceph_ok("config-key", "rm", k))
    ctx.ledger.add(Resource("config-key", k), remove)
    v = ctx.marker_value()
    with held():        # the marker is a courtesy to other runs: a mon that refuses it does not stop this one
        ctx.change(["ceph", "config-key", "set", k, v],
                   lambda: sent.extend(ctx.cluster.send(("config-key", "set", k, v))))
    return sent


def other_runs(cluster: Cluster) -> list[dict]:
    """Runs in progress on this cluster, from their markers (a marker whose run died is listed too: its
    `cephbench cleanup` removes it)."""
    try:
        return marker.read_runs(cluster)
    except (OperationFailed, UserError):
        return []       # a key that may not read config-keys: no warning, nothing else depends on it


def take_scrub_flags(ctx: RunContext) -> ScrubFlags | None:
    """Before the run's marker is written: which scrub flags the run holds (ctx.marker_state.scrub_flags)."""
    if not ctx.settings.set_noscrub or ctx.dry_run:
        return None
    scrub = ScrubFlags(ctx.cluster, hold=lambda flags, going: _hold_scrub_flags(ctx, flags, going),
                       others=lambda going: marker.scrub_flags_of_others(other_runs(ctx.cluster), [ctx.run_id],
                                                                         letting_go=going))
    ctx.marker_state.scrub_flags = tuple(scrub.take())
    return scrub


def set_scrub_flags(ctx: RunContext, scrub: ScrubFlags | None, marked: Sequence[Future]) -> None:
    """noscrub/nodeep-scrub for the run, shared with the other runs in progress (safety.ScrubFlags): the flags it
    holds enter the ledger before the first is set, and the whole change is held against signals, so that no exit
    path leaves a flag the run set, nor unsets one another run still holds. `marked`: the marker's write."""
    if ctx.dry_run:
        ctx.planned += ["ceph osd set noscrub", "ceph osd set nodeep-scrub"]
        ctx.ledger.add(Resource("osd-flags", "noscrub,nodeep-scrub"),
                       lambda: ctx.planned.extend(["ceph osd unset nodeep-scrub", "ceph osd unset noscrub"]))
        return
    if scrub is None:
        return
    with held():
        if scrub.before:        # shared (or the user's): other runs must see this run's hold before it sets them
            wait(marked)
        wanted = scrub.recheck(list(ctx.marker_state.scrub_flags))
        if wanted:
            # what tells `cephbench cleanup` whether a flag set later is still this run's (safety.flag_history)
            ctx.ledger.add(Resource("osd-flags", ",".join(wanted), history_state(ctx.run_id,
                                                                                 osdmap_epoch_before=scrub.epoch)),
                           scrub.restore)
            scrub.set(wanted)


def _hold_scrub_flags(ctx: RunContext, flags: Sequence[str], letting_go: Sequence[str]) -> None:
    ctx.marker_state.scrub_flags, ctx.marker_state.scrub_letting_go = tuple(flags), tuple(letting_go)
    ctx.write_marker()


def with_cluster(result: Result, watch: ClusterSeen) -> Result:
    """What happened to the cluster during the test goes on its result; a degraded or stopped test carries a
    warning (never a capability of the cluster), and a stopped one that failed says why it was stopped."""
    result.cluster = watch.summary
    result.warnings += [w for w in watch.warnings if w not in result.warnings]
    if watch.stop_reason and result.status == "failed":
        result.error = f"{watch.stop_reason} ({result.error})" if result.error else watch.stop_reason
    return result


def others_in_force(ctx: RunContext) -> list[str]:
    """A warning for each option another run in progress changes (its marker), read between two tests: the end of
    one and the start of the next (one reading, a config-key dump of a few ms, serves both)."""
    if ctx.dry_run or not ctx.has_cluster:
        return []
    return [f"{marker.describe(run)} ({run.get('run_dir') or 'run directory unknown'}) changes {name} ({who}) in its "
            "variants and ran while this test ran: the figure may be under its value, not this run's configuration"
            for run, who, name in marker.options_of_others(other_runs(ctx.cluster), ctx.run_id)]


def with_others(result: Result, at_start: list[str], at_end: list[str]) -> list[str]:
    """The other runs' options in force at the test's start or end go on its result as warnings (a figure under
    another run's variant never heads the verdict); returns the end's reading, the next test's start."""
    result.warnings += [w for w in dict.fromkeys(at_start + at_end) if w not in result.warnings]
    return at_end


def _run_variant_group(driver, ctx: RunContext, group: list[Test], todo: set[str], errors: list[str],
                       variants: VariantState | None, on_variant: VariantHook | None = None) -> Iterator[Result]:
    """A group under its variant: the variant put in force first (every result then records what was in force),
    or, when it cannot be, each of the group's tests failed with why."""
    name = group[0].variant
    if variants is None or name is None:
        yield from _run_group(driver, ctx, group, todo, errors)
        return
    started = time.time()
    release = None
    try:
        if on_variant is not None:
            release = _lab_ready(on_variant, ctx, name)
        in_force = variants.enter(name)
        if release is not None:     # its lab shape's: the variants compare release against release
            in_force = in_force.model_copy(update={"release": release})
    except VariantFailed as exc:
        for t in group:
            if t.id in todo:
                yield Result(test=t, status="failed", error=str(exc), started_unix=started,
                             duration_s=time.time() - started, variant=VariantInForce(name=name, release=release))
        return
    for result in _run_group(driver, ctx, group, todo, errors):
        result.variant = in_force
        yield result


def _lab_ready(on_variant: VariantHook, ctx: RunContext, name: str) -> str | None:
    try:
        return on_variant(ctx, name)
    except PermissionDenied:
        raise
    except (OperationFailed, UserError) as exc:
        raise VariantFailed(f"variant {name}: the lab's shape: "
                            f"{exc.one_line() if isinstance(exc, UserError) else exc}") from None


def _run_group(driver, ctx: RunContext, group: list[Test], todo: set[str],
               errors: list[str] | None = None) -> Iterator[Result]:
    """Drive one group; a group that breaks marks its unfinished tests failed and the run goes on."""
    reported: set[str] = set()
    started = time.time()
    try:
        failed: list[str] = []
        at_start = others_in_force(ctx)
        for outcome in driver(ctx.for_driver(), group, todo):
            reported.update({outcome.test.id, outcome.test.params.part_of or outcome.test.id})
            result = to_result(outcome)
            at_start = with_others(result, at_start, others_in_force(ctx))
            seen = outcome.seen     # what its tool runs saw (a test in rounds: its window's)
            result.hosts = seen.hosts if seen is not None else []
            result.evidence = seen.evidence if seen is not None else None
            own_ops_out(result)
            if result.evidence is not None and otherload.busy(result.evidence.other_load):
                # not the cluster's own figure: never the verdict's best
                result.warnings.append(f"other clients loaded the cluster during this test: "
                                       f"{otherload.describe(result.evidence.other_load)}")
            if result.evidence is not None and (bg := otherload.describe_background(result.evidence.other_load)):
                result.notes.append(bg)
            if seen is not None:
                with_cluster(result, seen.cluster)
            if result.status == "failed":
                failed.append(result.test.id)
            yield result
        if ctx.dry_run:
            return
        first_failure = failed[0] if failed else None
        for t in group:  # a driver stops a group when a test others depend on fails
            if t.id in todo and t.id not in reported:
                yield Result(test=t, status="skipped", started_unix=time.time(), duration_s=0.0,
                             error=f"not run: {first_failure or 'an earlier test'} of its group failed")
    except PermissionDenied:
        raise
    except (OperationFailed, UserError) as exc:
        msg = exc.one_line() if isinstance(exc, UserError) else str(exc)
        log.warning("group %s failed: %s", group[0].group, msg)
        if errors is not None:
            errors.append(msg)          # also when every test had its result (a failed pool removal)
        for t in group:
            if t.id in todo and t.id not in reported:
                yield Result(test=t, status="failed", error=msg, started_unix=started,
                             duration_s=time.time() - started)
