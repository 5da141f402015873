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
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .errors import OperationFailed, UserError
from .resources import CONFIG_OPTION, Resource

log = logging.getLogger(__name__)

LOCK_NAME = ".running"


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
    """What resources.json says the run had not removed yet, oldest first."""
    path = Path(rundir) / "resources.json"
    if not path.exists():
        return []
    try:
        items = json.loads(path.read_text() or "[]")
        return [Resource(str(i["kind"]), str(i["name"])) for i in items]
    except (ValueError, TypeError, KeyError) as exc:
        raise UserError(f"{path} cannot be read ({exc}); what it lists must be removed by hand",
                        "see docs/results-schema.md for its format") from None


def save(rundir: Path, resources: list[Resource]) -> None:
    path = Path(rundir) / "resources.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([{"kind": r.kind, "name": r.name} for r in resources], indent=1) + "\n")
    tmp.replace(path)


Remover = Callable[[Resource], None]


def remote_file_parts(name: str) -> tuple[str, str]:
    """A remote file's ledger name "<address>:<absolute path>" (an IPv6 address has no slash) -> its parts."""
    i = name.find(":/")
    return (name[:i], name[i + 1:]) if i > 0 else (name, "")


def how_to_remove(r: Resource) -> str:
    """The command a person runs to remove one resource by hand."""
    if r.kind == CONFIG_OPTION:
        from .variant_plan import Restore
        return " ".join(Restore.decode(r.name).argv())
    if r.kind == "lab-shape":
        from .shape_plan import restore_commands
        return " && ".join(restore_commands(r.name))     # one command: up only after down worked
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


# the order a dead run's leftovers go in: processes first (they may still be writing), flags last
_ORDER = ["process", "ssh-control", "remote-file", "remote-dir", "rbd-mapping", "rgw-buckets", "rgw-user", "rbd-image", "pool", "ec-profile", "osd-flags",
          "config-key"]


def remove_leftovers(rundir: Path, table: dict[str, Remover], note: Callable[[str], None] = lambda _m: None,
                     passes: int = 3, settle_s: float = 2.0) -> tuple[list[Resource], list[tuple[Resource, str]]]:
    """Remove what a dead run left, each kind with its remover from `table`; resources.json keeps exactly what
    could not be removed.

    A run killed while the mon was applying its command (a pool being created) may see that change land after
    this removal looked: a pool removed "before it existed" is there a moment later, and its EC profile is then
    busy. So when anything fails, every leftover is removed again (each remover accepts what is already gone)
    after the mon had time to settle, up to `passes` times."""
    left = leftovers(rundir)
    if not left:
        return [], []
    pools = {r.name for r in left if r.kind == "pool"}
    # an image in a pool the run made goes with that pool: `rbd rm` would first wait out the watch of the
    # client killed with the run (30 s)
    with_pool = {r: Resource("pool", r.name.split("/", 1)[0]) for r in left
                 if r.kind == "rbd-image" and r.name.split("/", 1)[0] in pools}
    ordered = sorted((r for r in left if r not in with_pool),
                     key=lambda r: _ORDER.index(r.kind) if r.kind in _ORDER else len(_ORDER))
    done: list[Resource] = []
    failed: list[tuple[Resource, str]] = []
    for attempt in range(passes):
        failed = []
        for r in ordered:
            remove = table.get(r.kind)
            try:
                if remove is None:
                    raise OperationFailed(f"cephbench does not know how to remove a {r.kind}")
                remove(r)
                if r not in done:
                    done.append(r)
                    note(f"removed {r.kind} {r.name}")
            except (OperationFailed, UserError, OSError) as exc:
                failed.append((r, exc.one_line() if isinstance(exc, UserError) else str(exc)))
        broken = {r for r, _ in failed}
        done = [r for r in done if r not in broken]
        done += [image for image, pool in with_pool.items() if pool in done and image not in done]
        save(rundir, [x for x in left if x not in done])
        if not failed or attempt == passes - 1:
            break
        time.sleep(settle_s)
    return done, failed
