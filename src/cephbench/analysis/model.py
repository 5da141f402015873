"""The efficiency model: what a cluster could deliver at most, from its baselines and facts.

Pure functions over dataclasses. A ceiling is the smallest of a few *terms*, each
the capacity of one resource divided by how many times a client byte crosses it:

  writes  client network   clients x client NIC send rate (one-to-many when measured)
          public network   OSD hosts x NIC / (1 + replica traffic) when replication shares the network
          cluster network  OSD hosts x cluster NIC / replica traffic, when it is a network of its own
          disks            data disks x per-disk rate / (journal or WAL double write x replicas or (k+m)/k)
          journal devices  journal devices x their rate / replicas, when the journal has its own devices
  reads   client network   clients x client NIC receive rate
          public network   OSD hosts x NIC
          disks            data disks x per-disk read rate

Per-disk rate at op size S: S / (1/IOPS + S/bandwidth) when the baseline gives both
(a seek plus a transfer), else whichever is known. docs/model.md explains each
term, the seeds it was checked against, and where it is known to be off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..core.units import exact_size

MIB = 1024**2
# bluestore_prefer_deferred_size_hdd's Pacific default, for facts not read from a run (analysis/storesettings.py
# reads the cluster's own): writes this small go through the WAL first
DEFERRED_MAX_HDD = 64 * 1024
SMALL_OP = 64 * 1024              # ops this small are limited per op, not per byte
CPU_SUSPECT_BELOW = 0.5           # small ops under this efficiency, with disks and network idle: CPU (inferred)
CPU_BUSY = 0.80                   # measured: CPUs this busy in a test's typical second limit it (Ceph's threads
                                  # wait on each other, so a saturated host seldom shows 100 %)


@dataclass(frozen=True)
class DiskFigures:
    """Per data disk, as the disk baseline (or osd bench) measured it."""

    write_bytes_per_s: float | None = None       # large sequential writes (1-4 MiB)
    write_alone_bytes_per_s: float | None = None # the same, one disk alone (what `ceph tell osd bench` meets)
    read_bytes_per_s: float | None = None
    write_iops: float | None = None              # 4 KiB random, deep queue
    read_iops: float | None = None
    source: str = "given"                        # where the figures come from, for the reason
    includes_journal: bool = False               # osd bench: the OSD's own write path, journal/WAL included
    shared_device: bool = False                  # the measured paths share one device (the lab)
    hosts: int = 1                               # hosts the disk baseline ran on
    slowest_host: str | None = None              # of several: the host whose median disk wrote slowest
    slowest_host_write_bytes_per_s: float | None = None   # its median disk, measured as write_bytes_per_s is
    slowest_disk: str | None = None              # the slowest disk itself (a lab names the OSD's drive)


@dataclass(frozen=True)
class ClusterFacts:
    osds: int
    osd_hosts: int
    disk: DiskFigures
    objectstore: Literal["bluestore", "filestore"] = "bluestore"
    journal: Literal["same-disk", "separate"] = "same-disk"   # FileStore journal / BlueStore WAL+DB
    rotational: bool = True
    journal_devices: int = 0
    journal_write_bytes_per_s: float | None = None            # per journal device
    client_tx_bytes_per_s: float | None = None                # per client host
    client_rx_bytes_per_s: float | None = None
    public_bytes_per_s: float | None = None                   # per OSD host
    cluster_bytes_per_s: float | None = None                  # per OSD host; None: replication shares public
    clients: int = 1                                          # client hosts
    client_on_osd_host: bool = False
    loopback: bool = False                                    # all traffic crosses loopback TCP (the lab)
    cpus: int | None = None
    notes: tuple[str, ...] = ()
    # BlueStore as the OSDs ran it (storesettings.py); None: Pacific's default for the medium
    deferred_max_bytes: int | None = None                     # writes up to this size are deferred (0: none)
    deferred_text: str = ""                                   # which option said so, and where it was read
    min_alloc_bytes: int | None = None                        # the OSDs' allocation unit, as made


@dataclass(frozen=True)
class Pool:
    size: int | None = None        # replicated
    k: int | None = None           # erasure coded
    m: int | None = None

    @classmethod
    def from_profile(cls, profile: dict | None) -> "Pool":
        if not profile:
            return cls(size=1)
        if profile.get("type") == "erasure":
            return cls(k=int(profile["k"]), m=int(profile["m"]))
        return cls(size=int(profile.get("size", 3)))

    @property
    def amplification(self) -> float:
        """Disk bytes per client byte."""
        return (self.k + self.m) / self.k if self.k else float(self.size or 1)

    @property
    def fanout(self) -> float:
        """Bytes the primary sends to other OSDs per client byte."""
        return (self.k + self.m - 1) / self.k if self.k else float((self.size or 1) - 1)

    def describe(self) -> str:
        return f"EC {self.k}+{self.m}" if self.k else f"{self.size} replica{'s' if (self.size or 1) > 1 else ''}"


@dataclass(frozen=True)
class Term:
    bottleneck: str
    bytes_per_s: float
    formula: str


@dataclass(frozen=True)
class Ceiling:
    op: str
    op_size: int
    terms: list[Term]
    bottleneck: str
    notes: list[str] = field(default_factory=list)

    @property
    def bytes_per_s(self) -> float | None:
        return min(t.bytes_per_s for t in self.terms) if self.terms else None

    @property
    def ops_per_s(self) -> float | None:
        b = self.bytes_per_s
        return b / self.op_size if b is not None and self.op_size else None

    @property
    def binding(self) -> Term | None:
        return min(self.terms, key=lambda t: t.bytes_per_s) if self.terms else None


def mibs(v: float) -> str:
    return f"{v / MIB:,.1f} MiB/s"


def per_disk_rate(size: int, bw: float | None, iops: float | None) -> tuple[float | None, str]:
    """Bytes/s one disk gives at op size `size`: a seek (1/IOPS) plus a transfer (size/bw) per op."""
    if bw and iops:
        rate = size / (1 / iops + size / bw)
        return rate, f"{mibs(rate)} at {exact_size(size)} ({iops:,.0f} IOPS, {mibs(bw)})"
    if bw:
        return bw, mibs(bw)
    if iops:
        return iops * size, f"{iops:,.0f} IOPS × {exact_size(size)}"
    return None, ""


def _journal_factor(f: ClusterFacts, op_size: int) -> tuple[float, str]:
    if f.disk.includes_journal or f.journal == "separate":
        return 1.0, ""
    if f.objectstore == "filestore":
        return 2.0, "÷ 2 for the journal on the same disk"
    if op_size <= deferred_max(f):
        where = f" (writes up to {f.deferred_text})" if f.deferred_text else ""
        return 2.0, f"÷ 2 for BlueStore's deferred write through the WAL on the same disk{where}"
    return 1.0, ""


def deferred_max(f: ClusterFacts) -> int:
    return f.deferred_max_bytes if f.deferred_max_bytes is not None else (DEFERRED_MAX_HDD if f.rotational else 0)


def _store_notes(f: ClusterFacts, op: str, op_size: int) -> list[str]:
    """What the cluster's BlueStore settings did to a small write that a reader of the defaults would not expect."""
    if op != "write" or f.objectstore != "bluestore" or f.disk.includes_journal:
        return []
    notes = []
    default = DEFERRED_MAX_HDD if f.rotational else 0       # what Pacific would defer on this medium
    if f.journal == "same-disk" and f.deferred_text and deferred_max(f) < op_size <= default:
        notes.append(f"no deferred double write at {exact_size(op_size)}: {f.deferred_text}")
    if f.min_alloc_bytes and op_size < f.min_alloc_bytes:
        notes.append(f"a {exact_size(op_size)} write is under the OSDs' min_alloc_size "
                     f"{exact_size(f.min_alloc_bytes)}: each new object takes a whole allocation unit of disk space "
                     "(not modelled as bandwidth)")
    return notes


def ceiling(facts: ClusterFacts, op: Literal["write", "read"], op_size: int, pool: Pool) -> Ceiling:
    terms: list[Term] = []
    notes = list(facts.notes)
    h = max(facts.osd_hosts, 1)
    # With clients on one of H OSD hosts, 1/H of the primaries are local and their traffic never leaves the host
    # (unless everything crosses loopback TCP anyway, as on the lab).
    local = 1 / h if facts.client_on_osd_host and not facts.loopback else 0.0
    fanout = pool.fanout if (h > 1 or facts.loopback) else 0.0
    net_word = "loopback" if facts.loopback else "NIC"
    client_bw = facts.client_tx_bytes_per_s if op == "write" else (facts.client_rx_bytes_per_s
                                                                   or facts.client_tx_bytes_per_s)
    if client_bw and local < 1:
        extra = f" ÷ (1 − 1/{h} local)" if local else ""
        terms.append(Term("client network", facts.clients * client_bw / (1 - local),
                          f"{facts.clients} client{'s' if facts.clients > 1 else ''} × {mibs(client_bw)}"
                          f" {'send' if op == 'write' else 'receive'}{extra}"))
    pub = facts.public_bytes_per_s
    if op == "write":
        if pub and facts.cluster_bytes_per_s is None and (fanout or local < 1):
            terms.append(Term("public network", h * pub / (1 + fanout),
                              f"{h} OSD host{'s' if h > 1 else ''} × {mibs(pub)} {net_word} ÷ {1 + fanout:g} "
                              f"(client traffic + {fanout:g}× replication on one network)"))
        if pub and facts.cluster_bytes_per_s is not None and local < 1:
            terms.append(Term("public network", h * pub, f"{h} OSD hosts × {mibs(pub)} public network"))
        if facts.cluster_bytes_per_s and fanout:
            terms.append(Term("cluster network", h * facts.cluster_bytes_per_s / fanout,
                              f"{h} OSD hosts × {mibs(facts.cluster_bytes_per_s)} cluster network ÷ {fanout:g} "
                              f"replication traffic"))
        rate, rate_text = per_disk_rate(op_size, facts.disk.write_bytes_per_s, facts.disk.write_iops)
        if rate:
            jf, jtext = _journal_factor(facts, op_size)
            amp = pool.amplification
            disk = facts.osds * rate / (jf * amp)
            amp_text = f"÷ {amp:g} for {pool.describe()}" if not pool.k else f"÷ {amp:g} for {pool.describe()} ((k+m)/k)"
            formula = " ".join(x for x in (f"{facts.osds} disks × {rate_text}", jtext, amp_text) if x)
            # which factor makes the disks the limit: with the others fast enough, name that factor
            others = [t.bytes_per_s for t in terms]
            label = "disks"
            if others:
                nxt = min(others)
                flips_amp = disk * amp > nxt        # without replication the disks would not bind
                flips_journal = jf > 1 and disk * jf > nxt
                if flips_amp and not flips_journal and amp > 1:
                    label = "replication/EC write amplification"
                elif flips_journal and not flips_amp:
                    label = "journal double write"
            terms.append(Term(label, disk, formula))
        if facts.journal == "separate" and facts.journal_devices and facts.journal_write_bytes_per_s:
            j = facts.journal_devices * facts.journal_write_bytes_per_s / pool.amplification
            terms.append(Term("journal double write", j,
                              f"{facts.journal_devices} journal devices × {mibs(facts.journal_write_bytes_per_s)} "
                              f"÷ {pool.amplification:g} for {pool.describe()} (every write passes a journal)"))
    else:
        if pub and local < 1:
            terms.append(Term("public network", h * pub, f"{h} OSD host{'s' if h > 1 else ''} × {mibs(pub)} "
                              f"{net_word} send"))
        rate, rate_text = per_disk_rate(op_size, facts.disk.read_bytes_per_s, facts.disk.read_iops)
        if rate is None and facts.disk.write_bytes_per_s:
            rate, rate_text = per_disk_rate(op_size, facts.disk.write_bytes_per_s, facts.disk.write_iops)
            notes.append("no read baseline: the disks' write rate stands in for reads")
        if rate:
            terms.append(Term("disks", facts.osds * rate, f"{facts.osds} disks × {rate_text}"))
    notes += _store_notes(facts, op, op_size)
    if facts.disk.shared_device:
        notes.append("the disk baseline's paths share one device, so per-disk figures are that device split "
                     "between them")
    if facts.loopback:
        notes.append("the network is loopback, i.e. memory and CPU, not a NIC")
    binding = min(terms, key=lambda t: t.bytes_per_s) if terms else None
    return Ceiling(op=op, op_size=op_size, terms=terms, bottleneck=binding.bottleneck if binding else "unknown",
                   notes=notes)


def osd_bench_ceiling(facts: ClusterFacts, op_size: int) -> Ceiling:
    """`ceph tell osd.N bench` writes to one OSD at a time, no network, no replication: one disk alone,
    divided by the journal's double write where there is one."""
    bw = facts.disk.write_alone_bytes_per_s
    if not bw or facts.disk.includes_journal:
        return Ceiling(op="write", op_size=op_size, terms=[], bottleneck="unknown")
    jf, jtext = _journal_factor(facts, op_size)
    label = "journal double write" if jf > 1 else "disks"
    formula = " ".join(x for x in (f"one disk alone × {mibs(bw)}", jtext) if x)
    return Ceiling(op="write", op_size=op_size, terms=[Term(label, bw / jf, formula)], bottleneck=label)
