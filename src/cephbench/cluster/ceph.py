"""Ceph as seen from a client: health, facts, flags and pools, through one librados connection (hosts/mon.py)."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import time
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..core.capacity import CAPACITY_PATIENCE_S, df_capacity, df_pools_used
from ..core.errors import OperationFailed, PermissionDenied, UserError
from ..hosts.local import LocalHost
from ..hosts.mon import ConnectFailed, MonConnection, MonReply
from ..core.userfiles import check_ceph_conf

log = logging.getLogger(__name__)

# Ceph's default is false, kept on most production clusters: the monitors then refuse every pool deletion
POOL_DELETE_OPTION = "mon_allow_pool_delete"
POOL_DELETE_HINT = ("run with --allow-pool-delete, which sets it for the run and puts it back, or name a pool that "
                    "exists (pools: {NAME: {existing: POOL}}), which the run never deletes")
CONNECT_TIMEOUT_S = 10     # --connect-timeout, whole seconds as librados takes them


def unclean_pgs(pg_ls: Any) -> dict[str, int]:
    """The states of the PGs that are not active+clean, counted, from `ceph pg ls-by-pool POOL -f json` (a list
    before Octopus' form, {"pg_stats": [...]} since)."""
    stats = pg_ls.get("pg_stats", []) if isinstance(pg_ls, dict) else pg_ls
    counts: dict[str, int] = {}
    for pg in stats or []:
        state = str(pg.get("state", "unknown"))
        if state != "active+clean":
            counts[state] = counts.get(state, 0) + 1
    return counts


@dataclass(frozen=True)
class Target:
    """How a client reaches a cluster: Ceph's own --conf, --keyring and --id."""

    conf: Path
    keyring: Path | None = None
    id: str | None = None
    is_lab: bool = False

    def client_args(self) -> list[str]:
        args = ["--conf", str(self.conf)]
        if self.keyring:
            args += ["--keyring", str(self.keyring)]
        if self.id:
            args += ["--id", self.id]
        return args

    def remote_client_args(self) -> list[str]:
        """For a tool on a client host: that host's own ceph.conf and keyring (checked by the clients' preflight),
        as the same client id; this machine's paths mean nothing there."""
        return ["--id", self.id] if self.id else []

    def env(self) -> dict[str, str]:
        """For tools that take no flags (fio's rados/rbd engines read these)."""
        env = {"CEPH_CONF": str(self.conf)}
        extra = []
        if self.keyring:
            env["CEPH_KEYRING"] = str(self.keyring)
            extra.append(f"--keyring={self.keyring}")
        if self.id:
            extra.append(f"--id={self.id}")
        if extra:
            env["CEPH_ARGS"] = " ".join(extra)
        return env

    def describe(self) -> dict[str, Any]:
        """What run.json records: paths, never key material."""
        return {"conf": str(self.conf), "keyring": str(self.keyring) if self.keyring else None,
                "id": self.id, "lab": self.is_lab}


@dataclass
class Cluster:
    """The cluster through one librados connection (hosts/mon.py), opened at the first command.

    Methods take `ceph` argv (what a user would type) and return what `ceph ... -f json` would print.
    """

    target: Target
    host: LocalHost = field(default_factory=LocalHost)
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    _mon: MonConnection | None = field(default=None, init=False, repr=False)
    _sender: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)
    _pending: list[Future[MonReply]] = field(default_factory=list, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def mon(self) -> MonConnection:
        if self._mon is None:
            # --connect-timeout bounds every answer, not only the connection: librados gives up on a command
            # after rados_mon_op_timeout, so a call abandoned by its wait ends then too
            self._mon = MonConnection(self.target.conf, self.target.keyring, self.target.id,
                                      connect_timeout_s=self.connect_timeout_s, op_timeout_s=self.connect_timeout_s)
        return self._mon

    def close(self) -> None:
        if self._sender is not None:
            self._sender.shutdown(wait=True)    # changes in flight finish: each is bounded by its timeout
            self._sender = None
        if self._mon is not None:
            self._mon.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- raw access --------------------------------------------------------
    def _command(self, args: Sequence[str], timeout_s: float, fmt: str | None = None) -> MonReply:
        if self.mon.connected and not self.target.conf.exists():
            # the cluster's conf vanished mid-run (a lab taken down): every tool already fails, and waiting out
            # the mon's timeout on a cluster that is gone would only delay saying so
            raise OperationFailed(f"ceph {' '.join(args)}: {self.target.conf} is gone")
        try:
            return self.mon.command(args, timeout_s=timeout_s, fmt=fmt)
        except ConnectFailed as exc:
            raise self._connect_error(exc) from None

    def ceph_json(self, *args: str, timeout_s: float | None = None) -> Any:
        """What `ceph ARGS -f json` prints, parsed; None for a command with no output. A monitor that does not
        answer in timeout_s (default --connect-timeout) is an OperationFailed."""
        self.join()     # a read sees the changes sent before it
        reply = self._command(args, timeout_s or self.connect_timeout_s, fmt="json")
        if not reply.ok:
            raise OperationFailed(f"ceph {' '.join(args)} failed: {reply.error_text()}")
        try:
            return json.loads(reply.out) if reply.out.strip() else None
        except ValueError as exc:
            raise OperationFailed(f"ceph {' '.join(args)}: output is not JSON") from exc

    def ceph_ok(self, *args: str, timeout_s: float | None = None) -> MonReply:
        """A `ceph` change that must succeed; a refusal for lack of rights stops the run (exit 2).

        Changes sent before it (send(..., with_next=True)) reach the mon with it and are committed together."""
        try:
            reply = self._ok(args, timeout_s)
        except BaseException:
            with contextlib.suppress(Exception):
                self.join()     # its own failure is the one to tell; theirs are their senders' to see
            raise
        self.join()
        return reply

    def tell_json(self, osd: int, prefix: str, timeout_s: float | None = None) -> Any:
        """What `ceph tell osd.N PREFIX -f json` prints, parsed; OperationFailed when the OSD refuses it or does
        not answer in timeout_s (default --connect-timeout)."""
        what = f"ceph tell osd.{osd} {prefix}"
        try:
            reply = self.mon.tell(osd, prefix, timeout_s=timeout_s or self.connect_timeout_s)
        except ConnectFailed as exc:
            raise self._connect_error(exc) from None
        if not reply.ok:
            raise OperationFailed(f"{what} failed: {reply.error_text()}")
        try:
            return json.loads(reply.out)
        except ValueError as exc:
            raise OperationFailed(f"{what}: output is not JSON") from exc

    def _ok(self, args: Sequence[str], timeout_s: float | None = None) -> MonReply:
        reply = self._command(args, timeout_s or self.connect_timeout_s)
        if reply.denied and POOL_DELETE_OPTION in reply.status:
            # the monitors' setting, not the key: an admin key is refused this too
            raise PermissionDenied(f"the monitors refuse 'ceph {' '.join(args[:3])}': {POOL_DELETE_OPTION} is false "
                                   f"({reply.error_text()})",
                                   f"'ceph config set mon {POOL_DELETE_OPTION} true' lets the removal go on; a run "
                                   "with --allow-pool-delete sets it for itself and puts it back")
        if reply.denied:
            who = self.mon.name
            raise PermissionDenied(f"the cluster refused 'ceph {' '.join(args[:3])}' to {who}: "
                                   f"{reply.error_text()}",
                                   "cephbench needs a key that may create pools and set OSD flags "
                                   "(mon 'allow *' or 'profile admin'; osd 'allow *')", where="--keyring")
        if not reply.ok:
            raise OperationFailed(f"ceph {' '.join(args)} failed: {reply.error_text()}")
        return reply

    def send(self, *argvs: Sequence[str], with_next: bool = False) -> list[Future[MonReply]]:
        """Changes sent at once, not waited for: each future holds the reply or why it failed.

        The mon commits osdmap changes about once a second (paxos_propose_interval), all that arrived meanwhile in
        one commit: changes sent together cost one second, not one each. with_next: the next command through this
        Cluster waits for them too (a change after sending itself, so that it joins their commit; a read before
        it reads) and raises the first failure.
        """
        if self._sender is None:
            self._sender = ThreadPoolExecutor(max_workers=4, thread_name_prefix="cephbench-change")
        futures = [self._sender.submit(self._ok, argv) for argv in argvs]
        if with_next:
            with self._lock:
                self._pending += futures
        return futures

    def join(self) -> None:
        """Wait for the changes sent with_next; raise the first failure among them."""
        with self._lock:
            pending, self._pending = self._pending, []
        for f in pending:
            f.result()

    # ---- reachability ------------------------------------------------------
    def check_reachable(self) -> dict[str, Any]:
        """Connect and read `ceph status`, with the reasons a user can fix turned into one line."""
        conf = self.target.conf
        check_ceph_conf(conf, self.target.keyring)
        try:
            reply = self._command(("status",), self.connect_timeout_s + 15, fmt="json")
        except OperationFailed:
            raise self._unreachable() from None
        if reply.ret == -errno.ETIMEDOUT:      # librados gave up first (rados_mon_op_timeout)
            raise self._unreachable()
        if reply.denied:
            raise UserError(f"the cluster refused 'ceph status' to {self.mon.name}: {reply.error_text()}",
                            "check --keyring and --id; the key needs at least mon 'allow r'", where="--keyring")
        if not reply.ok:
            raise UserError(f"cannot talk to the cluster of {conf}: {reply.error_text()}",
                            "check --conf, --keyring and --id")
        return json.loads(reply.out)

    def _unreachable(self) -> UserError:
        return UserError(f"cannot reach the cluster of {self.target.conf}: no monitor answered in "
                         f"{self.connect_timeout_s:g} s",
                         "check mon_host in the config and that the monitors run, or raise --connect-timeout",
                         where="--conf")

    def _connect_error(self, exc: ConnectFailed) -> UserError:
        """Why librados could not connect, in the words of what the user can change."""
        code = exc.errno
        if code == errno.ETIMEDOUT:
            return self._unreachable()
        if code in (errno.EACCES, errno.EPERM):
            return UserError(f"the cluster refused {self.mon.name}: wrong key or unknown client",
                             "check --keyring and --id", where="--keyring")
        if code == errno.ENOENT:
            return UserError(f"cannot connect as {self.mon.name}: no key for it in the keyring",
                             "give the keyring with --keyring, or the client with --id", where="--keyring")
        return UserError(f"cannot talk to the cluster of {self.target.conf}: {exc}",
                         "check --conf, --keyring and --id")

    # ---- facts ---------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        return self.ceph_json("status")

    def facts(self) -> dict[str, Any]:
        """What run.json records about the cluster. Each part is optional: a fact we cannot read is noted."""
        queries = {"versions": ("versions",), "status": ("status",), "osd_tree": ("osd", "tree"),
                   "df": ("df", "detail"), "config_dump": ("config", "dump"), "osd_metadata": ("osd", "metadata"),
                   "pools": ("osd", "pool", "ls", "detail")}

        def one(args: tuple[str, ...]) -> Any:
            try:
                return self.ceph_json(*args)
            except OperationFailed as exc:
                return {"error": str(exc)}
        # at once, through the one (thread-safe) librados client: independent reads
        with ThreadPoolExecutor(max_workers=4) as pool:
            return dict(zip(queries, pool.map(one, queries.values())))

    def osd_ids(self) -> list[int]:
        return [int(i) for i in self.ceph_json("osd", "ls")]

    def osd_flags(self) -> set[str]:
        dump = self.ceph_json("osd", "dump")
        return set(filter(None, str(dump.get("flags", "")).split(",")))

    def set_flag(self, flag: str, on: bool) -> None:
        self.ceph_ok("osd", "set" if on else "unset", flag)

    def pool_names(self) -> set[str]:
        return {p["pool_name"] for p in self.ceph_json("osd", "pool", "ls", "detail")}

    def raw_capacity(self, patience_s: float = CAPACITY_PATIENCE_S) -> tuple[int, int]:
        """(total raw bytes, used raw bytes) from `ceph df`, once it counts every OSD that is up: the OSDs report
        their usage to the mgr once a stats period, so just after the OSDs come up (or the mgr fails over) `ceph
        df` counts none or some of them and a guard reading it would see 0 B of room, or too little."""
        total, used, _ = self.raw_usage(patience_s)
        return total, used

    def raw_usage(self, patience_s: float = CAPACITY_PATIENCE_S) -> tuple[int, int, dict[str, int]]:
        """raw_capacity, and each pool's raw bytes used from the same `ceph df` (capacity.df_pools_used)."""
        deadline = time.monotonic() + patience_s
        while True:
            up = int(self.status().get("osdmap", {}).get("num_up_osds", 0))
            df = self.ceph_json("df")
            got = df_capacity(df, up)
            if got is not None:
                return *got, df_pools_used(df)
            if time.monotonic() >= deadline:
                counted = int(self.ceph_json("df")["stats"].get("num_osds", 0))
                raise OperationFailed(
                    f"`ceph df` counts the space of {counted} of the {up} OSDs that are up after {patience_s:.0f} s: "
                    f"the mgr has not heard from the others, so the free space is unknown and nothing is written; "
                    f"check `ceph mgr stat` and the OSDs, then run again")
            time.sleep(1.0)

    # ---- pools -----------------------------------------------------------------
    def delete_ec_profile(self, name: str) -> None:
        """Remove an erasure-code profile; one that does not exist is not an error (the mon says so, rc 0)."""
        self.ceph_ok("osd", "erasure-code-profile", "rm", name)

    def delete_pool(self, name: str) -> None:
        """Remove a pool; one that does not exist (any more, or yet) is not an error (the mon says so, rc 0)."""
        self.ceph_ok("osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it")

    def wait_active_clean(self, timeout_s: float = 300, pool: str | None = None) -> None:
        """Every PG active+clean; with `pool`, that pool's: a pool just made is ready when its own PGs are, and
        when they are not, the error names its PGs' states rather than blaming it for another pool's."""
        deadline = time.monotonic() + timeout_s
        while True:
            pgmap = self.status().get("pgmap", {})
            total = pgmap.get("num_pgs", 0)
            clean = sum(s["count"] for s in pgmap.get("pgs_by_state", []) if s["state_name"] == "active+clean")
            if clean == total:
                return
            unclean = None
            if pool is not None:      # the cluster is not all clean: is the pool? (one more mon call, only then)
                unclean = unclean_pgs(self.ceph_json("pg", "ls-by-pool", pool))
                if not unclean:
                    return
            if time.monotonic() > deadline:
                if unclean is None:
                    raise OperationFailed(f"PGs not active+clean after {timeout_s:.0f} s ({clean}/{total})")
                states = ", ".join(f"{n} {state}" for state, n in sorted(unclean.items(), key=lambda kv: -kv[1]))
                raise OperationFailed(f"{sum(unclean.values())} of its PGs not active+clean after {timeout_s:.0f} s "
                                      f"({states}); `ceph pg ls-by-pool {pool}` and `ceph health detail` say why")
            time.sleep(0.25)

