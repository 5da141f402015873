"""The `cephbench` command: one thin function per command; the work is in the modules."""

from __future__ import annotations

import json
import logging
import signal
import secrets
import sys
from itertools import groupby
import time
from pathlib import Path

import click
from rich.console import Console

from . import __version__
from .cluster import CONNECT_TIMEOUT_S
from .config import Suite, load_suite
from .errors import OperationFailed, UserError
from .hosts import LocalHost, local_facts
from .lab import Lab, default_lab_dir
from .lab.multihost import size_flag as _size_option, spec_from_flags
from .lab import drives as lab_drives
from .lab.throttle import check_drives, parse_drive_refs, parse_throttle_specs
from .plan import Plan, expand
from .progress import ConsoleEvents
from .report.format import seconds
from .report.terminal import print_results, print_verdict
from .interrupts import sigterm_interrupts
from .results import Result, RunDir, run_dir_path
from .units import format_size

# Piped output (CI logs, `| tee`) gets wide tables instead of rich's 80-column default.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, soft_wrap=True, width=None if sys.stderr.isatty() else 160)


class Main(click.Group):
    """Turns the errors a user can fix into one line and exit 2; failures into exit 1."""

    def invoke(self, ctx: click.Context):
        sigterm_interrupts()    # a SIGTERM during preflight or set-up exits like Ctrl-C, not mid-change
        try:
            return super().invoke(ctx)
        except UserError as exc:
            _finish(f"cephbench: {exc.one_line()}", 2)
        except OperationFailed as exc:
            _finish(f"cephbench: {exc}", 1)
        except KeyboardInterrupt:
            _finish("cephbench: interrupted", 130)


def _finish(line: str, code: int) -> None:
    """The command's last word: a signal while it is said must not turn it into click's "Aborted!" (the command is
    over either way; entry.py ignores signals from the moment the exit leaves the command)."""
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        err.print(line, markup=False)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    sys.exit(code)


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="cephbench")
@click.option("-v", "--verbose", count=True, help="More logging (-vv for debug).")
def main(verbose: int) -> None:
    """Is my Ceph cluster running at its maximum performance, and if not, why?"""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


# ---- lab -------------------------------------------------------------------------

@main.group()
def lab() -> None:
    """A real local Ceph cluster (mon, mgr, OSDs on BlueStore files, RGW) for trying and testing."""


def _lab_dir_option(f):
    return click.option("--dir", "lab_dir", type=click.Path(path_type=Path), default=None,
                        help=f"Lab directory (default {default_lab_dir()}).")(f)


def _lab(lab_dir: Path | None) -> Lab:
    path = Path(lab_dir or default_lab_dir()).absolute()
    if path.exists() and not path.is_dir():
        raise UserError(f"{path} is a file, not a lab directory", "give --dir a directory", where="--dir")
    return Lab(path)


@lab.command("up")
@_lab_dir_option
@click.option("--osds", type=int, default=None, help="Number of OSDs of the one-host lab (default 3).")
@click.option("--osd-size", default="10GiB", show_default=True, help="Size of each OSD's BlueStore file (sparse).")
@click.option("--no-rgw", is_flag=True, help="Do not start an RGW.")
@click.option("--hosts", type=int, default=None,
              help="Hosts, each a network namespace with its own address, OSDs and sshd (1 alone: the loopback lab).")
@click.option("--osds-per-host", type=int, default=1, show_default=True, help="OSDs on each host (with --hosts).")
@click.option("--clients", type=int, default=0, show_default=True, help="Client hosts without OSDs (with --hosts).")
@click.option("--public-net", metavar="RATE[/DELAY]",
              help="Shape every host's public link both ways, e.g. 1gbit or 100mbit (with --hosts). A /DELAY "
                   "(round trip, e.g. /0.2ms) needs the kernel's netem (sch_netem); without it, it is refused.")
@click.option("--cluster-net", metavar="RATE[/DELAY]|unshaped",
              help="A separate cluster network for replication, shaped like --public-net (with --hosts).")
@click.option("--client-net", metavar="RATE[/DELAY]",
              help="Shape only the client hosts' links both ways, e.g. 200mbit (a DELAY needs netem); the cluster "
                   "side keeps --public-net's shape or none (with --hosts and --clients).")
@click.option("--osd-throttle", "osd_throttle", multiple=True, metavar="osd.N[.db]=RATE[,IOPS]",
              help="Slow one OSD's drive through blkio from the start, e.g. osd.1=50MiB/s or osd.2=200iops "
                   "(with --hosts; change it later with `lab throttle`).")
@click.option("--db-device", "db_device", default=None, metavar="SIZE",
              help="Put each OSD's BlueStore WAL/DB (FileStore journal) on a drive of its own of SIZE, e.g. 2GiB "
                   "(with --hosts).")
@click.option("--objectstore", default="bluestore", show_default=True, help="bluestore or filestore (with --hosts).")
@click.option("--fs", "fs", default=None, help="FileStore's file system: xfs (default), ext4 or btrfs.")
@click.option("--release", default=None, metavar="pacific|reef|tentacle",
              help="Ceph release of the daemons (default the host's own); another release runs from a root built "
                   "once from Debian's archive (see `lab roots`).")
def lab_up(lab_dir: Path | None, osds: int | None, osd_size: str, no_rgw: bool, hosts: int | None,
           osds_per_host: int, clients: int, public_net: str | None, cluster_net: str | None,
           client_net: str | None, osd_throttle: tuple[str, ...], db_device: str | None, objectstore: str, fs: str | None,
           release: str | None) -> None:
    """Start a lab cluster and wait until it is healthy."""
    lb = _lab(lab_dir)
    size = _size_option(osd_size, "--osd-size")
    drive_flags = {"--osd-throttle": list(osd_throttle) or None, "--db-device": db_device,
                   "--objectstore": objectstore if objectstore != "bluestore" else None, "--fs": fs}
    multi = spec_from_flags(hosts, osds_per_host, clients, public_net, cluster_net, osds,
                             {"--client-net": client_net, **drive_flags})
    if lb.started() and lb.is_running():
        _print_lab_status(lb)
        raise UserError(f"a lab is already running in {lb.dir}", f"stop it with 'cephbench lab down --dir {lb.dir}'")
    n_osds = multi.osds if multi else (osds if osds is not None else 3)
    info = lb.up(osds=n_osds, osd_size_bytes=size, rgw=not no_rgw, progress=lambda m: err.print(f"lab: {m}"),
                 multi=multi, release=release)
    out.print(f"lab ready in {info.startup_s:.1f} s: {n_osds} OSD(s) of {format_size(size)}"
              + (f", {info.release} ({info.ceph_version.split(' (')[0]})" if info.release else "")
              + (f", RGW at {info.rgw_endpoint}" if info.rgw else "") + f"; directory {lb.dir}")
    if info.topology:
        _print_topology(info.topology)
    out.print(f"use it from a shell: eval \"$(cephbench lab env --dir {lb.dir})\"")


def _print_topology(topo: dict) -> None:
    shapes = {n["kind"]: n.get("shape") for n in topo["networks"]}

    def shape(kind: str) -> str:
        sh = shapes.get(kind)
        if sh is None:
            return "unshaped"
        delay = f", +{sh['delay_s'] * 1e3:g} ms round trip" if sh.get("delay_s") else ""
        return f"{sh['rate_bits_per_s'] / 1e6:g} Mbit/s each way{delay}"
    out.print(f"networks: public {shape('public')}"
              + (f"; cluster {shape('cluster')}" if "cluster" in shapes else "; replication shares the public network"))
    if topo.get("client_link"):
        shapes["client"] = topo["client_link"]
        out.print(f"client hosts' links: {shape('client')} (the cluster side as above)")
    dr = topo.get("drives")
    if dr:
        store = topo.get("objectstore", "bluestore") + (f" on {topo['fs']}" if topo.get("fs") else "")
        db = " and a WAL/DB drive each" if topo.get("db_device_bytes") else ""
        out.print(f"drives: {store}, OSD data on "
                  + ("loop devices" if dr["kind"] == "loop" else f"plain files ({dr.get('fallback') or dr['kind']})")
                  + db)
    for h in topo["hosts"]:
        addrs = ", ".join(f"{k} {a}" for k, a in h["addresses"].items())
        out.print(f"  {h['name']:<4} {addrs:<40} {' '.join(d for d in h['daemons'] if not d.startswith('sshd.'))}")


@lab.command("status")
@_lab_dir_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def lab_status(lab_dir: Path | None, as_json: bool) -> None:
    """Daemons with PIDs, health, OSDs up/in, RGW endpoint."""
    lb = _lab(lab_dir)
    info = lb.info()
    if info is None:
        raise UserError(f"no lab in {lb.dir}", "start one with 'cephbench lab up'")
    status = _lab_status_data(lb)
    if as_json:
        out.print_json(json.dumps(status))
    else:
        _print_lab_status(lb, status)


def _lab_status_data(lb: Lab) -> dict:
    info = lb.info()
    daemons = [{"name": d.name, "pid": d.pid, "running": d.running} for d in lb.daemons()]
    data = {"dir": str(lb.dir), "fsid": info.fsid if info else None, "daemons": daemons,
            "rgw_endpoint": info.rgw_endpoint if info else None, "health": None, "osds_up": None, "osds_in": None,
            "topology": info.topology if info else None}
    if any(d["running"] for d in daemons):
        try:
            st = lb.health()
            data["health"] = st.get("health", {}).get("status")
            osdmap = st.get("osdmap", {})
            osdmap = osdmap.get("osdmap", osdmap)
            data["osds_up"], data["osds_in"] = osdmap.get("num_up_osds"), osdmap.get("num_in_osds")
        except OperationFailed:
            data["health"] = "unreachable"
    return data


def _print_lab_status(lb: Lab, status: dict | None = None) -> None:
    s = status or _lab_status_data(lb)
    out.print(f"lab {s['dir']}  fsid {s['fsid']}")
    out.print(f"health: {s['health'] or 'stopped'}   OSDs up/in: {s['osds_up']}/{s['osds_in']}   "
              f"RGW: {s['rgw_endpoint'] or '-'}")
    for d in s["daemons"]:
        out.print(f"  {d['name']:<16} pid {d['pid']!s:<8} {'running' if d['running'] else 'stopped'}")
    if s.get("topology"):
        _print_topology(s["topology"])


@lab.command("env")
@_lab_dir_option
def lab_env(lab_dir: Path | None) -> None:
    """Shell export lines so ceph, rados, rbd and fio work against the lab."""
    lb = _lab(lab_dir)
    if lb.info() is None:
        raise UserError(f"no lab in {lb.dir}", "start one with 'cephbench lab up'")
    for k, v in lb.env().items():
        click.echo(f"export {k}={v}")
    topo = lb.info().topology  # type: ignore[union-attr]
    if topo:
        # cephbench fills settings.ssh from the lab by itself; this is for a person at the shell
        hosts = " ".join(h["name"] for h in topo["hosts"])
        click.echo(f"# hosts {hosts}: ssh -F {lb.ssh_files.client_config} {topo['hosts'][0]['name']}")


@lab.command("throttle")
@_lab_dir_option
@click.argument("specs", nargs=-1, metavar="[osd.N[.db]=RATE[,IOPS] ...]")
@click.option("--clear", "clear", multiple=True, metavar="osd.N[.db]", help="Remove the throttle of these drives.")
def lab_throttle(lab_dir: Path | None, specs: tuple[str, ...], clear: tuple[str, ...]) -> None:
    """Slow (or stop slowing) drives of a running multi-host lab through blkio; with nothing given, list the drives."""
    lb = _lab(lab_dir)
    if lb.info() is None or not lb.is_running():
        raise UserError(f"no lab running in {lb.dir}", "start one with 'cephbench lab up --hosts 3'", where="--dir")
    record = lb.drives()
    if record is None:
        raise UserError(f"the lab in {lb.dir} is a one-host lab, whose OSDs are plain files", "throttles need a "
                        "multi-host lab: 'cephbench lab down', then 'cephbench lab up --hosts 3'", where="--dir")
    osds = sorted({d.osd for d in record.drives})
    dbs = sorted({d.osd for d in record.drives if d.role == "db"})
    to_set = parse_throttle_specs(list(specs), where="lab throttle") if specs else ()
    to_clear = parse_drive_refs(list(clear)) if clear else ()
    check_drives([t.drive for t in to_set], osds, dbs, where="lab throttle")
    check_drives(to_clear, osds, dbs, where="lab throttle --clear")
    for ref in to_clear:
        lab_drives.clear_throttle(record, ref)
    for t in to_set:
        lab_drives.apply_throttle(record, t, where="lab throttle")
    for d in record.drives:
        limit = d.limit
        shown = ("not throttled" if limit is None else
                 ", ".join(x for x in (f"{format_size(limit.bytes_per_s)}/s" if limit.bytes_per_s else "",
                                       f"{limit.iops} IOPS" if limit.iops else "") if x))
        out.print(f"  {str(d.ref):<10} {d.path:<40} {shown}")


@lab.command("roots")
@click.option("--remove", "remove", default=None, metavar="RELEASE", help="Remove the cached root of RELEASE.")
def lab_roots(remove: str | None) -> None:
    """The root file systems of Ceph releases that labs run from (cached; built by `lab up --release`)."""
    from .lab import roots
    if remove:
        gone = roots.remove(remove)
        out.print(f"removed the {gone.release} root ({format_size(gone.size_bytes)}) from {gone.dir}")
        return
    found = roots.list_roots()
    if not found:
        out.print(f"no roots in {roots.roots_dir()}; `cephbench lab up --release reef` builds one")
        return
    out.print(f"{'release':<10} {'ceph':<22} {'debian':<9} {'size':>9}  built")
    for r in found:
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.built_unix))
        out.print(f"{r.release:<10} {r.ceph_version:<22} {r.suite:<9} {format_size(r.size_bytes):>9}  {built} "
                  f"in {r.build_s:.0f} s  {r.dir}")


@lab.command("down")
@_lab_dir_option
@click.option("--keep", is_flag=True, help="Keep the lab directory (data, logs).")
def lab_down(lab_dir: Path | None, keep: bool) -> None:
    """Stop exactly the daemons this lab started, and remove its directory."""
    lb = _lab(lab_dir)
    t0 = time.monotonic()
    stopped = lb.down(keep=keep)
    if stopped is None:
        out.print(f"no lab in {lb.dir}: nothing to do")
        return
    out.print(f"lab down in {time.monotonic() - t0:.1f} s: stopped {len(stopped)} daemon(s)"
              + (f"; kept {lb.dir}" if keep else f"; removed {lb.dir}"))


# ---- baseline ------------------------------------------------------------------------

@main.group()
def baseline() -> None:
    """What the hardware can do: disks (fio, direct I/O) and network (iperf3), to compare the cluster with."""


def _duration_option(value: str, flag: str) -> float:
    from .units import parse_duration
    try:
        d = parse_duration(value)
    except ValueError as exc:
        raise UserError(str(exc), where=flag) from None
    if d <= 0:
        raise UserError(f"{value!r} must be longer than zero", where=flag)
    return d


@baseline.command("disk")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--size", default="1GiB", show_default=True, help="Test file size per path.")
@click.option("--runtime", default="10s", show_default=True, help="Run time of each fio step.")
@click.option("--pattern", "patterns", multiple=True, help="Only these patterns (repeatable; default all).")
@click.option("--allow-raw-device", is_flag=True, help="Allow a block device that holds nothing (it is overwritten).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Run directory for the results.")
def baseline_disk(paths: tuple[Path, ...], size: str, runtime: str, patterns: tuple[str, ...],
                  allow_raw_device: bool, out_dir: Path | None) -> None:
    """fio on each PATH alone, then on all at once: dd-equivalent, sequential 1/4 MiB, random 4 KiB qd 1/32."""
    from .drivers import disk_baseline
    nbytes, secs = _size_option(size, "--size"), _duration_option(runtime, "--runtime")
    unknown = [p for p in patterns if p not in disk_baseline.PATTERNS]
    if unknown:
        raise UserError(f"unknown pattern {unknown[0]!r}; use one of {', '.join(disk_baseline.PATTERNS)}",
                        where="--pattern")
    targets = disk_baseline.check_paths(list(paths), nbytes, allow_raw_device, ".cephbench-preflight.dat")
    tests = disk_baseline.make_tests(list(patterns) or disk_baseline.DEFAULT_PATTERNS,
                                     {"paths": [str(p) for p in paths], "size": nbytes, "runtime_s": secs,
                                      "allow_raw_device": allow_raw_device})
    _run_baseline("disk", tests, out_dir, f"disk baseline of {len(targets)} path(s), {format_size(nbytes)} test "
                  f"files, {seconds(secs)} per step")


def _run_baseline(what: str, tests: list, out_dir: Path | None, intro: str) -> None:
    """The baseline's tests as a run of their own, through the runner as a suite's baselines (ledger, host watch,
    cleanup on every exit); the tables, then exit 1 when a test failed, 130 when interrupted."""
    from .launch import prepare_baseline, start
    from .report.baseline import print_baselines
    prep = prepare_baseline(what, tests, out_dir)
    rundir = prep.rundir
    assert rundir is not None
    out.print(f"{intro}; results in {rundir.path}")
    events = ConsoleEvents(err, prep.todo, run_dir=rundir.path)
    with events:
        summary = start(prep, events)
    print_baselines(out, summary.results)
    out.print(f"results: {rundir.path}")
    for r, why in summary.cleanup_failed:
        err.print(f"cephbench: could not remove {r.kind} {r.name}: {why} (listed in {rundir.path}/resources.json; "
                  f"cephbench cleanup {rundir.path})", markup=False)
    if summary.interrupted:
        err.print("interrupted: finished results are kept", markup=False)
        sys.exit(130)
    if summary.failed or summary.cleanup_failed:
        sys.exit(1)


@baseline.command("network")
@click.option("--hosts", "hosts", default="localhost", show_default=True,
              help="Comma-separated hosts (others reached with ssh).")
@click.option("--streams", default=4, show_default=True, type=click.IntRange(1, 128), help="Parallel streams.")
@click.option("--duration", default="10s", show_default=True, help="Duration of each iperf3 test.")
@click.option("--port", type=int, default=None, help="First server port (default: a free port).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Run directory for the results.")
def baseline_network(hosts: str, streams: int, duration: str, port: int | None, out_dir: Path | None) -> None:
    """iperf3 between every ordered pair (1 and N streams) and from each host to all others at once."""
    from .drivers import iperf
    secs = _duration_option(duration, "--duration")
    names = [h.strip() for h in hosts.split(",") if h.strip()]
    if not names:
        raise UserError("give at least one host", where="--hosts")
    if port is not None:
        iperf.check_port(port)
    iperf.resolve_hosts(names)      # refused in one line before the run directory exists
    tests = iperf.make_tests(names, streams, secs, port)
    _run_baseline("network", tests, out_dir, f"network baseline between {', '.join(names)}: {len(tests)} iperf3 "
                  f"tests of {seconds(secs)}")


# ---- validate / run ------------------------------------------------------------------

def _plan_param(key: str, value: object) -> str:
    """`image_size=256MiB`, `duration=5s`: a figure with its unit, as the suite writes it."""
    if isinstance(value, int) and not isinstance(value, bool) and (key.endswith("size") or key == "total"):
        return f"{key}={format_size(value)}"
    if key.endswith("_s") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{key[:-2]}={value:g}s"
    return f"{key}={value}"


def _unlisted_dd(suite: Suite) -> bool:
    disks = suite.baseline.disks if suite.baseline is not None else None
    return disks is not None and disks.patterns is not None and "dd" not in disks.patterns


def _print_plan(plan: Plan, suite: Suite) -> None:
    dd_added = _unlisted_dd(suite)
    for t in plan.tests:
        # what the suite left unset says nothing; pool_profile is the pool's whole definition, named by `pool`
        p = {k: v for k, v in t.params.items() if k != "pool_profile" and v is not None}
        shown = " ".join(_plan_param(k, v) for k, v in p.items())
        why = dd_added and t.kind == "disk_baseline" and p.get("pattern") == "dd"
        out.print(f"{t.id:<48} {shown}" + ("  (not listed: always runs first, it writes the file the other "
                                           "patterns read)" if why else ""), markup=False)
    groups = len({t.group for t in plan.tests})
    out.print(f"{len(plan.tests)} tests in {groups} groups; estimated duration {seconds(plan.est_duration_s)}")
    _print_plan_warnings(plan)


def _print_plan_warnings(plan: Plan) -> None:
    from .plan import warnings
    for w in warnings(plan):
        err.print(f"warning: {w}", markup=False)


@main.command()
@click.argument("suite_path", metavar="SUITE", type=click.Path(path_type=Path))
def validate(suite_path: Path) -> None:
    """Check a suite and print the expanded plan, without contacting a cluster."""
    suite = load_suite(suite_path)
    _print_plan(expand(suite), suite)


@main.command()
@click.argument("suite_path", metavar="SUITE", type=click.Path(path_type=Path), required=False)
@click.option("--out", "out_dir", type=click.Path(path_type=Path), help="Run directory "
              "(default ./cephbench-runs/<UTC timestamp>-<suite name>).")
@click.option("--resume", "resume_dir", type=click.Path(path_type=Path),
              help="Complete an earlier run: run exactly the tests that have no result.")
@click.option("-c", "--conf", type=click.Path(path_type=Path), help="ceph.conf of the target cluster "
              "(default: CEPH_CONF).")
@click.option("-k", "--keyring", type=click.Path(path_type=Path), help="Keyring (default: CEPH_KEYRING).")
@click.option("--id", "client_id", help="Client id, e.g. admin.")
@click.option("--lab", "use_lab", is_flag=True, help="Target the local lab (started when none runs).")
@click.option("--lab-dir", type=click.Path(path_type=Path), help="Target the lab in this directory.")
@click.option("--force", is_flag=True, help="Run even on a HEALTH_ERR cluster, or with a client's clock more than "
              "1 s off (the offset is recorded and corrected for).")
@click.option("--keep", is_flag=True, help="Keep the pools and objects the run created.")
@click.option("--dry-run", is_flag=True, help="Print every cluster-changing command; change nothing.")
@click.option("--connect-timeout", type=click.IntRange(min=1), default=CONNECT_TIMEOUT_S, show_default=True,
              help="Seconds to wait for a monitor to answer.")
def run(suite_path: Path | None, out_dir: Path | None, resume_dir: Path | None, conf: Path | None,
        keyring: Path | None, client_id: str | None, use_lab: bool, lab_dir: Path | None, force: bool, keep: bool,
        dry_run: bool, connect_timeout: int) -> None:
    """Run a suite against a cluster (-c, CEPH_CONF, the suite's target:) or the local lab (--lab)."""
    from .launch import RunRequest, prepare, start
    prep = prepare(RunRequest(suite_path, resume_dir, out_dir, conf, keyring, client_id, lab_dir, force, keep,
                              dry_run, connect_timeout, lab=use_lab), say=lambda m: err.print(m, markup=False))
    for line in prep.unreadable:
        err.print(f"cephbench: {prep.rundir.results_jsonl if prep.rundir else resume_dir}:{line.line_no}: unreadable "
                  f"result ({line.reason}); that test runs again", markup=False)
    if not prep.todo:
        out.print(f"every test of {prep.rundir.path if prep.rundir else prep.suite.name} has a result: nothing to run")
        return
    _print_plan_warnings(prep.plan)
    events = ConsoleEvents(err, prep.todo, quiet=dry_run,
                           run_dir=prep.rundir.path if prep.rundir else None)
    if dry_run:
        out.print(f"dry run against {prep.target.conf} (health {prep.status.get('health', {}).get('status')}); "
                  f"{len(prep.todo)} tests")
        if prep.shapes is not None:
            _print_shape_steps(prep.shapes, prep.todo)
        out.print("these commands would change the cluster:")
    else:
        out.print(f"run {prep.rundir.path}: {len(prep.todo)} of {len(prep.plan.tests)} tests, about "
                  f"{seconds(prep.est_s)}")
    with events:
        summary = start(prep, events)
    if dry_run:
        for line in summary.planned:
            out.print(f"  {line}", markup=False)
        return
    rundir = prep.rundir
    all_results, _ = rundir.results()
    print_results(out, all_results)
    print_verdict(out, all_results)
    try:
        from .report.write import write_report     # only when a report is written: start-up stays light
        html_path, md_path, _ = write_report(rundir)
        out.print(f"report: {html_path}  (and {md_path.name} for tickets)")
    except Exception as exc:  # noqa: BLE001 - results are safe on disk; a report problem must not hide them
        logging.getLogger(__name__).debug("report failed", exc_info=True)
        err.print(f"cephbench: the report could not be written ({exc}); 'cephbench report {rundir.path}' retries",
                  markup=False)
    out.print(f"results: {rundir.path}  (print again with: cephbench show {rundir.path})")
    _catalog(rundir.path)
    if summary.lost:
        left = ", ".join(f"{r.kind} {r.name}" for r in summary.left_behind) or "nothing"
        err.print(f"cephbench: the run ended early: {summary.lost}; finished results are kept; left on the "
                  f"cluster: {left} (once it answers: cephbench cleanup {rundir.path})", markup=False)
        sys.exit(1)
    if summary.interrupted:
        err.print(f"interrupted: finished results are kept; complete the run with "
                  f"'cephbench run --resume {rundir.path}'")
        sys.exit(130)
    if summary.cleanup_failed:
        from .resources import Refusal
        for r, why in summary.cleanup_failed:
            err.print(f"cephbench: {why}" if isinstance(why, Refusal) else f"cephbench: could not remove {r.kind} "
                      f"{r.name}: {why} (listed in {rundir.path}/resources.json)", markup=False)
    if summary.failed or summary.cleanup_failed:
        sys.exit(1)


def _print_shape_steps(keeper, todo: list) -> None:
    """Each lab shape a dry run would enter, in order, and what each costs: a rebuild, a throttle, nothing."""
    from .shape_plan import rebuilds, steps, throttle_text
    entered = [name for name, _ in groupby(t.variant for t in todo if t.variant is not None)]
    plan = steps(keeper.original, keeper.current, [(n, keeper.want(n)) for n in entered])
    out.print(f"lab {keeper.lab.dir}: {rebuilds(plan)} rebuild(s) "
              f"and {sum(1 for _, st in plan if st.kind == 'throttle')} throttle change(s):")
    for name, st in plan:
        what = {"none": "as it is", "throttle": "throttled: " + " ".join(
                    [throttle_text(t) for t in st.set] + [f"{r} unthrottled" for r in st.clear]),
                "rebuild": "rebuilt: lab up " + " ".join(st.build.up_flags() if st.build else []),
                "up": "started: lab up " + " ".join(st.build.up_flags() if st.build else []),
                "down": "taken down (the run started it)"}[st.kind]
        out.print(f"  {'variant ' + name if name else 'at the end'}: {what}", markup=False)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("-c", "--conf", type=click.Path(path_type=Path), help="ceph.conf (default: the one run.json names).")
@click.option("-k", "--keyring", type=click.Path(path_type=Path), help="Keyring (default: the one run.json names).")
@click.option("--id", "client_id", help="Client id (default: the one run.json names).")
def cleanup(run_dir: Path, conf: Path | None, keyring: Path | None, client_id: str | None) -> None:
    """Remove what a run that died (kill -9, a crash) left: pools, flags, images, users, its tool processes."""
    from .launch import RunRequest, cleanup as clean
    from .recovery import Refusal, how_to_remove
    removed, failed = clean(run_dir, RunRequest(conf=conf, keyring=keyring, client_id=client_id),
                            say=lambda m: out.print(f"  {m}", markup=False))
    if not removed and not failed:
        out.print(f"{run_dir}: nothing left behind", markup=False)
        return
    out.print(f"{run_dir}: removed {len(removed)} thing(s) the run left", markup=False)
    for r, why in failed:       # a refusal is not the run's to remove: no command for it either
        err.print(f"cephbench: {why}" if isinstance(why, Refusal) else
                  f"cephbench: could not remove {r.kind} {r.name}: {why}; by hand: {how_to_remove(r)}", markup=False)
    if failed:
        sys.exit(1)


def _open_run(run_dir: Path) -> tuple[RunDir, list[Result]]:
    """A run directory and its readable results; unreadable lines are reported and skipped."""
    rundir = RunDir.open(run_dir)
    results, bad = rundir.results()
    _warn_corrupt(rundir.path, bad)
    return rundir, results


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--reasons", is_flag=True, help="Print the efficiency model's reason for every result.")
@click.option("--json", "as_json", is_flag=True, help="The results as a JSON list (as 'export --format json').")
def show(run_dir: Path, reasons: bool, as_json: bool) -> None:
    """Print the results of a run directory."""
    if as_json:
        from .export import export
        click.echo(export(run_dir, "json"), nl=False)
        return
    _, results = _open_run(run_dir)
    if not results:
        out.print(f"{run_dir}: no results yet")
        return
    print_results(out, results, reasons=reasons)
    print_verdict(out, results)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
def report(run_dir: Path) -> None:
    """Write report.html (self-contained, with charts) and report.md into a run directory."""
    rundir, results = _open_run(run_dir)
    t0 = time.monotonic()
    from .report.write import write_report
    html_path, md_path, charts = write_report(rundir)
    out.print(f"report: {html_path} ({len(results)} tests, {charts} charts, {time.monotonic() - t0:.1f} s); "
              f"{md_path}")


@main.command("export")
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "openmetrics"]), required=True,
              help="csv (a row per test), json (a list of results) or openmetrics (Prometheus textfile/Pushgateway).")
@click.option("--out", "out_file", type=click.Path(path_type=Path), help="Write to FILE instead of stdout.")
def export_(run_dir: Path, fmt: str, out_file: Path | None) -> None:
    """Export a run's results for spreadsheets, CI or Prometheus/Grafana (docs/exports.md)."""
    from .export import export
    text = export(run_dir, fmt)
    if out_file is None:
        click.echo(text, nl=False)
        return
    try:
        tmp = out_file.with_name(out_file.name + ".tmp")   # the textfile collector must never read half a file
        tmp.write_text(text)
        tmp.replace(out_file)
    except OSError as exc:
        raise UserError(f"cannot write {out_file}: {exc.strerror}", "give --out a file you may write",
                        where="--out") from None
    err.print(f"exported {run_dir} as {fmt}: {out_file}", markup=False)


@main.group()
def suite() -> None:
    """Suites from other tools."""


@suite.command("from-cbt")
@click.argument("cbt_yaml", metavar="CBT.yaml", type=click.Path(path_type=Path))
@click.option("--out", "out_file", type=click.Path(path_type=Path), help="Write the suite to FILE (default stdout).")
def suite_from_cbt(cbt_yaml: Path, out_file: Path | None) -> None:
    """Translate CBT's radosbench, librbdfio and rawfio benchmarks into a cephbench suite (docs/suites.md)."""
    from .cbt import translate_file
    text, unmapped = translate_file(cbt_yaml)
    for line in unmapped:
        err.print(f"cephbench: not translated: {line}", markup=False)
    if out_file is None:
        click.echo(text, nl=False)
        return
    try:
        out_file.write_text(text)
    except OSError as exc:
        raise UserError(f"cannot write {out_file}: {exc.strerror}", "give --out a file you may write",
                        where="--out") from None
    err.print(f"suite: {out_file} ({len(unmapped)} key(s) not translated); check it with "
              f"'cephbench validate {out_file}'", markup=False)


# ---- compare / import / history ---------------------------------------------------------------

def _warn_corrupt(path: Path, bad) -> None:
    for line in bad:
        err.print(f"cephbench: {path / 'results.jsonl'}:{line.line_no}: unreadable result skipped ({line.reason})",
                  markup=False)


@main.command()
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "html"]), default="text",
              show_default=True, help="Output format.")
@click.option("--out", "out_file", type=click.Path(path_type=Path), help="Write to FILE instead of the terminal.")
@click.option("--fail-on-regression", "fail_pct", type=float, metavar="PCT",
              help="Exit 1 when a significant change for the worse passes PCT percent (for CI).")
@click.option("--match-on", "match_on", metavar="KEYS",
              help="Match tests on kind and only these parameters (comma-separated), e.g. phase,object_size.")
@click.option("--ignore", "ignore", multiple=True, metavar="KEY", help="Leave this parameter out of the match "
              "(repeatable), e.g. --ignore pool_profile; --ignore release matches runs of two Ceph releases.")
@click.option("--variant", metavar="NAME", help="Compare each run of variants through this variant only, matched "
              "with the tests of runs without variants.")
def compare(runs: tuple[Path, ...], fmt: str, out_file: Path | None, fail_pct: float | None,
            match_on: str | None, ignore: tuple[str, ...], variant: str | None) -> None:
    """Compare runs: RUN_A against RUN_B [RUN_C ...], test by test, with significance from the repeats."""
    from .analysis.compare import compare_runs, load_run, regressions
    from .report import compare_render
    if len(runs) < 2:
        raise UserError("give at least two run directories", "cephbench compare RUN_A RUN_B [RUN_C ...]",
                        where="RUNS")
    loaded = []
    for path in runs:
        run = load_run(path)
        _warn_corrupt(run.path, run.corrupt)
        loaded.append(run)
    keys = [k.strip() for k in (match_on or "").split(",") if k.strip()]
    pairs = compare_runs(loaded, keys, ignore, variant=variant)
    if fmt == "text" and out_file is None:
        compare_render.print_text(out, pairs)
    else:
        if fmt == "html":
            text = compare_render.render_html(pairs)
        elif fmt == "markdown":
            charts: list[str | None] = []
            for i, pair in enumerate(pairs):
                svg = compare_render.pct_change_svg(pair, compare_render.letter(i)) if out_file else None
                if svg is not None and out_file is not None:
                    name = f"{out_file.stem}-A-vs-{compare_render.letter(i)}.svg"
                    (out_file.parent / name).write_text(svg)
                    svg = name
                charts.append(svg)
            text = compare_render.render_markdown(pairs, charts)
        else:
            text = compare_render.render_text(pairs)
        if out_file is None:
            click.echo(text, nl=False)
        else:
            try:
                out_file.write_text(text)
            except OSError as exc:
                raise UserError(f"cannot write {out_file}: {exc.strerror}", where="--out") from None
            out.print(f"compare: {out_file}", markup=False)
    if fail_pct is not None:
        bad = regressions(pairs, fail_pct)
        for r in bad:
            err.print(f"regression: {r.text()}", markup=False)
        if bad:
            sys.exit(1)



@main.command("import")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Run directory (default ./cephbench-runs/<UTC timestamp>-import).")
@click.option("--label", "labels", multiple=True, metavar="KEY=VALUE",
              help="Add (or override) a parameter of every imported test, e.g. ceph_version=0.48 or phase=seq "
                   "(repeatable).")
@click.option("--date", "date", metavar="DATE", help="When the files were measured: YYYY-MM-DD[THH:MM[:SS]], UTC "
              "unless an offset follows (default: the date in each output, else the file's modification time).")
@click.option("--db", type=click.Path(path_type=Path), help="History catalog (default: see 'cephbench history').")
def import_(files: tuple[Path, ...], out_dir: Path | None, labels: tuple[str, ...], date: str | None,
            db: Path | None) -> None:
    """Turn raw rados bench, fio, rbd bench, iperf3 or loadgen output into a run directory."""
    from .history import format_time, parse_date
    from .importer import import_files, parse_labels
    when = parse_date(date, where="--date") if date is not None else None
    if when is not None and when > time.time():
        raise UserError(f"{date!r} is in the future", "give the date the files were measured", where="--date")
    if when is not None and when < 0:
        raise UserError(f"{date!r} is before 1970", "give the date the files were measured", where="--date")
    rundir, results = import_files(list(files), out_dir, parse_labels(labels), when)
    print_results(out, results)
    out.print(f"imported {len(results)} file(s): {rundir.path}", markup=False)
    for src in rundir.meta()["sources"]:
        how = {"--date": "from --date", "content": "from the output",
               "file time": "from the file's modification time: the output carries no date (give --date)"}
        out.print(f"  {src['test']}: measured {format_time(src['measured_unix'])} UTC, "
                  f"{how.get(src['date_from'], src['date_from'])}", markup=False, soft_wrap=True)
    _catalog(rundir.path, db)


def _catalog(run_dir: Path, db: Path | None = None) -> None:
    """Add a run to the history catalog; a catalog that cannot be written only warns."""
    from .history import History
    try:
        with History.open(db) as h:
            h.add(run_dir)
    except Exception as exc:  # noqa: BLE001 - the run is done and kept: a catalog failure (sqlite3, disk) only warns
        msg = exc.one_line() if isinstance(exc, UserError) else str(exc)
        err.print(f"cephbench: warning: {run_dir} not added to the history catalog: {msg}", markup=False)



def _history_filters(f):
    for opt in reversed([
        click.option("--suite", help="Only runs of this suite."),
        click.option("--fsid", "--cluster", "fsid", help="Only runs on this cluster (fsid or its beginning)."),
        click.option("--ceph-version", "ceph_version", help="Only runs on this Ceph version (or its beginning, "
                     "e.g. 16.2)."),
        click.option("--since", metavar="DATE", help="Only runs started on or after DATE (YYYY-MM-DD[THH:MM], UTC)."),
        click.option("--until", metavar="DATE", help="Only runs started before the end of DATE."),
    ]):
        f = opt(f)
    return f


def _filters(ctx: click.Context, **given: str | None):
    """The history filters given to `history` and to its subcommand, the subcommand's winning."""
    from .history import Filters
    merged = {**(ctx.obj or {}).get("filters", {}), **{k: v for k, v in given.items() if v is not None}}
    return Filters.from_options(**merged)


@main.group(invoke_without_command=True)
@click.option("--db", type=click.Path(path_type=Path), help="Catalog file (default $CEPHBENCH_HISTORY, else "
              "$XDG_DATA_HOME/cephbench/history.sqlite).")
@click.option("--trend", "trend_metric", metavar="METRIC", help="Follow one test across runs: bytes_per_s, "
              "ops_per_s, lat_mean_ns or lat_p99_ns (or bw, iops, lat, p99).")
@click.option("--test", "test_match", metavar="MATCH", help="With --trend: 'KIND key=value ...' (parameters that "
              "must be equal) or a part of the test id.")
@click.option("--pool-profile", "pool_profile", metavar="PROFILE", help="With --trend: only tests on this pool "
              "profile, e.g. 'replicated size 3' or 'EC 2+1'.")
@click.option("--variant", metavar="NAME", help="With --trend: only tests of this variant ('none': without one).")
@click.option("--release", metavar="NAME", help="With --trend: only runs that record this Ceph release in run.json "
              "('none': without one).")
@click.option("--ignore", "ignore", multiple=True, metavar="KEY", help="With --trend: a parameter that does not "
              "set configurations apart (repeatable), e.g. duration_s; never the pool profile, variant or release.")
@_history_filters
@click.pass_context
def history(ctx: click.Context, db: Path | None, trend_metric: str | None, test_match: str | None,
            pool_profile: str | None, variant: str | None, release: str | None, ignore: tuple[str, ...],
            **filters) -> None:
    """The catalog of every run and import: list them, or follow one test across runs (--trend)."""
    ctx.obj = {"db": db, "filters": filters}
    if trend_metric or test_match:
        if not (trend_metric and test_match):
            raise UserError("--trend and --test go together", "e.g. --trend bytes_per_s --test "
                            "'rados_bench phase=write object_size=4MiB'", where="--trend" if test_match else "--test")
        _history_trend(ctx, trend_metric, test_match, pool_profile, variant, release, ignore)
    elif pool_profile or variant or release or ignore:
        raise UserError("--pool-profile, --variant, --release and --ignore choose what a trend follows",
                        "give them with --trend METRIC --test MATCH",
                        where="--pool-profile" if pool_profile else "--variant" if variant else
                        "--release" if release else "--ignore")
    elif ctx.invoked_subcommand is None:
        ctx.invoke(history_list)


def _history_trend(ctx: click.Context, metric: str, match: str, pool_profile: str | None, variant: str | None,
                   release: str | None, ignore: tuple[str, ...]) -> None:
    import shlex
    from rich.table import Table
    from .history import NEVER_MIXED, History, format_time, metric_name, series
    from .identity import PARTS
    from .report.compare_render import value
    from .analysis.compare import METRICS
    name = metric_name(metric)
    m = next(x for x in METRICS if x.name == name)
    filters = _filters(ctx)
    with History.open(ctx.obj["db"], create=False) as h:
        points = h.trend(name, match, filters, pool_profile, variant, ignore, release)
    if not points:
        raise UserError(f"no catalogued result matches {match!r} with a {name} figure",
                        "see the runs with 'cephbench history list'", where="--test")
    groups = series(points)
    for i, s in enumerate(groups, 1):
        title = f"{m.label} of {match}, oldest first"
        if len(groups) > 1:
            title += f" — configuration {i} of {len(groups)}: {s.title()}"
        t = Table(title=title, title_justify="left", header_style="bold")
        figure = f"median {m.label}"
        for col in ("started (UTC)", "run", "ceph", "test", "n", figure, "Δ% vs first", ""):
            t.add_column(col, justify="right" if col in ("n", figure, "Δ% vs first") else "left", overflow="fold")
        base = s.points[0].median
        for p in s.points:
            delta = f"{(p.median / base - 1) * 100:+.1f}%" if base else "-"
            t.add_row(format_time(p.run.started_unix), Path(p.run.path).name, p.run.ceph_version or "-", p.label,
                      str(len(p.values)), value(m, p.median), delta, "missing" if p.run.missing else "")
        out.print(t)
    if len(groups) > 1:
        apart = list(groups[0].apart)
        picks = []
        for k in (k for k in apart if k in NEVER_MIXED):
            pickable = [s.apart[k] for s in groups if s.apart[k] not in ("unknown", "none") or k in PARTS]
            if pickable:
                picks.append(f"{NEVER_MIXED[k]} {shlex.quote(pickable[0])}")
        others = [k for k in apart if k not in NEVER_MIXED]
        how = picks + ([f"more key=value pairs in --test ({', '.join(others)}), or --ignore KEY for a parameter "
                        f"that should not set them apart"] if others else [])
        out.print(f"{len(groups)} configurations match {match!r} (they differ in {', '.join(apart)}): each has its "
                  f"own table and its own 'vs first'. To follow one, give {'; or '.join(how)}.",
                  markup=False, soft_wrap=True)


@history.command("list")
@_history_filters
@click.pass_context
def history_list(ctx: click.Context, **filters) -> None:
    """Catalogued runs, oldest first; a run whose directory is gone is marked missing."""
    from rich.table import Table
    from .history import History, NoCatalog, format_time
    chosen = _filters(ctx, **filters)
    try:
        h = History.open(ctx.obj["db"], create=False)
    except NoCatalog as exc:            # nothing catalogued yet: nothing to list, and no file made by looking
        out.print(exc.one_line(), markup=False)
        return
    with h:
        runs = h.runs(chosen)
        db_path = h.path
    if not runs:
        out.print(f"no runs in {db_path}" + (" match the filters" if any(filters.values()) or any(
            ctx.obj["filters"].values()) else ""), markup=False)
        return
    t = Table(title=f"History ({db_path})", title_justify="left", header_style="bold")
    for col in ("started (UTC)", "suite", "tests", "failed", "ceph", "fsid", "run directory", "state"):
        t.add_column(col, justify="right" if col in ("tests", "failed") else "left", overflow="fold")
    for r in runs:
        state = "missing" if r.missing else ("imported" if r.imported else "")
        t.add_row(format_time(r.started_unix), r.suite or "-", str(r.tests), str(r.failed), r.ceph_version or "-",
                  (r.fsid or "-")[:8], r.path, f"[red]{state}[/red]" if state == "missing" else state)
    out.print(t)


@history.command("add")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.pass_context
def history_add(ctx: click.Context, run_dirs: tuple[Path, ...]) -> None:
    """Catalogue run directories by hand (again: their rows are replaced)."""
    from .history import History, checked_meta
    for d in run_dirs:
        checked_meta(d)                 # every directory checked before the catalog is touched
    with History.open(ctx.obj["db"]) as h:
        for d in run_dirs:
            n, bad = h.add(d)
            _warn_corrupt(Path(d), bad)
            out.print(f"catalogued {d}: {n} result(s)", markup=False)



if __name__ == "__main__":
    main()
