"""Link shapes for the multi-host lab: `--public-net RATE[/DELAY]` and `--cluster-net RATE[/DELAY]`.

Rates use tc's bit units (`500kbit`, `100mbit`, `1gbit`: decimal, bits per second). tc itself also takes
`bps`, `kbps`, `mbps`, `gbps`, but those are BYTES per second: `1gbps` is 8 Gbit/s, the classic mistake when
someone means a 1 GbE link. Those units are refused here rather than silently giving 8x the bandwidth.

DELAY is the round-trip time a link adds between two hosts of the lab (what ping between them shows);
netns.py splits it over the egress queues a round trip crosses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import UserError

# tc's decimal bit units (tc(8), "RATES"), and the binary ones it also knows.
RATE_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12,
              "kibit": 2**10, "mibit": 2**20, "gibit": 2**30, "tibit": 2**40}
BYTE_RATE_UNITS = {"bps": "bit", "kbps": "kbit", "mbps": "mbit", "gbps": "gbit", "tbps": "tbit"}
DELAY_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
MIN_RATE_BITS = 8_000           # below this tbf cannot hold even one full-size frame per second
MAX_RATE_BITS = 100 * 10**9     # veth on this kind of machine tops out well below; a larger figure is a typo
MAX_DELAY_S = 10.0

_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"
_RATE_RE = re.compile(_NUMBER + r"\s*([a-z]*)")
_DELAY_RE = re.compile(_NUMBER + r"\s*([a-z]*)")


@dataclass(frozen=True)
class LinkShape:
    """A shaped link: its rate in bits per second and the round-trip delay it adds (seconds, 0 for none)."""

    rate_bits_per_s: int
    delay_s: float = 0.0

    def to_json(self) -> dict[str, float | int]:
        return {"rate_bits_per_s": self.rate_bits_per_s, "delay_s": self.delay_s}

    @classmethod
    def from_json(cls, data: dict) -> LinkShape:
        return cls(int(data["rate_bits_per_s"]), float(data.get("delay_s", 0.0)))

    def text(self) -> str:
        """`RATE[/DELAY]` as `--public-net` and a suite's `public_net` take it, e.g. `200mbit/200us`."""
        rate = next((f"{self.rate_bits_per_s // f}{u}" for u, f in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3))
                     if self.rate_bits_per_s % f == 0), f"{self.rate_bits_per_s}bit")
        return rate + (f"/{self.delay_s * 1e6:g}us" if self.delay_s else "")


def parse_rate(text: str, where: str = "--public-net") -> int:
    """`100mbit` -> 100_000_000 (bits per second)."""
    value = text.strip().lower()
    m = _RATE_RE.fullmatch(value)
    if not m:
        raise UserError(f"rate {text!r} is not a number with a unit", "write e.g. 1gbit, 100mbit or 500kbit",
                        where=where)
    number, unit = float(m.group(1)), m.group(2)
    if unit in BYTE_RATE_UNITS:
        raise UserError(f"rate {text!r} is in bytes per second, not bits",
                        f"a link's rate is in bits: write {m.group(1)}{BYTE_RATE_UNITS[unit]}", where=where)
    if unit not in RATE_UNITS:
        hint = "write e.g. 1gbit, 100mbit or 500kbit" if unit else f"give a unit: {m.group(1)}mbit or {m.group(1)}gbit?"
        raise UserError(f"rate {text!r} has " + (f"an unknown unit {unit!r}" if unit else "no unit"), hint,
                        where=where)
    bits = round(number * RATE_UNITS[unit])
    if not MIN_RATE_BITS <= bits <= MAX_RATE_BITS:
        raise UserError(f"rate {text!r} is outside 8kbit..100gbit", "write e.g. 1gbit or 100mbit", where=where)
    return bits


def parse_delay(text: str, where: str = "--public-net") -> float:
    """`0.2ms` -> 0.0002 (seconds)."""
    value = text.strip().lower()
    m = _DELAY_RE.fullmatch(value)
    if not m or m.group(2) not in DELAY_UNITS:
        raise UserError(f"delay {text!r} is not a number with a unit (us, ms or s)", "write e.g. 0.2ms or 1ms",
                        where=where)
    seconds = float(m.group(1)) * DELAY_UNITS[m.group(2)]
    if seconds > MAX_DELAY_S:
        raise UserError(f"delay {text!r} is more than {MAX_DELAY_S:g} s", "write e.g. 0.2ms or 1ms", where=where)
    return seconds


def parse_link(text: str, where: str = "--public-net") -> LinkShape:
    """`RATE[/DELAY]`, e.g. `1gbit`, `100mbit/0.2ms`."""
    parts = text.split("/")
    if len(parts) > 2:
        raise UserError(f"{text!r} has more than one '/'", "write RATE or RATE/DELAY, e.g. 1gbit/0.2ms", where=where)
    rate = parse_rate(parts[0], where)
    delay = parse_delay(parts[1], where) if len(parts) == 2 else 0.0
    return LinkShape(rate, delay)


def tc_rate(bits_per_s: int) -> str:
    return f"{bits_per_s}bit"


def tc_delay(seconds: float) -> str:
    # tc's time resolution is a microsecond; anything finer would be silently rounded by tc.
    return f"{max(1, round(seconds * 1e6))}us"


def tbf_burst_bytes(bits_per_s: int) -> int:
    """tbf's bucket: 10 ms of the rate, and at least a 64 KiB GSO segment so veth's large packets pass whole."""
    return max(bits_per_s // 8 // 100, 64 * 1024)
