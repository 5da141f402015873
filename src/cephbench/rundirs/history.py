"""The history catalog: every run and import, in one SQLite file, with each test's key figures.

Where: --db, else $CEPHBENCH_HISTORY, else $XDG_DATA_HOME/cephbench/history.sqlite (XDG_DATA_HOME defaults to
~/.local/share). A run is catalogued when `cephbench run` finishes, on `cephbench import`, and by hand with
`cephbench history add RUN_DIR`; adding a run again replaces its rows. The key figures of every ok result
(bytes_per_s, ops_per_s, mean and p99 latency) are stored in the catalog, so a trend still shows a run whose
directory was deleted; `list` marks such a run missing.

A trend never mixes configurations: a configuration is the cluster (fsid), every parameter of the test (its
pool profile, ...) and its identity (core/identity.py: its variant, the run's release), and each one found is its own
series with its own "vs first".
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..core import stats
from ..analysis.compare import METRIC_NAMES, metric_values, test_label
from ..core.errors import ParseError
from ..core.figures import unix_time
from ..core.errors import UserError
from .export import pool_profile
from ..core.identity import PARTS, identity
from ..core.results import CorruptLine, RunDir
from ..core.userfiles import writable
from ..core.units import format_size

SCHEMA = 2          # 2: results.identity (the variant, the release); a catalog of 1 gains it on open
_DDL = """
CREATE TABLE IF NOT EXISTS catalog (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    path TEXT PRIMARY KEY,          -- absolute path of the run directory
    run_id TEXT,
    suite TEXT,
    fsid TEXT,
    ceph_version TEXT,
    started_unix REAL,
    finished_unix REAL,
    imported INTEGER NOT NULL DEFAULT 0,
    tests INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    added_unix REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run_path TEXT NOT NULL REFERENCES runs(path) ON DELETE CASCADE,
    test_id TEXT NOT NULL,
    label TEXT NOT NULL,
    match_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    params TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    status TEXT NOT NULL,
    bytes_per_s REAL, ops_per_s REAL, lat_mean_ns REAL, lat_p99_ns REAL,
    identity TEXT                   -- JSON: identity.identity(), the parts beside kind and params
);
CREATE INDEX IF NOT EXISTS results_run ON results(run_path);
CREATE INDEX IF NOT EXISTS results_key ON results(match_key);
"""
METRIC_ALIASES = {"bw": "bytes_per_s", "bandwidth": "bytes_per_s", "iops": "ops_per_s", "lat": "lat_mean_ns",
                  "latency": "lat_mean_ns", "p99": "lat_p99_ns"}


def default_path() -> Path:
    env = os.environ.get("CEPHBENCH_HISTORY")
    if env:
        return Path(env)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "cephbench" / "history.sqlite"


def ceph_version(meta: dict[str, Any]) -> str | None:
    """'16.2.15' from run.json cluster.versions (`ceph versions -f json`); several versions comma-separated."""
    versions = (meta.get("cluster") or {}).get("versions")
    if not isinstance(versions, dict) or "error" in versions:
        return None
    names = list((versions.get("overall") or {}).keys()) or [
        k for v in versions.values() if isinstance(v, dict) for k in v]
    found = sorted({m.group(1) for n in names if (m := re.search(r"ceph version (\S+)", str(n)))})
    return ",".join(found) or None


def fsid(meta: dict[str, Any]) -> str | None:
    status = (meta.get("cluster") or {}).get("status")
    return str(status["fsid"]) if isinstance(status, dict) and status.get("fsid") else None


def parse_date(value: str, end: bool = False, where: str = "") -> float:
    """'2026-11-20' or '2026-11-20T08:00' (UTC unless an offset is given) -> unix seconds.

    A bare date used as an end (--until) means the end of that day."""
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UserError(f"{value!r} is not a date", "use YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC unless an "
                        "offset such as +02:00 follows", where=where or ("--until" if end else "--since")) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        if end and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
            dt += timedelta(days=1)
        return dt.timestamp()
    except (OverflowError, ValueError):     # the first or last day of the calendar, moved by an offset
        raise UserError(f"{value!r} is out of range", "give a date between 1970 and 9999",
                        where=where or ("--until" if end else "--since")) from None


@dataclass(frozen=True)
class Filters:
    suite: str | None = None
    fsid: str | None = None           # a prefix of the fsid
    ceph_version: str | None = None   # a prefix of the version, e.g. 16.2
    since: float | None = None
    until: float | None = None

    @classmethod
    def from_options(cls, suite: str | None = None, fsid: str | None = None, ceph_version: str | None = None,
                     since: str | None = None, until: str | None = None) -> "Filters":
        """The command-line options: dates as text (see parse_date)."""
        return cls(suite=suite, fsid=fsid, ceph_version=ceph_version,
                   since=parse_date(since) if since else None, until=parse_date(until, end=True) if until else None)

    def where(self) -> tuple[str, list[Any]]:
        clauses, args = [], []
        if self.suite:
            clauses.append("suite = ?")
            args.append(self.suite)
        if self.fsid:
            clauses.append("fsid LIKE ? || '%'")
            args.append(self.fsid)
        if self.ceph_version:
            clauses.append("(',' || ceph_version) LIKE '%,' || ? || '%'")
            args.append(self.ceph_version)
        if self.since is not None:
            clauses.append("started_unix >= ?")
            args.append(self.since)
        if self.until is not None:
            clauses.append("started_unix < ?")
            args.append(self.until)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


@dataclass(frozen=True)
class RunRow:
    path: str
    run_id: str | None
    suite: str | None
    fsid: str | None
    ceph_version: str | None
    started_unix: float | None
    finished_unix: float | None
    imported: bool
    tests: int
    failed: int

    @property
    def missing(self) -> bool:
        return not (Path(self.path) / "run.json").is_file()


@dataclass(frozen=True)
class TrendPoint:
    run: RunRow
    label: str
    match_key: str
    values: tuple[float, ...]
    params: dict[str, Any]
    config: str                 # the cluster and the parameters compared: one series per value
    identity: dict[str, str] = field(default_factory=dict)    # identity.identity(): variant, release

    @property
    def median(self) -> float:
        """What the trend shows of the run's repeats: the median compare and the verdict show (stats.median)."""
        return stats.median(self.values)


# The parts of a configuration a trend names on its own, and the option that picks one of them.
NEVER_MIXED = {"cluster": "--fsid", "pool profile": "--pool-profile", "variant": "--variant", "release": "--release"}


@dataclass(frozen=True)
class TrendSeries:
    """One configuration's points, oldest first, and what sets it apart from the other series of the trend."""
    points: tuple[TrendPoint, ...]
    apart: dict[str, str]       # e.g. {"pool profile": "replicated size 2", "cluster": "5e1f0c6a"}

    def title(self) -> str:
        return " · ".join(f"{k} {v}" for k, v in self.apart.items())


def describe(point: TrendPoint) -> dict[str, str]:
    """A point's configuration as words: cluster, pool profile, variant, then every other parameter."""
    p = point.params
    out = {"cluster": (point.run.fsid or "unknown")[:8], "pool profile": pool_profile(p) or "none",
           **{part: point.identity.get(part, "none") for part in PARTS}}
    for k, v in sorted(p.items()):
        if k in ("pool_profile", "variant"):
            continue
        out[k] = format_size(v) if isinstance(v, int) and k.endswith("size") else json.dumps(v, default=str) \
            if isinstance(v, (dict, list)) else str(v)
    return out


def series(points: list[TrendPoint]) -> list[TrendSeries]:
    """The points by configuration, each series oldest first, the series in the order their first point came."""
    groups: dict[str, list[TrendPoint]] = {}
    for pt in points:
        groups.setdefault(pt.config, []).append(pt)
    described = {c: describe(pts[0]) for c, pts in groups.items()}
    keys = list(dict.fromkeys(k for d in described.values() for k in d))
    differ = [k for k in keys if len({d.get(k, "-") for d in described.values()}) > 1]
    return [TrendSeries(tuple(pts), {k: described[c].get(k, "-") for k in differ}) for c, pts in groups.items()]


_NEVER_IGNORED = {"pool_profile": "--pool-profile", "metadata_profile": "--pool-profile", "variant": "--variant",
                  "release": "--release"}


def _identity(stored: str | None, key: str) -> dict[str, str]:
    """A result's identity as catalogued; a row of schema 1 has none stored, and its match key holds the variant."""
    if stored:
        return {str(k): str(v) for k, v in json.loads(stored).items()}
    variant = json.loads(key).get("variant")
    return {"variant": str(variant)} if variant is not None else {}


def _profile_of(params: dict[str, Any]) -> str | None:
    text = pool_profile(params)
    try:
        return normalize_profile(text) if text else None
    except UserError:               # a pool type this cephbench does not know: compared as written
        return text


def normalize_profile(text: str, where: str = "--pool-profile") -> str:
    """'replicated size 3', 'rep3', 'size 3' -> 'replicated size 3'; 'EC 2+1', 'ec2+1', 'erasure 2+1' -> 'EC 2+1'."""
    t = re.sub(r"[\s_-]+", "", text.lower())
    if m := re.fullmatch(r"(?:ec|erasure)?(?:k=?)?(\d+)(?:\+|,?m=?)(\d+)", t):
        return f"EC {m.group(1)}+{m.group(2)}"
    if m := re.fullmatch(r"(?:replicated|replica|rep|r)?(?:size=?)?(\d+)", t):
        return f"replicated size {m.group(1)}"
    raise UserError(f"{text!r} is not a pool profile", "use e.g. 'replicated size 3' or 'EC 2+1'", where=where)


def metric_name(value: str) -> str:
    name = METRIC_ALIASES.get(value.lower(), value)
    if name not in METRIC_NAMES:
        raise UserError(f"unknown metric {value!r}", f"use one of {', '.join(METRIC_NAMES)}", where="--trend")
    return name


def checked_meta(run_dir: Path) -> dict[str, Any]:
    """A run directory's run.json, when what the catalog keeps of it is sound: its times are times (a row with
    1e30 in it would break every later `history list`)."""
    meta = RunDir.open(run_dir).meta()
    for key in ("started_unix", "finished_unix"):
        if meta.get(key) is not None:
            try:
                unix_time(meta[key], f"run.json {key}")
            except ParseError as exc:
                raise UserError(str(exc), "not catalogued: fix run.json, or re-import the outputs",
                                where=str(run_dir)) from None
    return meta


def _run_row(row: tuple[Any, ...]) -> RunRow:
    """A catalog row as list shows it, whatever the file holds: a row written by hand or by an older cephbench
    (a time that is text or no time at all) is shown, never a traceback."""
    def text(v: Any) -> str | None:
        return None if v is None else str(v)

    def real(v: Any) -> float | None:
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def whole(v: Any) -> int:
        return v if isinstance(v, int) else 0
    path, run_id, suite, fsid_, version, started, finished, imported, tests, failed = row
    return RunRow(str(path), text(run_id), text(suite), text(fsid_), text(version), real(started), real(finished),
                  bool(imported), whole(tests), whole(failed))


class NoCatalog(UserError):
    """Nothing catalogued yet: the catalog file does not exist (looking never creates it)."""


class History:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path | None = None, create: bool = True) -> "History":
        """The catalog at `path` (default_path() when None); with create=False a missing one is a UserError."""
        path = Path(path) if path else default_path()
        if not create and not os.path.lexists(path):
            raise NoCatalog(f"no runs catalogued yet ({path} does not exist)",
                            "runs are added when 'cephbench run' finishes, on 'cephbench import', "
                            "and with 'cephbench history add'")
        hint = "give --db (or CEPHBENCH_HISTORY) a new path or a catalog file of its own"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # sqlite writes the catalog in place (and its journal beside it): the one writer's check of what may be
            # written, the file a link within its directory names, else a new path or a regular file
            path = writable(path, hint, where="--db")
            if path.is_file() and path.stat().st_size:
                # SQLite takes a file shorter than its header for an empty database, and writes its own over it
                with open(path, "rb") as f:
                    if f.read(16) != b"SQLite format 3\x00":
                        raise UserError(f"history catalog {path} cannot be used: not a database (no SQLite file)", hint,
                                        where="--db")
            conn = sqlite3.connect(path, timeout=10)
            # another program's database is not written (CREATE TABLE IF NOT EXISTS would add ours beside its own,
            # and a table of its own named runs broke every query with a traceback)
            tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
            if tables and "catalog" not in tables:
                conn.close()
                raise UserError(f"{path} is another program's SQLite database (tables {', '.join(tables[:5])}), "
                                "not a cephbench history catalog", hint, where="--db")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.executescript(_DDL)
            row = conn.execute("SELECT value FROM catalog WHERE key = 'schema'").fetchone()
            if row is None:
                conn.execute("INSERT INTO catalog VALUES ('schema', ?)", (str(SCHEMA),))
                conn.commit()
            elif int(row[0]) < SCHEMA:
                _upgrade(conn)
            elif int(row[0]) > SCHEMA:
                conn.close()
                raise UserError(f"history catalog {path} has schema {row[0]}; this cephbench reads up to {SCHEMA}",
                                "upgrade cephbench, or give another --db")
        except sqlite3.DatabaseError as exc:
            raise UserError(f"history catalog {path} cannot be used: {exc}",
                            "give another --db or CEPHBENCH_HISTORY", where="--db") from None
        except OSError as exc:
            raise UserError(f"history catalog {path} cannot be created: {exc.strerror}",
                            "give another --db or CEPHBENCH_HISTORY") from None
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing -------------------------------------------------------------------------------

    def add(self, run_dir: Path) -> tuple[int, list[CorruptLine]]:
        """Catalogue a run directory (again): its facts and every result's key figures. Returns (results, bad lines)."""
        meta = checked_meta(run_dir)
        results, bad = RunDir.open(run_dir).results()
        path = str(Path(run_dir).resolve())
        run_ids = meta.get("run_ids") or []
        with self.conn:
            self.conn.execute("DELETE FROM results WHERE run_path = ?", (path,))
            self.conn.execute("INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?)", (
                path, run_ids[0] if run_ids else None, meta.get("suite_name"), fsid(meta), ceph_version(meta),
                meta.get("started_unix"), meta.get("finished_unix"), int(bool(meta.get("imported"))),
                len(results), sum(1 for r in results if r.status == "failed"), time.time()))
            for r in results:
                vals = metric_values(r.measurement) if r.status == "ok" and r.measurement else {}
                self.conn.execute(
                    "INSERT INTO results VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (path, r.test.id, test_label(r.test), r.test.match_key(), r.test.kind,
                     json.dumps(dict(r.test.params), sort_keys=True, default=str), r.test.repeat, r.status,
                     *(vals.get(m) for m in METRIC_NAMES), json.dumps(identity(r, meta), sort_keys=True)))
        return len(results), bad

    # ---- reading -------------------------------------------------------------------------------

    def runs(self, filters: Filters = Filters()) -> list[RunRow]:
        where, args = filters.where()
        rows = self.conn.execute(
            "SELECT path, run_id, suite, fsid, ceph_version, started_unix, finished_unix, imported, tests, failed "
            f"FROM runs{where} ORDER BY started_unix, path", args).fetchall()
        return [_run_row(row) for row in rows]

    def trend(self, metric: str, match: str, filters: Filters = Filters(), profile: str | None = None,
              variant: str | None = None, ignore: tuple[str, ...] = (), release: str | None = None
              ) -> list[TrendPoint]:
        """One test across the catalogued runs, oldest first: per run and configuration, the repeats' values.

        `profile` ('replicated size 3', 'EC 2+1'), `variant` and `release` ('none': without one) keep one of each;
        `ignore`d parameters do not set configurations apart (never the pool profile or a part of the identity)."""
        metric = metric_name(metric)
        for k in ignore:
            if k in _NEVER_IGNORED:
                raise UserError(f"a trend never mixes configurations: {k} cannot be ignored",
                                f"pick one with {_NEVER_IGNORED[k]}", where="--ignore")
        want_profile = normalize_profile(profile) if profile else None
        runs = {r.path: r for r in self.runs(filters)}
        want = _matcher(match)
        points: dict[tuple[str, str], list[Any]] = {}
        picks = {part: chosen for part, chosen in (("variant", variant), ("release", release)) if chosen}
        for path, test_id, label, key, kind, params_text, value, stored in self.conn.execute(
                f"SELECT run_path, test_id, label, match_key, kind, params, {metric}, identity FROM results "
                "WHERE status = 'ok' ORDER BY run_path, test_id"):
            params = json.loads(params_text)
            if path not in runs or value is None or not want(test_id, kind, params, key):
                continue
            if want_profile and _profile_of(params) != want_profile:
                continue
            ident = _identity(stored, key)
            if any(ident.get(part, "none") != chosen for part, chosen in picks.items()):
                continue
            config = json.dumps({"fsid": runs[path].fsid, "kind": kind, "identity": ident,
                                 "params": {k: v for k, v in params.items() if k not in ignore}},
                                sort_keys=True, default=str)
            points.setdefault((path, config), [label, key, params, ident, []])[4].append(float(value))
        out = [TrendPoint(runs[p], label, key, tuple(vals), params, config, ident)
               for (p, config), (label, key, params, ident, vals) in points.items()]
        return sorted(out, key=lambda t: (t.run.started_unix or 0, t.run.path, t.label))


def _upgrade(conn: sqlite3.Connection) -> None:
    """A catalog of schema 1 gains results.identity (empty: read from the match key, which holds the variant)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(results)")}
    with conn:
        if "identity" not in columns:
            conn.execute("ALTER TABLE results ADD COLUMN identity TEXT")
        conn.execute("UPDATE catalog SET value = ? WHERE key = 'schema'", (str(SCHEMA),))


def _matcher(match: str):
    """--test: a match key (JSON), `[kind] key=value ...` (params that must be equal), or a substring of the id."""
    from .importer import parse_labels
    match = match.strip()
    if not match:
        raise UserError("give the test to follow", "e.g. --test 'rados_bench phase=write object_size=4MiB' "
                        "or a part of its id", where="--test")
    if match.startswith("{"):
        return lambda _id, _kind, _params, key: key == match
    words = match.replace(",", " ").split()
    if any("=" in w for w in words):
        kinds = [w for w in words if "=" not in w]
        want = parse_labels([w for w in words if "=" in w])
        if len(kinds) > 1:
            raise UserError(f"{match!r}: give at most one kind before key=value pairs", where="--test")
        return lambda _id, kind, params, _key: ((not kinds or kind == kinds[0])
                                                and all(params.get(k) == v for k, v in want.items()))
    return lambda test_id, _kind, _params, _key: match in test_id


def format_time(unix: float | None) -> str:
    """A time as the catalog shows it; "-" for none, and the value itself for one no calendar holds (a row
    written by hand, or by a cephbench before the catalog checked its times)."""
    if unix is None:
        return "-"
    try:
        return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, ValueError, OSError, TypeError):
        return f"{unix!r:.20} (not a time)"

