"""The efficiency model against published figures (the seeds in shared/seeds/), and its own rules.

Tolerances: the model gives a ceiling, so a measured figure should sit below it.
Where the seed's bottleneck is a network the author says he reached, the test asks
for 90-102 % of the ceiling; where it is disks or a journal (where real clusters
lose to seeks, fsync and metadata), 50-100 %; the two known overshoots (CenterDevice
without the local-primary correction, DCCN's journal SSD) have their own bounds and
docs/model.md says why. rados bench "MB" is MiB (2^20 bytes); dd and iperf MB/Mbit are decimal.
"""

import pytest

from cephbench.analysis.model import MIB, ClusterFacts, DiskFigures, Pool, ceiling, per_disk_rate
from cephbench.analysis.rules import judge

MB = 1e6
GBE_1 = 941e6 / 8          # seed 000: iperf between Han's servers, 941 Mbits/sec


def eff(facts, op, size, pool, measured):
    c = ceiling(facts, op, size, pool)
    return judge(c, measured, f"{op} test"), c


# ---- seed 000: Sébastien Han, "Ceph benchmarks" (2012), old commodity servers ------------------------------
# 3 servers, 1 OSD each, journal on the same LV, 1 GbE for clients and replication (default topology),
# dd 107 MB/s on every server, iperf 941 Mbit/s; rados bench from a client host.
HAN = ClusterFacts(osds=3, osd_hosts=3, disk=DiskFigures(write_bytes_per_s=107 * MB), objectstore="filestore",
                   journal="same-disk", client_tx_bytes_per_s=GBE_1, client_rx_bytes_per_s=GBE_1,
                   public_bytes_per_s=GBE_1)


def test_han_replica2_write_is_disk_bound_55_7():
    """Seed 000, "Replica count of 2, 3 OSDs: Writes": Bandwidth (MB/sec) 55.723."""
    v, c = eff(HAN, "write", 4 * MIB, Pool(size=2), 55.723 * MIB)
    assert c.bytes_per_s == pytest.approx(3 * 107 * MB / 2 / 2)          # 80.25 MB/s
    assert v.bottleneck == "disks"
    assert 0.5 <= v.efficiency <= 1.0                                     # 73 %
    assert "3 disks × " in v.reason and "÷ 2 for the journal on the same disk" in v.reason and "÷ 2 for 2 replicas" in v.reason


def test_han_replica3_write_42_7():
    """Seed 000, "Replica count of 3, 3 OSDs: Writes": 42.672 MB/sec."""
    v, c = eff(HAN, "write", 4 * MIB, Pool(size=3), 42.672 * MIB)
    assert c.bytes_per_s == pytest.approx(3 * 107 * MB / 2 / 3)
    assert 0.5 <= v.efficiency <= 1.0                                     # 84 %
    # without the journal the disks would still bind (107 < 118 MB/s); with 1 replica they would not (160):
    # the third replica is what makes the disks the limit
    assert v.bottleneck == "replication/EC write amplification"


def test_han_seq_read_is_the_1gbe_limit_110_5():
    """Seed 000, "3 OSDs: Sequential": 110.551 MB/sec; "We reached the bandwidth limitations with the seq"."""
    v, c = eff(HAN, "read", 4 * MIB, Pool(size=2), 110.551 * MIB)
    assert v.bottleneck == "client network"
    assert 0.90 <= v.efficiency <= 1.02                                   # 98.6 %
    assert any("no read baseline" in n for n in c.notes)


def test_han_5_osds_write_becomes_network_bound_93_0():
    """Seed 000, "5 OSDs: Writes": 93.003 MB/sec (same 3 servers): disks now allow 134 MB/s, the client's 1 GbE 118."""
    facts = ClusterFacts(**{**HAN.__dict__, "osds": 5})
    v, _ = eff(facts, "write", 4 * MIB, Pool(size=2), 93.003 * MIB)
    assert v.bottleneck == "client network" and 0.5 <= v.efficiency <= 1.0   # 83 %


# ---- seed 000, "Insane servers": SSDs, journal on an SSD of its own, 3 OSDs, replica 2 ------------------------
# dd on the SSD after its buffer: 158 MB/s; the same 1 GbE links; then a private cluster network; then
# round-robin bonded clients (two 1 GbE links, assumed).
INSANE = ClusterFacts(osds=3, osd_hosts=3, disk=DiskFigures(write_bytes_per_s=158 * MB), objectstore="filestore",
                      journal="separate", journal_devices=3, journal_write_bytes_per_s=158 * MB,
                      client_tx_bytes_per_s=GBE_1, client_rx_bytes_per_s=GBE_1, public_bytes_per_s=GBE_1)


@pytest.mark.parametrize("topology, measured_write, measured_read, lo, hi", [
    ("one network", 87.503, 112.212, 0.70, 1.02),                 # "Write" / "Sequential"
    ("private cluster network", 110.381, 112.217, 0.90, 1.02),    # "With a dedicated private network"
    ("private + bonded clients", 151.007, 177.540, 0.60, 1.0),    # "... and round-robin bonded clients"
])
def test_han_insane_servers_follow_the_network_topology(topology, measured_write, measured_read, lo, hi):
    facts = INSANE
    if topology != "one network":
        facts = ClusterFacts(**{**facts.__dict__, "cluster_bytes_per_s": GBE_1})
    if topology == "private + bonded clients":
        facts = ClusterFacts(**{**facts.__dict__, "client_tx_bytes_per_s": 2 * GBE_1, "client_rx_bytes_per_s": 2 * GBE_1})
    w, _ = eff(facts, "write", 4 * MIB, Pool(size=2), measured_write * MIB)
    r, _ = eff(facts, "read", 4 * MIB, Pool(size=2), measured_read * MIB)
    assert w.bottleneck == "client network" and r.bottleneck == "client network"
    assert lo <= w.efficiency <= hi, w.reason
    assert 0.75 <= r.efficiency <= 1.02, r.reason


# ---- seed 003: CenterDevice, 4 nodes, 12 disks each, public and cluster networks each 2 x 1 Gbit LACP ----------
# disks: 154 MB/s alone, 93 MB/s each when all 12 write at once; one sender to two receivers: 2 x 115 MB/s;
# replica 2 ("replicated once"); one rados bench on node01 writes "almost the perfect theoretical network
# throughput of 245 MB/s" - a quarter of the primaries are on node01 itself.
CENTERDEVICE = ClusterFacts(osds=48, osd_hosts=4, disk=DiskFigures(write_bytes_per_s=93 * MB, read_bytes_per_s=142 * MB),
                            objectstore="filestore", journal="same-disk", client_tx_bytes_per_s=230 * MB,
                            client_rx_bytes_per_s=230 * MB, public_bytes_per_s=230 * MB, cluster_bytes_per_s=230 * MB,
                            client_on_osd_host=True)


def test_centerdevice_one_generator_write_is_client_network_bound():
    v, c = eff(CENTERDEVICE, "write", 4 * MIB, Pool(size=2), 245 * MB)
    assert v.bottleneck == "client network"
    assert c.bytes_per_s == pytest.approx(230 * MB / (1 - 1 / 4))        # 1/4 of the data stays on node01
    assert 0.7 <= v.efficiency <= 1.0                                     # 80 %
    # without the local-primary correction the measurement would exceed the ceiling, as the article notices
    remote = ClusterFacts(**{**CENTERDEVICE.__dict__, "client_on_osd_host": False})
    assert 1.0 < eff(remote, "write", 4 * MIB, Pool(size=2), 245 * MB)[0].efficiency <= 1.1


def test_centerdevice_parallel_disk_figure_is_what_the_disks_give():
    """154 MB/s alone vs 93 MB/s each with 12 at once: the model uses the parallel figure."""
    c = ceiling(CENTERDEVICE, "write", 4 * MIB, Pool(size=2))
    disks = next(t for t in c.terms if "disks" in t.formula)
    assert disks.bytes_per_s == pytest.approx(48 * 93 * MB / 2 / 2)


# ---- seed 002: DCCN note, 2 OSD hosts with 10 GbE, 7 HDD OSDs, journals on one shared SSD per host -------------
# (Intel SSDSC2BB12, 135 MB/s sequential write as specified), pool size 2, no iperf figure: 10 Gbit/s nominal.
DCCN = ClusterFacts(osds=7, osd_hosts=2, disk=DiskFigures(), objectstore="filestore", journal="separate",
                    journal_devices=2, journal_write_bytes_per_s=135 * MB, client_tx_bytes_per_s=1250 * MB,
                    client_rx_bytes_per_s=1250 * MB, public_bytes_per_s=1250 * MB)


def test_dccn_read_is_the_10gbe_limit():
    """Seed 002, "sequencial read": Bandwidth (MB/sec) 1114.696."""
    v, _ = eff(DCCN, "read", 4 * MIB, Pool(size=2), 1114.696 * MIB)
    assert v.bottleneck == "client network" and 0.90 <= v.efficiency <= 1.0   # 93.5 %


def test_dccn_write_is_journal_bound_and_known_to_overshoot():
    """Seed 002, "writing": 140.801 MB/sec against journals of 2 x 135 MB/s / 2 replicas = 135 MB/s: 109 %."""
    v, c = eff(DCCN, "write", 4 * MIB, Pool(size=2), 140.801 * MIB)
    assert v.bottleneck == "journal double write"
    assert c.bytes_per_s == pytest.approx(135 * MB)
    assert 0.8 <= v.efficiency <= 1.15                                   # docs/model.md: known to be off
    assert "above the ceiling" in v.reason


# ---- the model's own rules ------------------------------------------------------------------------------------

def test_erasure_coding_divides_by_k_plus_m_over_k():
    facts = ClusterFacts(osds=4, osd_hosts=4, disk=DiskFigures(write_bytes_per_s=100 * MB))
    c = ceiling(facts, "write", 4 * MIB, Pool(k=2, m=1))
    assert c.bytes_per_s == pytest.approx(4 * 100 * MB / 1.5)
    assert "EC 2+1" in c.binding.formula


def test_bluestore_large_writes_have_no_double_write_small_hdd_writes_do():
    facts = ClusterFacts(osds=3, osd_hosts=3, disk=DiskFigures(write_bytes_per_s=100 * MB, write_iops=1000))
    big = ceiling(facts, "write", 4 * MIB, Pool(size=3))
    small = ceiling(facts, "write", 4096, Pool(size=3))
    assert "WAL" not in big.binding.formula
    assert "deferred write through the WAL" in small.binding.formula
    ssd = ClusterFacts(**{**facts.__dict__, "rotational": False})
    assert "WAL" not in ceiling(ssd, "write", 4096, Pool(size=3)).binding.formula


def test_per_disk_rate_is_a_seek_plus_a_transfer():
    rate, _ = per_disk_rate(4 * MIB, 100 * MB, 100)
    assert rate == pytest.approx(4 * MIB / (0.01 + 4 * MIB / (100 * MB)))
    assert per_disk_rate(4096, None, 1000)[0] == 4096 * 1000
    assert per_disk_rate(4096, None, None)[0] is None


def test_osd_bench_figures_already_include_the_journal():
    facts = ClusterFacts(osds=3, osd_hosts=3, objectstore="filestore",
                         disk=DiskFigures(write_bytes_per_s=53 * MB, includes_journal=True))
    c = ceiling(facts, "write", 4 * MIB, Pool(size=2))
    assert c.bytes_per_s == pytest.approx(3 * 53 * MB / 2)


def test_replication_is_named_when_it_alone_makes_the_disks_the_limit():
    facts = ClusterFacts(osds=3, osd_hosts=3, disk=DiskFigures(write_bytes_per_s=100 * MB), rotational=False,
                         client_tx_bytes_per_s=200 * MB)
    c = ceiling(facts, "write", 4 * MIB, Pool(size=3))    # disks 100 MB/s, client 200: x3 replicas makes disks bind
    assert c.bottleneck == "replication/EC write amplification"


def test_small_ops_far_below_the_ceiling_are_blamed_on_cpu_as_an_inference():
    facts = ClusterFacts(osds=3, osd_hosts=1, disk=DiskFigures(write_iops=20000, write_bytes_per_s=500 * MB),
                         rotational=False, loopback=True, client_tx_bytes_per_s=1000 * MB, public_bytes_per_s=1000 * MB,
                         client_on_osd_host=True, cpus=2)
    v = judge(ceiling(facts, "write", 4096, Pool(size=3)), 3 * MIB, "write 4KiB", cpus=2)
    assert v.bottleneck == "CPU" and "inferred, not measured" in v.reason and "2 CPUs" in v.reason
    assert "loopback" in v.reason


def test_no_figures_no_ceiling():
    v, c = eff(ClusterFacts(osds=3, osd_hosts=3, disk=DiskFigures()), "write", 4 * MIB, Pool(size=3), 50 * MIB)
    assert c.bytes_per_s is None and v.efficiency is None and v.bottleneck == "unknown"


def test_reason_uses_explicit_units():
    v, _ = eff(HAN, "write", 4 * MIB, Pool(size=2), 55.723 * MIB)
    assert v.reason.startswith("write test: 55.7 MiB/s = 73% of a 76.5 MiB/s ceiling")
