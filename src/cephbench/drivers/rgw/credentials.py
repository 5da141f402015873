"""RGW keys: from a file, the environment or radosgw-admin; held in memory only.

They reach loadgen through its environment (CEPHBENCH_S3_ACCESS_KEY, ...): never argv, logs, results or the run
directory, and repr() of a Credentials never shows a secret.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...core.errors import UserError
from ...core.userfiles import read_bytes
from ...core.rgwusers import user_keys

ENV_KEYS = {"s3": ("CEPHBENCH_S3_ACCESS_KEY", "CEPHBENCH_S3_SECRET_KEY"),
            "swift": ("CEPHBENCH_SWIFT_USER", "CEPHBENCH_SWIFT_KEY")}


@dataclass(frozen=True)
class Credentials:
    """RGW keys, in memory only. repr() never shows a secret."""

    s3_access_key: str | None = field(default=None, repr=False)
    s3_secret_key: str | None = field(default=None, repr=False)
    swift_user: str | None = None
    swift_key: str | None = field(default=None, repr=False)
    source: str = ""                # "run user cephbench-...", "environment", "file ..."

    def has(self, protocol: str) -> bool:
        if protocol == "s3":
            return bool(self.s3_access_key and self.s3_secret_key)
        return bool(self.swift_user and self.swift_key)

    def env(self, protocol: str) -> dict[str, str]:
        """What loadgen reads; the other protocol's variables are blanked so nothing stray leaks in."""
        if protocol == "s3":
            return {"CEPHBENCH_S3_ACCESS_KEY": self.s3_access_key or "", "CEPHBENCH_S3_SECRET_KEY":
                    self.s3_secret_key or "", "CEPHBENCH_SWIFT_USER": "", "CEPHBENCH_SWIFT_KEY": ""}
        return {"CEPHBENCH_SWIFT_USER": self.swift_user or "", "CEPHBENCH_SWIFT_KEY": self.swift_key or "",
                "CEPHBENCH_S3_ACCESS_KEY": "", "CEPHBENCH_S3_SECRET_KEY": ""}


def credentials_from_file(path: str) -> Credentials:
    """A JSON file with s3_access_key/s3_secret_key and/or swift_user/swift_key (the lab's rgw-user.json)."""
    p = Path(path).expanduser()
    try:
        # a regular file of at most 1 MiB (a FIFO or /dev/zero given here is one line, never a hang)
        data = json.loads(read_bytes(p, "credentials file", "give a JSON file with s3_access_key, s3_secret_key, "
                                     "swift_user, swift_key", 1024**2))
    except FileNotFoundError:
        raise UserError(f"credentials file {p} does not exist",
                        "give a JSON file with s3_access_key, s3_secret_key, swift_user, swift_key") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"credentials file {p} cannot be read as JSON: {type(exc).__name__}",
                        "give a JSON file with s3_access_key, s3_secret_key, swift_user, swift_key") from None
    if not isinstance(data, dict):
        raise UserError(f"credentials file {p} is not a JSON object",
                        "give a JSON file with s3_access_key, s3_secret_key, swift_user, swift_key")
    get = lambda k: str(data[k]) if data.get(k) else None  # noqa: E731
    return Credentials(get("s3_access_key"), get("s3_secret_key"), get("swift_user"), get("swift_key"),
                       source=f"file {p}")


def credentials_from_env(environ: Mapping[str, str] | None = None) -> Credentials | None:
    env = os.environ if environ is None else environ
    if not any(env.get(k) for pair in ENV_KEYS.values() for k in pair):
        return None
    return Credentials(env.get("CEPHBENCH_S3_ACCESS_KEY") or None, env.get("CEPHBENCH_S3_SECRET_KEY") or None,
                       env.get("CEPHBENCH_SWIFT_USER") or None, env.get("CEPHBENCH_SWIFT_KEY") or None,
                       source="environment")


def credentials_from_user_info(text: str, uid: str) -> Credentials:
    """`radosgw-admin user create/info` JSON -> the user's S3 keys and its swift subuser's key."""
    k = user_keys(text, uid)
    return Credentials(k.access_key, k.secret_key, k.swift_user, k.swift_key, source=f"run user {uid}")


def given_credentials(params: Mapping[str, Any]) -> Credentials | None:
    """Keys the user gave: the workload's credentials file, else the environment; None: make a user."""
    if params.get("credentials"):
        return credentials_from_file(str(params["credentials"]))
    return credentials_from_env()
