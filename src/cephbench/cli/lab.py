"""`cephbench lab`: a real local Ceph cluster to try and to test on."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.errors import OperationFailed, UserError
from ..lab import default_lab_dir
from ..core.units import format_size
from .common import out, err, start_up

if TYPE_CHECKING:
    from ..lab import Lab


@click.group()
def lab() -> None:
    """A real local Ceph cluster (mon, mgr, OSDs on BlueStore files, RGW) for trying and testing."""


def _lab_dir_option(f):
    return click.option("--dir", "lab_dir", type=click.Path(path_type=Path), default=None,
                        help=f"Lab directory (default {default_lab_dir()}).")(f)


def _lab(lab_dir: Path | None) -> Lab:
    with start_up():
        from ..lab import Lab     # the lab's daemons and namespaces: not for `lab --help`
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
@click.option("--cpu-limit", "cpu_limit", multiple=True, metavar="osd.N=CORES",
              help="Hold an OSD to a CPU limit from the start, as a container's is: a cgroup CFS quota, e.g. "
                   "osd.2=0.08 (8 % of a core) (with --hosts).")
@click.option("--host-load", "host_load", multiple=True, metavar="hN=CORES",
              help="Run a CPU-burning neighbour on a lab host, e.g. h2=1.5 (busy loops held to 1.5 cores, in the "
                   "host's group; stopped by lab down) (with --hosts).")
@click.option("--db-device", "db_device", default=None, metavar="SIZE",
              help="Put each OSD's BlueStore WAL/DB (FileStore journal) on a drive of its own of SIZE, e.g. 2GiB "
                   "(with --hosts).")
@click.option("--objectstore", default="bluestore", show_default=True, help="bluestore or filestore (with --hosts).")
@click.option("--fs", "fs", default=None, help="FileStore's file system: xfs (default), ext4 or btrfs.")
@click.option("--release", default=None, metavar="pacific|reef|tentacle",
              help="Ceph release of the daemons (default the host's own); another release runs from a root built "
                   "once from Debian's archive (see `lab roots`).")
@click.option("--monitoring", is_flag=True,
              help="What cephadm deploys beside a cluster: a node-exporter on every host, the mgr prometheus module "
                   "and a Prometheus server scraping them every second (with --hosts; `lab env` prints its URL).")
@click.option("--containers", is_flag=True,
              help="Run each daemon in a podman container of the release's image, as cephadm lays them out "
                   "(/var/lib/ceph/FSID, /var/run/ceph/FSID, /var/log/ceph/FSID); with --hosts, each in its host's "
                   "network namespace.")
@click.option("--cpus", "cpus", multiple=True, metavar="DAEMON=CORES",
              help="With --containers: a container's CPU limit, for a type or one daemon, e.g. osd=0.5 or osd.1=0.2.")
@click.option("--memory", "memory", multiple=True, metavar="DAEMON=SIZE",
              help="With --containers: a container's memory limit, e.g. osd=1GiB.")
def lab_up(lab_dir: Path | None, osds: int | None, osd_size: str, no_rgw: bool, hosts: int | None,
           osds_per_host: int, clients: int, public_net: str | None, cluster_net: str | None,
           client_net: str | None, osd_throttle: tuple[str, ...], cpu_limit: tuple[str, ...],
           host_load: tuple[str, ...], db_device: str | None, objectstore: str,
           fs: str | None, release: str | None, monitoring: bool, containers: bool, cpus: tuple[str, ...],
           memory: tuple[str, ...]) -> None:
    """Start a lab cluster and wait until it is healthy."""
    from ..lab.multihost import multi_host, parse_values
    lb = _lab(lab_dir)
    shape = parse_values({"hosts": hosts, "osds_per_host": osds_per_host, "clients": clients, "osds": osds,
                          "osd_size": osd_size, "public_net": public_net, "cluster_net": cluster_net,
                          "client_net": client_net, "osd_throttle": osd_throttle, "cpu_limit": cpu_limit,
                          "host_load": host_load, "db_device": db_device, "objectstore": objectstore, "fs": fs})
    size = shape["osd_size"]
    if (cpus or memory) and not containers:
        raise UserError(f"{'--cpus' if cpus else '--memory'} limits a container: it needs --containers",
                        "add --containers", where="--cpus" if cpus else "--memory")
    if containers and monitoring:
        # not done yet in containers: said rather than something else started
        raise UserError("a lab in containers has no monitoring stack yet", "drop --monitoring", where="--monitoring")
    multi = multi_host(shape)
    if lb.started() and lb.is_running():
        _print_lab_status(lb)
        raise UserError(f"a lab is already running in {lb.dir}", f"stop it with 'cephbench lab down --dir {lb.dir}'")
    n_osds = multi.osds if multi else (osds if osds is not None else 3)
    if containers:
        _lab_up_in_containers(lb, n_osds, size, no_rgw, release, cpus, memory, multi)
        return
    info = lb.up(osds=n_osds, osd_size_bytes=size, rgw=not no_rgw, progress=lambda m: err.print(f"lab: {m}"),
                 multi=multi, release=release, monitoring=monitoring)
    out.print(f"lab ready in {info.startup_s:.1f} s: {n_osds} OSD(s) of {format_size(size)}"
              + (f", {info.release} ({info.ceph_version.split(' (')[0]})" if info.release else "")
              + (f", RGW at {info.rgw_endpoint}" if info.rgw else "") + f"; directory {lb.dir}")
    if info.topology:
        _print_topology(info.topology)
    if info.monitoring:
        mon = info.monitoring
        out.print(f"Prometheus at {mon['prometheus']} (settings.prometheus), scraping every "
                  f"{mon['scrape_interval_s']} s: node-exporters, the mgr module at {mon['mgr']}")
    out.print(f"use it from a shell: eval \"$(cephbench lab env --dir {lb.dir})\"")


def _lab_up_in_containers(lb: Lab, n: int, size: int, no_rgw: bool, release: str | None, cpus: tuple[str, ...],
                          memory: tuple[str, ...], multi) -> None:
    from ..lab import containers as ctr
    limits = ctr.parse_limits(cpus, "--cpus"), ctr.parse_limits(memory, "--memory")
    info = lb.up_in_containers(n, size, release, *limits, progress=lambda m: err.print(f"lab: {m}"), rgw=not no_rgw,
                               multi=multi)
    rgw = f", RGW at {info.rgw_endpoint}" if info.rgw else ""
    out.print(f"lab ready in {info.startup_s:.1f} s: {n} OSD(s) of {format_size(size)} in containers, "
              f"{info.release} ({info.ceph_version.split(' (')[0]}){rgw}; directory {lb.dir}", markup=False)
    out.print(f"daemons' data, sockets and logs in /var/lib/ceph/{info.fsid}, /var/run/ceph/{info.fsid}, "
              f"/var/log/ceph/{info.fsid}", markup=False)
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
    if topo.get("cpu_limits"):
        out.print("CPU limits: " + ", ".join(f"{d} {c:g} cores" for d, c in topo["cpu_limits"].items()))
    if topo.get("host_loads"):
        out.print("neighbours: " + ", ".join(f"{h} burning {c:g} cores" for h, c in topo["host_loads"].items()))
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
    from ..lab import containers
    info = lb.info()
    daemons = [{"name": d.name, "pid": d.pid, "running": d.running} for d in lb.daemons()]
    data = {"dir": str(lb.dir), "fsid": info.fsid if info else None, "daemons": daemons,
            "rgw_endpoint": info.rgw_endpoint if info else None, "health": None, "osds_up": None, "osds_in": None,
            "topology": info.topology if info else None,
            "prometheus": info.monitoring["prometheus"] if info and info.monitoring else None,
            "containers": containers.status(lb.dir, lb.conf)}
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
              f"RGW: {s['rgw_endpoint'] or '-'}" + (f"   Prometheus: {s['prometheus']}" if s.get("prometheus") else ""))
    for d in s["daemons"]:
        out.print(f"  {d['name']:<16} pid {d['pid']!s:<8} {'running' if d['running'] else 'stopped'}")
    if s.get("containers"):
        out.print("containers (podman):")
        for c in s["containers"]:
            out.print(f"  {c['container']:<52} {c['daemon']:<16} {c['host'] or '-':<4} {c['state']:<8} "
                      f"{_container_limits(c)}", markup=False)
    if s.get("topology"):
        _print_topology(s["topology"])


def _container_limits(c: dict) -> str:
    """A container's limits as asked, and as its cgroups held them at the start (CFS quota, memory limit)."""
    seen = c.get("cgroup") or {}
    cpu = (f"cpus {c['cpus']:g}" + (f" (quota {seen['cfs_quota_us']}/{seen['cfs_period_us']} us)"
                                     if seen.get("cfs_quota_us", -1) > 0 and seen.get("cfs_period_us") else "")
           if c.get("cpus") is not None else "")
    mem = f"memory {format_size(c['memory_bytes'])}" if c.get("memory_bytes") is not None else ""
    return ", ".join(x for x in (cpu, mem) if x) or "no limits"


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
    mon = lb.info().monitoring  # type: ignore[union-attr]
    if mon:
        # a suite's settings.prometheus (not read by cephbench from the environment: a suite names its source)
        click.echo(f"export CEPHBENCH_PROMETHEUS={mon['prometheus']}")


@lab.command("throttle")
@_lab_dir_option
@click.argument("specs", nargs=-1, metavar="[osd.N[.db]=RATE[,IOPS] ...]")
@click.option("--clear", "clear", multiple=True, metavar="osd.N[.db]", help="Remove the throttle of these drives.")
def lab_throttle(lab_dir: Path | None, specs: tuple[str, ...], clear: tuple[str, ...]) -> None:
    """Slow (or stop slowing) drives of a running multi-host lab through blkio; with nothing given, list the drives."""
    from ..lab import drives as lab_drives
    from ..lab.throttle import check_drives, parse_drive_refs, parse_throttle_specs
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
@click.option("--build", "build", default=None, metavar="RELEASE",
              help="Build the root of RELEASE now, if it is not cached (what `lab up --release` would do first).")
def lab_roots(remove: str | None, build: str | None) -> None:
    """The root file systems of Ceph releases that labs run from (cached; built by `lab up --release`)."""
    from ..lab import roots
    if remove and build:
        raise UserError("--remove and --build were both given", "give one of them", where="--build")
    if build:
        made = roots.ensure(build, progress=lambda m: err.print(f"lab: {m}"), where="--build")
        out.print(f"{made.release} root: ceph {made.ceph_version}, {format_size(made.size_bytes)} in {made.dir}")
        return
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


@lab.command("image")
@click.option("--build", "build", default=None, metavar="RELEASE",
              help="Make the toolbox image of RELEASE from its root (podman import; no registry), unless the one "
                   "podman holds was made from the same root and sources.")
@click.option("--remove", "remove", default=None, metavar="RELEASE", help="Remove the toolbox image of RELEASE.")
def lab_image(build: str | None, remove: str | None) -> None:
    """cephbench as a container image of a release's client tools (localhost/cephbench:RELEASE): docs/toolbox.md."""
    from ..lab import image
    if remove and build:
        raise UserError("--remove and --build were both given", "give one of them", where="--build")
    if build:
        img = image.ensure(build, progress=lambda m: err.print(f"lab: {m}"))
        out.print(f"{img.ref}: ceph {img.label('ceph_version')}, python {img.label('python')}, "
                  f"{format_size(img.size_bytes)}, image {img.id[:12]}", markup=False)
        return
    if remove:
        gone = image.remove(remove)
        out.print(f"removed {gone.ref} ({format_size(gone.size_bytes)})", markup=False)
        return
    found = image.list_images()
    if not found:
        out.print("no cephbench images; `cephbench lab image --build reef` (or make image RELEASE=reef) makes one")
        return
    for i in found:
        out.print(f"{i.ref:<28} ceph {i.label('ceph_version'):<22} python {i.label('python'):<5} "
                  f"{format_size(i.size_bytes):>9}  {i.id[:12]}", markup=False)


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
    for name in lb.left:
        out.print(f"left {lb.dir / name}: the lab did not make it", markup=False)
    out.print(f"lab down in {time.monotonic() - t0:.1f} s: stopped {len(stopped)} daemon(s)"
              + (f"; kept {lb.dir}" if keep else f"; removed {lb.dir}" if not lb.left
                 else f"; removed what the lab made in {lb.dir}, and kept the directory"), markup=False)

