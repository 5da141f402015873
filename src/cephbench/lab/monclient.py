"""The lab's own connection to its monitor: librados in this process.

Start-up used to run ~20 `ceph` CLI processes (OSD ids, keys, pools, polls while waiting), each ~0.3-0.4 s of
Python start-up taken from the daemons starting beside it on a small machine. Here each command is a
mon_command of a few milliseconds. Everything is passed explicitly (conf file, keyring, name): librados, unlike
the `ceph` CLI, reads no CEPH_KEYRING or CEPH_ARGS left in the environment by an earlier lab.
"""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from ..core.errors import OperationFailed
from ..hosts.mon import import_rados


class LabMon:
    """mon_command over one librados connection; use as a context manager.

    `check_mon()` raises when the monitor process has exited: a command is tried in short slices and the
    monitor looked at in between, so a dead monitor is reported at once rather than after a timeout. Every
    command the lab sends may be repeated (`osd new` with the same uuid and id, `osd pool create` of a pool
    that exists, ...).
    """

    SLICE_S = 10

    def __init__(self, conf: Path, keyring: Path, check_mon: Callable[[], None] = lambda: None,
                 patience_s: float = 900) -> None:
        self.conf, self.keyring, self.check_mon, self.patience_s = conf, keyring, check_mon, patience_s
        self._client: Any = None

    def _still_patient(self, since: float, what: str) -> None:
        self.check_mon()
        if time.monotonic() - since > self.patience_s:
            raise OperationFailed(f"lab: the monitor runs but did not answer {what} in {self.patience_s:.0f} s "
                                  f"(its log: {self.conf.parent / 'log' / 'ceph-mon.a.log'})")

    def __enter__(self) -> "LabMon":
        rados = import_rados()
        since = time.monotonic()
        while True:
            self._still_patient(since, "a connection")
            client = rados.Rados(conffile=str(self.conf), name="client.admin",
                                 conf={"keyring": str(self.keyring), "log_file": "/dev/null"})
            try:
                client.connect(timeout=self.SLICE_S)
                break
            except rados.TimedOut:
                client.shutdown()      # a busy machine: try again while the monitor runs
            except rados.Error as exc:
                client.shutdown()
                self.check_mon()
                raise OperationFailed(f"lab: cannot connect to the lab's monitor ({self.conf}): {exc}") from exc
        self._client = client
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.shutdown()
            self._client = None

    def command(self, prefix: str, *, inbuf: bytes = b"", **args: Any) -> bytes:
        """Run one monitor command; its output. OperationFailed names the command and the mon's answer."""
        cmd = json.dumps({"prefix": prefix, **args})
        since = time.monotonic()
        while True:
            ret, out, outs = self._client.mon_command(cmd, inbuf, timeout=self.SLICE_S)
            if ret != -errno.ETIMEDOUT:
                break
            self._still_patient(since, f"'{prefix}'")
        if ret != 0:
            raise OperationFailed(f"lab: '{prefix}' failed: {outs.strip() or os.strerror(-ret)}")
        return out

    def osd_command(self, osd: int, prefix: str, **args: Any) -> bytes:
        """One command to OSD `osd` (as `ceph tell osd.N` sends it), over the same connection."""
        ret, out, outs = self._client.osd_command(osd, json.dumps({"prefix": prefix, **args}), b"",
                                                  timeout=self.SLICE_S)
        if ret != 0:
            raise OperationFailed(f"lab: '{prefix}' to osd.{osd} failed: {outs.strip() or os.strerror(-ret)}")
        return out

    def json(self, prefix: str, **args: Any) -> Any:
        return json.loads(self.command(prefix, format="json", **args) or b"null")
