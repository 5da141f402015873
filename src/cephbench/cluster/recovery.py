"""What a run that died (kill -9, a crash, a lost machine) left behind, removed from its run directory alone.

A live run removes what it made through the closures of its ledger. Those die with the process; what survives is
resources.json, which names every resource before it is created. Each kind of resource has a remover here that
needs only that name and the run's target, so `cephbench cleanup RUN_DIR` and `cephbench run --resume RUN_DIR`
can finish the dead run's cleanup. Tool processes are stopped by the PIDs the run recorded, and only when the
process with that PID is still the one the run started (its start time matches), never by name.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .ceph import POOL_DELETE_OPTION
from ..core.errors import OperationFailed, UserError
from . import marker
from ..core.resources import CONFIG_OPTION, Refusal, Refused, Resource, Undone

REMOTE_FILE_KIND = "remote-file"      # clients.REMOTE_FILE (recovery sits below clients)
REMOTE_DIR_KIND = "remote-dir"        # remote_dirs.REMOTE_DIR

log = logging.getLogger(__name__)

LOCK_NAME = ".running"
DISK_FILE = "disk-file"         # ledger kind: a disk baseline's test file, "<address or localhost>:<path>"
# ledger kind: the run's RADOS namespace in a pool it did not create (pools.own_namespace), "<pool>/<namespace>"
RADOS_NAMESPACE = "rados-namespace"


# ---- processes: recorded as "<pid>:<start time in clock ticks since boot>" ---------------------------------

def process_start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: fields after the last ')' are fixed
    return int(stat[stat.rindex(")") + 2:].split()[19])


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

@dataclass
class RunLock:
    """Held (flock) by the process running a run directory, for its whole life; the kernel drops it when the
    process dies, however it dies. A cleanup or resume of a directory whose lock is held is refused."""

    path: Path
    _fd: int | None = field(default=None, repr=False)

    @classmethod
    def take(cls, rundir: Path) -> "RunLock":
        lock = cls(Path(rundir) / LOCK_NAME)
        fd = os.open(lock.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise UserError(f"{rundir} is being run right now by process {holder}",
                            "wait for it to finish, or stop it with Ctrl-C (it cleans up after itself)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        lock._fd = fd
        return lock

    def release(self) -> None:
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
        items = json.loads(path.read_text() or "[]")
    except (ValueError, OSError) as exc:
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


def remote_file_parts(name: str) -> tuple[str, str]:
    """A remote file's ledger name "<address>:<absolute path>" (an IPv6 address has no slash) -> its parts."""
    i = name.find(":/")
    return (name[:i], name[i + 1:]) if i > 0 else (name, "")


def how_to_remove(r: Resource) -> str:
    """The command a person runs to remove one resource by hand."""
    if r.kind == CONFIG_OPTION:
        from ..core.variant_plan import Restore
        return " ".join(Restore.decode(r.name).argv())
    if r.kind == "lab-shape":
        from ..suite.shape_plan import restore_commands
        return " && ".join(restore_commands(r.name))     # one command: up only after down worked
    if r.kind == RADOS_NAMESPACE:
        pool, ns = r.name.rsplit("/", 1)
        base = f"rados -p {pool} -N {ns}"
        return f"{base} cleanup --prefix benchmark_data; {base} ls | xargs -r {base} rm  (the pool stays)"
    if r.kind == DISK_FILE:
        address, path = remote_file_parts(r.name)
        return (f"{'' if address == 'localhost' else f'ssh {address} '}rm -f {path} {path}.pid  (once the fio "
                "writing it has ended)")
    return {
        "process": f"kill -- -{r.name.partition(':')[0]}  (only if that process is still cephbench's tool)",
        "osd-flags": "; ".join(f"ceph osd unset {f}" for f in r.name.split(",") if f and f != "none"),
        "pool": f"ceph osd pool delete {r.name} {r.name} --yes-i-really-really-mean-it",
        "ec-profile": f"ceph osd erasure-code-profile rm {r.name}",
        "rbd-image": f"rbd rm {r.name}",
        "rbd-mapping": f"rbd unmap {r.name}",
        "rgw-user": f"radosgw-admin user rm --uid {r.name} --purge-data",
        "rgw-buckets": f"radosgw-admin bucket rm --bucket NAME --purge-objects  (each bucket named {r.name})",
        "config-key": f"ceph config-key rm {r.name}",
        "ssh-control": f"rm -rf {r.name}  (its ssh masters exit by themselves a minute after their last use)",
        "remote-file": "ssh {0} rm -f {1}".format(*remote_file_parts(r.name)),
        "remote-dir": "ssh {0} rm -rf {1}".format(*remote_file_parts(r.name)),
    }.get(r.kind, f"remove {r.kind} {r.name}")


# ---- what is the run's: names, the run marker, start times ----------------------------------------------------

# a run's own copy of cephbench-loadgen on a client host (clients.REMOTE_DIR/cephbench-<run id>-loadgen-<sha>)
_LOADGEN_COPY = re.compile(r"/\.cache/cephbench/bin/(cephbench-[0-9A-Za-z]+-loadgen-[0-9a-f]+)$")
_BY_PREFIX = ("pool", "ec-profile", "rgw-user", "rgw-buckets")


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


@dataclass(frozen=True)
class Ownership:
    """What a run may remove: only what carries its name (cephbench-<run id>-..., for one of its run ids), whose
    run id's marker on the cluster (cluster/marker.py) does not name another run directory, and tool processes that
    started after the run did. Everything else in a ledger was not made by this run (a hand-edited or copied
    resources.json): refused, never removed. The scrub flags and a variant's options carry no name: their
    removers check the state the entry recorded against the cluster's. A lab shape is the lab's (run/shapes.py)."""

    run_ids: tuple[str, ...]
    run_dir: str | None = None
    markers: dict[str, dict[str, Any]] | None = None      # run id -> its marker; None: not read
    started_unix: float | None = None
    image_of: Callable[[str], str | None] = mapped_image

    def refusal(self, r: Resource) -> str | None:
        why = self._why_not(r)
        if why is None:
            return None
        return (f"refused to remove {r.kind} {r.name}: {why}; left as it is (if it is to go, remove it by hand and "
                "take its entry out of resources.json)")

    def _run_of(self, name: str) -> str | None:
        return next((i for i in self.run_ids if name.startswith(f"cephbench-{i}-")), None)

    def _why_not(self, r: Resource) -> str | None:
        if r.kind in _BY_PREFIX or r.kind in ("rbd-image", "rbd-mapping", REMOTE_DIR_KIND, DISK_FILE, RADOS_NAMESPACE):
            name = r.name
            if r.kind in ("rbd-image", RADOS_NAMESPACE):
                name = r.name.rsplit("/", 1)[-1]
            elif r.kind == "rbd-mapping":
                image = self.image_of(r.name)
                if image is None:
                    return None             # nothing mapped there: the remover finds nothing to do
                name = image
            elif r.kind in (REMOTE_DIR_KIND, DISK_FILE):
                name = remote_file_parts(r.name)[1].rsplit("/", 1)[-1]
            run = self._run_of(name)
            if run is None or (r.kind == DISK_FILE and name != f"cephbench-{run}-baseline.dat"):
                return f"{name!r} is not named cephbench-<run id>-... for this run (run ids {', '.join(self.run_ids)})"
            return self._marker_says(run)
        if r.kind == "config-key":
            run = next((i for i in self.run_ids if r.name == marker.key(i)), None)
            return (f"it is not this run's marker (cephbench/runs/<run id>, run ids {', '.join(self.run_ids)})"
                    if run is None else self._marker_says(run))
        if r.kind == REMOTE_FILE_KIND:
            copy = _LOADGEN_COPY.search(remote_file_parts(r.name)[1])
            run = self._run_of(copy.group(1)) if copy else None
            if run is None:
                return ("it is not this run's copy of cephbench-loadgen (~/.cache/cephbench/bin/cephbench-<run id>-"
                        f"loadgen-..., run ids {', '.join(self.run_ids)}): another run may be using it")
            return self._marker_says(run)
        if r.kind == "ssh-control" and not Path(r.name).name.startswith("cephbench-ssh-"):
            return "it is not a directory of cephbench's ssh sockets (cephbench-ssh-...)"
        if r.kind == "process" and self.started_unix is not None:
            ticks = process_start_ticks(int(r.name.partition(":")[0])) if r.name.partition(":")[0].isdigit() else None
            started = process_started_unix(ticks) if ticks is not None else None
            if started is not None and started < self.started_unix - 2:
                return "that process started before the run did"
        return None

    def _marker_says(self, run: str) -> str | None:
        info = (self.markers or {}).get(run)
        theirs = info.get("run_dir") if isinstance(info, dict) else None
        if theirs and self.run_dir and Path(theirs).resolve() != Path(self.run_dir).resolve():
            return f"the run marker {marker.key(run)} on the cluster says run {run} is {theirs}, not this directory"
        return None


def allows_pool_delete(r: Resource) -> bool:
    """A ledger entry of --allow-pool-delete (run/pooldelete.py): the option that lets the run's pools be deleted."""
    if r.kind != CONFIG_OPTION:
        return False
    from ..core.variant_plan import Restore
    return Restore.decode(r.name).name == POOL_DELETE_OPTION


# the order a dead run's leftovers go in: processes first (they may still be writing), flags last
_ORDER = ["process", "ssh-control", "remote-file", "remote-dir", DISK_FILE, "rbd-mapping", "rgw-buckets", "rgw-user",
          "rbd-image", RADOS_NAMESPACE, "pool", "ec-profile", "osd-flags", "config-key"]


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
    # an image in a pool the run made goes with that pool: `rbd rm` would first wait out the watch of the
    # client killed with the run (30 s)
    with_pool = {r: Resource("pool", r.name.split("/", 1)[0]) for r in mine
                 if r.kind == "rbd-image" and r.name.split("/", 1)[0] in pools}
    ordered = sorted((r for r in mine if r not in with_pool),
                     key=lambda r: _ORDER.index(r.kind) if r.kind in _ORDER else len(_ORDER))
    done: list[Resource] = []
    failed: list[tuple[Resource, str]] = []
    for attempt in range(passes):
        failed = []
        for r in ordered:
            remove = table.get(r.kind)
            if r.kind == "config-key" and any(not isinstance(why, Refusal) for _, why in failed):
                continue        # the run marker goes last, once all else went: the next cleanup checks names by it
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
