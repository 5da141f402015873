"""Work directories cephbench makes on client hosts for a tool's output files (fio's json+ and its logs), brought
back into the run directory and removed.

A directory is entered in the run's ledger (kind `remote-dir`, named "<address>:<absolute path>") before it is made,
so every exit path removes it, and `cephbench cleanup` of a dead run can too (cluster/recovery.py, launch.removers). Its
path is fixed in advance (the ledger needs the name first): /tmp/cephbench-<run id>-<client>-<what>, made with
`mkdir -m 0700` and no -p, so a path that exists already (another user's, a symlink) is refused rather than
used. Removal is `rm -rf` of a path of that form only: a resources.json edited by hand cannot make it remove
anything else.

Files come back through ssh as a tar stream, unpacked by Python's tarfile with its "data" filter (no absolute
paths, no links out, no devices), even where a client shares this machine's file system (the lab).
"""

from __future__ import annotations

import logging
import re
import subprocess
import tarfile
from pathlib import Path

from ..core.settings import SshSettings
from ..core.errors import OperationFailed
from .local import LocalHost
from ..core.interrupts import held
from .remote import HostRef
from ..core.resources import Ledger, Resource, remote_file_parts

log = logging.getLogger(__name__)

REMOTE_DIR = "remote-dir"                 # ledger kind: "<address>:<absolute path>"
PARENT = "/tmp"
PREFIX = "cephbench-"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_OURS = re.compile(r"^/tmp/cephbench-[A-Za-z0-9_.-]+$")
TIMEOUT_S = 60.0
FETCH_TIMEOUT_S = 300.0


def dir_path(*parts: str) -> str:
    """The remote path of a work directory: /tmp/cephbench-<parts joined by '-'>, each made safe for a path."""
    return f"{PARENT}/{PREFIX}" + "-".join(_SAFE.sub("_", p) for p in parts)


def resource_name(ref: HostRef, path: str) -> str:
    return f"{ref.address or 'localhost'}:{path}"


def _ref_of(name: str) -> tuple[HostRef, str]:
    address, path = remote_file_parts(name)
    return HostRef(address, None if address == "localhost" else address), path


def _checked(path: str) -> str:
    if not _OURS.match(path):
        raise OperationFailed(f"{path!r} is not a cephbench work directory ({PARENT}/{PREFIX}...): not removed")
    return path


def make_dir(local: LocalHost, ref: HostRef, ssh: SshSettings, ledger: Ledger, path: str) -> Resource:
    """Make the work directory `path` on `ref`, entered in the ledger first; returns its ledger resource."""
    res_ = Resource(REMOTE_DIR, resource_name(ref, _checked(path)))
    with held():        # in the ledger before it exists: a signal cannot leave a directory the ledger lacks
        ledger.add(res_, lambda: remove_dir(local, ssh, res_.name))
    res = local.run(ref.argv(["mkdir", "-m", "0700", "--", path], ssh), TIMEOUT_S)
    if not res.ok:      # not made (it existed already: someone else's), so not ours to remove
        ledger.forget(res_)
        raise OperationFailed(f"host {ref.where}: mkdir {path} failed: {res.error_text()}")
    return res_


def remove_dir(local: LocalHost, ssh: SshSettings, name: str) -> None:
    """Remove a work directory by its ledger name; gone already is fine."""
    ref, path = _ref_of(name)
    res = local.run(ref.argv(["rm", "-rf", "--", _checked(path)], ssh), TIMEOUT_S)
    if not res.ok:
        raise OperationFailed(f"host {ref.where}: rm -rf {path} failed: {res.error_text()}")


def fetch_dir(local: LocalHost, ref: HostRef, ssh: SshSettings, path: str, into: Path,
              timeout_s: float = FETCH_TIMEOUT_S) -> list[Path]:
    """Copy every file of the remote directory `path` into the local directory `into` (made if missing), over
    ssh as a tar stream; returns the files unpacked."""
    into.mkdir(parents=True, exist_ok=True)
    argv = ref.argv(["tar", "-C", path, "-cf", "-", "."], ssh)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=local._env(None), start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    got: list[Path] = []
    try:
        try:
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                for member in tar:
                    if member.isfile():
                        tar.extract(member, into, filter="data")
                        got.append(into / member.name)
        except tarfile.TarError as exc:
            err = proc.stderr.read().decode(errors="replace").strip().splitlines()
            raise OperationFailed(f"host {ref.where}: fetching {path} failed: "
                                  f"{err[-1] if err else exc}") from None
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        raise OperationFailed(f"host {ref.where}: fetching {path} took more than {timeout_s:.0f} s") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        err_text = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
    if proc.returncode != 0:
        raise OperationFailed(f"host {ref.where}: fetching {path} failed: "
                              f"{err_text.splitlines()[-1] if err_text else f'exit code {proc.returncode}'}")
    return sorted(p.resolve() for p in got)

