"""What a run that died (kill -9, a crash, a lost machine) left behind, removed from its run directory alone.

A live run removes what it made through the closures of its ledger. Those die with the process; what survives is
resources.json, which names every resource before it is created. Each kind of resource has a remover that needs
only that name and the run's target (run/launch.py removers: the core's, and each kind's resources' as their
declaration names it, kinds/kind.py ResourceType), so `cephbench cleanup RUN_DIR` and `cephbench run --resume
RUN_DIR` can finish the dead run's cleanup. Nothing is removed or undone without its proof that the run made it
(`PROOFS`, one check per ledger kind of the core's; a kind's resource by its name, where its declaration says the
name is; `Ownership`): a hand-edited, copied or old resources.json must not reach what is the user's. Tool processes
are stopped by the PIDs the run recorded, and only when the process with that PID is still the one the run started
(its start time, command line and the run's id in its environment), never by name. A run still alive (a copy of its
directory) is never cleaned (`RunLock`, `Ownership.alive`).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .ceph import POOL_DELETE_OPTION
from ..core.errors import OperationFailed, UserError
from ..core.results import MAX_RUN_JSON_BYTES
from ..core.userfiles import read_bytes
from . import marker
from ..core.resources import CONFIG_OPTION, Refusal, Refused, Resource, Undone, remote_file_parts, state_of
from ..kinds import resource_type

REMOTE_FILE_KIND = "remote-file"      # clients.REMOTE_FILE (recovery sits below clients)
REMOTE_DIR_KIND = "remote-dir"        # remote_dirs.REMOTE_DIR

log = logging.getLogger(__name__)

LOCK_NAME = ".running"


# ---- processes: recorded as "<pid>:<start time in clock ticks since boot>" ---------------------------------

def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields from the third (state) on; None when no such process runs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: fields after the last ')' are fixed
    return stat[stat.rindex(")") + 2:].split()


def process_start_ticks(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def process_tag(pid: int) -> str:
    return f"{pid}:{process_start_ticks(pid) or 0}"


def stop_process_group(tag: str, grace_s: float = 2.0) -> bool:
    """Stop the process group a run started, if that very process still lives; True when one was stopped."""
    pid_text, _, ticks = tag.partition(":")
    pid = int(pid_text)
    if process_start_ticks(pid) is None or str(process_start_ticks(pid)) != ticks:
        return False            # gone, or the PID now belongs to another process
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and process_start_ticks(pid) is not None:
            time.sleep(0.05)
        if process_start_ticks(pid) is None:
            return True
    return True


# ---- the run directory lock: a live run holds it --------------------------------------------------------------

def run_locks_dir() -> Path:
    """Where the locks of run ids live: the user's runtime directory (XDG_RUNTIME_DIR, /run/user/UID) when the session
    has one, else the temporary directory; one per user either way."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return Path(runtime) / "cephbench-run-locks"
    return Path(tempfile.gettempdir()) / f"cephbench-runs-{os.getuid()}"


@dataclass
class RunLock:
    """Held (flock) by the process running a run directory, for its whole life; the kernel drops it when the
    process dies, however it dies. A cleanup or resume of a directory whose lock is held is refused."""

    path: Path
    _fd: int | None = field(default=None, repr=False)
    # one lock per run id of the directory (run.json), outside it: a copy of a live run's directory (its lock file
    # deleted) names the same ids, whose locks the live run holds
    _ids: list[tuple[Path, int]] = field(default_factory=list, repr=False)

    @classmethod
    def take(cls, rundir: Path) -> "RunLock":
        lock = cls(Path(rundir) / LOCK_NAME)
        lock._take_dir(rundir)
        try:
            lock._take_ids(rundir)
        except BaseException:
            lock.release()
            raise
        return lock

    def _take_ids(self, rundir: Path) -> None:
        try:
            ids = json.loads(read_bytes(Path(rundir) / "run.json", "", "", MAX_RUN_JSON_BYTES)).get("run_ids") or []
        except (OSError, ValueError, AttributeError, RecursionError, UserError):     # a FIFO, nested 100k deep: the
            # resume says why
            ids = []
        ids = ids if isinstance(ids, list) else []
        base = run_locks_dir()
        for run_id in [i for i in ids if isinstance(i, str) and re.fullmatch(r"[0-9A-Za-z]{1,32}", i)]:
            try:
                base.mkdir(mode=0o700, exist_ok=True)
                fd = os.open(base / f"{run_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                log.warning("run %s not locked by its id (%s): a copy of its directory is told by its marker", run_id,
                            exc)
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 64).decode(errors="replace").partition(":")[0] or "?"
                os.close(fd)
                raise UserError(f"{rundir}: run {run_id} is being run right now by process {holder} (this directory "
                                "or a copy of it)", "wait for it to finish, or stop it with Ctrl-C (it cleans up "
                                "after itself)") from None
            os.ftruncate(fd, 0)
            os.write(fd, f"{process_tag(os.getpid())}\n".encode())
            self._ids.append((base / f"{run_id}.lock", fd))

    def _take_dir(self, rundir: Path) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:      # a read-only file system, a directory of someone else's
            raise UserError(f"{rundir} cannot be locked for this run: {exc.strerror}",
                            "give a run directory you may write; copy one on read-only media first") from None
        holder = os.read(fd, 64).decode(errors="replace").strip()
        pid = holder.partition(":")[0] or "?"
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(f"{rundir} is being run right now by process {pid}",
                            "wait for it to finish, or stop it with Ctrl-C (it cleans up after itself)") from None
        if _alive_as(holder) and pid != str(os.getpid()):
            # a copy of a live run's directory (cp -a): its lock file names the live run's process, which holds
            # the original's lock, not this one's
            os.close(fd)
            raise UserError(f"{rundir} is a copy of a run directory in use: its lock file names process {pid}, which "
                            "still runs it", "wait for that run to finish; then clean up its own directory")
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{process_tag(os.getpid())}\n".encode())
        self._fd = fd

    def release(self) -> None:
        for path, fd in self._ids:
            path.unlink(missing_ok=True)
            os.close(fd)
        self._ids = []
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self.path.unlink(missing_ok=True)


# ---- leftovers ------------------------------------------------------------------------------------------

def leftovers(rundir: Path) -> list[Resource]:
    """What resources.json says the run had not removed yet, oldest first; a file that is not a list of
    {"kind": str, "name": str, "state"?: object} is one line naming the first thing wrong in it."""
    path = Path(rundir) / "resources.json"
    if not path.exists():
        return []
    hint = ("each entry is {\"kind\": ..., \"name\": ...} (docs/results-schema.md); what it lists must be removed "
            "by hand")
    try:
        # a regular file of a bounded size: a FIFO or /dev/zero in its place is one line (UserError), never a hang
        items = json.loads(read_bytes(path, "", hint, MAX_RUN_JSON_BYTES) or "[]")
    except (ValueError, OSError, RecursionError) as exc:
        raise UserError(f"{path} cannot be read ({exc})", hint) from None
    if not isinstance(items, list):
        raise UserError(f"{path} holds a JSON {type(items).__name__}, not a list of entries", hint)
    out = []
    for i, item in enumerate(items):
        where = f"{path} entry {i + 1}"
        if not isinstance(item, dict):
            raise UserError(f"{where} is a JSON {type(item).__name__}, not an object", hint)
        for key in ("kind", "name"):
            if key not in item:
                raise UserError(f"{where} has no {key!r}", hint)
            if not isinstance(item[key], str) or not item[key]:
                raise UserError(f"{where}: {key!r} is {json.dumps(item[key])[:60]}, not a name", hint)
        r = Resource(item["kind"], item["name"], json.dumps(item["state"]) if "state" in item else "")
        try:
            how_to_remove(r)            # a record of a config option or a lab shape must decode
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise UserError(f"{where}: {r.kind} {r.name[:80]!r} is not a record cephbench wrote ({exc})",
                            hint) from None
        out.append(r)
    return out


def save(rundir: Path, resources: list[Resource]) -> None:
    path = Path(rundir) / "resources.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([r.to_json() for r in resources], indent=1) + "\n")
    tmp.replace(path)


Remover = Callable[[Resource], None]


def how_to_remove(r: Resource) -> str:
    """The command a person runs to remove one resource by hand."""
    if r.kind == CONFIG_OPTION:
        from ..core.variant_plan import Restore
        return " ".join(Restore.decode(r.name).argv())
    if r.kind == "lab-shape":
        from ..suite.shape_plan import restore_commands
        return " && ".join(restore_commands(r.name))     # one command: up only after down worked
    declared = resource_type(r.kind)
    if declared is not None:
        return declared.by_hand(r.name)
    return {
        "process": f"kill -- -{r.name.partition(':')[0]}  (only if that process is still cephbench's tool)",
        "osd-flags": "; ".join(f"ceph osd unset {f}" for f in r.name.split(",") if f and f != "none"),
        "pool": f"ceph osd pool delete {r.name} {r.name} --yes-i-really-really-mean-it",
        "ec-profile": f"ceph osd erasure-code-profile rm {r.name}",
        "config-key": f"ceph config-key rm {r.name}",
        "ssh-control": f"rm -rf {r.name}  (its ssh masters exit by themselves a minute after their last use)",
        "remote-file": "ssh {0} rm -f {1}".format(*remote_file_parts(r.name)),
        "remote-dir": "ssh {0} rm -rf {1}".format(*remote_file_parts(r.name)),
    }.get(r.kind, f"remove {r.kind} {r.name}")


# ---- what is the run's: names, the run marker, start times ----------------------------------------------------

# a run's own copy of cephbench-loadgen on a client host (clients.REMOTE_DIR/cephbench-<run id>-loadgen-<sha>)
_LOADGEN_COPY = re.compile(r"/\.cache/cephbench/bin/(cephbench-[0-9A-Za-z]+-loadgen-[0-9a-f]+)$")


def mapped_image(dev: str) -> str | None:
    """The image a krbd device maps (sysfs), or None when no such device is mapped."""
    m = re.fullmatch(r"/dev/rbd(\d+)", dev)
    try:
        return (Path("/sys/bus/rbd/devices") / m.group(1) / "name").read_text().strip() if m else None
    except OSError:
        return None


def process_started_unix(ticks: int) -> float | None:
    try:
        btime = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                     if line.startswith("btime "))
    except (OSError, StopIteration, ValueError):
        return None
    return btime + ticks / os.sysconf("SC_CLK_TCK")


def process_cmdline(pid: int, wait_s: float = 0.5) -> list[str] | None:
    """/proc/PID/cmdline as its arguments, waited for while it reads empty (a child in the middle of its exec reads
    empty after Popen returned: lab/daemons.py); None when no such process runs."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        if raw or time.monotonic() >= deadline:
            return [os.fsdecode(a) for a in raw.split(b"\0")[:-1]] if raw else []
        time.sleep(0.002)


def _group(pgid: int) -> list[int]:
    """The live processes of process group `pgid`."""
    out = []
    for d in Path("/proc").iterdir():
        fields = _stat(int(d.name)) if d.name.isdigit() else None
        if fields and fields[2] == str(pgid) and fields[0] != "Z":
            out.append(int(d.name))
    return out


def _parent(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def process_resource(pid: int) -> Resource:
    """A tool process's ledger entry: "<pid>:<start ticks>", its command line and the cephbench process that started
    it (the proof `cleanup` checks: the same process, the same command, and no live run still its parent)."""
    return Resource("process", process_tag(pid), json.dumps({
        "cmdline": process_cmdline(pid) or [], "by": process_tag(os.getpid())}))


# set in a run's environment (launch.start), so every tool it starts carries it: what no process of the user's has,
# whatever a ledger entry claims about it
RUN_ENV = "CEPHBENCH_RUN"


def process_run(pid: int) -> str | None:
    """The run id in a process's environment (RUN_ENV); None when it has none or it cannot be read."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    prefix = f"{RUN_ENV}=".encode()
    return next((v[len(prefix):].decode(errors="replace") for v in environ.split(b"\0") if v.startswith(prefix)),
                None)


def _alive_as(tag: object) -> bool:
    """"<pid>:<start ticks>" names a process that still runs (the same one: its start time matches)."""
    pid, _, ticks = str(tag).partition(":")
    return pid.isdigit() and ticks.isdigit() and str(process_start_ticks(int(pid))) == ticks


def _is_cephbench(pid: int) -> bool:
    """The process runs cephbench: its console script, or `python -m cephbench[.cli]`."""
    return any(Path(a).name in ("cephbench", "cephbench.cli", "cephbench.entry")
               for a in (process_cmdline(pid, 0) or [])[:3])


def on_cluster(kind: str) -> bool:
    """An entry of this ledger kind lives on the cluster: only on the cluster the run ran on (its fsid) is it the
    run's. The core's kinds by CLUSTER_KINDS, a kind's resources by their declaration."""
    declared = resource_type(kind)
    return declared.on_cluster if declared is not None else kind in CLUSTER_KINDS


# the core's ledger kinds that live on the cluster
CLUSTER_KINDS = ("pool", "ec-profile", "config-key", "osd-flags", CONFIG_OPTION)


@dataclass(frozen=True)
class Ownership:
    """What a run may remove or undo: only what it can prove it made (`PROOFS`, one check per ledger kind). Names
    carry the run's id (cephbench-<run id>-..., for one of its run ids) and that run id's marker on the cluster
    (cluster/marker.py) does not name another run directory; everything on the cluster is on the cluster the run ran
    on (its fsid, run.json); a tool process is the very one the run started (start time, command line) and no live
    run is still its parent; a scrub flag or an option is claimed by the run's marker (and its remover checks that
    the cluster still holds what the run set); a lab shape's lab directory holds the run's claim (lab/labdir.py).
    Everything else in a ledger (a hand-edited, copied or old resources.json) is refused, never removed."""

    run_ids: tuple[str, ...]
    run_dir: str | None = None
    markers: dict[str, dict[str, Any]] | None = None      # run id -> its marker; None: not read
    started_unix: float | None = None
    image_of: Callable[[str], str | None] = mapped_image
    fsids: tuple[str, ...] | None = None        # the clusters the run ran on (run.json); None: not checked
    cluster_fsid: str | None = None             # the cluster cleanup talks to
    # the run's own ledger while it runs: what it made in this process needs no proof beyond its name (a process, a
    # flag, an option or a lab shape is only there because this process made it)
    live: bool = False

    def refusal(self, r: Resource) -> str | None:
        why = self._why_not(r)
        if why is None:
            return None
        return (f"refused to remove {r.kind} {r.name}: {why}; left as it is (if it is to go, remove it by hand and "
                "take its entry out of resources.json)")

    def wrong_cluster(self) -> str | None:
        """Why this is not the cluster the run ran on (its fsid), or None."""
        if self.fsids is None:
            return None
        if not self.fsids:
            return "run.json records no cluster fsid (a run directory of an older cephbench, or edited)"
        if self.cluster_fsid not in self.fsids:
            return (f"the run ran on cluster {', '.join(self.fsids)}, and this is cluster "
                    f"{self.cluster_fsid or '(fsid unknown)'}")
        return None

    def _run_of(self, name: str) -> str | None:
        return next((i for i in self.run_ids if name.startswith(f"cephbench-{i}-")), None)

    def _why_not(self, r: Resource) -> str | None:
        run = state_of(r).get("run")
        if run is not None and run not in self.run_ids:
            return f"the entry was made by run {run}, not this run (run ids {', '.join(self.run_ids)})"
        if on_cluster(r.kind):
            why = self.wrong_cluster()
            if why:
                return why
        proof = proof_of(r.kind)
        if self.live and proof in (Ownership._process, Ownership._flags, Ownership._option, Ownership._lab_shape):
            return None
        if proof is None:
            return "cephbench knows no proof that an entry of this kind is the run's"
        return proof(self, r)

    def _named(self, r: Resource) -> str | None:
        """Its name carries one of the run's ids, and that run's marker names no other run directory: a pool, an
        EC profile, a work directory, and every kind's resource, whose declaration says which name that is."""
        name = r.name
        declared = resource_type(r.kind)
        if declared is not None and declared.maps_image:
            image = self.image_of(r.name)
            if image is None:
                return None             # nothing mapped there: the remover finds nothing to do
            name = image
        elif declared is not None:
            name = declared.owned_name(r.name)
        elif r.kind == REMOTE_DIR_KIND:
            path = remote_file_parts(r.name)[1]
            if not re.fullmatch(r"/tmp/cephbench-[A-Za-z0-9_.-]+", path):
                return f"{path!r} is not a work directory cephbench makes (/tmp/cephbench-<run id>-...)"
            name = path.rsplit("/", 1)[-1]
        run = self._run_of(name)
        if run is None or (declared is not None and declared.only_name is not None and
                           name != declared.only_name(run)):
            return f"{name!r} is not named cephbench-<run id>-... for this run (run ids {', '.join(self.run_ids)})"
        return self._marker_says(run)

    def _marker_key(self, r: Resource) -> str | None:
        run = next((i for i in self.run_ids if r.name == marker.key(i)), None)
        return (f"it is not this run's marker (cephbench/runs/<run id>, run ids {', '.join(self.run_ids)})"
                if run is None else self._marker_says(run))

    def _loadgen_copy(self, r: Resource) -> str | None:
        copy = _LOADGEN_COPY.search(remote_file_parts(r.name)[1])
        run = self._run_of(copy.group(1)) if copy else None
        if run is None:
            return ("it is not this run's copy of cephbench-loadgen (~/.cache/cephbench/bin/cephbench-<run id>-"
                    f"loadgen-..., run ids {', '.join(self.run_ids)}): another run may be using it")
        return self._marker_says(run)

    def _ssh_control(self, r: Resource) -> str | None:
        d = Path(r.name)
        if not d.name.startswith("cephbench-ssh-") or d.parent != Path(tempfile.gettempdir()):
            return (f"it is not a directory of cephbench's ssh sockets ({tempfile.gettempdir()}/cephbench-ssh-..., "
                    "hosts/remote.py)")
        if d.is_symlink() or (d.is_dir() and any(not p.is_socket() for p in d.iterdir())):
            return "it holds more than ssh's sockets"
        return None

    def _process(self, r: Resource) -> str | None:
        pid_text, _, ticks = r.name.partition(":")
        if not (pid_text.isdigit() and ticks.isdigit()):
            return "it is not a record of a process (<pid>:<start time>)"
        pid = int(pid_text)
        if str(process_start_ticks(pid)) != ticks:
            return None             # gone, or the PID is another process's now: the remover touches nothing
        recorded = state_of(r).get("cmdline")
        if not isinstance(recorded, list) or not recorded:
            return ("the entry records no command line (an older cephbench's, or edited): nothing proves that "
                    "process is the run's tool")
        now = process_cmdline(pid)
        if not now:
            # exiting, or a zombie: whatever is left in its process group (which the remover signals) must be the run's
            others = [m for m in _group(pid) if m != pid and process_run(m) not in self.run_ids]
            return (f"process group {pid} holds processes not started by this run ({', '.join(map(str, others[:5]))})"
                    if others else None)
        if now != recorded:
            return f"process {pid} runs {' '.join(now or [])[:80]!r}, not the {' '.join(recorded)[:80]!r} the run started"
        run = process_run(pid)
        if run not in self.run_ids:
            return (f"process {pid} carries no {RUN_ENV} of this run (run ids {', '.join(self.run_ids)}) in its "
                    "environment: not a tool the run started")
        started = process_started_unix(int(ticks))
        if self.started_unix is not None and started is not None and started < self.started_unix - 2:
            return "that process started before the run did"
        parent = _parent(pid)
        if _alive_as(state_of(r).get("by")) or (parent not in (None, 0, 1) and _is_cephbench(parent)):
            return (f"the cephbench that started it (process {parent}) still runs: that run is alive, and its "
                    "directory is in use")
        return None

    def _claimed(self, r: Resource, what: str, claims: Callable[[dict[str, Any]], bool]) -> str | None:
        """A flag or an option carries no name: the run's marker on the cluster must claim it."""
        run = state_of(r).get("run")
        if run is None:
            return (f"the entry records no run (an older cephbench's, or edited): nothing proves the {what} is "
                    "the run's")
        if self.markers is None:
            return f"the run markers could not be read: nothing proves the {what} is the run's"
        info = self.markers.get(str(run))
        if not isinstance(info, dict):
            return f"no run marker {marker.key(str(run))} on the cluster claims the {what}"
        if not claims(info):
            return f"the run marker {marker.key(str(run))} does not claim the {what}"
        return self._marker_says(str(run))

    def _flags(self, r: Resource) -> str | None:
        wanted = [f for f in r.name.split(",") if f and f != "none"]
        if not isinstance(state_of(r).get("osdmap_epoch_before"), int):
            return "the entry records no osdmap epoch (an older cephbench's, or edited)"
        def held(m: dict[str, Any]) -> bool:
            return set(wanted) <= {f for k in ("scrub_flags", "scrub_letting_go")
                                   for f in (m.get(k) if isinstance(m.get(k), list) else [])}
        return self._claimed(r, f"flags {r.name}", held)

    def _option(self, r: Resource) -> str | None:
        from ..core.variant_plan import Restore
        rec = Restore.decode(r.name)
        state = state_of(r)
        if not isinstance(state.get("config_version_before"), int) or not isinstance(state.get("set_to"), list):
            return ("the entry records no config version or no value the run set (an older cephbench's, or "
                    "edited): nothing proves the option is the run's")
        def claims(m: dict[str, Any]) -> bool:
            if rec.name == POOL_DELETE_OPTION and isinstance(m.get("pool_delete"), dict):
                return True
            return [rec.who, rec.name] in (m.get("options") if isinstance(m.get("options"), list) else [])
        return self._claimed(r, f"option {rec.who} {rec.name}", claims)

    def _lab_shape(self, r: Resource) -> str | None:
        from ..lab import labdir
        record = json.loads(r.name)
        d = record.get("dir") if isinstance(record, dict) else None
        if not isinstance(d, str) or not Path(d).is_absolute():
            return "it names no lab directory"
        claim = labdir.shaped_by(Path(d))
        if claim is None or claim.get("run") not in self.run_ids:
            return (f"the lab directory {d} holds no claim of this run ({labdir.SHAPED} naming run "
                    f"{' or '.join(self.run_ids)}): the run never shaped that lab")
        theirs = claim.get("run_dir")
        if not (isinstance(theirs, str) and self.run_dir and Path(theirs).resolve() == Path(self.run_dir).resolve()):
            return f"the lab directory {d} was shaped by the run in {theirs}, not this directory"
        try:
            same = json.loads(str(claim.get("record"))) == record
        except ValueError:
            same = False
        if not same:
            return f"the lab to put back is not the one the run's claim in {d} records (the entry was edited)"
        return None

    def _marker_says(self, run: str) -> str | None:
        info = (self.markers or {}).get(run)
        theirs = info.get("run_dir") if isinstance(info, dict) else None
        if theirs and self.run_dir and Path(theirs).resolve() != Path(self.run_dir).resolve():
            return f"the run marker {marker.key(run)} on the cluster says run {run} is {theirs}, not this directory"
        return None

    def alive(self) -> str | None:
        """Why the run is alive (its marker names a process of this host that still runs: the run's own, whose
        directory this is or a copy of), or None."""
        import socket
        for run in self.run_ids:
            info = (self.markers or {}).get(run)
            if not isinstance(info, dict) or info.get("host") != socket.gethostname():
                continue
            pid, since = info.get("pid"), info.get("started_unix")
            if not isinstance(pid, int) or pid == os.getpid():
                continue
            ticks = process_start_ticks(pid)
            if isinstance(info.get("pid_started"), int):
                alive = ticks == info["pid_started"]
            else:       # an older marker: the process started before the run's marker did
                started = process_started_unix(ticks) if ticks is not None else None
                alive = started is not None and isinstance(since, (int, float)) and started <= since + 2
            if alive:
                return f"run {run} is still running (process {pid}, its marker {marker.key(run)})"
        return None


# the proof each of the core's ledger kinds must carry (resources.KINDS: a kind without one here is refused)
PROOFS: dict[str, Callable[[Ownership, Resource], str | None]] = {
    **{k: Ownership._named for k in ("pool", "ec-profile", REMOTE_DIR_KIND)},
    "config-key": Ownership._marker_key,
    REMOTE_FILE_KIND: Ownership._loadgen_copy,
    "ssh-control": Ownership._ssh_control,
    "process": Ownership._process,
    "osd-flags": Ownership._flags,
    CONFIG_OPTION: Ownership._option,
    "lab-shape": Ownership._lab_shape,
}


def proof_of(kind: str) -> Callable[[Ownership, Resource], str | None] | None:
    """The proof an entry of this ledger kind must carry: a kind's resource its name, as its declaration says (a
    kind's resources are named for the run, kinds/kind.py ResourceType); the core's own its entry in PROOFS; None
    for a kind cephbench does not know, which is refused."""
    return Ownership._named if resource_type(kind) is not None else PROOFS.get(kind)


def allows_pool_delete(r: Resource) -> bool:
    """A ledger entry of --allow-pool-delete (run/pooldelete.py): the option that lets the run's pools be deleted."""
    if r.kind != CONFIG_OPTION:
        return False
    from ..core.variant_plan import Restore
    return Restore.decode(r.name).name == POOL_DELETE_OPTION


# the order a dead run's leftovers go in: processes first (they may still be writing), then the run's work
# directories, what the kinds made (KINDS_OWN: in their declared order, a mapping before its image), pools, flags last
KINDS_OWN = "(what the kinds made)"
_ORDER = ["process", "ssh-control", "remote-file", "remote-dir", KINDS_OWN, "pool", "ec-profile", "osd-flags",
          CONFIG_OPTION, "config-key", "lab-shape"]


def removal_place(kind: str) -> tuple[int, int]:
    """Where an entry of this ledger kind goes in a dead run's removal; one cephbench does not know goes last."""
    declared = resource_type(kind)
    if declared is not None:
        return _ORDER.index(KINDS_OWN), declared.order
    return (_ORDER.index(kind) if kind in _ORDER else len(_ORDER)), 0


def remove_leftovers(rundir: Path, table: dict[str, Remover], note: Callable[[str], None] = lambda _m: None,
                     passes: int = 3, settle_s: float = 2.0, owned: Ownership | None = None
                     ) -> tuple[list[Resource], list[tuple[Resource, str]]]:
    """Remove what a dead run left, each kind with its remover from `table`; resources.json keeps exactly what
    could not be removed. What `owned` refuses (not the run's) is reported with the failures and never touched;
    a reason that is a `Refusal` says so.

    A run killed while the mon was applying its command (a pool being created) may see that change land after
    this removal looked: a pool removed "before it existed" is there a moment later, and its EC profile is then
    busy. So when anything fails, every leftover is removed again (each remover accepts what is already gone)
    after the mon had time to settle, up to `passes` times."""
    left = leftovers(rundir)
    if not left:
        return [], []
    refused = [(r, Refusal(why)) for r in left for why in [owned.refusal(r) if owned else None] if why]
    mine = [r for r in left if r not in {r for r, _ in refused}]
    pools = {r.name for r in mine if r.kind == "pool"}
    # what is named "<pool>/..." in a pool the run made goes with that pool, where its declaration says so: `rbd rm`
    # of an image would first wait out the watch of the client killed with the run (30 s)
    with_pool = {r: Resource("pool", r.name.split("/", 1)[0]) for r in mine
                 for declared in [resource_type(r.kind)]
                 if declared is not None and declared.goes_with_pool and r.name.split("/", 1)[0] in pools}
    ordered = sorted((r for r in mine if r not in with_pool), key=lambda r: removal_place(r.kind))
    done: list[Resource] = []
    failed: list[tuple[Resource, str]] = []
    for attempt in range(passes):
        failed = []
        for r in ordered:
            remove = table.get(r.kind)
            if r.kind == "config-key" and failed:
                continue        # the run marker goes last, once all else went: the next cleanup's proof of the rest
            if allows_pool_delete(r) and any(f.kind == "pool" for f, _ in failed):
                # put back only once the run's pools went: false again, the monitors would refuse the next pass
                failed.append((r, "kept until the run's pools are removed (the monitors refuse to delete them "
                                  "without it)"))
                continue
            try:
                if remove is None:
                    raise OperationFailed(f"cephbench does not know how to remove a {r.kind}")
                remove(r)
                if r not in done:
                    done.append(r)
                    note(f"removed {r.kind} {r.name}")
            except Undone as exc:
                if r not in done:
                    done.append(r)
                    note(f"{r.kind} {r.name}: {exc}")
            except Refused as exc:
                failed.append((r, Refusal(str(exc))))
            except (OperationFailed, UserError, OSError) as exc:
                failed.append((r, exc.one_line() if isinstance(exc, UserError) else str(exc)))
        broken = {r for r, _ in failed}
        done = [r for r in done if r not in broken]
        done += [image for image, pool in with_pool.items() if pool in done and image not in done]
        save(rundir, [x for x in left if x not in done])
        if all(isinstance(why, Refusal) for _, why in failed) or attempt == passes - 1:
            break
        time.sleep(settle_s)
    return done, refused + failed
