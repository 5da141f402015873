"""Ceph as seen from a client: `ceph ... -f json`, pools, flags, health, facts."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import OperationFailed, PermissionDenied, UserError
from .hosts import CommandResult, LocalHost

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 15


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
    target: Target
    host: LocalHost = field(default_factory=LocalHost)

    # ---- raw access --------------------------------------------------------
    def ceph(self, *args: str, timeout_s: float = 60) -> CommandResult:
        return self.host.run(["ceph", *self.target.client_args(), "--connect-timeout",
                              str(CONNECT_TIMEOUT_S), *args], timeout_s)

    def ceph_json(self, *args: str, timeout_s: float = 60) -> Any:
        res = self.ceph(*args, "-f", "json", timeout_s=timeout_s)
        if not res.ok:
            raise OperationFailed(f"ceph {' '.join(args)} failed: {res.error_text()}")
        try:
            return json.loads(res.stdout) if res.stdout.strip() else None
        except ValueError as exc:
            raise OperationFailed(f"ceph {' '.join(args)}: output is not JSON") from exc

    def ceph_ok(self, *args: str, timeout_s: float = 60) -> CommandResult:
        res = self.ceph(*args, timeout_s=timeout_s)
        if not res.ok:
            if "EACCES" in res.stderr or "Permission denied" in res.stderr or "access denied" in res.stderr:
                who = self.target.id or "admin"
                raise PermissionDenied(f"the cluster refused 'ceph {' '.join(args[:3])}' to client.{who}: "
                                       f"{res.error_text()}",
                                       "cephbench needs a key that may create pools and set OSD flags "
                                       "(mon 'allow *' or 'profile admin'; osd 'allow *')", where="--keyring")
            raise OperationFailed(f"ceph {' '.join(args)} failed: {res.error_text()}")
        return res

    # ---- reachability ------------------------------------------------------
    def check_reachable(self) -> dict[str, Any]:
        """`ceph status`, with the reasons a user can fix turned into one line."""
        conf = self.target.conf
        if not conf.is_file():
            raise UserError(f"Ceph config {conf} does not exist", "give the path of ceph.conf", where="--conf")
        if self.target.keyring and not self.target.keyring.is_file():
            raise UserError(f"keyring {self.target.keyring} does not exist", "give a readable keyring",
                            where="--keyring")
        res = self.ceph("status", "-f", "json", timeout_s=CONNECT_TIMEOUT_S + 15)
        if res.timed_out or "timed out" in res.stderr.lower() or "RADOS timed out" in res.stderr:
            raise UserError(f"cannot reach the cluster of {conf}: no monitor answered in {CONNECT_TIMEOUT_S} s",
                            "check mon_host in the config and that the monitors run", where="--conf")
        if not res.ok:
            text = res.error_text()
            if "Permission denied" in res.stderr or "(13)" in res.stderr or "(1)" in res.stderr:
                raise UserError(f"the cluster refused this client: {text}",
                                "check --keyring and --id", where="--keyring")
            raise UserError(f"cannot talk to the cluster of {conf}: {text}", "check --conf, --keyring and --id")
        return json.loads(res.stdout)

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
        # at once: each `ceph` process costs ~0.4 s of start-up, and these are independent reads
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

    def raw_capacity(self) -> tuple[int, int]:
        """(total raw bytes, used raw bytes) from `ceph df`."""
        stats = self.ceph_json("df")["stats"]
        return int(stats["total_bytes"]), int(stats["total_used_raw_bytes"])

    # ---- pools -----------------------------------------------------------------
    def delete_ec_profile(self, name: str) -> None:
        """Remove an erasure-code profile; one that does not exist is not an error (the mon says so, rc 0)."""
        self.ceph_ok("osd", "erasure-code-profile", "rm", name)

    def delete_pool(self, name: str) -> None:
        """Remove a pool; one that does not exist (any more, or yet) is not an error (the mon says so, rc 0)."""
        self.ceph_ok("osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it")

    def wait_active_clean(self, timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            pgmap = self.status().get("pgmap", {})
            total = pgmap.get("num_pgs", 0)
            clean = sum(s["count"] for s in pgmap.get("pgs_by_state", []) if s["state_name"] == "active+clean")
            if clean == total:
                return
            if time.monotonic() > deadline:
                raise OperationFailed(f"PGs not active+clean after {timeout_s:.0f} s ({clean}/{total})")
            time.sleep(0.5)
