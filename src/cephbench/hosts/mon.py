"""One librados connection to the monitors, and the `ceph` command lines it stands for.

Every health check, fact, flag and pool change used to start a `ceph ... -f json` process: about 0.3-0.4 s of
Python start-up each, ~20 per run, CPU taken from the OSDs on a small machine. One connection per run answers
them in milliseconds. A change is still described by the `ceph` argv a user could type (dry runs print it, errors
quote it); `mon_command_for` turns that argv into the JSON command the monitor receives.
"""

from __future__ import annotations

import errno
import json
import logging
import math
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from ..core.errors import OperationFailed, UserError

log = logging.getLogger(__name__)

T = TypeVar("T")

# ---- argv -> mon command -------------------------------------------------------------------------------------
# The signatures of the commands cephbench (and its tests) send, as Ceph 16.2's monitors describe them
# (`get_command_descriptions`; tests/fixtures/mon/ holds the mon's own text). Notation: `name` a string,
# `name:int|float|bool|osd` a typed value, `name:a/b/c` one of a few words, `?` optional, `*` all the remaining
# words. Choice lists the mon checks anyway (`osd pool set`'s variables, `osd set`'s flags) stay plain strings.
# Asking the mon for the full table and parsing with ceph_argparse, as the `ceph` CLI does, costs ~3 s per run.
_SIGNATURES = """
status |
versions |
health | detail:detail?
df | detail:detail?
config dump |
osd dump | epoch:int?
osd ls | epoch:int?
osd tree | epoch:int? states:up/down/in/out/destroyed*
osd metadata | id:osd?
osd set | key yes_i_really_mean_it:bool?
osd unset | key
osd set-full-ratio | ratio:float
osd set-backfillfull-ratio | ratio:float
osd set-nearfull-ratio | ratio:float
osd pool ls | detail:detail?
osd pool stats | pool_name?
pg ls-by-pool | poolstr states*
osd pool create | pool pg_num:int? pgp_num:int? pool_type:replicated/erasure? erasure_code_profile? rule? \
    expected_num_objects:int? size:int? pg_num_min:int? pg_num_max:int? autoscale_mode:on/off/warn? bulk:bool? \
    target_size_bytes:int? target_size_ratio:float?
osd pool delete | pool pool2? yes_i_really_really_mean_it:bool? yes_i_really_really_mean_it_not_faking:bool?
osd pool rm | pool pool2? yes_i_really_really_mean_it:bool? yes_i_really_really_mean_it_not_faking:bool?
osd pool set | pool var val yes_i_really_mean_it:bool?
osd pool application enable | pool app yes_i_really_mean_it:bool?
osd erasure-code-profile set | name profile* force:bool?
osd erasure-code-profile rm | name
osd erasure-code-profile ls |
auth get | entity
auth get-or-create | entity caps*
auth del | entity
auth rm | entity
config-key set | key val?
config-key rm | key
config-key dump | key?
config get | who key?
config set | who name value force:bool?
config rm | who name
config log | num:int?
config help | key
config ls |
config show | who key?
mgr services |
"""


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str = "str"                   # str, int, float, bool, osd, or choice
    required: bool = True
    rest: bool = False                  # takes every remaining word (n=N)
    choices: tuple[str, ...] = ()

    def convert(self, word: str) -> Any:
        """The value the mon expects for one word; ValueError if the word is not one."""
        if self.kind == "int":
            return int(word)
        if self.kind == "float":
            return float(word)
        if self.kind == "osd":
            return int(word.removeprefix("osd."))
        if self.kind == "bool":
            if word.lower() not in ("true", "false"):
                raise ValueError(f"{word!r} is not true or false")
            return word.lower() == "true"
        if self.kind == "choice" and word not in self.choices:
            raise ValueError(f"{word!r} is not one of {'|'.join(self.choices)}")
        return word


def _parse_arg(spec: str) -> Arg:
    required, rest = not spec.endswith(("?", "*")), spec.endswith("*")
    name, _, kind = spec.rstrip("?*").partition(":")
    if kind in ("", "str", "int", "float", "bool", "osd"):
        return Arg(name, kind or "str", required, rest)
    return Arg(name, "choice", required, rest, tuple(kind.split("/")))


def _parse_signatures(text: str) -> dict[tuple[str, ...], tuple[Arg, ...]]:
    table = {}
    for line in text.replace("\\\n", " ").strip().splitlines():
        prefix, _, args = line.partition("|")
        table[tuple(prefix.split())] = tuple(_parse_arg(a) for a in args.split())
    return table


SIGNATURES = _parse_signatures(_SIGNATURES)
FORMAT_FLAGS = ("-f", "--format")


def mon_command_for(argv: Sequence[str]) -> dict[str, Any]:
    """{"prefix": ..., named arguments} for a `ceph` argv, filled the way the `ceph` CLI's parser fills it.

    Words fill the arguments in order; an optional typed argument a word does not fit is skipped (`osd pool create
    p replicated` has no pg_num); `--name=value`, `--name value` and `--flag` (booleans) name theirs.
    `-f/--format F` is the CLI's own output option and becomes "format". A ValueError is a bug in the caller.
    """
    words = [str(a) for a in argv]
    prefix = max((p for p in SIGNATURES if tuple(words[:len(p)]) == p), key=len, default=None)
    if prefix is None:
        raise ValueError(f"no mon command for 'ceph {' '.join(words)}' (known: see mon.SIGNATURES)")
    sig = {a.name: a for a in SIGNATURES[prefix]}
    cmd: dict[str, Any] = {"prefix": " ".join(prefix)}
    positional: list[str] = []
    rest = iter(words[len(prefix):])
    for word in rest:
        if word in FORMAT_FLAGS or word.startswith("--format="):
            cmd["format"] = word.partition("=")[2] or next(rest, "")
        elif word.startswith("--") and len(word) > 2:
            name, eq, value = word[2:].partition("=")
            arg = sig.get(name.replace("-", "_"))
            if arg is None:
                raise ValueError(f"'ceph {' '.join(prefix)}' has no option --{name}")
            if not eq:
                value = "true" if arg.kind == "bool" else next(rest, "")
            cmd[arg.name] = _convert(arg, value, prefix)
        else:
            positional.append(word)
    _fill_positional(cmd, [a for a in sig.values() if a.kind != "bool" and a.name not in cmd], positional, prefix)
    missing = [a.name for a in sig.values() if a.required and a.name not in cmd]
    if missing:
        raise ValueError(f"'ceph {' '.join(words)}' lacks {', '.join(missing)}")
    return cmd


def _fill_positional(cmd: dict[str, Any], args: list[Arg], words: list[str], prefix: tuple[str, ...]) -> None:
    i = 0
    for arg in args:
        if i == len(words):
            return
        if arg.rest:
            cmd[arg.name] = [_convert(arg, w, prefix) for w in words[i:]]
            i = len(words)
            return
        try:
            cmd[arg.name] = arg.convert(words[i])
        except ValueError:
            if arg.required:
                raise ValueError(f"'ceph {' '.join(prefix)}': {words[i]!r} is not a valid {arg.name}") from None
            continue
        i += 1
    if i < len(words):
        raise ValueError(f"'ceph {' '.join(prefix)}': unused words {words[i:]}")


def _convert(arg: Arg, word: str, prefix: tuple[str, ...]) -> Any:
    try:
        return arg.convert(word)
    except ValueError as exc:
        raise ValueError(f"'ceph {' '.join(prefix)}' {arg.name}: {exc}") from None


# ---- the connection ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MonReply:
    ret: int            # 0 or a negative errno
    out: bytes          # the command's output (JSON when format=json was asked)
    status: str         # the mon's status text ("set noscrub", or why it refused)

    @property
    def ok(self) -> bool:
        return self.ret == 0

    def error_text(self) -> str:
        name = errno.errorcode.get(-self.ret, str(self.ret))
        return f"{self.status.strip()} ({name})" if self.status.strip() else name

    @property
    def denied(self) -> bool:
        return self.ret in (-errno.EACCES, -errno.EPERM)


class ConnectFailed(Exception):
    """librados could not connect: errno (ETIMEDOUT, EACCES, ENOENT, ...) and its text."""

    def __init__(self, code: int | None, text: str) -> None:
        super().__init__(text)
        self.errno = code


def import_rados() -> Any:
    try:
        import rados  # Debian's python3-rados, made importable in .venv by scripts/setup.sh
    except ImportError as exc:
        raise UserError(f"the Python binding of librados is missing ({exc})",
                        "run scripts/setup.sh (it installs python3-rados and links it into .venv)") from None
    return rados


def _in_thread(fn: Callable[[], T], timeout_s: float, what: str, busy: "_InFlight",
               gone: Callable[[], str | None] = lambda: None) -> T:
    """Run a blocking librados call in a helper thread and wait for it here.

    librados blocks in C with the GIL released; the main thread waiting on an Event instead stays able to run
    Python's signal handlers, so Ctrl-C and SIGTERM act at once, while inside interrupts.held() the handler only
    notes the signal and the wait goes on until the change is complete. A daemon thread: a call abandoned by an
    interrupt never holds up the exit (each is bounded by rados_mon_op_timeout anyway).
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            busy.leave()
            done.set()

    busy.enter()
    threading.Thread(target=work, name=f"cephbench-mon: {what}", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while not done.wait(min(1.0, max(0.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            raise OperationFailed(f"{what}: no answer from the monitors in {timeout_s:.0f} s")
        why = gone()            # a cluster whose conf vanished (a lab taken down) will not answer: say so now
        if why:
            raise OperationFailed(f"{what}: {why}")
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclass
class _InFlight:
    """How many librados calls are running: shutting down under one would pull the client from under it."""

    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> None:
        with self.lock:
            self.count += 1

    def leave(self) -> None:
        with self.lock:
            self.count -= 1


def _shutdown(client: Any, busy: _InFlight) -> None:
    if busy.count:
        log.debug("librados: %d call(s) still running; the connection ends with the process", busy.count)
        return
    client.shutdown()


@dataclass
class MonConnection:
    """The run's one librados client, opened at the first command and closed by close() or at exit.

    librados is thread-safe: the facts are read from several threads at once through this one client.
    """

    conf: Path
    keyring: Path | None = None
    client_id: str | None = None
    connect_timeout_s: float = 10.0
    op_timeout_s: float = 120.0         # the mon's own bound on one command (rados_mon_op_timeout)
    _client: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _busy: _InFlight = field(default_factory=_InFlight, init=False, repr=False)
    _closer: Any = field(default=None, init=False, repr=False)

    @property
    def name(self) -> str:
        cid = self.client_id or "admin"
        return cid if cid.startswith("client.") else f"client.{cid}"

    @property
    def connected(self) -> bool:
        return self._client is not None

    def _connected(self) -> Any:
        with self._lock:
            if self._client is None:
                rados = import_rados()
                # both options take whole seconds
                conf = {"client_mount_timeout": str(math.ceil(self.connect_timeout_s)),
                        "rados_mon_op_timeout": str(math.ceil(self.op_timeout_s))}
                if self.keyring:
                    conf["keyring"] = str(self.keyring)
                try:
                    client = rados.Rados(conffile=str(self.conf), conf=conf, name=self.name)
                    # librados ignores connect()'s own timeout argument: client_mount_timeout bounds it
                    _in_thread(client.connect, self.connect_timeout_s + 5, "connect", self._busy)
                except OperationFailed as exc:
                    raise ConnectFailed(errno.ETIMEDOUT, str(exc)) from None
                except rados.Error as exc:
                    raise ConnectFailed(getattr(exc, "errno", None), str(exc)) from None
                self._client = client
                self._closer = weakref.finalize(self, _shutdown, client, self._busy)
                log.debug("librados: connected to the cluster of %s as %s", self.conf, self.name)
            return self._client

    def connect(self) -> None:
        """Connect now (idempotent); ConnectFailed says why not."""
        self._connected()

    def command(self, argv: Sequence[str], timeout_s: float = 60, fmt: str | None = None) -> MonReply:
        cmd = mon_command_for(argv)
        if fmt:
            cmd["format"] = fmt
        client = self._connected()
        what = "ceph " + " ".join(argv)
        log.debug("mon_command %s", json.dumps(cmd))
        ret, out, status = _in_thread(lambda: client.mon_command(json.dumps(cmd), b""), timeout_s, what, self._busy,
                                      gone=lambda: None if self.conf.exists() else f"{self.conf} is gone")
        return MonReply(ret, out, status)

    def tell(self, osd: int, prefix: str, timeout_s: float = 10, **args: Any) -> MonReply:
        """`ceph tell osd.N PREFIX -f json`: a command the OSD itself answers (what its admin socket would say,
        without reaching its host), sent to it over this connection; bounded by timeout_s here and in librados."""
        cmd = json.dumps({"prefix": prefix, "format": "json", **args})
        client = self._connected()
        what = f"ceph tell osd.{osd} {prefix}"
        log.debug("osd_command %d %s", osd, cmd)
        ret, out, status = _in_thread(lambda: client.osd_command(osd, cmd, b"", timeout=math.ceil(timeout_s)),
                                      timeout_s + 1, what, self._busy,
                                      gone=lambda: None if self.conf.exists() else f"{self.conf} is gone")
        return MonReply(ret, out, status)

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
        self._client = None
