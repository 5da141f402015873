"""Client hosts: which hosts a suite's workloads run their tools on, checked before anything is created.

A suite lists its client hosts (`clients: [host, ...]`, reached with settings.ssh like the OSD hosts) or says
`clients: lab` (the multi-host lab's client hosts). A workload with `clients: N` runs on the first N of them,
`all` on every one; without it the workload runs here only, as it always did.

Before the run changes anything, every client in use is checked at once (one ssh session each): reachable, the
tools its workloads need there (fio with the engine they use), a key that reaches the cluster, and its clock
compared with this machine's (NTP style, the best round trip of several). An offset above 1 s is refused unless
--force: clients are started at one wall-clock instant, and their windows are merged on one time line.

cephbench-loadgen is copied to each client for the run, to a path that names the run
(~/.cache/cephbench/bin/cephbench-<run id>-loadgen-<sha>), through the run's ledger (a `remote-file`, removed at
the end, or by `cephbench cleanup` of a dead run). A copy per run, never one shared: a run that removed a copy
another run found there and used would pull it from under that run's tools (exit 127), and homes shared over NFS
share the copies of every machine's runs.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import select
import shlex
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..core.settings import SshSettings
from ..core.errors import OperationFailed, UserError
from .local import LocalHost
from ..core.interrupts import held
from ..kinds import Needs, client_needs
from .remote import SSH_FAILED, HostRef
from ..core.resources import Ledger, Resource, remote_file_parts
from ..core.results import Test

log = logging.getLogger(__name__)

MAX_CLOCK_OFFSET_NS = 1_000_000_000     # as warp: a start barrier cannot be trusted beyond this
CHECK_TIMEOUT_S = 60.0
KEY_TIMEOUT_S = 20                      # `rados lspools` against monitors that do not answer waits forever
REMOTE_DIR = ".cache/cephbench/bin"      # under the client's $HOME
LOADGEN = "cephbench-loadgen"
REMOTE_FILE = "remote-file"             # ledger kind: "<address>:<absolute path>"
# what remove_remote_file may remove: a run's copy of cephbench-loadgen, or the shared copy older versions made
_OURS = re.compile(rf"^/(?:.*/)?{re.escape(REMOTE_DIR)}/cephbench-(?:[0-9a-f]+-)?loadgen-[0-9a-f]{{12}}$")


def needs_of(test: Test) -> Needs:
    """What one test's tool needs on a client host (its kind's `needs`); every tool started there needs
    cephbench-loadgen too, whose `at` starts it at the run's one instant."""
    return client_needs(test.kind, test.params)


@dataclass(frozen=True)
class Client:
    name: str
    ref: HostRef
    where: str = "clients"          # the suite path naming it, for messages


@dataclass(frozen=True)
class ClockOffset:
    offset_ns: int                  # the client's clock minus this machine's
    rtt_ns: int                     # the round trip of the sample it comes from


@dataclass
class ClientFacts:
    """What preflight found on one client: for run.json."""
    name: str
    address: str | None
    clock: ClockOffset | None = None
    versions: dict[str, str] = field(default_factory=dict)
    loadgen: dict[str, object] | None = None

    def to_json(self) -> dict:
        return {"address": self.address,
                "clock_offset_ns": self.clock.offset_ns if self.clock else None,
                "clock_rtt_ns": self.clock.rtt_ns if self.clock else None,
                "versions": self.versions, "loadgen": self.loadgen}


# ---- which clients ---------------------------------------------------------------------------------------

def clients_of(count: int | str | None, clients: Sequence[Client]) -> list[Client]:
    """The clients a test with `clients: count` runs on (the first N, or all); none: this machine alone."""
    if count is None:
        return []
    return list(clients) if count == "all" else list(clients)[:int(count)]


def needs_by_client(tests: Sequence[Test], clients: Sequence[Client]) -> dict[str, Needs]:
    """Each client in use and what the tests that run on it need there."""
    out: dict[str, Needs] = {}
    for t in tests:
        for c in clients_of(t.params.get("clients"), clients):
            out[c.name] = out.get(c.name, Needs(key=False)) | needs_of(t)
    return out


# ---- the clock -------------------------------------------------------------------------------------------

def offset_from(samples: Sequence[tuple[int, int, int]]) -> ClockOffset:
    """(sent, remote clock, received) in ns -> the offset from the sample of the shortest round trip, taking the
    remote reading to be from the middle of it (NTP's assumption: the way there and back take as long)."""
    if not samples:
        raise ValueError("no clock samples")
    sent, remote, received = min(samples, key=lambda s: s[2] - s[0])
    return ClockOffset(remote - (sent + received) // 2, received - sent)


def _read_line(fd: int, buf: bytearray, deadline: float) -> str | None:
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        buf.extend(chunk)
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return line.decode(errors="replace").strip()


def measure_clock(local: LocalHost, ref: HostRef, ssh: SshSettings, rounds: int = 5,
                  timeout_s: float = 15.0) -> ClockOffset:
    """The client's clock minus this one's, from `rounds` readings of `date +%s%N` over one ssh session (the
    session's set-up is in a first reading of its own, not counted). Raises OperationFailed when it cannot."""
    argv = ref.argv(["sh", "-c", "while read -r _; do date +%s%N; done"], ssh)
    # an interactive session (one line out, one line back): LocalHost.run cannot time each exchange
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=local._env(None), start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout_s
    buf = bytearray()
    samples: list[tuple[int, int, int]] = []
    try:
        for i in range(rounds + 1):
            sent = time.time_ns()
            proc.stdin.write(b"t\n")
            proc.stdin.flush()
            line = _read_line(proc.stdout.fileno(), buf, deadline)
            received = time.time_ns()
            if line is None:
                break
            try:
                remote = int(line)
            except ValueError:
                raise OperationFailed(f"'date +%s%N' printed {line[:60]!r}, not nanoseconds (GNU date needed)")
            if i:
                samples.append((sent, remote, received))
    except BrokenPipeError:
        pass
    finally:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        _, err = proc.communicate()
    if len(samples) < rounds:
        lines = [ln for ln in err.decode(errors="replace").splitlines() if ln.strip()]
        why = lines[-1].strip() if lines else ("timed out" if time.monotonic() >= deadline else
                                               f"exit code {proc.returncode}")
        raise OperationFailed(why)
    return offset_from(samples)


def check_clock(client: Client, clock: ClockOffset, force: bool) -> str | None:
    """Refuse an offset above 1 s (None: fine); with --force, the warning to show instead."""
    if abs(clock.offset_ns) <= MAX_CLOCK_OFFSET_NS:
        return None
    how = "ahead of" if clock.offset_ns > 0 else "behind"
    what = (f"client {client.ref.where}'s clock is {abs(clock.offset_ns) / 1e9:.3f} s {how} this machine's "
            f"(round trip {clock.rtt_ns / 1e6:.1f} ms)")
    if not force:
        raise UserError(f"{what}; clients start at one wall-clock instant, so more than 1 s apart is refused",
                        "sync its clock (chrony or ntp), or run with --force to go on with the offset corrected "
                        "for and recorded", where=client.where)
    return f"warning: {what}; --force: going on, the offset is corrected for and recorded in run.json"


# ---- tools and key ---------------------------------------------------------------------------------------

VERSION_ARGV = {"rados": "rados --version", "rbd": "rbd --version", "fio": "fio --version"}


def check_script(needs: Needs, client_id: str | None) -> str:
    """A shell script printing one `cephbench-...` line per finding; exit 0 whatever it finds, so that only ssh's
    own failure (255) means the host was not reached."""
    q = shlex.quote
    lines = []
    for tool in needs.tools:
        lines.append(f"command -v {q(tool)} >/dev/null 2>&1 || {{ echo 'cephbench-missing {tool}'; exit 0; }}")
        if tool in VERSION_ARGV:
            lines.append(f"echo \"cephbench-version {tool} $({VERSION_ARGV[tool]} 2>&1 | head -n1)\"")
    for engine in needs.engines:
        lines.append(f"fio --enghelp={q(engine)} >/dev/null 2>&1 || {{ echo 'cephbench-noengine {engine}'; exit 0; }}")
    if needs.key:
        who = f"--id {q(client_id)} " if client_id else ""
        lines.append("if command -v rados >/dev/null 2>&1; then c='rados " + who + "lspools'; "
                     "elif command -v ceph >/dev/null 2>&1; then c='ceph " + who + "-s'; "
                     "else echo 'cephbench-nokey neither rados nor ceph is installed to check it'; exit 0; fi")
        lines.append(f"out=$(timeout {KEY_TIMEOUT_S} $c 2>&1) || "
                     "{ echo \"cephbench-nokey $c: $(printf '%s\\n' \"$out\" | tail -n1)\"; exit 0; }")
    lines.append("echo cephbench-ok")
    return "\n".join(lines)


def read_findings(client: Client, text: str, needs: Needs = Needs()) -> dict[str, str]:
    """The check script's output -> versions; a missing tool, engine or key -> one UserError naming the client."""
    versions: dict[str, str] = {}
    where = client.where
    for line in text.splitlines():
        kind, _, rest = line.strip().partition(" ")
        if kind == "cephbench-missing":
            raise UserError(f"{rest} is not installed on client {client.ref.where}",
                            f"install it there (Debian: apt-get install {needs.package_of(rest)})",
                            where=where)
        if kind == "cephbench-noengine":
            pkg = {"rbd": "fio built with librbd (Debian's fio package has it)",
                   "rados": "fio built with librados (Debian's fio package has it)"}.get(rest, f"fio's {rest} engine")
            raise UserError(f"fio on client {client.ref.where} has no {rest} engine (fio --enghelp={rest} fails)",
                            f"install {pkg} there", where=where)
        if kind == "cephbench-nokey":
            raise UserError(f"client {client.ref.where} cannot reach the cluster with its own conf and key ({rest})",
                            "give it /etc/ceph/ceph.conf and a keyring of the run's client id", where=where)
        if kind == "cephbench-version":
            tool, _, version = rest.partition(" ")
            versions[tool] = version.strip()
    if "cephbench-ok" not in text.split():
        raise UserError(f"client {client.ref.where} did not finish its checks: {text.strip()[-200:]!r}", where=where)
    return versions


def preflight_clients(local: LocalHost, clients: Sequence[Client], tests: Sequence[Test], ssh: SshSettings,
                      client_id: str | None, force: bool,
                      say: Callable[[str], None] = lambda _m: None) -> dict[str, ClientFacts]:
    """Check every client the tests use, all at once; the first problem (in the suite's order) is refused in one
    line naming the client. Nothing is created anywhere."""
    needs = needs_by_client(tests, clients)
    used = [c for c in clients if c.name in needs]
    if not used:
        return {}

    def check(c: Client) -> tuple[ClientFacts, str | None]:
        res = local.run(c.ref.argv(["sh", "-c", check_script(needs[c.name], client_id)], ssh), CHECK_TIMEOUT_S)
        if c.ref.address is not None and (res.timed_out or res.returncode == SSH_FAILED):
            raise UserError(f"client {c.ref.where} cannot be reached over ssh: {res.error_text()}",
                            "cephbench needs password-less ssh to every client: check the name and settings.ssh "
                            "(user, port, identity_file, hosts: {name: address})", where=c.where)
        facts = ClientFacts(c.name, c.ref.address, versions=read_findings(c, res.stdout, needs[c.name]))
        try:
            facts.clock = measure_clock(local, c.ref, ssh)
        except OperationFailed as exc:
            raise UserError(f"the clock of client {c.ref.where} cannot be read: {exc}", where=c.where) from None
        return facts, check_clock(c, facts.clock, force)

    with ThreadPoolExecutor(max_workers=min(16, len(used))) as pool:
        futures = [pool.submit(check, c) for c in used]
        done = [f.result() for f in futures]       # the first failure in the suite's order is the one raised
    for _, warning in done:
        if warning:
            say(warning)
    return {facts.name: facts for facts, _ in done}


# ---- cephbench-loadgen on the clients --------------------------------------------------------------------

def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def remote_name(address: str, path: str) -> str:
    return f"{address}:{path}"


def loadgen_name(run_id: str, sha: str) -> str:
    """The file name of a run's copy of cephbench-loadgen on a host: the run's own, whoever else runs there."""
    return f"cephbench-{run_id}-loadgen-{sha[:12]}"


def remove_remote_file(local: LocalHost, ssh: SshSettings, name: str) -> None:
    """Remove a file cephbench copied to a host (and a copy cut short beside it); gone already is fine. Only a
    path of cephbench-loadgen's form: a resources.json edited by hand cannot make it remove anything else."""
    address, path = remote_file_parts(name)
    if not _OURS.match(path):
        raise OperationFailed(f"{path!r} is not a copy of {LOADGEN} (~/{REMOTE_DIR}/cephbench-...): not removed")
    res = local.run(HostRef(address, address).argv(
        ["sh", "-c", 'rm -f -- "$1" "$1".tmp.*', "sh", path], ssh), 30)
    if not res.ok:
        raise OperationFailed(f"ssh {address} rm -f {path} failed: {res.error_text()}")


def deploy_loadgen(local: LocalHost, clients: Sequence[Client], ssh: SshSettings, ledger: Ledger,
                   binary: Path, run_id: str) -> tuple[dict[str, str], dict[str, dict[str, object]]]:
    """This machine's cephbench-loadgen on every client: copied (checksum-verified) to the run's own path there,
    each copy entered in the ledger before it is made. Returns host -> path there, and host -> what run.json
    records (path, sha256, copied)."""
    sha = sha256_of(binary)
    name = loadgen_name(run_id, sha)
    paths: dict[str, str] = {}
    facts: dict[str, dict[str, object]] = {}
    remote = [c for c in clients if c.ref.address is not None]
    for c in clients:
        if c.ref.address is None:
            paths[c.name] = str(binary)
            facts[c.name] = {"path": str(binary), "sha256": sha, "copied": False}

    def look(c: Client) -> str:
        """The copy's absolute path there (the ledger records it before the copy is made)."""
        res = local.run(c.ref.argv(["sh", "-c", f'echo "$HOME/{REMOTE_DIR}/{name}"'], ssh), CHECK_TIMEOUT_S)
        if not res.ok or not res.stdout.strip():
            raise UserError(f"client {c.ref.where}: cannot find its home for {LOADGEN}: {res.error_text()}",
                            where=c.where)
        return res.stdout.split()[0]

    def copy(c: Client, path: str) -> None:
        put = c.ref.argv(["sh", "-c", 'mkdir -p "$(dirname "$1")" && t="$1.tmp.$$" && cat > "$t" && '
                          'chmod 755 "$t" && mv -f "$t" "$1" && sha256sum "$1"', "sh", path], ssh)
        # the binary goes in on ssh's stdin: a local shell opens the file for it (LocalHost.run sends only text)
        res = local.run(["sh", "-c", 'exec "$@" < "$0"', str(binary), *put], 300)
        got = res.stdout.split()[0] if res.ok and res.stdout.split() else None
        if got != sha:
            raise UserError(f"copying {LOADGEN} to client {c.ref.where} failed: "
                            + (f"its sha256 there is {got}, not {sha}" if got else res.error_text()),
                            "check the disk space and permissions of ~/.cache there", where=c.where)

    if not remote:
        return paths, facts
    with ThreadPoolExecutor(max_workers=min(16, len(remote))) as pool:
        found = list(pool.map(look, remote))
    with held():            # entered before it is made, so that a signal cannot leave a copy the ledger lacks
        for c, path in zip(remote, found):
            paths[c.name] = path
            facts[c.name] = {"path": path, "sha256": sha, "copied": True}
            res_name = remote_name(str(c.ref.address), path)
            ledger.add(Resource(REMOTE_FILE, res_name), lambda n=res_name: remove_remote_file(local, ssh, n))
    with ThreadPoolExecutor(max_workers=min(16, len(remote))) as pool:
        for f in [pool.submit(copy, c, paths[c.name]) for c in remote]:
            f.result()
    log.info("%s on clients: %s", LOADGEN, paths)
    return paths, facts
