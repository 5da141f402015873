"""cgroup v1 folders of a multi-host lab: a blkio group per OSD (drive throttles) and a cpuacct group per host.

Layout for lab id `ab12cd` (netns.lab_id_for):
  /sys/fs/cgroup/blkio/cephbench-ab12cd/osd.<N>      blkio.throttle.{read,write}_{bps,iops}_device
  /sys/fs/cgroup/cpuacct/cephbench-ab12cd/<host>     cpuacct.usage: CPU time of everything started on the host
  /sys/fs/cgroup/cpu/cephbench-ab12cd/osd.<N>        cpu.cfs_quota_us: a daemon's CPU limit (--cpu-limit)
  /sys/fs/cgroup/cpu/cephbench-ab12cd/load.<host>    ... a neighbour's busy loops held to their cores (--host-load)
On this kind of machine cpu and cpuacct are separate v1 mounts; only cpuacct is needed for accounting.

A process joins a group by writing its PID to `cgroup.procs` (which moves all its threads); its children are
born there. `join_argv` makes a command start inside groups. It must wrap `ip netns exec`, never the other way
round: `ip netns exec` remounts /sys for the namespace, and /sys/fs/cgroup is empty inside it. Processes sshd
starts inherit sshd's groups.

Only the lab removes its groups, and rmdir works once no task is left in them; `remove` waits briefly for
exiting processes and never kills anything itself.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Iterable, Sequence

from ..core.errors import OperationFailed, UserError
from .throttle import DriveLimit

BLKIO_ROOT = Path("/sys/fs/cgroup/blkio")
CPUACCT_ROOT = Path("/sys/fs/cgroup/cpuacct")
CPU_ROOT = Path("/sys/fs/cgroup/cpu")
_THROTTLE = "blkio.throttle.{direction}_{what}_device"
REMOVE_WAIT_S = 5.0
_NEEDS = {"blkio": "drive throttles", "cpuacct": "per-host CPU accounting", "cpu": "CPU limits and host loads"}


def lab_group(lab_id: str) -> str:
    return f"cephbench-{lab_id}"


def osd_blkio(lab_id: str, osd: int, root: Path = BLKIO_ROOT) -> Path:
    return root / lab_group(lab_id) / f"osd.{osd}"


def host_cpuacct(lab_id: str, host: str, root: Path = CPUACCT_ROOT) -> Path:
    return root / lab_group(lab_id) / host


def cpu_group(lab_id: str, name: str, root: Path = CPU_ROOT) -> Path:
    """The cpu group of a limited daemon (`osd.2`) or of a host's neighbour (`load.h2`): its CFS quota."""
    return root / lab_group(lab_id) / name


def set_cpu_quota(cgroup: Path, quota_us: int, period_us: int) -> None:
    """Hold the group's processes together to quota_us of CPU time per period_us (cores = quota ÷ period)."""
    (cgroup / "cpu.cfs_period_us").write_text(f"{period_us}\n")
    (cgroup / "cpu.cfs_quota_us").write_text(f"{quota_us}\n")


def check_controllers(roots: Iterable[Path] = (BLKIO_ROOT, CPUACCT_ROOT)) -> None:
    """One line when a v1 controller the lab needs is not mounted (a cgroup v2-only host)."""
    for root in roots:
        if not (root / "cgroup.procs").exists():
            raise UserError(f"the cgroup v1 {root.name} controller is not mounted at {root}: the multi-host lab's "
                            f"{_NEEDS.get(root.name, 'groups')} need it",
                            f"mount it (mount -t cgroup -o {root.name} cgroup {root}) or boot with cgroup v1")


def throttle_lines(dev: str, limit: DriveLimit) -> dict[str, str]:
    """The blkio files to write and what, for `limit` on device MAJ:MIN `dev`; a missing figure writes 0 (none)."""
    out = {}
    for what, value in (("bps", limit.bytes_per_s), ("iops", limit.iops)):
        for direction in ("read", "write"):
            out[_THROTTLE.format(direction=direction, what=what)] = f"{dev} {value or 0}"
    return out


def set_limit(cgroup: Path, dev: str, limit: DriveLimit) -> None:
    """Limit what the group's processes do to device `dev` (MAJ:MIN); DriveLimit() clears it."""
    for name, line in throttle_lines(dev, limit).items():
        (cgroup / name).write_text(line + "\n")


def clear_limit(cgroup: Path, dev: str) -> None:
    set_limit(cgroup, dev, DriveLimit())


def limits(cgroup: Path) -> dict[str, DriveLimit]:
    """The limits set in a group, per device: what the kernel holds (reads and writes are set alike here)."""
    found: dict[str, dict[str, int]] = {}
    for what in ("bps", "iops"):
        text = (cgroup / _THROTTLE.format(direction="write", what=what)).read_text()
        for line in text.splitlines():
            dev, value = line.split()
            found.setdefault(dev, {})[what] = int(value)
    return {dev: DriveLimit(v.get("bps"), v.get("iops")) for dev, v in found.items()}


def join(cgroup: Path, pid: int) -> None:
    """Move process `pid` (all its threads) into the group."""
    (cgroup / "cgroup.procs").write_text(f"{pid}\n")


def join_argv(cgroups: Sequence[Path], argv: Sequence[str]) -> list[str]:
    """A command line that enters every group of `cgroups`, then execs `argv` (its PID stays the same).

    Put it outside `ip netns exec` (see the module's comment): join_argv(groups, netns.exec_argv(ns, argv)).
    """
    if not cgroups:
        return [str(a) for a in argv]
    # The paths go in as positional parameters, so no name is ever parsed by the shell.
    script = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 126; shift; ' \
             'n=$((n-1)); done; exec "$@"'
    return ["sh", "-c", script, "sh", str(len(cgroups)), *[str(c) for c in cgroups], *[str(a) for a in argv]]


def cpu_usage_ns(cgroup: Path) -> int:
    """CPU time (user + system) of every task that ever ran in the group and its children, in nanoseconds."""
    return int((cgroup / "cpuacct.usage").read_text())


def tasks(cgroup: Path) -> list[int]:
    try:
        return [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
    except FileNotFoundError:
        return []


def make(cgroup: Path) -> bool:
    """Create one group (its parent must exist); False when it was already there."""
    try:
        cgroup.mkdir()
    except FileExistsError:
        return False
    return True


def remove(cgroups: Sequence[Path], wait_s: float = REMOVE_WAIT_S) -> list[Path]:
    """rmdir each group that exists, children before parents; returns those removed.

    A group that still holds tasks is waited for up to `wait_s` (the lab stopped its processes; they may be
    exiting). Raises naming the groups left and the PIDs in them.
    """
    ordered = sorted(set(cgroups), key=lambda p: len(p.parts), reverse=True)
    removed: list[Path] = []
    deadline = time.monotonic() + wait_s
    pending = [c for c in ordered if c.exists()]
    while pending:
        still = []
        for c in pending:
            try:
                os.rmdir(c)
                removed.append(c)
            except FileNotFoundError:
                pass
            except OSError:
                still.append(c)
        if not still or time.monotonic() >= deadline:
            pending = still
            break
        pending = still
        time.sleep(0.05)
    if pending:
        busy = "; ".join(f"{c} (PIDs {' '.join(map(str, tasks(c))) or 'none'})" for c in pending)
        raise OperationFailed(f"could not remove cgroup {busy}")
    return removed
