"""fio through QEMU's rbd driver: each image of the group exported by a qemu-nbd of its own (`--cache` the test's
QEMU cache mode) on a unix socket, read and written by fio's nbd engine (libnbd, in userspace: no kernel nbd).

The images are rbd_images' (created and prefilled once per group, one set per client host with `clients:`), the
group's lifecycle the core's (drivers/lifecycle.py) through fio_run.FioOnImages. Each round of a test starts its
exports (its `round_setup`), runs fio_run.measure_fio against their sockets and stops them: a cache mode is
the export's, and a VM's disk starts with a cold rbd cache too. The sockets live in a work directory made through
the ledger (hosts/remote_dirs.py: /tmp/cephbench-<run>-nbd-..., short enough for a socket's 108 bytes), here or on
each client host.

A qemu-nbd is a process the run started: here it enters the ledger by PID and start time (DriverContext.
record_process, as a tool does), and is stopped by it on every exit path; on a client host the ssh that carries it
enters the ledger so, the qemu-nbd there writes its PID into the work directory and is stopped by that PID, and
`timeout` bounds it should the run be killed with -9. Its argv names the conf and keyring by path, never a key.

A qemu-nbd's CPU is the client's, as a VM's QEMU is: its /proc/PID/stat is read once it listens and just before it is
stopped (here by its PID, on a client host by the PID it wrote), and what it spent is added to the client's CPU per
op beside fio's (`with_exports_cpu`), so that a host's CPU split files it under client tools, not other processes.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import time
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..cluster.ceph import Cluster, Target
from ..core.errors import OperationFailed, UserError
from ..core.interrupts import held
from ..core.results import ProcessCpu, Test
from ..evidence.proccpu import ProcTimes, parse_reading
from ..core.settings import Settings
from ..core.userfiles import read_output
from ..hosts.remote import HostRef, this_host
from ..hosts.remote_dirs import dir_path, make_dir
from . import lifecycle, rbd_images
from .base import DriverContext, Outcome, safe_name
from .fio import FioJob
from .fio_run import FioOnImages, image_job_options
from .lifecycle import Step

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
    common = image_job_options(test, direct=False)
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
    first: ProcTimes | None = None      # its CPU time once it listens, and just before it is stopped
    last: ProcTimes | None = None

    def cpu_s(self) -> float | None:
        """What it spent serving the round (None: not read at both ends, or another process by then)."""
        a, b = self.first, self.last
        if a is None or b is None or a.pid != b.pid or a.start_ticks != b.start_ticks:
            return None
        return max(0, b.ticks - a.ticks) / b.clk_tck


# its CPU time: "CLK_TCK <its /proc/PID/stat line>" (proccpu.parse_reading), its PID given or read from its pid file
_CPU_READING = 'p=${1:-$(cat "$2")} && echo "$(getconf CLK_TCK) $(cat /proc/$p/stat)"'


def cpu_reading(ctx: DriverContext, e: Export) -> ProcTimes | None:
    """The export's qemu-nbd's CPU time now (here by its PID; on a client host by the PID it wrote), or None when
    it cannot be read: its CPU then stays other processes'."""
    pid = "" if e.pid_file is not None or e.proc is None else str(e.proc.pid)
    argv = ["sh", "-c", _CPU_READING, "sh", pid, e.pid_file or ""]
    res = ctx.host.run(argv if e.ref.address is None else e.ref.argv(argv, ctx.settings.ssh), timeout_s=30)
    got = parse_reading(res.stdout.strip()) if res.ok else res.error_text()
    if isinstance(got, str):
        log.info("qemu-nbd's CPU on %s not read: %s", e.ref.name, got)
        return None
    return got


def _first_reading(ctx: DriverContext, e: Export, tries: int = 10) -> ProcTimes | None:
    """The export's CPU once it listens: on a client host read again for a moment while its pid file is not there
    yet (a qemu-nbd may listen before it writes it)."""
    for _ in range(tries if e.pid_file is not None else 1):
        got = cpu_reading(ctx, e)
        if got is not None:
            return got
        time.sleep(0.2)
    return None


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
            e.first = _first_reading(ctx, e)
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
        if e.first is not None:
            e.last = cpu_reading(ctx, e)
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
    exports: list[Export] = field(default_factory=list)

    def of(self, client: Any) -> list[str]:
        return self.sockets[client.name if client is not None else None]

    def cpu_s(self) -> float | None:
        """Every export's CPU over the round, when each was read at both ends."""
        each = [e.cpu_s() for e in self.exports]
        return None if not each or None in each else sum(c for c in each if c is not None)


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
            out_.exports += exports
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


class QemuRbd(FioOnImages):
    """fio_run.FioOnImages, each round beside its exports."""

    def tool(self, test: Test) -> str:
        return "fio nbd (qemu-nbd)"

    def described(self, test: Test) -> dict[str, Any]:
        p = test.params
        return {"client": "qemu-nbd", "cache": p["cache"], "iodepth": p["iodepth"], "numjobs": p["numjobs"]}

    def round_setup(self, step: Step[rbd_images.Images], name: str, timeout_s: float) -> AbstractContextManager[Any]:
        return exported(step.ctx, step.test, name, step.res, step.clients, step.test.params["cache"], timeout_s + 60)

    def jobs(self, step: Step[rbd_images.Images], client: Any, there: Exports) -> list[FioJob]:
        return jobs_for(step.test, there.of(client))

    def round_ended(self, step: Step[rbd_images.Images], outcome: Outcome, there: Exports) -> None:
        ctx = step.ctx
        outcome.commands[:0] = there.commands
        outcome.raw += [str(f.relative_to(ctx.rundir.path)) for f in there.logs if ctx.rundir and f.is_file()]
        with_exports_cpu(outcome, there)


def with_exports_cpu(outcome: Outcome, there: Exports) -> None:
    """The client's CPU per op counts its qemu-nbd exports' beside fio's: a VM's QEMU is the client's as fio is (a
    host's CPU split, analysis/cpusplit.py, then files it under client tools, not other processes). Said in the
    evidence's notes; when an export was not read at both ends, the client's figure is fio's alone, and says so."""
    evidence = outcome.seen.evidence if outcome.seen is not None else None
    if evidence is None or not there.exports:
        return
    clients = [i for i, c in enumerate(evidence.cpu) if c.who == "client"]
    nbd_s = there.cpu_s()
    if nbd_s is None or not clients:
        evidence.notes.append("the client's CPU per op is fio's alone: its qemu-nbd exports' CPU was not read"
                              if clients else "qemu-nbd's CPU not counted: the client's CPU was not read")
        return
    c = evidence.cpu[clients[0]]
    evidence.cpu[clients[0]] = c.model_copy(update=ProcessCpu.of(
        c.who, c.cpu_s + nbd_s, c.ops, c.bytes, c.source, c.host, c.pid).model_dump(
            include={"cpu_s", "cpu_ms_per_op", "cpu_s_per_gib"}))
    evidence.notes.append(f"the client's CPU counts its {len(there.exports)} qemu-nbd export(s)' {nbd_s:.2f} s "
                          "beside fio's")


HOOKS = QemuRbd()


def run_group(ctx: DriverContext, group: list[Test], todo: set[str]) -> Iterator[Outcome]:
    return lifecycle.run_group(HOOKS, ctx, group, todo)


def preflight(cluster: Cluster, tests: list[Test], settings: Settings) -> None:
    """The images' checks (rbd_images), and qemu-nbd on this machine when a test runs here (a client host's is
    its `needs`, checked by the clients' preflight)."""
    rbd_images.preflight(cluster, tests, settings)
    here = [t for t in tests if not t.params.get("clients")]
    if here and cluster.host.which(TOOL) is None:
        raise UserError("qemu-nbd is not installed on this machine", INSTALL_HINT,
                        where=f"workload {here[0].workload}")
