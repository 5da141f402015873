"""A `cephbench run` from Python: suite or resumed run → target (the lab started if needed) → preflight →
run directory (run.json) → runner. cli/ parses the arguments and prints; everything it decides on is here.

    prepared = prepare(RunRequest(suite_path=Path("suites/quick.yaml")))
    summary = start(prepared, events)
"""

from __future__ import annotations


import logging
import os
import secrets
import shutil
import signal
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import __version__
from ..analysis import RunFacts
from ..cluster import marker
from . import pooldelete
from ..kinds import KINDS, LEDGER_KINDS, RESOURCE_TYPES, level_of
from ..hosts.clients import (REMOTE_FILE, Client, ClientFacts, clients_of, deploy_loadgen, needs_of, preflight_clients,
                             remove_remote_file)
from ..suite.clients import resolve_clients
from ..cluster.ceph import CONNECT_TIMEOUT_S, POOL_DELETE_OPTION, Cluster, Target
from ..suite.config import (PROMETHEUS_ENV, Settings, SshSettings, Suite, load_suite, parse_suite, resumed_suite,
                            with_prometheus)
from ..evidence.prometheus import Prometheus
from ..drivers.base import ClientHosts, RunContext
from ..drivers.pools import resolve_existing
from ..drivers.registry import remover_of
from ..core.errors import OperationFailed, ParseError, UserError
from ..hosts.local import LocalHost, local_facts
from ..lab import Lab, default_lab_dir
from ..suite.plan import Plan, Room, expand, waits_for_client_hosts
from ..cluster.marker import read_runs
from ..core.releases import cluster_release
from ..cluster.recovery import (RUN_ENV, Ownership, Refusal, Remover, RunLock, how_to_remove, leftovers, on_cluster,
                                remove_leftovers, save as save_leftovers, stop_process_group)
from ..hosts.remote import control_dir, remove_control_dir, ssh_master
from ..core.resources import CONFIG_OPTION, Ledger, Refused, Resource, Undone, state_of
from ..core.stale import flag_history, option_history
from ..core.results import CorruptLine, Result, RunDir, Test, VariantInForce, run_dir_path
from ..hosts.remote_dirs import REMOTE_DIR, remove_dir
from ..core.interrupts import held, shielded, sigterm_interrupts
from .runner import (RunEvents, RunOptions, RunSummary, VariantHook, execute, other_runs, pending_tests,
                     preflight)
from ..suite.shape_plan import LabBuild
from ..core.variant_plan import Restore, previous_value
from .shapes import LAB_SHAPE, Keeper, check_target, first_build, shaped, restore_recorded as restore_shape
from .options import restore_recorded, same_value

log = logging.getLogger(__name__)

SSH_CONTROL = "ssh-control"           # ledger kind: a run's private directory of ssh master sockets


@dataclass
class RunRequest:
    suite_path: Path | None = None
    resume_dir: Path | None = None
    out_dir: Path | None = None
    conf: Path | None = None
    keyring: Path | None = None
    client_id: str | None = None
    lab_dir: Path | None = None
    force: bool = False
    keep: bool = False
    dry_run: bool = False
    connect_timeout_s: int = CONNECT_TIMEOUT_S
    lab: bool = False                       # --lab: the local lab, started when none runs
    allow_pool_delete: bool = False         # --allow-pool-delete (run/pooldelete.py)
    prometheus: str | None = None           # --prometheus: the operator's Prometheus (suite.config.with_prometheus)


@dataclass
class Prepared:
    """Everything decided before the first change to the cluster."""

    request: RunRequest
    suite: Suite
    plan: Plan
    todo: list[Test]
    target: Target
    lab: Lab | None
    cluster: Cluster
    status: dict[str, Any]
    run_id: str
    rundir: RunDir | None                   # None in a dry run
    unreadable: list[CorruptLine] = field(default_factory=list)   # of a resumed run's results.jsonl
    lock: RunLock | None = None             # held while this process runs the directory
    clients: list[Client] = field(default_factory=list)            # the suite's client hosts (hosts/clients.py)
    client_facts: dict[str, ClientFacts] = field(default_factory=dict)   # of those in use: clock, versions
    loadgen_paths: dict[str, str] = field(default_factory=dict)    # client -> its cephbench-loadgen (after start)
    shapes: Keeper | None = None            # the lab's shapes, when a variant has one (run/shapes.py)
    as_given: Suite | None = None           # the suite before settings.ssh was filled from the lab
    has_cluster: bool = True                # False: `cephbench baseline`, which needs none (prepare_baseline)
    facts: RunFacts = field(default_factory=RunFacts)   # the cluster and host facts the analysis is given

    @property
    def est_s(self) -> float:
        from ..suite.plan import estimate_s
        return estimate_s(self.todo)


def _estimated_for(cluster: Cluster, suite: Suite, todo: list[Test]) -> list[Test]:
    """The tests' estimates for the OSD hosts the cluster names (plan.for_cluster): this machine is the one ssh
    does not reach."""
    import socket

    from ..suite.plan import capacity_cut, for_cluster
    from ..cluster.osd_hosts import osd_hosts
    refs = osd_hosts(cluster, suite.settings.ssh)
    here = next((r.name for r in refs if r.address is None), socket.gethostname())
    # the hosts ssh may reach: named in settings.ssh, or by a name this machine resolves (a toolbox resolves none)
    watched = [r.name for r in refs if r.address is not None and (r.name in suite.settings.ssh.hosts
                                                                   or _resolves(r.address))]
    tests = for_cluster(todo, [r.name for r in refs], here, suite.settings.drop_caches, _prometheus_s(suite), watched)
    return capacity_cut(tests, suite, _room(cluster), remote=any(r.address is not None for r in refs))


def _room(cluster: Cluster) -> Room | None:
    """The cluster's raw space and OSDs, which the capacity guard shares among the writes (plan.capacity_cut)."""
    try:
        total, used = cluster.raw_capacity(patience_s=0.0)
        return Room(total, used, len(cluster.osd_ids()))
    except (OperationFailed, UserError, TimeoutError) as exc:
        log.debug("raw capacity unknown, no write counted as cut by the capacity guard: %s", exc)
        return None


def _resolves(address: str) -> bool:
    import socket
    try:
        socket.getaddrinfo(address, None)
        return True
    except OSError:
        return False


def _prometheus_s(suite: Suite) -> float:
    """What reading a test's evidence from the run's Prometheus adds to it (plan.prometheus_test_s), for the scrape
    intervals and the ceph-exporters (port 9926) its targets name; 0 without one."""
    from ..evidence import promanswer
    from ..evidence.cephexporter import CEPH_EXPORTER_PORT
    from ..suite.plan import prometheus_test_s
    if suite.settings.prometheus is None:
        return 0.0
    try:
        intervals = promanswer.scrape_intervals(Prometheus(str(suite.settings.prometheus)).get("/api/v1/targets"))
    except (OSError, ParseError):
        return prometheus_test_s()
    exporter = any(inst.endswith(f":{CEPH_EXPORTER_PORT}") for inst in intervals)
    return prometheus_test_s(max(intervals.values(), default=1.0), exporter)


def _first_build_counted(keeper: Keeper, todo: list[Test]) -> list[Test]:
    """The estimates without the first part's rebuild when the lab already runs in its build (the run started
    it so, or found it so): the plan counts one at every build's start."""
    from ..suite.plan import first_build_ready
    from ..suite.shape_plan import step
    first = next((t.variant for t in todo if t.variant is not None), None)
    if first is None or step(keeper.current, keeper.want(first)).kind == "rebuild":
        return todo
    return first_build_ready(todo, keeper.want(first))


def check_paths(request: RunRequest) -> None:
    """--resume names a directory that exists; --lab-dir is not a file. Checked before anything opens them."""
    if request.resume_dir is not None:
        d = Path(request.resume_dir)
        if not d.exists():
            raise UserError(f"{d} does not exist", "give the run directory of an earlier 'cephbench run'",
                            where="--resume")
        if not d.is_dir():
            raise UserError(f"{d} is not a directory", "give the run directory of an earlier 'cephbench run'",
                            where="--resume")
    if request.lab_dir is not None and Path(request.lab_dir).exists() and not Path(request.lab_dir).is_dir():
        raise UserError(f"{request.lab_dir} is a file, not a lab directory", "give --lab-dir a directory",
                        where="--lab-dir")


def load(request: RunRequest) -> tuple[Suite, RunDir | None, list[Result], list[CorruptLine]]:
    """The suite to run: from its file, or from a run directory being resumed (with what it already holds).

    A suite file given with --resume must be the resumed run's own suite: a resume runs what the run planned."""
    if request.resume_dir is not None and request.prometheus is not None:
        raise UserError("--prometheus names a new run's Prometheus: a resumed run reads the one it recorded",
                        "drop it: the run goes on with the Prometheus it recorded",
                        where="--prometheus")
    if request.resume_dir is not None:
        rundir = RunDir.open(request.resume_dir)
        meta = rundir.meta()
        if not isinstance(meta.get("suite"), dict):
            raise UserError(f"{request.resume_dir} holds no suite to resume (an imported run?)",
                            "resume only directories that 'cephbench run' made", where="--resume")
        given = load_suite(request.suite_path) if request.suite_path is not None else None
        suite = resumed_suite(meta["suite"], f"{request.resume_dir}/run.json suite", given, dict(os.environ))
        if suite is None:
            raise UserError(f"{request.suite_path} is not the suite of the run in {request.resume_dir} (its "
                            "run.json holds the suite it planned)", "drop SUITE to resume that run, or run "
                            f"{request.suite_path} without --resume", where="SUITE")
        done, bad = rundir.results()
        return suite, rundir, done, bad
    if request.suite_path is None:
        raise UserError("give a suite file, or --resume RUN_DIR", "e.g. cephbench run suites/quick.yaml",
                        where="SUITE")
    suite, where = with_prometheus(load_suite(request.suite_path), request.prometheus, os.environ)
    if where in ("--prometheus", PROMETHEUS_ENV):
        # checked here, where the error can name the flag or variable (the runner's preflight names the suite's)
        Prometheus(str(suite.settings.prometheus)).check(where=where)
    return suite, None, [], []


SYSTEM_CONF = Path("/etc/ceph/ceph.conf")


def choose_target(suite: Suite, request: RunRequest, say: Callable[[str], None] = lambda _m: None,
                  recorded: dict[str, Any] | None = None, system_conf: Path = SYSTEM_CONF
                  ) -> tuple[Target, Lab | None]:
    """Flags, then the suite's target:, then CEPH_CONF/CEPH_KEYRING, then the target a resumed run recorded; the
    lab only when asked for (--lab, --lab-dir), or when nothing names a cluster and this host has no
    /etc/ceph/ceph.conf (there `ceph` talks to a real cluster, and benchmarking a toy lab instead would go
    unnoticed)."""
    t = suite.target
    env_conf = os.environ.get("CEPH_CONF") or None
    named = [(f"--conf {request.conf}", request.conf), (f"the suite's target.conf {t.conf if t else ''}",
                                                      t.conf if t else None),
             (f"CEPH_CONF={env_conf}", env_conf)]
    conf_source = next(((what, Path(c)) for what, c in named if c), None)
    wants_lab = request.lab or request.lab_dir is not None
    lab_dir = Path(request.lab_dir or default_lab_dir()).absolute()
    if wants_lab and conf_source is not None and conf_source[1].absolute() == lab_dir / "ceph.conf":
        conf_source = None                      # the lab's own conf (its shell's CEPH_CONF): the same target
    if wants_lab and conf_source is not None:
        lab_flag = f"--lab-dir {request.lab_dir}" if request.lab_dir is not None else "--lab"
        raise UserError(f"{lab_flag} and {conf_source[0]} both name the cluster to benchmark",
                        "keep one: drop the flag, or unset CEPH_CONF (the lab's own shell sets it: "
                        "eval \"$(cephbench lab env)\" is a way to target the lab too)", where=lab_flag.split()[0])
    keyring = request.keyring or (t.keyring if t else None) or (
        Path(os.environ["CEPH_KEYRING"]) if os.environ.get("CEPH_KEYRING") else None)
    client_id = request.client_id or (t.id if t else None)
    conf = conf_source[1] if conf_source else None
    if conf is None and not wants_lab and recorded and recorded.get("conf"):
        conf = Path(recorded["conf"])           # a resumed run goes on where it ran
        keyring = keyring or (Path(recorded["keyring"]) if recorded.get("keyring") else None)
        client_id = client_id or recorded.get("id")
    if conf is not None:
        lab_json = Path(conf).absolute().parent / "lab.json"
        lb = Lab(lab_json.parent) if lab_json.exists() else None
        return Target(Path(conf).absolute(), keyring.absolute() if keyring else None, client_id,
                      is_lab=lb is not None), lb
    if not wants_lab and system_conf.exists():
        raise UserError(f"no cluster given, and {system_conf} names the one this host's ceph and rados talk to",
                        f"use -c {system_conf} for that cluster, or --lab for the local lab", where="--conf")
    lb = Lab(lab_dir)
    if not lb.is_running():
        if request.dry_run:
            raise UserError(f"no lab running in {lb.dir} and --dry-run starts nothing",
                            "start one with 'cephbench lab up', or give --conf")
        build = first_build(suite)      # a suite with lab shapes starts with its first shape
        flags = "".join(f" {f}" for f in build.up_flags()) if build is not None else ""
        say(f"no lab running in {lb.dir}: starting one (cephbench lab up{flags})")
        info = lb.up(progress=lambda m: say(f"lab: {m}"), **({} if build is None else dict(
            osds=build.osds, osd_size_bytes=build.osd_size_bytes, rgw=build.rgw, multi=build.multi,
            release=build.release or None)))
        say(f"lab ready in {info.startup_s:.1f} s")
    env = lb.env()
    return Target(Path(env["CEPH_CONF"]), Path(env["CEPH_KEYRING"]), None, is_lab=True), lb


def with_lab_ssh(suite: Suite, lab_ssh: dict) -> Suite:
    """The suite with settings.ssh filled from a multi-host lab: its user, key, known_hosts and host addresses.
    What the suite sets itself wins (an option it gives, a host it maps elsewhere)."""
    own = suite.settings.ssh
    ssh = SshSettings(user=own.user or lab_ssh["user"], port=own.port,
                      identity_file=own.identity_file or Path(lab_ssh["identity_file"]),
                      options=[*own.options, *lab_ssh["options"]], hosts={**lab_ssh["hosts"], **own.hosts})
    return suite.model_copy(update={"settings": suite.settings.model_copy(update={"ssh": ssh})})


def _release_facts(lab_release: str, cluster: dict[str, Any]) -> dict[str, Any]:
    found = cluster_release(cluster.get("versions"))
    name = lab_release or (found or {}).get("name") or ""
    return {**({"release": name} if name else {}), **({"ceph_release": found} if found else {})}


def prepare(request: RunRequest, say: Callable[[str], None] = lambda _m: None) -> Prepared:
    """Load, choose the target, preflight, and (unless a dry run) open the run directory with run.json.

    A resumed run first finishes the cleanup of the part that died: what its resources.json lists is removed
    (and its tool processes stopped) before anything else changes, and a torn last result line is set aside."""
    check_paths(request)
    lock = RunLock.take(request.resume_dir) if request.resume_dir is not None and not request.dry_run else None
    try:
        suite, rundir, done, bad = load(request)
        if rundir is not None and not request.dry_run:
            torn = rundir.set_aside_torn_tail()
            if torn is not None:
                say(f"{rundir.results_jsonl}: its last line was cut short ({len(torn)} characters, the run died "
                    f"while writing it); kept in {rundir.torn_jsonl.name}, that test runs again")
        plan = expand(suite)
        todo = pending_tests(plan, done)
        if rundir is None and not request.dry_run:
            RunDir.check_new(run_dir_path(suite.name, request.out_dir))
        t0 = time.time()
        target, lb = choose_target(suite, request, say,
                                   recorded=(rundir.meta().get("target") or {}) if rundir is not None else None)
        lab_info = lb.info() if lb is not None else None
        if shaped(suite):       # a target that is not a lab: choose_target started nothing, nothing has changed
            check_target(suite, target, lb)
        created = lab_info is not None and lab_info.created_unix >= t0
        lab_topology = lab_info.topology if lab_info is not None else None
        as_given = suite
        if lab_topology:
            suite = with_lab_ssh(suite, lab_topology["ssh"])
            plan = replace(plan, suite=suite)     # the tests do not depend on settings.ssh
        # a run that shapes the lab checks its client hosts on each part's own build (_part_prepared): the lab as
        # found may have none (`clients: lab` with a shape of `clients: 4`)
        clients = resolve_clients(suite, suite.settings, lab_topology) if not shaped(suite) else []
        if clients and waits_for_client_hosts(suite):      # a search up to every client host of the lab
            plan = expand(suite, client_hosts=len(clients))
            todo = pending_tests(plan, done)
        cluster = Cluster(target, connect_timeout_s=request.connect_timeout_s)
        status = preflight(cluster, plan, request.force, request.allow_pool_delete)
        plan = replace(plan, tests=resolve_existing(cluster, plan.tests))   # what an existing pool is, as it is
        todo = [t for t in plan.tests if t.id in {x.id for x in todo}]
        todo = _estimated_for(cluster, suite, todo)
        client_facts = preflight_clients(LocalHost(), clients, todo, suite.settings.ssh, target.id, request.force,
                                         say) if clients else {}
        for other in other_runs(cluster):
            say(f"warning: another cephbench run is in progress on this cluster ({marker.describe(other)}): both "
                f"measure less, and the capacity guard counts both; if that run died, "
                f"'cephbench cleanup {other.get('run_dir') or 'RUN_DIR'}' removes its marker")
        run_id = secrets.token_hex(3)
        facts = RunFacts()                  # a dry run measures nothing to analyse
        if rundir is not None and not request.dry_run:
            facts = RunFacts.recorded(rundir.meta())    # what the run's first part learnt: the run's own facts
            finish_dead_run(rundir, cluster, suite, say)
            # the dead part's --allow-pool-delete was still in force at the preflight: put back now
            pooldelete.preflight(cluster, todo, request.allow_pool_delete)
            rundir.update_meta(run_ids=[*rundir.meta().get("run_ids", []), run_id])
            if client_facts:
                rundir.update_meta(clients={n: f.to_json() for n, f in client_facts.items()})
        elif not request.dry_run:
            facts = RunFacts(_cluster_facts(cluster, lb), local_facts())
            rundir = RunDir.create(run_dir_path(suite.name, request.out_dir), {
                "cephbench_version": __version__, "run_ids": [run_id], "suite_name": suite.name,
                "suite": as_given.model_dump(mode="json"), "plan": [t.model_dump() for t in plan.tests],
                "target": target.describe(), "started_unix": time.time(), "lab_topology": lab_topology,
                # the Ceph release (identity.release): the lab's, else the one most of the cluster's daemons run
                # (ceph_release: its version and the daemons on others); the lab's root, when it is not the host's
                **_release_facts(lab_info.release if lab_info is not None else "", facts.cluster),
                **({"lab_root": lab_info.root} if lab_info is not None and lab_info.root else {}),
                "cluster": facts.cluster, "hosts": {"client": facts.client},
                **({"clients": {n: f.to_json() for n, f in client_facts.items()}} if client_facts else {}),
            })
            lock = RunLock.take(rundir.path)
        # after finish_dead_run: a resumed run's dead part may have left the lab in a shape, which it put back
        keeper = Keeper.for_run(lb, suite, created, request.dry_run) if shaped(suite) and lb is not None else None
        if keeper is not None:
            todo = _first_build_counted(keeper, todo)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    return Prepared(request, suite, plan, todo, target, lb, cluster, status, run_id,
                    None if request.dry_run else rundir, bad, lock, clients, client_facts, shapes=keeper,
                    as_given=as_given, facts=facts)


def prepare_baseline(what: str, tests: list[Test], out_dir: Path | None) -> Prepared:
    """`cephbench baseline disk|network`: its tests (checked by the command) as a run of their own, run by `start`
    as a suite's baselines are (ledger, host watch, cleanup), on a machine that may have no Ceph configured."""
    # a suite of flags, not of a file: no workloads, which a suite file must have
    suite = Suite.model_construct(name=f"baseline-{what}", settings=Settings())
    nowhere = Target(Path(os.devnull), None, None)
    run_id = secrets.token_hex(3)
    facts = RunFacts(client=local_facts())
    rundir = RunDir.create(run_dir_path(suite.name, out_dir), {
        "cephbench_version": __version__, "run_ids": [run_id], "suite_name": suite.name, "kind": "baseline",
        "plan": [t.model_dump() for t in tests], "started_unix": time.time(), "hosts": {"client": facts.client}})
    return Prepared(RunRequest(out_dir=out_dir), suite, Plan(suite, tests), tests, nowhere, None, Cluster(nowhere),
                    {}, run_id, rundir, lock=RunLock.take(rundir.path), has_cluster=False, facts=facts)


def removers(ctx: RunContext, dead: Sequence[Resource] = ()) -> dict[str, Remover]:
    """How each kind of resource is removed knowing only its name (ctx: a RunContext for the run's target;
    `dead`: what the dead run left, whose own marker does not keep its scrub flags set): the core's own here, each
    kind's resources by the remover their declaration names (kinds.RESOURCE_TYPES, kinds/kind.py ResourceType)."""
    dead_runs = [r.name.removeprefix(marker.PREFIX) for r in dead
                 if r.kind == "config-key" and r.name.startswith(marker.PREFIX)]
    driver = ctx.for_driver()       # what the drivers' own removers are given, as in a run

    def flags(r: Resource) -> None:
        wanted = [f for f in r.name.split(",") if f and f != "none"]
        since = state_of(r).get("osdmap_epoch_before")
        since = since if isinstance(since, int) else 0
        verdict = flag_history(wanted, since, lambda e: ctx.cluster.ceph_json(
            "osd", "dump", *([] if e is None else [str(e)])))
        kept = marker.scrub_flags_of_others(other_runs(ctx.cluster), dead_runs)    # still held by a live run
        for flag in [f for f in verdict.ours if f not in kept]:
            ctx.cluster.set_flag(flag, False)
        if verdict.doubt:
            raise Refused(f"refused to unset osd-flags {r.name}: {verdict.doubt}; if they are still the run's: "
                          + "; ".join(f"ceph osd unset {f}" for f in wanted if f not in verdict.gone))
        if not verdict.ours:
            raise Undone("; ".join([*([f"{', '.join(verdict.gone)} already unset"] if verdict.gone else []),
                                    *(f"{f} was unset (osdmap {e}) after the run set it and set again since, not "
                                      "by this run: left set" for f, e in verdict.others.items())]))

    def option(r: Resource) -> None:
        rec = Restore.decode(r.name)
        if rec.name == POOL_DELETE_OPTION and [h for h in pooldelete.holders(ctx) if h["run_id"] not in dead_runs]:
            # the dead run's own marker still stands (it goes last, the proof of the rest): only others' count
            raise Undone(f"{rec.name} left true: another cephbench run in progress holds it for its pools, and its "
                         f"end puts it back")
        state = state_of(r)
        now = previous_value(ctx.cluster.ceph_json("config", "dump"), rec.who, rec.name)
        ours = [str(v) for v in state.get("set_to") or []]
        if now is None and rec.previous is None:
            raise Undone(f"{rec.who} {rec.name} already put back (not set)")
        if not any(same_value(now, v) for v in ours):
            # changed since the run set it: the value now is the user's (ceph config set after a kill -9)
            raise Undone(f"{rec.who} {rec.name} is {now if now is not None else 'not set'} now, not the "
                         f"{' or '.join(ours)} the run set: changed since, not by this run: left as it is")
        since = state.get("config_version_before")
        verdict = option_history(rec.who, rec.name, rec.previous, since if isinstance(since, int) else None,
                                 lambda n: ctx.cluster.ceph_json("config", "log", str(n)))
        if verdict.doubt:
            raise Refused(f"refused to restore {rec.who} {rec.name}: {verdict.doubt}; if the run's value is still in "
                          f"force: {how_to_remove(r)}")
        if not verdict.ours:
            raise Undone(verdict.note)
        if not (verdict.before == rec.previous or verdict.before is not None and rec.previous is not None
                and same_value(verdict.before, rec.previous)):
            # the value to put back is in the entry's name: the cluster's history says what was there
            raise Refused(f"refused to restore {rec.who} {rec.name}: the entry puts back "
                          f"{rec.previous if rec.previous is not None else 'no value'}, and the configuration held "
                          f"{verdict.before if verdict.before is not None else 'no value'} before the run set it "
                          "(the entry was edited)")
        restore_recorded(ctx, r.name)

    def process(r: Resource) -> None:
        stop_process_group(r.name)

    def declared(name: str) -> Remover:
        remove = remover_of(RESOURCE_TYPES[name])
        return lambda r: remove(driver, r)

    return {
        "process": process,
        "osd-flags": flags,
        "pool": lambda r: ctx.cluster.delete_pool(r.name),
        "ec-profile": lambda r: ctx.cluster.delete_ec_profile(r.name),
        "config-key": lambda r: ctx.cluster.ceph_ok("config-key", "rm", r.name),
        REMOTE_FILE: lambda r: remove_remote_file(LocalHost(), ctx.settings.ssh, r.name),
        REMOTE_DIR: lambda r: remove_dir(LocalHost(), ctx.settings.ssh, r.name),
        SSH_CONTROL: lambda r: remove_control_dir(Path(r.name)),
        CONFIG_OPTION: option,
        LAB_SHAPE: lambda r: restore_shape(r.name),
        **{name: declared(name) for name in RESOURCE_TYPES},
    }


def _lab_restart(target: Target) -> Callable[[], None] | None:
    """How a dead run's restored start-only option reaches the lab's OSDs (variants); None on a real cluster."""
    lab_json = target.conf.parent / "lab.json"
    return Lab(lab_json.parent).restart_osds if target.is_lab and lab_json.exists() else None


def finish_dead_run(rundir: RunDir, cluster: Cluster, suite: Suite | None, say: Callable[[str], None]) -> None:
    """Remove what an earlier part of this run left (resources.json); refuse to go on while anything is left."""
    ctx = RunContext(cluster=cluster, run_id="recovery", rundir=None, ledger=Ledger(None),
                     settings=suite.settings if suite else Settings(), restart_lab_osds=_lab_restart(cluster.target))
    def note(m: str) -> None:
        say(f"{rundir.path}: {m} (left by the part of the run that died)")
    owned = ownership(rundir, cluster)
    check_cleanable(rundir.path, owned, leftovers(rundir.path))
    _, failed = remove_leftovers(rundir.path, removers(ctx, leftovers(rundir.path)), note=note, owned=owned)
    if failed:
        what = "; ".join(why if isinstance(why, Refusal) else f"{r.kind} {r.name}: {why} (by hand: {how_to_remove(r)})"
                         for r, why in failed)
        raise UserError(f"{rundir.path} left {len(failed)} thing(s) that could not be removed: {what}",
                        f"fix that, then run 'cephbench cleanup {rundir.path}'", where="--resume")


def ownership(rundir: RunDir, cluster: Cluster | None) -> Ownership:
    """What a dead run may have made: its run ids (run.json), the run markers on the cluster, its start."""
    meta = rundir.meta()
    ids = tuple(str(i) for i in meta.get("run_ids") or [] if isinstance(i, (str, int)))
    markers: dict[str, dict] | None = None
    try:
        markers = {m["run_id"]: m for m in read_runs(cluster)} if cluster is not None else None
    except (OperationFailed, UserError) as exc:     # a key that may not read config-keys: the names alone decide
        log.warning("run markers unknown (config-key dump): %s", exc)
    started = meta.get("started_unix")
    fsid: str | None = None
    if cluster is not None:
        try:
            fsid = str((cluster.status() or {}).get("fsid") or "") or None
        except (OperationFailed, UserError) as exc:
            log.warning("the cluster's fsid unknown (ceph status): %s", exc)
    return Ownership(ids, str(rundir.path.absolute()), markers,
                     float(started) if isinstance(started, (int, float)) else None,
                     fsids=recorded_fsids(meta) if cluster is not None else None, cluster_fsid=fsid)


def recorded_fsids(meta: dict) -> tuple[str, ...]:
    """The clusters a run ran on (run.json: the cluster it found, each lab shape's build)."""
    shapes = meta.get("lab_shapes")
    builds = [s.get("cluster") for s in shapes.values() if isinstance(s, dict)] if isinstance(shapes, dict) else []
    facts = [meta.get("cluster"), *builds]
    return tuple(dict.fromkeys(str(f["status"]["fsid"]) for f in facts
                               if isinstance(f, dict) and isinstance(f.get("status"), dict)
                               and isinstance(f["status"].get("fsid"), str) and f["status"]["fsid"]))


def check_cleanable(run_dir: Path, owned: Ownership, left: Sequence[Resource]) -> None:
    """A run still alive (its marker names a live process of this host: the original of a copied directory) is
    never cleaned, and nothing of a run is removed from a cluster it did not run on: one line each, the ledger
    kept."""
    alive = owned.alive()
    if alive:
        raise UserError(f"{run_dir}: {alive}; nothing was removed", "wait for it to end (a run cleans up after "
                        "itself), or stop it with Ctrl-C")
    wrong = owned.wrong_cluster() if any(on_cluster(r.kind) for r in left) else None
    if wrong:
        raise UserError(f"{run_dir}: {wrong}: nothing was removed from it, resources.json is as it was",
                        "give -c the ceph.conf of the cluster the run ran on", where="--conf")


def _clusterless() -> set[str]:
    """The ledger kinds of what the kinds that run against no cluster make (the disk baseline's test files)."""
    return {r.name for k in KINDS.values() if not k.cluster for r in k.resources}


def recorded_settings(meta: dict) -> Settings:
    """A run's settings as run.json has them, with a multi-host lab's ssh: how a dead run's client hosts are
    reached to remove what it copied there."""
    try:
        suite = parse_suite(meta["suite"], "run.json suite")
    except (KeyError, UserError):
        return Settings()
    ssh = (meta.get("lab_topology") or {}).get("ssh")
    return (with_lab_ssh(suite, ssh) if ssh else suite).settings


def cleanup(run_dir: Path, request: RunRequest, say: Callable[[str], None]
            ) -> tuple[list[Resource], list[tuple[Resource, str]]]:
    """`cephbench cleanup RUN_DIR`: remove what a run that died left, reached through the target it recorded."""
    rundir = RunDir.open(run_dir)
    lock = RunLock.take(rundir.path)
    try:
        recorded = rundir.meta().get("target") or {}
        conf = request.conf or (Path(recorded["conf"]) if recorded.get("conf") else None)
        left = leftovers(rundir.path)
        if not left:
            return [], []
        if conf is None and all(r.kind in ("process", SSH_CONTROL, REMOTE_FILE, *_clusterless()) for r in left):
            # `cephbench baseline`: its test files, fio, iperf3 servers and ssh connections, no cluster to reach
            ctx = RunContext(cluster=Cluster(Target(Path(os.devnull), None, None)), run_id="recovery", rundir=None,
                             ledger=Ledger(None), settings=Settings())
            return remove_leftovers(rundir.path, removers(ctx), note=say, owned=ownership(rundir, None))
        if conf is None:
            raise UserError(f"{run_dir}/run.json names no cluster", "give --conf (and --keyring, --id)")
        keyring = request.keyring or (Path(recorded["keyring"]) if recorded.get("keyring") else None)
        target = Target(conf.absolute(), keyring.absolute() if keyring else None,
                        request.client_id or recorded.get("id"), is_lab=bool(recorded.get("lab")))
        cluster = Cluster(target, connect_timeout_s=request.connect_timeout_s)
        shaped_lab = [r for r in left if r.kind == LAB_SHAPE]
        try:
            cluster.check_reachable()
        except UserError:
            if not shaped_lab:
                raise
            # killed while the lab was being rebuilt: no cluster answers until the lab is put back, and what the
            # run made on the shaped lab went with it
            owned = ownership(rundir, None)
            check_cleanable(run_dir, owned, [])
            for r in shaped_lab:
                why = owned.refusal(r)
                if why:
                    raise UserError(f"{run_dir}: {why}", "the cluster does not answer either: see --conf")
            for r in shaped_lab:
                restore_shape(r.name)
                say(f"removed {r.kind} {r.name}")
            save_leftovers(rundir.path, [r for r in left if r.kind != LAB_SHAPE])
            cluster = Cluster(target, connect_timeout_s=request.connect_timeout_s)
            cluster.check_reachable()
        ctx = RunContext(cluster=cluster, run_id="recovery", rundir=None, ledger=Ledger(None),
                         settings=recorded_settings(rundir.meta()), restart_lab_osds=_lab_restart(target))
        owned = ownership(rundir, cluster)
        check_cleanable(run_dir, owned, leftovers(rundir.path))
        return remove_leftovers(rundir.path, removers(ctx, left), note=say, owned=owned)
    finally:
        lock.release()


def deploy_clients(prep: Prepared, ctx: RunContext) -> None:
    """cephbench-loadgen on the clients whose tests need it, through the run's ledger (execute removes it with the
    rest); what was there or copied goes into run.json."""
    users = {c.name: c for t in prep.todo if needs_of(t).loadgen
             for c in clients_of(t.params.get("clients"), prep.clients)}
    if not users or prep.request.dry_run:
        return
    from ..drivers.rgw.binary import find_loadgen
    try:
        prep.loadgen_paths, facts = deploy_loadgen(LocalHost(), list(users.values()), ctx.settings.ssh,
                                                   ctx.ledger, Path(find_loadgen()), ctx.run_id)
    except BaseException:
        ctx.ledger.release()        # execute, which removes what the run made, has not started
        raise
    for name, f in facts.items():
        if name in prep.client_facts:
            prep.client_facts[name].loadgen = f
    if prep.rundir is not None:
        prep.rundir.update_meta(clients={n: f.to_json() for n, f in prep.client_facts.items()})


def start(prep: Prepared, events: RunEvents) -> RunSummary:
    """Run the tests still to do; a run refused before its first result leaves no directory behind."""
    req = prep.request
    if not req.dry_run:
        # every tool the run starts inherits it: the proof `cleanup` asks of a process before it stops one
        os.environ[RUN_ENV] = prep.run_id
    try:
        summary = _run_shaped(prep, events) if prep.shapes is not None else _run_part(prep, events)
    except UserError:
        if prep.rundir is not None and req.resume_dir is None and not prep.rundir.results()[0]:
            shutil.rmtree(prep.rundir.path, ignore_errors=True)
        raise
    finally:
        if prep.lock is not None:
            prep.lock.release()
    if prep.rundir is not None:
        prep.rundir.update_meta(finished_unix=time.time(), interrupted=summary.interrupted)
    return summary


def run_ledger(path: Path | None, run_id: str, outer: Ledger | None = None) -> Ledger:
    """A run's ledger: it takes the core's kinds of entry and the kinds' declared resources (kinds.LEDGER_KINDS),
    and proves each entry the run's before removing it, as a killed run's cleanup would (Ownership, live)."""
    return Ledger(path, outer=outer, guard=Ownership((run_id,), live=True).refusal, run_id=run_id,
                  kinds=LEDGER_KINDS)


def _run_part(prep: Prepared, events: RunEvents, outer: Ledger | None = None,
              on_variant: VariantHook | None = None) -> RunSummary:
    """The tests of prep.todo against prep.cluster: the whole run, or one lab build's part of it (`outer`: the
    ledger that puts the lab back, which this part's ledger keeps in resources.json)."""
    req = prep.request
    # one ssh connection per host for the whole part: every drop of caches, host watch, baseline and client
    # tool reuses it
    with ssh_master(prep.suite.settings.ssh) as ssh:
        ctx = RunContext(cluster=prep.cluster, run_id=prep.run_id, rundir=prep.rundir,
                         ledger=run_ledger(prep.rundir.path / "resources.json" if prep.rundir else None,
                                           prep.run_id, outer),
                         settings=prep.suite.settings.model_copy(update={"ssh": ssh}), dry_run=req.dry_run,
                         events=events, restart_lab_osds=prep.lab.restart_osds
                         if prep.lab is not None and prep.target.is_lab else None,
                         has_cluster=prep.has_cluster,
                         client_hosts=ClientHosts(
                             list(prep.clients),
                             {n: f.clock.offset_ns for n, f in prep.client_facts.items() if f.clock},
                             load_here=not prep.clients or any(
                                 level_of(t.kind) not in ("Baselines", "OSD") and not t.params.get("clients")
                                 for t in prep.plan.tests)))
        ctl = control_dir(ssh)
        if ctl is not None and not req.dry_run:
            # this `with` removes it; the record is for a run killed with -9 (cleanup, --resume)
            ctx.ledger.add(Resource(SSH_CONTROL, str(ctl)), lambda: None)
        deploy_clients(prep, ctx)
        ctx.client_hosts.at_paths = dict(prep.loadgen_paths)
        options = RunOptions(force=req.force, keep=req.keep, dry_run=req.dry_run,
                             allow_pool_delete=req.allow_pool_delete)
        return execute(prep.plan, ctx, events, options, prep.todo, prep.facts, on_variant)


# ---- lab shapes ----------------------------------------------------------------------------------------------

def _run_shaped(prep: Prepared, events: RunEvents) -> RunSummary:
    """A run whose variants shape the lab: one part per lab build (shape_plan.shape_classes), the lab rebuilt
    before each part that needs it and throttled before each variant that needs it, and put back as the user had
    it at the end, on Ctrl-C, SIGTERM and failure (the `lab-shape` entry of the ledger: `cephbench cleanup` after
    a kill -9)."""
    keeper = prep.shapes
    assert keeper is not None
    keeper.say = events.note
    outer = Ledger(prep.rundir.path / "resources.json" if prep.rundir else None, run_id=prep.run_id)
    total = RunSummary()
    previous = sigterm_interrupts()
    try:
        with held():            # the way back is in the ledger before the lab's first change, its proof before it
            if prep.rundir is not None:
                keeper.claim(prep.run_id, str(prep.rundir.path.absolute()))
            outer.add(Resource(LAB_SHAPE, keeper.record()), keeper.restore)
        for tests in shape_parts(prep.todo, keeper):
            started = time.time()
            try:
                keeper.enter(next((t.variant for t in tests if t.variant is not None), None))
            except (OperationFailed, UserError) as exc:
                # a build that does not start (a tool missing, a mkfs that fails): its tests fail with why, the
                # next build is tried from what the lab is now
                keeper.resync()
                why = f"the lab's shape: {exc.one_line() if isinstance(exc, UserError) else exc}"
                for t in tests:
                    result = Result(test=t, status="failed", error=why, started_unix=started,
                                    duration_s=time.time() - started,
                                    variant=VariantInForce(name=t.variant, release=keeper.release(t.variant))
                                    if t.variant else None)
                    total.results.append(result)
                    if prep.rundir is not None:
                        prep.rundir.append(result)
                    events.test_finished(result)
                continue
            total.planned += keeper.take_planned()
            part = _part_prepared(prep, tests, events)
            prep = replace(prep, facts=part.facts)      # the next part's analysis knows this build's too
            done = _run_part(part, events, outer, lambda ctx, name: _enter(keeper, name, ctx.planned))
            total.results += done.results
            total.left_behind += done.left_behind
            total.cleanup_failed += done.cleanup_failed
            total.planned += done.planned
            total.interrupted, total.lost = done.interrupted, done.lost
            if done.interrupted or done.lost:
                break
    except KeyboardInterrupt:
        total.interrupted = True
        events.note("interrupted: putting the lab back as it was (Ctrl-C again to skip)")
    finally:
        try:
            with shielded(lambda: events.note("putting the lab back goes on (Ctrl-C again to skip it)"),
                          after_interrupt=total.interrupted):
                failures = outer.release()
            total.planned += keeper.take_planned()
            if failures:
                total.left_behind += [r for r, _ in failures]
                total.cleanup_failed += failures
                events.cleanup([r for r, _ in failures], failures)
        except KeyboardInterrupt:
            total.interrupted = True
            total.left_behind += outer.pending()
            events.cleanup(outer.pending(), [(r, "skipped by a second interrupt") for r in outer.pending()])
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return total


def _enter(keeper: Keeper, variant: str, planned: list[str]) -> str | None:
    """The lab in `variant`'s shape; the release its tests run on, which each of their results records."""
    keeper.enter(variant, planned)
    return keeper.release(variant)


def shape_parts(todo: list[Test], keeper: Keeper) -> list[list[Test]]:
    """The tests in runs of one lab build each (the plan orders them so); baselines (no variant) join the part
    they are next to: the plan puts them first, so they run on the first build (a suite of `clients: lab`
    whose shape brings the client hosts measures them there)."""
    parts: list[list[Test]] = []
    last: str | None = None
    for t in todo:
        key = None if t.variant is None else _build_key(keeper.want(t.variant))
        if parts and (key is None or key == last or last is None):
            parts[-1].append(t)
        else:
            parts.append([t])
        last = key if key is not None else last
    return parts


def _build_key(build: LabBuild | None) -> str:
    return build.key() if build is not None else "-"


def _part_prepared(prep: Prepared, tests: list[Test], events: RunEvents) -> Prepared:
    """What a part runs against: after a rebuild the lab is another cluster (fsid, keys, ssh host keys), so the
    connection, settings.ssh, the client hosts and the preflight are made again, and the part's variants' shape
    with its cluster facts is recorded in run.json and handed to the part's analysis."""
    keeper = prep.shapes
    assert keeper is not None and prep.lab is not None
    req = prep.request
    if req.dry_run:
        return replace(prep, todo=tests)
    prep.cluster.close()
    info = prep.lab.info()
    topo = info.topology if info is not None else None
    as_given = prep.as_given or prep.suite
    suite = with_lab_ssh(as_given, topo["ssh"]) if topo else as_given
    clients = resolve_clients(suite, suite.settings, topo)
    cluster = Cluster(prep.target, connect_timeout_s=req.connect_timeout_s)
    status = preflight(cluster, Plan(suite, tests), req.force, req.allow_pool_delete)
    client_facts = preflight_clients(LocalHost(), clients, tests, suite.settings.ssh, prep.target.id, req.force,
                                     events.note) if clients else {}
    # the rebuilt lab has its own hosts, OSDs and devices: each result is analysed with its own build's
    facts = record_part(prep.rundir, keeper, tests, topo, _cluster_facts(cluster, prep.lab), prep.facts) \
        if prep.rundir is not None else prep.facts
    return replace(prep, suite=suite, plan=replace(prep.plan, suite=suite), todo=tests, cluster=cluster,
                   status=status, clients=clients, client_facts=client_facts, loadgen_paths={}, facts=facts)


def _cluster_facts(cluster: Cluster, lb: Lab | None) -> dict[str, Any]:
    """What run.json records of the cluster; of a lab, once `ceph versions` names every daemon it runs (its RGW's
    reaches it a moment after `lab up` returns)."""
    facts = cluster.facts()

    def versions() -> Any:
        try:
            return cluster.ceph_json("versions")
        except OperationFailed as exc:      # as facts() records a fact it cannot read
            return {"error": str(exc)}
    if lb is not None:
        facts["versions"] = lb.whole_versions(versions, facts.get("versions"))
    return facts


def record_part(rundir: RunDir, keeper: Keeper, tests: list[Test], topo: dict[str, Any] | None,
                cluster: dict[str, Any], facts: RunFacts) -> RunFacts:
    """A lab build's part: run.json records the shape of each of its variants with the build's cluster facts (for
    the report and `cephbench show`), and the same facts are returned for the part's analysis. Tests without a
    variant (baselines) run on this build too, which need not be the lab the run found: run.json's `cluster`."""
    variants = list(dict.fromkeys(t.variant for t in tests if t.variant is not None))
    shapes = dict(rundir.meta().get("lab_shapes") or {})
    for name in variants:
        build = keeper.want(name)
        shapes[name] = {"build": build.to_json() if build else None, "topology": topo, "cluster": cluster}
    baselines = any(t.variant is None for t in tests)
    rundir.update_meta(lab_shapes=shapes, **({"cluster": cluster} if baselines else {}))
    return facts.on_part(cluster, variants, baselines)
