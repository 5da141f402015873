"""The run's settings (a suite's `settings:`): what every layer that runs tools reads (the drivers, the hosts' ssh,
the evidence), so they live below them all; suite/config.py's schema takes them as they are."""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from .names import shown_url


class Strict(BaseModel):
    # nan and inf are no figure of a suite's (nan passes every gt/le bound), also when written as text ("1e999");
    # each model's validator is built when first used (defer_build): the suite's builds those of its parts within its
    # own, and a command that reads no suite builds none
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, defer_build=True)


class SshSettings(Strict):
    """How cephbench reaches OSD hosts (to drop their page cache before reads) with `ssh -o BatchMode=yes`."""
    user: str | None = None
    port: Annotated[int, Field(gt=0, lt=65536, strict=True)] | None = None
    identity_file: Path | None = None
    options: list[str] = []                 # each becomes `-o OPTION`
    hosts: dict[str, str] = {}              # OSD host name (from `ceph osd metadata`) -> address ssh uses

    @field_validator("identity_file")
    @classmethod
    def _identity_exists(cls, v: Path | None) -> Path | None:
        if v is None:
            return None
        try:
            path = v.expanduser()
            found = path.is_file()
        except (RuntimeError, OSError) as exc:     # ~nosuchuser/..., a name longer than the system allows
            raise ValueError(f"{v} cannot be used as a key file: {exc}") from None
        if not found:
            raise ValueError(f"no such file: {v}")
        return path


class Settings(Strict):
    drop_caches: bool = True
    watch_osd_hosts: bool = True            # CPU of OSD hosts other than this one, over ssh, during every test
    osd_counters: bool = True               # every OSD's perf counters (admin socket) at each test's start and end
    other_load: bool = True                 # other clients' I/O (pools not ours), before and after each test
    ssh: SshSettings = Field(default_factory=SshSettings)     # its validator built with the suite's, not at import
    cold_reads: Literal["none", "restart-lab-osds"] = "none"
    max_raw_used: float = Field(0.75, gt=0, le=0.95)
    set_noscrub: bool = True
    # operations in flight from one client process (concurrency, iodepth × numjobs, io_threads) above this are a
    # typo more often than a plan; raise it in the suite when you mean it
    max_in_flight: int = Field(4096, gt=0, strict=True)
    max_instances: int = Field(64, gt=0, strict=True)      # client processes at once (instances)
    # a variant may set an option the daemons read only at start: then the lab's OSDs are restarted (lab only)
    variant_restarts: bool = False
    # the lab's builds take turns repeat by repeat (a rebuild each time) rather than one after the other; None: when
    # the builds differ in their Ceph release (plan.build_blocks)
    interleave_builds: bool | None = None
    # the operator's Prometheus (http[s]://[user:password@]host:port[/path]): the OSD hosts' devices and links come
    # from its node-exporter series instead of the hosts' watch; written anywhere without its credentials
    prometheus: str | None = None

    @field_validator("prometheus")
    @classmethod
    def _a_url(cls, v: str | None) -> str | None:
        if v is None:
            return None
        if "@" in v.split("://", 1)[-1] and "@" not in urllib.parse.urlsplit(v).netloc:
            # the host part ends at the first "/", "?" or "#": the password's rest would be the path, and the
            # request would go to a host named by its beginning
            raise ValueError(f"{shown_url(v)!r}: its user or password holds '/', '?' or '#', which end a URL's host "
                             "part; write them percent-encoded (%2F, %3F, %23)")
        try:
            parts = urllib.parse.urlsplit(v)
            parts.port
        except ValueError:
            raise ValueError(f"{shown_url(v)!r} has a port that is not a number of 1-65535") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{shown_url(v)!r} is not an http:// or https:// URL with a host, e.g. http://prom:9090")
        return v

    @field_serializer("prometheus")
    def _without_credentials(self, v: str | None) -> str | None:
        return shown_url(v) if v is not None else None
