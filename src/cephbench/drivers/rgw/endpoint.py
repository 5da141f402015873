"""Where RGW is: the workload's endpoint or the lab's, and a TCP connect before anything is made."""

from __future__ import annotations

import socket
import urllib.parse
from pathlib import Path
from typing import Any, Mapping

from ...cluster.ceph import Target
from ...core.errors import UserError
from ...lab import Lab


def lab_endpoint(conf: Path) -> str | None:
    info = Lab(Path(conf).parent).info()
    return info.rgw_endpoint if info else None


def resolve_endpoint(params: Mapping[str, Any], target: Target) -> str:
    """The workload's endpoint, else the lab's RGW; a non-lab target must name one."""
    if params.get("endpoint"):
        return str(params["endpoint"])
    if target.is_lab:
        ep = lab_endpoint(target.conf)
        if ep:
            return ep
        raise UserError("the lab runs no RGW (it was started with --no-rgw)",
                        "restart it with 'cephbench lab down' and 'cephbench lab up', or give endpoint",
                        where="endpoint")
    raise UserError("an rgw workload on a cluster that is not the lab needs the RGW address",
                    "add endpoint: http://HOST:PORT to the workload", where="endpoint")


def check_connect(endpoint: str, timeout_s: float = 3.0) -> None:
    """A TCP connect to the endpoint; a closed port or a bad host becomes one line before anything is made."""
    u = urllib.parse.urlsplit(endpoint)
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        with socket.create_connection((u.hostname, port), timeout=timeout_s):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__.replace("Error", " error").lower()
        if isinstance(exc, TimeoutError) or isinstance(exc, socket.timeout):
            why = f"no answer in {timeout_s:g} s"
        raise UserError(f"cannot connect to RGW at {endpoint}: {why}",
                        "is RGW running and listening on that address and port?", where="endpoint") from None

