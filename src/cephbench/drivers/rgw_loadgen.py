"""RGW over S3 or Swift with cephbench-loadgen: command builder, pure parser, exact merge, group run.

One loadgen process per instance and phase (op), each on its own fresh buckets named
cephbench-<run-id>-<group>-<op>-i<n>-<k>; read phases prefill their key space (loadgen --prefill), so a get
never depends on what an earlier put happened to write. loadgen deletes what it wrote; cephbench's ledger
removes the RGW user it made for the run (with --purge-data), or, with keys the user gave, any bucket a killed
loadgen left behind.

Keys are held in memory only and reach loadgen through its environment (CEPHBENCH_S3_ACCESS_KEY, ...): never argv,
logs, results or the run directory. The JSON document is cephbench-loadgen/1 (docs/loadgen.md); its HDR histograms
(base64, V2 compressed, 1 µs .. 1 h, 3 significant digits) are merged exactly across instances with `hdrh`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import socket
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from ..errors import PermissionDenied, UserError
from ..interrupts import held
from ..results import Latency, Measurement, Sample
from . import ParseError

log = logging.getLogger(__name__)

TOOL = "cephbench-loadgen"
SCHEMA = "cephbench-loadgen/1"
HDR_LOWEST_NS, HDR_HIGHEST_NS, HDR_SIG_FIGS = 1000, 3600 * 10**9, 3
# our percentile keys -> loadgen's lat_ns keys
PERCENTILES = {"50": "p50", "90": "p90", "99": "p99", "99.9": "p999"}
ENV_KEYS = {"s3": ("CEPHBENCH_S3_ACCESS_KEY", "CEPHBENCH_S3_SECRET_KEY"),
            "swift": ("CEPHBENCH_SWIFT_USER", "CEPHBENCH_SWIFT_KEY")}
REPO_BINARY = Path(__file__).resolve().parents[3] / "build" / "bin" / TOOL
EXIT_USAGE, EXIT_INTERRUPTED = 2, 130


# ---- the binary and its command line ---------------------------------------------------

def find_loadgen() -> str:
    """build/bin/cephbench-loadgen of this checkout, else cephbench-loadgen on PATH."""
    if REPO_BINARY.is_file() and os.access(REPO_BINARY, os.X_OK):
        return str(REPO_BINARY)
    found = shutil.which(TOOL)
    if found:
        return found
    raise UserError(f"{TOOL} is not built (looked for {REPO_BINARY} and on PATH)",
                    "run scripts/setup.sh (it runs 'make loadgen'; needs Go)")


@dataclass(frozen=True)
class LoadgenCommand:
    binary: str
    protocol: str                   # s3 | swift
    endpoint: str
    workload: str                   # put get delete list stat mixed
    object_size: int
    concurrency: int
    bucket_prefix: str
    output: Path
    objects: int = 1000
    buckets: int = 1
    duration_s: float | None = None
    ops: int | None = None
    rate: float | None = None
    arrival: str = "constant"
    mix: Mapping[str, int] | None = None
    warmup_s: float = 0.0
    max_error_ratio: float = 0.01
    prefill: bool | None = None     # None: loadgen's default (true except put)
    seed: int = 1

    def argv(self) -> list[str]:
        if (self.duration_s is None) == (self.ops is None):
            raise ValueError("give exactly one of duration_s and ops")
        argv = [self.binary, "run", "--protocol", self.protocol, "--endpoint", self.endpoint,
                "--workload", self.workload, "--object-size", str(self.object_size),
                "--concurrency", str(self.concurrency), "--objects", str(self.objects),
                "--buckets", str(self.buckets), "--bucket-prefix", self.bucket_prefix,
                "--max-error-ratio", f"{self.max_error_ratio:g}", "--seed", str(self.seed),
                "--output", str(self.output)]
        if self.duration_s is not None:
            argv += ["--duration", _go_duration(self.duration_s)]
        else:
            argv += ["--ops", str(self.ops)]
        if self.rate is not None:
            argv += ["--rate", f"{self.rate:g}", "--arrival", self.arrival]
        if self.workload == "mixed" and self.mix:
            argv += ["--mix", ",".join(f"{op}:{w}" for op, w in self.mix.items())]
        if self.warmup_s > 0:
            argv += ["--warmup", _go_duration(self.warmup_s)]
        if self.prefill is not None:
            argv.append(f"--prefill={'true' if self.prefill else 'false'}")
        return argv


def _go_duration(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


# ---- credentials ---------------------------------------------------------------------------

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
        data = json.loads(p.read_text())
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
    try:
        info = json.loads(text)
        s3 = next(k for k in info.get("keys", []) if k.get("user") == uid)
        swift = next((k for k in info.get("swift_keys", []) if k.get("user") == f"{uid}:swift"), None)
    except (ValueError, StopIteration, AttributeError) as exc:
        raise ParseError(f"radosgw-admin printed no S3 keys for {uid}") from exc
    return Credentials(s3["access_key"], s3["secret_key"], f"{uid}:swift" if swift else None,
                       swift["secret_key"] if swift else None, source=f"run user {uid}")


# ---- the parser -----------------------------------------------------------------------------

def _latency(lat: Mapping[str, Any] | None) -> Latency:
    if not lat:
        return Latency()
    return Latency(mean_ns=lat.get("mean"), min_ns=lat.get("min"), max_ns=lat.get("max"),
                   percentiles_ns={k: float(lat[g]) for k, g in PERCENTILES.items() if lat.get(g) is not None})


def _ttfb(t: Mapping[str, Any] | None) -> dict[str, float] | None:
    if not t:
        return None
    out = {k: float(t[g]) for k, g in PERCENTILES.items() if t.get(g) is not None}
    out.update({k: float(t[k]) for k in ("min", "max", "mean") if t.get(k) is not None})
    return out


def parse(json_text: str) -> Measurement:
    """A cephbench-loadgen/1 document -> Measurement (figures over all operations of the run).

    Percentiles p50/p90/p99/p99.9 and min/max/mean from the document (HDR, 3 significant digits), per-second
    ops and bytes as the time series, TTFB, errors by kind and why the run stopped in `extra`, and the HDR
    histograms themselves (extra hdr_lat / hdr_ttfb) so that `merge` can combine instances exactly.
    """
    try:
        doc = json.loads(json_text)
    except ValueError as exc:
        raise ParseError(f"{TOOL} output is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ParseError(f"{TOOL} output has schema {got!r}; this cephbench reads {SCHEMA}")
    try:
        total = doc["total"]
        params = doc["params"]
        ops = int(total["ops"])
        sizes = params.get("sizes") or []
        size = int(sizes[0]["bytes"]) if len(sizes) == 1 else None
        workload = str(doc["workload"])
        per_op = {name: {"ops": o["ops"], "errors": o["errors"], "ops_per_s": o["ops_per_s"],
                         "bytes_per_s": o["bytes_per_s"], "errors_by_kind": o.get("errors_by_kind") or {},
                         "lat_ns": _latency(o.get("lat_ns")).model_dump(exclude_none=True)}
                  for name, o in sorted(doc["operations"].items())}
        samples = [Sample(t_s=float(p["t_s"]), bytes_per_s=float(p["bytes"]), ops_per_s=float(p["ops"]))
                   for p in doc.get("timeseries") or []]
        series_lat = [[p.get("lat_ns_p50", 0), p.get("lat_ns_p99", 0)] for p in doc.get("timeseries") or []]
        errors_by_kind = dict(total.get("errors_by_kind") or {})
        extra: dict[str, Any] = {
            "protocol": doc.get("protocol"),
            "endpoint": doc.get("endpoint"),
            "loop": params.get("loop"),
            "arrival": params.get("arrival"),
            "rate_ops_per_s": params.get("rate_ops_per_s") or None,
            "concurrency": params.get("concurrency"),
            "errors": int(total.get("errors", 0)),
            "errors_by_kind": errors_by_kind,
            "stopped_reason": doc.get("stopped_reason"),
            "warmup_ops": doc.get("warmup_ops", 0),
            "unsent_ops": doc.get("unsent_ops", 0),
            "prefill": doc.get("prefill"),
            "cleanup": doc.get("cleanup"),
            "start_unix_ns": doc.get("start_unix_ns"),
            "loadgen_version": doc.get("version"),
            "timeseries_lat_p50_p99_ns": series_lat,
            "hdr_lat": total.get("hdr_lat"),
        }
        if params.get("mix"):
            extra["mix"] = params["mix"]
        if len(per_op) > 1 or workload == "mixed":
            extra["operations"] = per_op
        ttfb = _ttfb(total.get("ttfb_ns"))
        if ttfb is not None:
            extra["ttfb_ns"] = ttfb
            extra["hdr_ttfb"] = total.get("hdr_ttfb")
        return Measurement(
            tool=TOOL, op=workload, duration_s=float(doc["duration_s"]),
            ops_total=float(ops), bytes_total=float(total.get("bytes", 0)),
            ops_per_s=float(total["ops_per_s"]), bytes_per_s=float(total["bytes_per_s"]),
            op_size_bytes=size, object_size_bytes=size,
            latency=_latency(total.get("lat_ns")), timeseries=samples,
            extra={k: v for k, v in extra.items() if v is not None},
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ParseError(f"{TOOL} document is missing or has a bad field: {exc!r}") from None


NAGLE_GAP_NS = 30e6      # delayed ACKs hold a segment back for 40 ms on Linux (200 ms elsewhere)


def diagnose(m: Measurement) -> list[str]:
    """Notes on what a result's own figures say about the setup (pure; the driver adds them to the result).

    Small GETs whose body comes tens of ms after the headers show Nagle's algorithm on the server meeting the
    client's delayed ACK: RGW wrote headers and body in two segments and the second waited for an ACK. Beast
    turns Nagle off with `tcp_nodelay=1` in rgw_frontends (measured on the lab: 4 KiB GET p50 47 -> 14 ms).
    """
    notes: list[str] = []
    ttfb = m.extra.get("ttfb_ns") or {}
    lat50, ttfb50 = m.latency.percentiles_ns.get("50"), ttfb.get("50")
    small = m.op_size_bytes is not None and m.op_size_bytes <= 1024**2
    if small and lat50 is not None and ttfb50 is not None and lat50 - ttfb50 >= NAGLE_GAP_NS \
            and lat50 - ttfb50 > 0.5 * lat50:
        notes.append(f"GET bodies arrive {(lat50 - ttfb50) / 1e6:.0f} ms after the headers (p50 TTFB "
                     f"{ttfb50 / 1e6:.1f} ms, latency {lat50 / 1e6:.1f} ms): Nagle's algorithm on RGW meeting "
                     "delayed ACKs; with beast set tcp_nodelay=1 in rgw_frontends")
    return notes


# ---- merging instances ------------------------------------------------------------------------

def _decode(b64: str):
    from hdrh.histogram import HdrHistogram
    return HdrHistogram.decode(b64)


def merge_histograms(encoded: list[str]):
    """Exact merge of loadgen histograms (all have one geometry)."""
    from hdrh.histogram import HdrHistogram
    total = HdrHistogram(HDR_LOWEST_NS, HDR_HIGHEST_NS, HDR_SIG_FIGS)
    for b64 in encoded:
        total.add(_decode(b64))
    return total


def _pct(hist) -> dict[str, float]:
    if hist.get_total_count() == 0:
        return {}
    return {k: float(hist.get_value_at_percentile(float(k))) for k in PERCENTILES}


def _weighted_mean(values: list[tuple[float | None, float]]) -> float | None:
    pairs = [(v, w) for v, w in values if v is not None and w > 0]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None


def merge(parts: list[Measurement]) -> Measurement:
    """Several loadgen clients that ran at once -> one Measurement.

    Ops, bytes, rates and errors add up; percentiles come from the exact merge of the HDR histograms (what one
    client seeing every operation would report); min/max/mean are exact. The time series adds the clients'
    seconds, aligned on their measured-phase start (start_unix_ns).
    """
    if not parts:
        raise ValueError("nothing to merge")
    if len(parts) == 1:
        return parts[0]
    missing = [i for i, p in enumerate(parts) if not p.extra.get("hdr_lat")]
    if missing:
        raise ValueError(f"part {missing[0]} has no HDR histogram (extra.hdr_lat): not a loadgen result")
    lat_hist = merge_histograms([p.extra["hdr_lat"] for p in parts])
    ops = [p.ops_total or 0.0 for p in parts]
    lat = Latency(mean_ns=_weighted_mean([(p.latency.mean_ns, w) for p, w in zip(parts, ops)]),
                  min_ns=min((p.latency.min_ns for p in parts if p.latency.min_ns is not None), default=None),
                  max_ns=max((p.latency.max_ns for p in parts if p.latency.max_ns is not None), default=None),
                  percentiles_ns=_pct(lat_hist))
    errors_by_kind: dict[str, int] = {}
    for p in parts:
        for k, n in (p.extra.get("errors_by_kind") or {}).items():
            errors_by_kind[k] = errors_by_kind.get(k, 0) + int(n)
    # per-second series, aligned on each client's start
    starts = [p.extra.get("start_unix_ns") for p in parts]
    t0 = min((s for s in starts if s), default=None)
    seconds: dict[float, list[float]] = {}
    for p, start in zip(parts, starts):
        shift = round((start - t0) / 1e9) if start and t0 else 0
        for s in p.timeseries:
            acc = seconds.setdefault(s.t_s + shift, [0.0, 0.0])
            acc[0] += s.bytes_per_s or 0.0
            acc[1] += s.ops_per_s or 0.0
    timeseries = [Sample(t_s=t, bytes_per_s=b, ops_per_s=o) for t, (b, o) in sorted(seconds.items())]
    reasons = [p.extra.get("stopped_reason") for p in parts if p.extra.get("stopped_reason")]
    first = parts[0]
    extra: dict[str, Any] = {k: first.extra[k] for k in ("protocol", "endpoint", "loop", "arrival",
                                                         "rate_ops_per_s", "mix") if k in first.extra}
    extra.update({
        "instances": len(parts),
        "concurrency": sum(p.extra.get("concurrency") or 0 for p in parts),
        "errors": sum(int(p.extra.get("errors", 0)) for p in parts),
        "errors_by_kind": errors_by_kind,
        "stopped_reason": reasons[0] if reasons else None,
        "warmup_ops": sum(p.extra.get("warmup_ops", 0) for p in parts),
        "unsent_ops": sum(p.extra.get("unsent_ops", 0) for p in parts),
        "hdr_lat": lat_hist.encode().decode(),
    })
    if all(p.extra.get("hdr_ttfb") for p in parts):
        ttfb_hist = merge_histograms([p.extra["hdr_ttfb"] for p in parts])
        ttfb = _pct(ttfb_hist)
        ttfb["min"] = min(p.extra["ttfb_ns"]["min"] for p in parts if "min" in p.extra.get("ttfb_ns", {}))
        ttfb["max"] = max(p.extra["ttfb_ns"]["max"] for p in parts if "max" in p.extra.get("ttfb_ns", {}))
        mean = _weighted_mean([(p.extra["ttfb_ns"].get("mean"), ttfb_hist_count(p)) for p in parts])
        if mean is not None:
            ttfb["mean"] = mean
        extra["ttfb_ns"] = ttfb
        extra["hdr_ttfb"] = ttfb_hist.encode().decode()
    instances = [p.model_copy(update={"extra": {k: v for k, v in p.extra.items() if not k.startswith("hdr_")}})
                 for p in parts]
    return Measurement(
        tool=first.tool, op=first.op, duration_s=max(p.duration_s for p in parts),
        ops_total=sum(ops), bytes_total=sum(p.bytes_total or 0.0 for p in parts),
        ops_per_s=sum(p.ops_per_s or 0.0 for p in parts), bytes_per_s=sum(p.bytes_per_s or 0.0 for p in parts),
        op_size_bytes=first.op_size_bytes, object_size_bytes=first.object_size_bytes,
        latency=lat, timeseries=timeseries, instances=instances,
        extra={k: v for k, v in extra.items() if v is not None},
    )


def ttfb_hist_count(m: Measurement) -> int:
    return int(_decode(m.extra["hdr_ttfb"]).get_total_count()) if m.extra.get("hdr_ttfb") else 0


# ---- endpoint, preflight --------------------------------------------------------------------

class LoadgenRefused(PermissionDenied):
    """loadgen exited 2 (bad input, a closed port, rejected keys): nothing was sent, and the run stops (exit 2)."""


def lab_endpoint(conf: Path) -> str | None:
    from ..lab import Lab
    info = Lab(Path(conf).parent).info()
    return info.rgw_endpoint if info else None


def resolve_endpoint(params: Mapping[str, Any], target) -> str:
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


def given_credentials(params: Mapping[str, Any]) -> Credentials | None:
    """Keys the user gave: the workload's credentials file, else the environment; None: make a user."""
    if params.get("credentials"):
        return credentials_from_file(str(params["credentials"]))
    return credentials_from_env()


def preflight(cluster, tests, settings) -> None:  # noqa: ARG001 - registry signature
    """Everything an rgw workload needs, checked before anything is created: loadgen, endpoint, keys."""
    if not tests:
        return
    find_loadgen()
    seen: set[str] = set()
    needs_admin = False
    for t in tests:
        where = f"workload {t.workload}"
        try:
            ep = resolve_endpoint(t.params, cluster.target)
            if ep not in seen:
                check_connect(ep)
                seen.add(ep)
            creds = given_credentials(t.params)
        except UserError as exc:
            exc.where = f"{where}: {exc.where}" if exc.where else where
            raise
        proto = t.params["protocol"]
        if creds is None:
            needs_admin = True
        elif not creds.has(proto):
            a, b = ENV_KEYS[proto]
            raise UserError(f"the {creds.source} gives no {proto} keys",
                            f"set {a} and {b}" if creds.source == "environment"
                            else f"add {'s3_access_key and s3_secret_key' if proto == 's3' else 'swift_user and swift_key'}",
                            where=where)
    if needs_admin and shutil.which("radosgw-admin") is None:
        raise UserError("radosgw-admin is not installed: cephbench needs it to create the run's RGW user",
                        "install ceph-common and radosgw (scripts/setup.sh), or give keys "
                        "(CEPHBENCH_S3_ACCESS_KEY/CEPHBENCH_S3_SECRET_KEY, or credentials: FILE)")


# ---- the run's RGW user ----------------------------------------------------------------------

def _admin(ctx, *args: str):
    return ctx.host.run(["radosgw-admin", *ctx.target.client_args(), *args], 120)


def run_user(ctx) -> Credentials | None:
    """The RGW user of this run (uid cephbench-<run-id>-rgw) with S3 keys and a swift subuser.

    Made once per run and registered in the ledger (removed with --purge-data); later groups read its keys back
    with `user info`. Keys are generated by radosgw-admin, so they never appear in an argv. None in a dry run.
    """
    from ..errors import OperationFailed
    from ..resources import Resource
    uid = ctx.name("rgw")
    resource = Resource("rgw-user", uid)
    if resource in ctx.ledger.pending():
        if ctx.dry_run:
            return None
        res = _admin(ctx, "user", "info", "--uid", uid)
        if not res.ok:
            raise OperationFailed(f"radosgw-admin user info --uid {uid} failed: {res.error_text()}")
        return credentials_from_user_info(res.stdout, uid)

    create = ["user", "create", "--uid", uid, "--display-name", f"cephbench run {ctx.run_id}"]
    sub = ["subuser", "create", "--uid", uid, "--subuser", f"{uid}:swift", "--access", "full",
           "--key-type", "swift", "--gen-secret"]
    rm = ["user", "rm", "--uid", uid, "--purge-data"]

    def remove() -> None:
        r = _admin(ctx, *rm)
        if not r.ok and "could not find user" not in r.stderr.lower() and "does not exist" not in r.stderr.lower():
            raise OperationFailed(f"radosgw-admin user rm --uid {uid} --purge-data failed: {r.error_text()}")

    def make() -> Credentials:
        ctx.ledger.add(resource, remove)        # first: an interrupt may land after RGW made the user
        with held():
            res = _admin(ctx, *create)
        if not res.ok:
            ctx.ledger.forget(resource)
            if "EACCES" in res.stderr or "Permission denied" in res.stderr or "(13)" in res.stderr:
                raise PermissionDenied(f"radosgw-admin could not create the run's RGW user: {res.error_text()}",
                                       "give a key that may write RGW metadata, or give the keys of an RGW user "
                                       "(CEPHBENCH_S3_ACCESS_KEY/CEPHBENCH_S3_SECRET_KEY)")
            raise OperationFailed(f"radosgw-admin user create --uid {uid} failed: {res.error_text()}")
        res = _admin(ctx, *sub)
        if not res.ok:
            raise OperationFailed(f"radosgw-admin subuser create --uid {uid} failed: {res.error_text()}")
        return credentials_from_user_info(res.stdout, uid)

    admin = ["radosgw-admin", *ctx.target.client_args()]
    if ctx.dry_run:
        ctx.planned += [shlex.join(admin + create), shlex.join(admin + sub)]
        ctx.ledger.add(resource, lambda: ctx.planned.append(shlex.join(admin + rm)))
        return None
    return make()


_PROGRESS_RE = re.compile(r"cephbench-loadgen: progress t=\d+s ops_per_s=([\d.]+) bytes_per_s=([\d.]+)")


def live_figures(logs: list[Path]) -> tuple[float | None, float | None]:
    """(bytes/s, ops/s) of the last second, summed over instances, from loadgen's progress lines."""
    from .base import live_sum, newest_line

    def line_figures(line: str):
        m = _PROGRESS_RE.match(line)
        return (float(m.group(2)), float(m.group(1))) if m else None
    return live_sum(logs, lambda p: newest_line(p, line_figures))


def _bucket_sweeper(ctx, prefix: str, state: dict[str, bool]):
    """Ledger remover for buckets made with keys the user gave: a no-op once loadgen said it removed them."""
    from ..errors import OperationFailed

    def remove() -> None:
        if state.get("clean"):
            return
        res = _admin(ctx, "bucket", "list")
        if not res.ok:
            raise OperationFailed(f"cannot list RGW buckets to remove {prefix}*: {res.error_text()} "
                                  f"(remove them with radosgw-admin bucket rm --bucket NAME --purge-objects)")
        left = [b for b in json.loads(res.stdout or "[]") if str(b).startswith(prefix)]
        failed = []
        for b in left:
            r = _admin(ctx, "bucket", "rm", "--bucket", b, "--purge-objects")
            if not r.ok:
                failed.append(f"{b}: {r.error_text()}")
        if failed:
            raise OperationFailed("; ".join(failed))
    return remove


# ---- running a group ----------------------------------------------------------------------------

def _capacity_check(ctx, test) -> str | None:
    """An error text when one phase's key space would take the cluster past max_raw_used."""
    from ..safety import CapacityBudget
    p = test.params
    need = p["objects"] * p["object_size"] * p["instances"]
    try:
        pools = ctx.cluster.ceph_json("osd", "pool", "ls", "detail")
        sizes = [float(x.get("size", 3)) for x in pools if str(x.get("pool_name", "")).endswith("rgw.buckets.data")]
        amp = max(sizes) if sizes else 3.0
        budget: CapacityBudget = ctx.budget()
    except Exception as exc:  # noqa: BLE001 - a guard that cannot read the cluster does not stop the run
        log.warning("capacity guard skipped: %s", exc)
        return None
    if need > budget.client_bytes(amp):
        from ..units import format_size
        return (f"capacity guard: {p['objects']} objects of {format_size(p['object_size'])} x {p['instances']} "
                f"instance(s) would take the cluster past {budget.max_raw_used:.0%} raw used ({budget.describe()}); "
                "lower objects")
    return None


def _prefill(op: str) -> bool:
    """put writes fresh keys; every other op reads (or deletes) a key space that loadgen writes first."""
    return op != "put"


def run_group(ctx, group, todo) -> Iterator:
    """One loadgen run per phase (op) and instance on fresh buckets; one Outcome per test in `todo`."""
    from ..hosts import Spawn
    from ..resources import Resource
    from .base import Outcome, now, run_group_timeout

    binary = find_loadgen()
    first = group[0].params
    endpoint = resolve_endpoint(first, ctx.target)
    creds = given_credentials(first)
    made_user = creds is None
    if made_user:
        creds = run_user(ctx)
    gid = group[0].group
    guard = None if ctx.dry_run else _capacity_check(ctx, group[0])   # one key space size for the whole group
    for test in group:
        if test.id not in todo:
            continue
        p = test.params
        op = p["phase"]
        started, t0 = now()
        ctx.events.test_started(test)
        notes: list[str] = []
        if creds is not None:
            notes.append(f"RGW keys: {creds.source}")
        if guard:
            yield Outcome(test, started, time.monotonic() - t0, error=guard, notes=notes)
            continue
        raw_dir = ctx.rundir.raw_dir(test.id) if ctx.rundir else Path("RUN_DIR", "raw", test.id)
        prefixes = [ctx.name(gid, op, f"i{i}") + "-" for i in range(p["instances"])]
        cmds = [LoadgenCommand(
            binary=binary, protocol=p["protocol"], endpoint=endpoint, workload=op, object_size=p["object_size"],
            concurrency=p["concurrency"], bucket_prefix=prefixes[i], output=raw_dir / f"loadgen-{op}-i{i}.json",
            objects=p["objects"], buckets=p["buckets"], duration_s=p.get("duration_s"), ops=p.get("ops"),
            rate=p.get("rate"), arrival=p.get("arrival", "constant"), mix=p.get("mix"),
            warmup_s=p.get("warmup", 0.0), max_error_ratio=p["max_error_ratio"], prefill=_prefill(op),
            seed=i + 1) for i in range(p["instances"])]
        env = creds.env(p["protocol"]) if creds is not None else {}
        spawns = [Spawn(c.argv(), raw_dir / f"loadgen-{op}-i{i}.log", env=env) for i, c in enumerate(cmds)]
        sweeps: list[tuple[Resource, dict[str, bool]]] = []
        if not made_user and not ctx.dry_run:
            for prefix in prefixes:
                state: dict[str, bool] = {"clean": False}
                res = Resource("rgw-buckets", prefix + "*")
                ctx.ledger.add(res, _bucket_sweeper(ctx, prefix, state))
                sweeps.append((res, state))
        length = p.get("duration_s") or 60.0
        results = ctx.run_tools(test, spawns, run_group_timeout(length + p.get("warmup", 0.0)) + 60,
                                live=live_figures)
        if results is None:  # dry run
            continue
        commands = [r.cmdline for r in results]
        raw = [str(path.relative_to(ctx.rundir.path)) for sp, c in zip(spawns, cmds) for path in (c.output, sp.output)
               if path.exists()]
        refused = [r for r in results if r.returncode == EXIT_USAGE]
        if refused:
            line = refused[0].error_text().removeprefix(f"{TOOL}: ")
            for res, state in sweeps:  # loadgen created nothing
                state["clean"] = True
                ctx.ledger.release_one(res)
            raise LoadgenRefused(line, where=f"{test.id} ({p['protocol']} {op})")
        parts: list[Measurement] = []
        errors: list[str] = []
        for r, c in zip(results, cmds):
            try:
                parts.append(parse(c.output.read_text()))
            except (OSError, ParseError) as exc:
                errors.append(f"{TOOL} {op} failed: {r.error_text()}" if not r.ok else str(exc))
        for (res, state), part in zip(sweeps, parts if len(parts) == len(sweeps) else []):
            cleanup = part.extra.get("cleanup") or {}
            if not cleanup.get("buckets_left") and not cleanup.get("objects_left"):
                state["clean"] = True
                ctx.ledger.release_one(res)
        for r, part in zip(results, parts):
            if not r.ok and not errors:
                reason = part.extra.get("stopped_reason")
                if reason == "error-ratio":
                    errors.append(f"{TOOL} {op} stopped: error ratio above {p['max_error_ratio']:g} "
                                  f"(errors by kind: {json.dumps(part.extra.get('errors_by_kind', {}))})")
                elif r.returncode == EXIT_INTERRUPTED:
                    errors.append(f"{TOOL} {op} was interrupted")
                else:
                    errors.append(f"{TOOL} {op} failed: {r.error_text()}")
        m = merge(parts) if parts and len(parts) == len(results) else None
        if m is not None:
            notes += diagnose(m)
            if m.extra.get("unsent_ops"):
                notes.append(f"{m.extra['unsent_ops']} scheduled ops never sent: RGW did not keep up with the rate; "
                             "latency figures are a lower bound")
            if m.extra.get("stopped_reason") == "keys-exhausted":
                notes.append("delete used up the key space before the end; raise objects for a longer run")
            left = [part.extra.get("cleanup", {}) for part in parts]
            if any(c.get("buckets_left") or c.get("objects_left") for c in left):
                notes.append("loadgen could not remove everything it wrote: "
                             + "; ".join(f"{c.get('objects_left', 0)} objects, buckets {c.get('buckets_left')}"
                                         for c in left if c.get("buckets_left") or c.get("objects_left")))
        yield Outcome(test, started, time.monotonic() - t0, measurement=m, error=errors[0] if errors else None,
                      commands=commands, raw=raw, notes=notes)
