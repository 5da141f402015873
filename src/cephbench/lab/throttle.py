"""Drive throttle specs: `--osd-throttle osd.N=RATE[,IOPS]` and `cephbench lab throttle osd.N ... / --clear`.

A spec names one drive of one OSD and how fast it may go:

  osd.1=50MiB/s            osd.1's data drive, 50 MiB/s read and 50 MiB/s write
  osd.1=8MiB/s,200iops     ... and at most 200 reads and 200 writes per second
  osd.1=200iops            IOPS alone
  osd.1.db=20MiB/s         osd.1's separate WAL/DB device (BlueStore) or journal device (FileStore)

Rates are bytes per second, the size written as everywhere in a suite (units.parse_size) followed by `/s`:
B/s, KiB/s, MiB/s, GiB/s (K/s, M/s, G/s are the same, binary as in Ceph and fio); `MB/s` is refused as
ambiguous, as `MB` is in a suite. A lowercase `b` (`Mb/s`, `mbit/s`) is bits, refused too. Several specs may share one flag value (comma or space separated) or come in
repeated flags; a part without `=` belongs to the spec before it, so `osd.1=8MiB/s,200iops,osd.2=20MiB/s` is two
specs. The limit applies to reads and writes alike, each on its own, as blkio does.

Pure: nothing here touches the system. drives.py applies a spec to a drive's cgroup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ..core.errors import UserError
from ..core.units import exact_size, parse_size

ROLES = ("data", "db")
# Below these an OSD's heartbeats and a 4 MiB object write take tens of seconds: the OSD is marked down, not slow.
MIN_BYTES_PER_S = 64 * 1024
MIN_IOPS = 10

_NAME_RE = re.compile(r"osd\.(\d+)(?:\.(\w+))?")
_VALUE_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([A-Za-z/]*)")
_BITS_RE = re.compile(r"[\d.]+\s*[kKmMgGtT]?(b|bit|bits)")       # Mb/s, mbit/s: a link's unit, not a drive's
_EXAMPLE = "write e.g. osd.1=50MiB/s, osd.1=8MiB/s,200iops or osd.1.db=20MiB/s"


@dataclass(frozen=True, order=True)
class DriveRef:
    """One drive of one OSD: its data drive or its separate WAL/DB (journal) device."""

    osd: int
    role: str = "data"

    def __str__(self) -> str:
        return f"osd.{self.osd}" + ("" if self.role == "data" else f".{self.role}")


@dataclass(frozen=True)
class DriveLimit:
    """How fast a drive may go, each direction on its own; None is no limit."""

    bytes_per_s: int | None = None
    iops: int | None = None

    def to_json(self) -> dict[str, int | None]:
        return {"bytes_per_s": self.bytes_per_s, "iops": self.iops}

    @classmethod
    def from_json(cls, d: dict) -> DriveLimit:
        return cls(d.get("bytes_per_s"), d.get("iops"))


@dataclass(frozen=True)
class ThrottleSpec:
    drive: DriveRef
    limit: DriveLimit

    def text(self) -> str:
        """`osd.1=8MiB/s,200iops`: what `--osd-throttle` and `lab throttle` take."""
        return f"{self.drive}=" + self.limit_text()

    def limit_text(self) -> str:
        """`8MiB/s,200iops`: a suite's `osd_throttle: {osd.1: ...}` value."""
        return ",".join(([f"{exact_size(self.limit.bytes_per_s, byte_unit='')}/s"] if self.limit.bytes_per_s else [])
                        + ([f"{self.limit.iops}iops"] if self.limit.iops else []))


def parse_byte_rate(text: str, where: str = "--osd-throttle") -> int:
    """`50MiB/s` -> 52428800 (bytes per second): a size as suites write it (units.parse_size), per second."""
    value = text.strip()
    if not value.endswith("/s"):
        raise UserError(f"rate {text!r} is not per second", "write e.g. 50MiB/s or 200iops", where=where)
    size = value[:-2]
    if _BITS_RE.fullmatch(size):
        raise UserError(f"rate {text!r} is in bits: a drive's rate is in bytes per second",
                        "write e.g. 50MiB/s", where=where)
    try:
        n = parse_size(size)
    except ValueError as exc:
        raise UserError(f"rate {text!r}: {exc}", "write e.g. 50MiB/s or 200iops", where=where) from None
    if n < MIN_BYTES_PER_S:
        raise UserError(f"rate {text!r} is below 64KiB/s, where the OSD would be marked down rather than slow",
                        "write at least 64KiB/s; to remove a throttle use --clear", where=where)
    return n


def _parse_iops(text: str, where: str) -> int:
    m = _VALUE_RE.fullmatch(text.strip())
    if not m or m.group(2).lower() != "iops" or not m.group(1).isdigit():
        raise UserError(f"{text!r} is not an IOPS figure", "write a whole number with iops, e.g. 200iops",
                        where=where)
    n = int(m.group(1))
    if n < MIN_IOPS:
        raise UserError(f"{text!r} is below {MIN_IOPS}iops, where the OSD would be marked down rather than slow",
                        f"write at least {MIN_IOPS}iops; to remove a throttle use --clear", where=where)
    return n


def _parse_ref(name: str, where: str) -> DriveRef:
    m = _NAME_RE.fullmatch(name.strip())
    if not m or (m.group(2) is not None and m.group(2) != "db"):
        raise UserError(f"{name!r} does not name an OSD's drive", "write osd.N for its data drive or osd.N.db for "
                        "its WAL/DB device, e.g. osd.1=50MiB/s", where=where)
    return DriveRef(int(m.group(1)), "db" if m.group(2) else "data")


def drive_ref(name: str) -> DriveRef:
    """A drive as a record names it (`osd.1`, `osd.1.db`: str(DriveRef))."""
    return _parse_ref(name, "a lab's record")


def _tokens(values: Sequence[str] | str) -> list[str]:
    if isinstance(values, str):
        values = [values]
    return [t for v in values for t in re.split(r"[,\s]+", v) if t]


def parse_throttle_specs(values: Sequence[str] | str | Mapping[str, str], where: str = "--osd-throttle"
                         ) -> tuple[ThrottleSpec, ...]:
    """Every spec in the flag values given (or a suite's mapping, drive -> `RATE[,IOPS]`), in order; a drive named
    twice is refused."""
    groups: list[tuple[str, list[str]]] = []
    if isinstance(values, Mapping):
        groups = [(str(name), _tokens(str(v))) for name, v in values.items()]
    for tok in [] if isinstance(values, Mapping) else _tokens(values):
        if "=" in tok:
            name, _, first = tok.partition("=")
            groups.append((name, [first] if first else []))
        elif groups:
            groups[-1][1].append(tok)
        else:
            raise UserError(f"{tok!r} does not say which drive", _EXAMPLE, where=where)
    if not groups:
        raise UserError("no throttle given", _EXAMPLE, where=where)
    specs: list[ThrottleSpec] = []
    for name, parts in groups:
        ref = _parse_ref(name, where)
        rate = iops = None
        if not parts:
            raise UserError(f"{ref} has no rate", _EXAMPLE, where=where)
        for p in parts:
            if p.lower().endswith("iops"):
                if iops is not None:
                    raise UserError(f"{ref} has two IOPS figures", _EXAMPLE, where=where)
                iops = _parse_iops(p, where)
            else:
                if rate is not None:
                    raise UserError(f"{ref} has two rates", _EXAMPLE, where=where)
                rate = parse_byte_rate(p, where)
        if any(s.drive == ref for s in specs):
            raise UserError(f"{ref} is throttled twice", "give each drive once", where=where)
        specs.append(ThrottleSpec(ref, DriveLimit(rate, iops)))
    return tuple(specs)


def parse_drive_refs(values: Sequence[str] | str, where: str = "lab throttle --clear") -> tuple[DriveRef, ...]:
    """Drive names alone (`osd.1 osd.2.db`), as `lab throttle --clear` takes them."""
    refs: list[DriveRef] = []
    for tok in _tokens(values):
        if "=" in tok:
            raise UserError(f"{tok!r}: --clear takes drive names without a rate", "write e.g. osd.1 or osd.1.db",
                            where=where)
        ref = _parse_ref(tok, where)
        if ref not in refs:
            refs.append(ref)
    if not refs:
        raise UserError("no drive given", "write e.g. osd.1 or osd.1.db", where=where)
    return tuple(refs)


def check_drives(refs: Iterable[DriveRef], osd_ids: Iterable[int], db_osd_ids: Iterable[int] = (),
                 where: str = "--osd-throttle", db_device: str = "--db-device") -> None:
    """Refuse a drive the lab does not have: an OSD id outside `osd_ids`, or `.db` of an OSD without a DB device
    (`db_device`: how the refusal names the DB device's own flag or key)."""
    osds, dbs = sorted(set(osd_ids)), set(db_osd_ids)
    for ref in refs:
        if ref.osd not in osds:
            have = ", ".join(f"osd.{i}" for i in osds) or "none"
            raise UserError(f"{ref}: the lab has no osd.{ref.osd}", f"its OSDs are {have}", where=where)
        if ref.role == "db" and ref.osd not in dbs:
            raise UserError(f"{ref}: osd.{ref.osd} has no separate WAL/DB device",
                            f"start the lab with {db_device}, or throttle its data drive (osd.N)", where=where)
