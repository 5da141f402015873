"""Terminal tables for the disk and network baselines. MB/s and Gbit/s are decimal (10^6 bytes, 10^9 bits),
as dd and iperf print them, so the figures compare directly with the seeds'."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..kinds import DISK_BASELINE, NET_BASELINE, kinds_where
from ..results import Result
from ..units import format_size
from .format import iops, ms, pct
from .textout import plain_table, print_messages, print_whole

BASELINE_KINDS = kinds_where(level="Baselines")


def _mb(v: float | None) -> str:
    return "-" if v is None else f"{v / 1e6:,.1f}"


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


def disk_table(results: list[Result]) -> Table:
    t = plain_table("Disk baseline (fio, direct I/O; MB = 10^6 bytes)")
    for col, right in (("pattern", False), ("host", False), ("bs", True), ("qd", True), ("MB/s alone", True),
                       ("IOPS alone", True), ("p99 ms alone", True), ("MB/s each, all at once", True), ("drop", True),
                       ("status", False)):
        t.add_column(col, justify="right" if right else "left", no_wrap=col == "pattern")   # a row's name: whole
    for r in results:
        m = r.measurement
        if m is None:
            t.add_row(r.test.params.get("pattern", r.test.id), "-", "-", "-", "-", "-", "-", "-", "-",
                      f"[red]{r.status}[/red]")
            continue
        x = m.extra
        for host, f in _host_rows(x):
            p99 = f.get("p99_ns") if f is not x else m.latency.percentiles_ns.get("99")
            t.add_row(x.get("pattern", ""), host, format_size(x.get("block_size") or 0), str(x.get("iodepth", "")),
                      _mb(f.get("alone_median_bytes_per_s")), iops(f.get("alone_median_ops_per_s")), ms(p99),
                      _mb(f.get("parallel_median_bytes_per_s")),
                      pct(f["parallel_drop"]) if f.get("parallel_drop") is not None else "-", r.status)
    return t


def net_table(results: list[Result]) -> Table:
    t = plain_table("Network baseline (iperf3; Gbit = 10^9 bits, MB = 10^6 bytes)")
    for col, right in (("pattern", False), ("from", False), ("to", False), ("streams", True), ("Gbit/s", True),
                       ("MB/s", True), ("retransmits", True), ("per stream Gbit/s", False), ("status", False)):
        t.add_column(col, justify="right" if right else "left")
    for r in results:
        p, m = r.test.params, r.measurement
        sender = p.get("sender") or ", ".join(p.get("senders") or [])
        if m is None:
            t.add_row(p.get("pattern", ""), sender, ", ".join(p.get("receivers", [])),
                      str(p.get("streams", "")), "-", "-", "-", "-", f"[red]{r.status}[/red]")
            continue
        x = m.extra
        each = x.get("per_receiver_bits_per_s") or x.get("per_sender_bits_per_s")
        if each:
            per = ", ".join(f"{k}: {v / 1e9:.2f}" for k, v in each.items())
        else:
            per = " ".join(f"{s['bits_per_s'] / 1e9:.2f}" for s in x.get("streams", []))
        t.add_row(p.get("pattern", ""), sender, ", ".join(p.get("receivers", [])), str(p.get("streams")),
                  f"{x['bits_per_s'] / 1e9:,.2f}", _mb(m.bytes_per_s), str(x.get("retransmits", "-")), per, r.status)
    return t


def print_baselines(console: Console, results: list[Result]) -> None:
    disk = [r for r in results if r.test.kind == DISK_BASELINE]
    net = [r for r in results if r.test.kind == NET_BASELINE]
    if disk:
        print_whole(console, disk_table(disk))
    if net:
        print_whole(console, net_table(net))
    print_messages(console, disk + net)
