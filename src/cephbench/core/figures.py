"""Figures read from a tool's output, checked: a parser turns any number it cannot trust into a ParseError that
names it, instead of a traceback or a NaN stored in results.jsonl.

Tool output goes wrong in a few ways: cut off mid-number, a JSON value of the wrong type, "nan" or "inf" where a
figure stands, a number too big for a float (int(), float() and true division then raise OverflowError or
ValueError, which are not ParseError).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .results import Measurement
from .errors import ParseError

# Counts and sizes in tool output are 64-bit at most; a larger one is garbage, and it would overflow float maths.
MAX_COUNT = 2**64


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def number(value: Any, what: str) -> float:
    """A finite float from a JSON number or a numeric string; ParseError naming `what` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParseError(f"{what} is {_show(value)}, not a number")
    try:
        f = float(value)
    except (ValueError, OverflowError):
        raise ParseError(f"{what} is {_show(value)}, not a number") from None
    if not math.isfinite(f):
        raise ParseError(f"{what} is {_show(value)}, not a finite number")
    return f


def count(value: Any, what: str) -> int:
    """A whole number 0 <= n < 2^64 (a count, a size, a time in ticks or ms); ParseError naming `what` otherwise."""
    f = number(value, what)
    if not f.is_integer() or not 0 <= f < MAX_COUNT:
        raise ParseError(f"{what} is {_show(value)}, not a count (a whole number from 0 to 2^64)")
    return value if isinstance(value, int) else int(f)


# A time a tool reports, in unix seconds: from 1970 to the end of the year 9999, the last a date can be written
# in (datetime and time_t refuse beyond it, so a report or the history would fail on it later).
MAX_UNIX_S = 253402300799.0


def unix_time(value: Any, what: str) -> float:
    """Unix seconds from 1970 to the year 9999; ParseError naming `what` otherwise."""
    f = number(value, what)
    if not 0 <= f <= MAX_UNIX_S:
        raise ParseError(f"{what} is {_show(value)}, not a time (unix seconds from 1970 to the year 9999)")
    return f


def optional(value: Any, read: Callable[[Any, str], Any], what: str) -> Any:
    """None for a field the tool left out or wrote as null; else `read(value, what)` (number, count, ...)."""
    return None if value is None else read(value, what)


def _first_bad(obj: Any, where: str, top: bool) -> tuple[str, Any] | None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            # extra is the tool's own free-form detail: only finiteness matters there
            bad = _first_bad(v, f"{where}.{k}" if where else str(k), top and k != "extra")
            if bad:
                return bad
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            bad = _first_bad(v, f"{where}[{i}]", top)
            if bad:
                return bad
    elif isinstance(obj, float) and not math.isfinite(obj):
        return where, obj
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool) and top and obj < 0:
        return where, obj
    return None


def checked(m: Measurement) -> Measurement:
    """`m` when every figure is finite and none of its rates, counts, sizes or times is negative.

    A figure that passes `number` can still become inf once scaled (MiB/s to bytes/s, ops x size); NaN and inf
    would be written to results.jsonl as null and make the result unreadable.
    """
    bad = _first_bad(m.model_dump(), "", True)
    if bad:
        where, value = bad
        raise ParseError(f"{m.tool} output gives {where} = {value:g}, which is no measurement")
    return m


def mapping(value: Any, what: str) -> dict[str, Any]:
    """A JSON object where the tool writes one; ParseError naming `what` otherwise."""
    if not isinstance(value, dict):
        raise ParseError(f"{what} is {_kind(value)}, not a JSON object")
    return value


def array(value: Any, what: str) -> list[Any]:
    """A JSON array where the tool writes one; ParseError naming `what` otherwise."""
    if not isinstance(value, list):
        raise ParseError(f"{what} is {_kind(value)}, not a JSON array")
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
                                         int: "a number", float: "a number"}.get(type(value), type(value).__name__)
