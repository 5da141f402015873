"""Size and duration strings in, base units out (and back, for display only)."""

from __future__ import annotations

import math
import re

_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 1024, "kib": 1024, "ki": 1024,
    "m": 1024**2, "mib": 1024**2, "mi": 1024**2,
    "g": 1024**3, "gib": 1024**3, "gi": 1024**3,
    "t": 1024**4, "tib": 1024**4, "ti": 1024**4,
}
# "MB" is 10^6 to dd and 2^20 to rados bench: a suite that says it could mean either, so it is refused.
_AMBIGUOUS = {"kb": "KiB", "mb": "MiB", "gb": "GiB", "tb": "TiB"}
_DUR_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_DUR_UNITS = {"ms": 0.001, "s": 1, "": 1, None: 1, "m": 60, "min": 60, "h": 3600}


# The largest size and duration any figure may be: sizes are int64 to the tools (fio, rados, Ceph's options) and to
# the history catalog (SQLite); a duration past centuries is a typo whatever it is for (each use bounds its own
# far lower: a test's 24 h), and past a float's range no number at all.
MAX_INT = 2**63 - 1
MAX_BYTES = MAX_INT
MAX_DURATION_S = 1e10


def shown(value: object, limit: int = 40) -> str:
    """A value as a message repeats it: its repr, cut to `limit` characters (a 400-digit number, a 4 MiB string)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _exact(number: str, factor: int | float, value: object, what: str, limit: float) -> tuple[int, int]:
    """A decimal number as written times its unit's factor, exactly, as numerator and denominator (no float: 400
    digits are no inf, 1.1KiB is not 1126 bytes); refused past `limit`."""
    whole, _, frac = number.partition(".")
    if len(whole.lstrip("0")) > 24:      # past any limit here, and short of int()'s own limit on digits
        raise ValueError(f"{shown(value)} is more than any {what} a tool takes; give a smaller one")
    frac = frac[:24]                      # digits past these change no whole byte or second
    num, den = int(whole + frac) * round(factor * 1000), 10 ** len(frac) * 1000
    if num > limit * den:
        raise ValueError(f"{shown(value)} is more than any {what} a tool takes; give a smaller one")
    return num, den


def parse_size(value: str | int | float) -> int:
    """'4KiB', '4k', '4M', '1GiB', '4096' -> bytes. K/M/G alone are binary, as in Ceph and fio.

    KB/MB/GB are refused as ambiguous; a size must come to whole bytes and at most MAX_BYTES. Raises ValueError with
    a message fit for the user.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} is not a size; give e.g. 4KiB or 4096")
        if not value.is_integer():
            raise ValueError(f"{value!r} is not a whole number of bytes; give e.g. 4KiB or 4096")
        value = int(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{shown(value)} is negative: a size must be positive, e.g. 4KiB")
        if value > MAX_BYTES:
            raise ValueError(f"{shown(value)} is more than any size a tool takes; give a smaller one")
        return value
    if str(value).strip().startswith("-") and _SIZE_RE.match(str(value).strip()[1:]):
        raise ValueError(f"{shown(value)} is negative: a size must be positive, e.g. {str(value).strip()[1:]}")
    m = _SIZE_RE.match(str(value))
    unit = m.group(2).lower() if m else None
    if m and unit in _AMBIGUOUS:
        raise ValueError(f"{shown(value)} is ambiguous: {m.group(2)} means 10^{3 * (list(_AMBIGUOUS).index(unit) + 1)} "
                         f"bytes to some tools and 2^{10 * (list(_AMBIGUOUS).index(unit) + 1)} to others (rados "
                         f"bench); write {m.group(1)}{_AMBIGUOUS[unit]}")
    if not m or unit not in _SIZE_UNITS:
        raise ValueError(f"{shown(value)} is not a size; use a number with B, KiB, MiB, GiB (or K, M, G), e.g. 4KiB")
    num, den = _exact(m.group(1), _SIZE_UNITS[unit], value, "size", MAX_BYTES)
    if num % den:
        raise ValueError(f"{shown(value)} is not a whole number of bytes")
    return num // den


def parse_duration(value: str | int | float) -> float:
    """'30s', '2m', '500ms', 30 -> seconds, at most MAX_DURATION_S."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value!r} is not a duration; use e.g. 30s, 2m or 500ms")
        if value < 0:
            raise ValueError(f"{shown(value)} is negative: a duration must be positive, e.g. 30s")
        if value > MAX_DURATION_S:      # before float(): an int past a float's range is no OverflowError here
            raise ValueError(f"{shown(value)} is longer than 300 years; give a shorter duration")
        return float(value)
    if str(value).strip().startswith("-") and _DUR_RE.match(str(value).strip()[1:]):
        raise ValueError(f"{shown(value)} is negative: a duration must be positive, e.g. {str(value).strip()[1:]}")
    m = _DUR_RE.match(str(value))
    if not m:
        raise ValueError(f"{shown(value)} is not a duration; use e.g. 30s, 2m or 500ms")
    try:
        _exact(m.group(1), _DUR_UNITS[m.group(2)], value, "duration", MAX_DURATION_S)
    except ValueError:
        raise ValueError(f"{shown(value)} is longer than 300 years; give a shorter duration") from None
    return float(m.group(1)) * _DUR_UNITS[m.group(2)]


def exact_size(n: int, byte_unit: str = "B") -> str:
    """Bytes exactly, in the largest binary unit that divides them: 4KiB, 1536KiB, 1000B (`byte_unit` after bare
    bytes: "" for a flag). Unlike format_size, parse_size gives back the very same number."""
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}{byte_unit}"


def format_size(n: float) -> str:
    """Bytes as the short binary form used in test names: 4KiB, 4MiB, 1.5GiB."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= factor:
            v = n / factor
            return f"{v:g}{unit}" if v == int(v) else f"{v:.1f}{unit}"
    return f"{int(n)}B"
