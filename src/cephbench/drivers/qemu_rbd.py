"""fio through QEMU's rbd driver: each image of the group exported by a qemu-nbd of its own (`--cache` the test's
QEMU cache mode) on a unix socket, read and written by fio's nbd engine (libnbd, in userspace: no kernel nbd).

The images are rbd_images' (created and prefilled once per group, one set per client host with `clients:`). Each
round of a test starts its exports, runs fio_run.measure_fio against their sockets and stops them: a cache mode is
the export's, and a VM's disk starts with a cold rbd cache too. The sockets live in a work directory made through
the ledger (hosts/remote_dirs.py: /tmp/cephbench-<run>-nbd-..., short enough for a socket's 108 bytes), here or on
each client host.

A qemu-nbd is a process the run started: here it enters the ledger by PID and start time (DriverContext.
record_process, as a tool does), and is stopped by it on every exit path; on a client host the ssh that carries it
enters the ledger so, the qemu-nbd there writes its PID into the work directory and is stopped by that PID, and
`timeout` bounds it should the run be killed with -9. Its argv names the conf and keyring by path, never a key.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..cluster.ceph import Cluster, Target
from ..core.errors import OperationFailed, UserError
from ..core.interrupts import held
from ..core.results import Measurement, Test
from ..core.settings import Settings
from ..core.userfiles import read_output
from ..hosts.remote import HostRef, this_host
from ..hosts.remote_dirs import dir_path, make_dir
from . import rbd_images
from .base import DriverContext, Outcome, run_group_timeout, safe_name
from .fio import FioJob
from .fio_run import FioRun, measure_fio
from .rounds import in_rounds
from .search import Searches

log = logging.getLogger(__name__)

TOOL = "qemu-nbd"
START_TIMEOUT_S = 30.0      # qemu-nbd opens the image (a librbd connection) before it listens
STOP_GRACE_S = 5.0
SHARED = 0                  # qemu-nbd --shared: 0 is any number of connections (each fio job opens its own)
INSTALL_HINT = "install QEMU's nbd server and rbd driver (Debian: apt-get install qemu-utils qemu-block-extra)"


def _escaped(value: str) -> str:
    """A value inside QEMU's `rbd:` file name, where ':' separates options and '\\' escapes."""
    return value.replace("\\", "\\\\").replace(":", "\\:")


def rbd_filename(spec: str, target: Target | None) -> str:
    """QEMU's name of an RBD image: `rbd:pool/image` with the conf, keyring (paths) and client id as options. With
    no target (a client host) the host's own ceph.conf and keyring are read, as the client id of the run."""
    opts: list[tuple[str, str]] = []
    if target is not None:
        opts.append(("conf", str(target.conf)))
        if target.keyring:
            opts.append(("keyring", str(target.keyring)))
    return "rbd:" + _escaped(spec) + "".join(f":{k}={_escaped(v)}" for k, v in opts)


def export_argv(spec: str, socket: str, cache: str, target: Target | None, client_id: str | None,
                pid_file: str | None = None) -> list[str]:
    """qemu-nbd serving one image on a unix socket, with QEMU's cache mode `cache`, until it is stopped."""
    name = rbd_filename(spec, target) + (f":id={_escaped(client_id)}" if client_id else "")
    return [TOOL, "--persistent", f"--shared={SHARED}", "--format=raw", f"--cache={cache}", f"--socket={socket}",
            *([f"--pid-file={pid_file}"] if pid_file else []), name]


def nbd_uri(socket: str) -> str:
    return f"nbd+unix:///?socket={socket}"


def jobs_for(test: Test, sockets: Sequence[str]) -> list[FioJob]:
    """One fio job per exported image (each cloned numjobs times, each clone a connection of its own)."""
    p = test.params
    common = dict(rw=p["phase"], bs=p["block_size"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                  runtime_s=p["duration_s"], ramp_s=p["ramp"] or None, time_based=True, direct=False,
                  rwmixread=p["rwmixread"] if p["phase"] == "randrw" else None)
    return [FioJob(name=f"img{i}", engine="nbd", options={"uri": nbd_uri(s)}, **common)
            for i, s in enumerate(sockets)]


@dataclass
class Export:
    """One qemu-nbd cephbench started (here, or on a client host through ssh), and how it is stopped."""
    ref: HostRef
    argv: list[str]             # as started here (on a client host: the ssh command carrying it)
    socket: str
    pid_file: str | None        # on a client host: where the qemu-nbd there writes its PID
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    forget: Callable[[], None] | None = field(default=None, repr=False)


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in read_output(path).splitlines() if ln.strip()]
    except OSError:
        lines = []
    return lines[-1] if lines else "no output"


def _refusal(e: Export, why: str) -> Exception:
    """A qemu-nbd that did not start: a missing tool or driver is the user's to install (one line, exit 2)."""
    where = "this machine" if e.ref.address is None else f"client {e.ref.where}"
    if "Unknown protocol 'rbd'" in why or "Unknown driver 'rbd'" in why:
        return UserError(f"QEMU on {where} has no rbd driver (qemu-nbd: {why})", INSTALL_HINT)
    if e.ref.address is not None and ("qemu-nbd: not found" in why or "No such file" in why
                                      or "command not found" in why):
        return UserError(f"qemu-nbd is not installed on {where}", INSTALL_HINT)
    return OperationFailed(f"qemu-nbd on {where} did not start: {why}")


def start(ctx: DriverContext, e: Export) -> None:
    """Start the export, in the ledger by PID before anything can interrupt between the two, and wait for its
    socket; one that ends first is refused with its last line."""
    e.log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with held():        # never a qemu-nbd started and not recorded
            e.proc = ctx.host.start(e.argv, stdout_path=e.log_path)
            e.forget = ctx.record_process(e.proc.pid)
    except FileNotFoundError:
        raise UserError(f"{e.argv[0]} is not installed on this machine", INSTALL_HINT) from None
    deadline = time.monotonic() + START_TIMEOUT_S + (0 if e.ref.address is None else 10)
    while time.monotonic() < deadline:
        if _listening(ctx, e):
            return
        if e.proc.poll() is not None:
            raise _refusal(e, _last_line(e.log_path))
        time.sleep(0.05 if e.ref.address is None else 0.3)     # there: an ssh round trip a look
    raise _refusal(e, f"its socket {e.socket} did not appear in {START_TIMEOUT_S:.0f} s ({_last_line(e.log_path)})")


def _listening(ctx: DriverContext, e: Export) -> bool:
    if e.ref.address is None:
        return Path(e.socket).is_socket()
    res = ctx.host.run(e.ref.argv(["test", "-S", e.socket], ctx.settings.ssh), timeout_s=30)
    return res.ok


def stop(ctx: DriverContext, e: Export) -> None:
    """Stop the export by its PID (qemu-nbd closes its image on SIGTERM), then forget it in the ledger. On a client
    host that PID is the one the qemu-nbd there wrote; the ssh carrying it then ends by itself (killed if not)."""
    p = e.proc
    if p is not None and p.poll() is None:
        if e.pid_file is not None:
            res = ctx.host.run(e.ref.argv(["cat", e.pid_file], ctx.settings.ssh), timeout_s=30)
            pid = res.stdout.strip()
            if res.ok and pid.isdigit():
                ctx.host.run(e.ref.argv(["kill", "-TERM", pid], ctx.settings.ssh), timeout_s=30)
        else:
            _signal(p, signal.SIGTERM)
        try:
            p.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            _signal(p, signal.SIGKILL)
            p.wait()
    if e.forget is not None:
        e.forget()
        e.forget = None


def _signal(p: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(p.pid, sig)       # its own group (LocalHost.start): whatever it started goes with it
    except ProcessLookupError:
        pass


@dataclass
class Exports:
    """A round's exports: each host's sockets (client name, None: this machine), and the commands that started them
    (for the result, beside fio's)."""
    sockets: dict[str | None, list[str]] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)      # each qemu-nbd's output (raw/)

    def of(self, client: Any) -> list[str]:
        return self.sockets[client.name if client is not None else None]


@contextmanager
def exported(ctx: DriverContext, test: Test, name: str, images: rbd_images.Images, clients: Sequence[Any],
             cache: str, limit_s: float) -> Iterator[Exports]:
    """Every image of the round's hosts exported (this machine's, or each client host's own), for as long as the
    block runs. Stopped, and the work directories removed, however the block ends."""
    raw = ctx.rundir.raw_dir(name) if ctx.rundir else Path("/nonexistent")
    hosts = [(c, c.ref, images.of(c.name), raw / safe_name(c.name)) for c in clients] or \
            [(None, this_host(), images, raw)]
    out_ = Exports()
    with ExitStack() as stack:
        for i, (client, ref, imgs, out) in enumerate(hosts):
            # short: a unix socket's path holds at most 107 bytes
            work = dir_path(ctx.run_id, "nbd", str(test.index), str(i))
            here = ref.address is None
            exports = []
            for j, spec in enumerate(imgs.specs):
                sock = f"{work}/img{j}.sock"
                pid_file = None if here else f"{work}/img{j}.pid"
                argv = export_argv(spec, sock, cache, ctx.target if here else None, ctx.target.id, pid_file)
                if not here:    # bounded there: a run killed with -9 cannot stop it, and nothing else would
                    argv = ref.argv(["timeout", str(int(limit_s)), *argv], ctx.settings.ssh)
                exports.append(Export(ref, argv, sock, pid_file, out / f"qemu-nbd-img{j}.txt"))
            out_.sockets[client.name if client else None] = [e.socket for e in exports]
            out_.commands += [(f"on {ref.name}: " if not here else "") + shlex.join(e.argv) for e in exports]
            out_.logs += [e.log_path for e in exports]
            if ctx.dry_run:
                ctx.planned.append(f"mkdir -m 0700 {work}")
                ctx.planned.extend(out_.commands[-len(exports):])
                continue
            made = make_dir(ctx.host, ref, ctx.settings.ssh, ctx.ledger, work)
            stack.callback(ctx.ledger.release_one, made)
            for e in exports:
                stack.callback(stop, ctx, e)
                start(ctx, e)
        yield out_


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    if not any(t.id in todo for t in group):
        return
    tool = "fio nbd (qemu-nbd)"
    owners = ctx.clients_of_group(group)
    searches = Searches()      # iodepth: auto, clients: auto
    with rbd_images.group_images(ctx, group, owners=[c.name for c in owners]) as images:
        for test, started, notes, warnings in rbd_images.tests_to_run(ctx, group, todo, images, searches.over):
            p = test.params
            clients = ctx.clients_of(test)
            described = {"client": "qemu-nbd", "cache": p["cache"], "iodepth": p["iodepth"], "numjobs": p["numjobs"]}

            def parse(run: FioRun, client, p=p, described=described) -> Measurement:
                m = run.measurement(p["phase"], tool, keep_bins=client is not None)
                m.extra.update({**(images.of(client.name) if client else images).describe(), **described})
                return m

            def one_round(n: int, test=test, p=p, parse=parse, clients=clients) -> Outcome | None:
                name = f"{test.id}/round{n}" if n else test.id
                timeout = run_group_timeout(p["duration_s"] + p["ramp"])
                with exported(ctx, test, name, images, clients, p["cache"], timeout + 60) as exports:
                    outcome = measure_fio(ctx, test, started, name, clients, lambda c: jobs_for(test, exports.of(c)),
                                          parse, timeout, tool=tool, notes=list(notes), warnings=warnings)
                if outcome is not None:
                    outcome.commands[:0] = exports.commands
                    outcome.raw += [str(f.relative_to(ctx.rundir.path)) for f in exports.logs
                                    if ctx.rundir and f.is_file()]
                return outcome

            outcome = in_rounds(test, one_round)
            if outcome is not None:
                if clients and outcome.measurement is not None:     # the step's hosts' images
                    outcome.measurement.extra.update({**images.of(*(c.name for c in clients)).describe(),
                                                      **described})
                yield searches.after(outcome)
        yield from searches.skipped_in(group, todo)


def preflight(cluster: Cluster, tests: list[Test], settings: Settings) -> None:
    """The images' checks (rbd_images), and qemu-nbd on this machine when a test runs here (a client host's is
    its `needs`, checked by the clients' preflight)."""
    rbd_images.preflight(cluster, tests, settings)
    here = [t for t in tests if not t.params.get("clients")]
    if here and cluster.host.which(TOOL) is None:
        raise UserError("qemu-nbd is not installed on this machine", INSTALL_HINT,
                        where=f"workload {here[0].workload}")
