"""Terminal tables for the disk and network baselines. Bytes are MiB/s, as in every other view of a figure (the
progress line, the cluster's tables, the verdict); a link is Gbit/s (10^9 bits), as iperf3 and link speeds count.
On a narrow terminal a table leaves out whole columns (textout.fitted_table), never a part of a cell."""

from __future__ import annotations

from typing import Sequence

from rich.console import Console
from rich.table import Table

from ..kinds import DISK_BASELINE, NET_BASELINE, kinds_where
from ..core.results import Result
from ..core.units import format_size
from .format import iops, mib_s, ms, pct
from .textout import Column, fitted_table, print_left_out, print_messages, print_whole

BASELINE_KINDS = kinds_where(level="Baselines")


def _host_rows(x: dict) -> list[tuple[str, dict]]:
    """(host, figures) rows of one pattern: the median disk of all hosts, then each host's when there are several.
    A run from before hosts were recorded is one row for this host."""
    per_host = x.get("per_host") or {}
    if len(per_host) <= 1:
        return [(next(iter(per_host), "this host"), x)]
    rows = [(f"all {len(per_host)} hosts", x)]
    for host, h in per_host.items():
        p99s = sorted(v["lat_p99_ns"] for v in (x.get("alone") or {}).values()
                      if v.get("host") == host and v.get("lat_p99_ns") is not None)
        alone, par = h.get("alone_median_bytes_per_s"), h.get("parallel_median_bytes_per_s")
        rows.append((host + (" (slowest)" if host == x.get("slowest_host") else ""),
                     {**h, "p99_ns": p99s[len(p99s) // 2] if p99s else None,
                      "parallel_drop": 1 - par / alone if alone and par is not None else None}))
    return rows


def _cell(i: int):
    return lambda row: row[i]


def _columns(spec: Sequence[tuple[str, bool, int]], rows: list[tuple[str, ...]]) -> list[Column]:
    """(header, right-aligned, rank) -> columns over row tuples; the status column, last, is left out first when
    every row is "ok", and kept when one is not."""
    status_rank = 0 if any(row[-1] != "ok" for row in rows) else max(rank for _, _, rank in spec) + 1
    return [Column(h, _cell(i), right, rank) for i, (h, right, rank) in enumerate(spec)] + \
        [Column("status", _cell(len(spec)), False, status_rank)]


DISK_COLUMNS = (("pattern", False, 0), ("host", False, 0), ("bs", True, 6), ("qd", True, 5),
                ("MiB/s alone", True, 0), ("IOPS alone", True, 3), ("p99 ms alone", True, 4),
                ("MiB/s all at once", True, 2), ("drop", True, 1))
NET_COLUMNS = (("pattern", False, 0), ("from", False, 0), ("to", False, 0), ("streams", True, 3),
               ("Gbit/s", True, 0), ("MiB/s", True, 4), ("retransmits", True, 2), ("per stream Gbit/s", False, 5))


def disk_rows(results: list[Result]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in results:
        m = r.measurement
        if m is None:
            rows.append((r.test.params.get("pattern", r.test.id), *["-"] * 8, f"[red]{r.status}[/red]"))
            continue
        x = m.extra
        for host, f in _host_rows(x):
            p99 = f.get("p99_ns") if f is not x else m.latency.percentiles_ns.get("99")
            rows.append((x.get("pattern", ""), host, format_size(x.get("block_size") or 0), str(x.get("iodepth", "")),
                         mib_s(f.get("alone_median_bytes_per_s")), iops(f.get("alone_median_ops_per_s")), ms(p99),
                         mib_s(f.get("parallel_median_bytes_per_s")),
                         pct(f["parallel_drop"]) if f.get("parallel_drop") is not None else "-", r.status))
    return rows


def net_rows(results: list[Result]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for r in results:
        p, m = r.test.params, r.measurement
        sender = p.get("sender") or ", ".join(p.get("senders") or [])
        if m is None:
            rows.append((p.get("pattern", ""), sender, ", ".join(p.get("receivers", [])),
                         str(p.get("streams", "")), "-", "-", "-", "-", f"[red]{r.status}[/red]"))
            continue
        x = m.extra
        each = x.get("per_receiver_bits_per_s") or x.get("per_sender_bits_per_s")
        if each:
            per = ", ".join(f"{k}: {v / 1e9:.2f}" for k, v in each.items())
        else:
            per = " ".join(f"{s['bits_per_s'] / 1e9:.2f}" for s in x.get("streams", []))
        rows.append((p.get("pattern", ""), sender, ", ".join(p.get("receivers", [])), str(p.get("streams")),
                     f"{x['bits_per_s'] / 1e9:,.2f}", mib_s(m.bytes_per_s), str(x.get("retransmits", "-")), per,
                     r.status))
    return rows


DISK_TITLE = "Disk baseline (fio, direct I/O)"
NET_TITLE = "Network baseline (iperf3; Gbit = 10^9 bits)"


def disk_table(console: Console, results: list[Result]) -> tuple[Table, list[str]]:
    rows = disk_rows(results)
    return fitted_table(console, DISK_TITLE, _columns(DISK_COLUMNS, rows), rows)


def net_table(console: Console, results: list[Result]) -> tuple[Table, list[str]]:
    rows = net_rows(results)
    return fitted_table(console, NET_TITLE, _columns(NET_COLUMNS, rows), rows)


def print_baselines(console: Console, results: list[Result]) -> None:
    disk = [r for r in results if r.test.kind == DISK_BASELINE]
    net = [r for r in results if r.test.kind == NET_BASELINE]
    for make, rs in ((disk_table, disk), (net_table, net)):
        if rs:
            table, dropped = make(console, rs)
            print_whole(console, table)
            print_left_out(console, dropped)        # under the table it is of
    print_messages(console, disk + net)
