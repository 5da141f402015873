"""Per-second device and link load from /proc/diskstats and /proc/net/dev readings (pure: no I/O).

A reading is a timestamp (ns, `date +%s%N`) and the file's text. Between two readings of a device, busy is the
share of wall time with I/O in flight (io_ticks), bytes come from 512-byte sectors (diskstats always counts in
512-byte units, whatever the device's sector size), and await is the time the I/Os took over how many completed.
Requests are counted twice: as completed (after the block layer merged neighbours into one) and as submitted
(completed + merged), which is what a cgroup IOPS throttle counts: it acts on each request before any merge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, TypeVar

from cephbench.core.results import DeviceLoad, LinkLoad

_SECTOR = 512
T = TypeVar("T")
SHORT_LAST_S = 0.75      # a last interval shorter than this joins the one before it (whole_seconds)


@dataclass(frozen=True)
class DiskCounters:
    reads: int
    reads_merged: int
    read_sectors: int
    read_ms: int
    writes: int
    writes_merged: int
    write_sectors: int
    write_ms: int
    io_ticks_ms: int


@dataclass(frozen=True)
class NetCounters:
    rx_bytes: int
    tx_bytes: int


def parse_diskstats(text: str) -> dict[str, DiskCounters]:
    """/proc/diskstats -> counters per device name; a line that does not read is skipped (not a whole host lost)."""
    out: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 14 or not all(x.isdigit() for x in f[3:14]):
            continue
        n = [int(x) for x in f[3:14]]
        out[f[2]] = DiskCounters(reads=n[0], reads_merged=n[1], read_sectors=n[2], read_ms=n[3], writes=n[4],
                                 writes_merged=n[5], write_sectors=n[6], write_ms=n[7], io_ticks_ms=n[9])
    return out


def parse_net_dev(text: str) -> dict[str, NetCounters]:
    """/proc/net/dev -> rx/tx bytes per interface; header lines and lines that do not read are skipped."""
    out: dict[str, NetCounters] = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        f = rest.split()
        if not sep or len(f) < 9 or not (f[0].isdigit() and f[8].isdigit()):
            continue
        out[name.strip()] = NetCounters(rx_bytes=int(f[0]), tx_bytes=int(f[8]))
    return out


def parse_link_speed(text: str) -> float | None:
    """/sys/class/net/IF/speed (Mbit/s) -> bits/s; None when the kernel does not say (-1, empty, an error)."""
    t = text.strip()
    return float(t) * 1e6 if t.isdigit() and int(t) > 0 else None


def whole_seconds(held: list[tuple[int, T]]) -> list[tuple[int, T]]:
    """Readings (ns, counters) whose intervals each stand for a second of the series: a watch told to stop takes a
    last reading (hostload.WATCH_SH) 0.3-1 s after the one before, and that short interval's rate, counted as a
    second like the others, made a second that never was (the series' mean and busy seconds overweighted the
    test's last moments). Its bytes are kept: the reading before it is left out, so the last interval spans both."""
    if len(held) >= 3 and (held[-1][0] - held[-2][0]) / 1e9 < SHORT_LAST_S:
        return held[:-2] + held[-1:]
    return held


def device_load(host: str, device: str, readings: Sequence[tuple[int, dict[str, DiskCounters]]],
                osds: list[int] | None = None, role: str = "data") -> DeviceLoad | None:
    """The device's load per interval between consecutive readings (ns, parsed diskstats); None when fewer than two
    readings hold the device (a file-backed OSD has no device of its own: the caller notes it)."""
    held = whole_seconds([(t, d[device]) for t, d in readings if device in d])
    if len(held) < 2:
        return None
    load = DeviceLoad(host=host, device=device, osds=list(osds or []), role=role, start_unix_s=held[0][0] / 1e9)
    for (t0, a), (t1, b) in zip(held, held[1:]):
        dt = (t1 - t0) / 1e9
        if dt <= 0:
            continue
        ios = (b.reads - a.reads) + (b.writes - a.writes)
        load.busy.append(round(min(1.0, (b.io_ticks_ms - a.io_ticks_ms) / 1000 / dt), 4))
        load.read_bytes_per_s.append((b.read_sectors - a.read_sectors) * _SECTOR / dt)
        load.write_bytes_per_s.append((b.write_sectors - a.write_sectors) * _SECTOR / dt)
        load.await_ms.append(((b.read_ms - a.read_ms) + (b.write_ms - a.write_ms)) / ios if ios > 0 else None)
        load.read_ops_per_s.append((b.reads - a.reads) / dt)
        load.write_ops_per_s.append((b.writes - a.writes) / dt)
        load.read_requests_per_s.append(((b.reads + b.reads_merged) - (a.reads + a.reads_merged)) / dt)
        load.write_requests_per_s.append(((b.writes + b.writes_merged) - (a.writes + a.writes_merged)) / dt)
    return load


def link_load(host: str, iface: str, readings: Sequence[tuple[int, dict[str, NetCounters]]], network: str = "public",
              speed_bits_per_s: float | None = None, speed_source: str | None = None) -> LinkLoad | None:
    """The link's rx/tx bytes/s per interval between consecutive readings; None when fewer than two hold it."""
    held = whole_seconds([(t, d[iface]) for t, d in readings if iface in d])
    if len(held) < 2:
        return None
    load = LinkLoad(host=host, iface=iface, network=network, speed_bits_per_s=speed_bits_per_s,
                    speed_source=speed_source if speed_bits_per_s is not None else None,
                    start_unix_s=held[0][0] / 1e9)
    for (t0, a), (t1, b) in zip(held, held[1:]):
        dt = (t1 - t0) / 1e9
        if dt <= 0:
            continue
        load.rx_bytes_per_s.append(max(0, b.rx_bytes - a.rx_bytes) / dt)
        load.tx_bytes_per_s.append(max(0, b.tx_bytes - a.tx_bytes) / dt)
    return load
