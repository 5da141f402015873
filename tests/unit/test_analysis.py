"""From run facts and baseline results to the model's facts, and analysis attached to results."""

from cephbench.analysis import RunAnalyzer, analyse, facts_from_run
from cephbench.core.results import Measurement, Result, Test

MIB = 1024**2
LAB_MD = [{"id": i, "hostname": "vm", "osd_objectstore": "bluestore", "bluefs_dedicated_db": "0",
           "bluefs_dedicated_wal": "0", "bluestore_bdev_rotational": "1",
           "front_addr": f"[v2:127.0.0.1:68{i}0/1,v1:127.0.0.1:68{i}1/1]",
           "back_addr": f"[v2:127.0.0.1:68{i}2/1,v1:127.0.0.1:68{i}3/1]"} for i in range(3)]


def result(kind: str, params: dict, m: Measurement | None, idx: int = 1) -> Result:
    return Result(test=Test(id=f"{idx:03d}-x", index=idx, workload="w", kind=kind, group="g", params=params),
                  status="ok" if m else "failed", started_unix=0, duration_s=1, measurement=m)


def disk(pattern: str, alone: float, parallel: float, ops: float = 0) -> Result:
    extra = {"pattern": pattern, "paths": ["/a", "/b", "/c"], "shared_device": True,
             "alone_median_bytes_per_s": alone, "parallel_median_bytes_per_s": parallel,
             "alone_median_ops_per_s": ops * 2, "parallel_median_ops_per_s": ops}
    return result("disk_baseline", {"pattern": pattern}, Measurement(tool="fio", op="write", duration_s=3,
                                                                      bytes_per_s=alone, extra=extra))


def net(bps: float, streams: int) -> Result:
    return result("net_baseline", {"pattern": "pair", "sender": "localhost", "receivers": ["localhost"],
                                   "hosts": ["localhost"], "streams": streams},
                  Measurement(tool="iperf3", op="send", duration_s=3, bytes_per_s=bps,
                              extra={"loopback": True, "bits_per_s": bps * 8}))


BASELINES = [disk("write-4MiB", 2000e6, 600e6), disk("read-4MiB", 900e6, 300e6),
             disk("randwrite-4KiB-qd32", 120e6, 60e6, 15000), net(1600e6, 1), net(650e6, 4)]


def test_lab_facts():
    f = facts_from_run({"osd_metadata": LAB_MD}, BASELINES, "vm", 2)
    assert (f.osds, f.osd_hosts, f.objectstore, f.journal, f.rotational) == (3, 1, "bluestore", "same-disk", True)
    assert f.disk.write_bytes_per_s == 600e6 and f.disk.read_bytes_per_s == 300e6   # all at once, not alone
    assert f.disk.write_iops == 15000 and f.disk.shared_device
    assert f.loopback and f.client_on_osd_host and f.cluster_bytes_per_s is None
    assert f.public_bytes_per_s == 1600e6 and f.client_tx_bytes_per_s == 1600e6    # the best stream count


def test_separate_cluster_network_is_seen_in_osd_addresses():
    md = [{**m, "front_addr": "[v2:10.0.0.1:6800/1]", "back_addr": "[v2:10.1.0.1:6802/1]", "hostname": f"h{i}"}
          for i, m in enumerate(LAB_MD)]
    f = facts_from_run({"osd_metadata": md}, BASELINES, "client", 2)
    assert f.osd_hosts == 3 and not f.client_on_osd_host


def test_every_cluster_result_gets_an_analysis_and_baselines_none():
    an = RunAnalyzer(cluster={"osd_metadata": LAB_MD}, client_hostname="vm", cpus=2)
    for b in BASELINES:
        assert an.attach(b).analysis is None
    w = an.attach(result("rados_bench", {"phase": "write", "object_size": 4 * MIB,
                                         "pool_profile": {"type": "replicated", "size": 3}},
                         Measurement(tool="rados bench", op="write", duration_s=10, bytes_per_s=200 * MIB,
                                     op_size_bytes=4 * MIB), 9))
    a = w.analysis
    assert a.ceiling_bytes_per_s and 0 < a.efficiency < 1.5 and a.bottleneck
    assert a.reason.startswith("write 4MiB: 200.0 MiB/s = ")
    assert "share one device" in a.reason and "loopback" in a.reason


def test_no_baseline_means_unknown_and_says_what_to_add():
    r = result("rados_bench", {"phase": "seq", "object_size": 4 * MIB}, Measurement(
        tool="rados bench", op="seq", duration_s=10, bytes_per_s=1.0, op_size_bytes=4 * MIB))
    a = analyse(r, facts_from_run({"osd_metadata": LAB_MD}, [], "vm"))
    assert a.bottleneck == "unknown" and "add a baseline section" in a.reason


def test_osd_bench_stands_in_for_a_missing_disk_baseline():
    ob = result("osd_bench", {}, Measurement(tool="ceph tell osd bench", op="write", duration_s=5,
                                             bytes_per_s=100 * MIB))
    f = facts_from_run({"osd_metadata": LAB_MD}, [ob], "vm")
    assert f.disk.includes_journal and f.disk.write_bytes_per_s == 100 * MIB


def test_failed_results_and_mixed_ops_are_left_alone():
    failed = result("rados_bench", {"phase": "write"}, None)
    assert analyse(failed, None) is None
    mixed = result("fio_rbd", {"phase": "randrw", "block_size": 4096},
                   Measurement(tool="fio", op="randrw", duration_s=1, bytes_per_s=1.0))
    assert analyse(mixed, None).bottleneck == "unknown"


def test_osd_bench_is_compared_with_one_disk_alone():
    an = RunAnalyzer(cluster={"osd_metadata": LAB_MD}, client_hostname="vm", cpus=2)
    for b in BASELINES:
        an.attach(b)
    ob = an.attach(result("osd_bench", {"total": 256 * MIB, "block_size": 4 * MIB},
                          Measurement(tool="ceph tell osd bench", op="write", duration_s=1, bytes_per_s=1000e6,
                                      op_size_bytes=4 * MIB), 20))
    a = ob.analysis
    assert a.ceiling_bytes_per_s == 2000e6 and a.efficiency == 0.5 and a.bottleneck == "disks"
    assert "one disk alone" in a.reason


def test_a_resumed_run_remembers_the_baselines_of_its_first_part(tmp_path):
    from cephbench.analysis import RunFacts
    from cephbench.core.results import RunDir
    rd = RunDir.create(tmp_path / "run", {"cluster": {"osd_metadata": LAB_MD},
                                          "hosts": {"client": {"hostname": "vm", "cpu_count": 2}}})
    for b in BASELINES:
        rd.append(b)
    an = RunAnalyzer.for_run(RunFacts.recorded(rd.meta()), rd)
    assert len(an.seen) == len(BASELINES) and an.client_hostname == "vm" and an.cpus == 2
    w = an.attach(result("rados_bench", {"phase": "write", "object_size": 4 * MIB,
                                         "pool_profile": {"type": "replicated", "size": 3}},
                         Measurement(tool="rados bench", op="write", duration_s=10, bytes_per_s=100 * MIB,
                                     op_size_bytes=4 * MIB), 9))
    assert w.analysis.efficiency is not None
    assert RunAnalyzer.for_run(RunFacts(), None).seen == []     # a dry run


def test_disk_figures_are_the_median_disk_of_every_host_and_the_slowest_host_is_noted():
    r = disk("write-4MiB", 200e6, 150e6)
    r.measurement.extra.update({"hosts": ["h1", "h2", "h3"], "shared_device": False, "per_host": {
        h: {"disks": 1, "alone_median_bytes_per_s": a, "parallel_median_bytes_per_s": p}
        for h, a, p in (("h1", 200e6, 150e6), ("h2", 210e6, 160e6), ("h3", 40e6, 8 * MIB))}})
    f = facts_from_run({"osd_metadata": LAB_MD}, [r], "vm", 2)
    assert f.disk.write_bytes_per_s == 150e6 and f.disk.hosts == 3
    assert (f.disk.slowest_host, f.disk.slowest_host_write_bytes_per_s) == ("h3", 8 * MIB)
    assert any("the slowest host, h3, writes 8.0 MiB/s per disk against 143.1 MiB/s" in n for n in f.notes), f.notes
    one = facts_from_run({"osd_metadata": LAB_MD}, BASELINES, "vm", 2)
    assert one.disk.slowest_host is None and not any("slowest" in n for n in one.notes)


# The multi-host lab from cephbench's own, unshaped address on the bridge: three OSD hosts whose links are
# shaped to R (tbf: TCP carries 1448/1514 of it), `hosts: osd-hosts`, no cluster network.
R_TCP = 200e6 / 8 * 1448 / 1514
MH_MD = [{"id": i, "hostname": f"h{i + 1}", "osd_objectstore": "bluestore", "bluestore_bdev_rotational": "1",
          "front_addr": f"[v2:198.18.1.{i + 1}:6800/1,v1:198.18.1.{i + 1}:6801/1]",
          "back_addr": f"[v2:198.18.1.{i + 1}:6802/1,v1:198.18.1.{i + 1}:6803/1]"} for i in range(3)]
MH_HOSTS = ["vm", "h1", "h2", "h3"]


def mh_net(pattern: str, senders: list[str], receivers: list[str], bps: float, idx: int) -> Result:
    who = {"senders": senders} if pattern == "many-to-one" else {"sender": senders[0]}
    return result("net_baseline", {"pattern": pattern, **who, "receivers": receivers, "hosts": MH_HOSTS,
                                   "streams": 1, "part_of": "002-baseline-net-osd-hosts"},
                  Measurement(tool="iperf3", op="send", duration_s=3, bytes_per_s=bps,
                              extra={"loopback": False, "bits_per_s": bps * 8}), idx)


def mh_baselines() -> list[Result]:
    out = [mh_net("pair", [a], [b], R_TCP, 2) for a in MH_HOSTS for b in MH_HOSTS if a != b]
    out += [mh_net("one-to-many", [a], [h for h in MH_HOSTS if h != a], R_TCP * (3 if a == "vm" else 1), 2)
            for a in MH_HOSTS]
    out.append(mh_net("many-to-one", MH_HOSTS[1:], ["vm"], 3 * R_TCP, 2))
    return out + [disk("write-4MiB", 500e6, 400e6), disk("read-4MiB", 500e6, 400e6)]


def mh_rados(phase: str, bps: float) -> Result:
    return result("rados_bench", {"phase": phase, "object_size": 4 * MIB,
                                  "pool_profile": {"type": "replicated", "size": 3}},
                  Measurement(tool="rados bench", op=phase, duration_s=5, bytes_per_s=bps, op_size_bytes=4 * MIB), 9)


def test_a_client_receives_from_every_osd_host_at_once_so_reads_are_bound_by_three_links_not_one():
    f = facts_from_run({"osd_metadata": MH_MD}, mh_baselines(), "vm", 2)
    assert f.client_rx_bytes_per_s == 3 * R_TCP            # the fan-in, not the best pair (R)
    assert f.client_tx_bytes_per_s == 3 * R_TCP and f.public_bytes_per_s == R_TCP and not f.loopback
    an = RunAnalyzer(cluster={"osd_metadata": MH_MD}, client_hostname="vm", cpus=2, seen=mh_baselines())
    seq = an.attach(mh_rados("seq", 2.6 * R_TCP)).analysis
    assert seq.ceiling_bytes_per_s == 3 * R_TCP and "network" in seq.bottleneck and seq.efficiency < 1
    write = an.attach(mh_rados("write", 0.8 * R_TCP)).analysis     # each host's link: data in + 2 replicas
    assert write.ceiling_bytes_per_s == 3 * R_TCP / 3 and "network" in write.bottleneck


def test_without_a_fan_in_the_client_receives_its_best_pair():
    without = [r for r in mh_baselines() if r.test.params.get("pattern") != "many-to-one"]
    assert facts_from_run({"osd_metadata": MH_MD}, without, "vm", 2).client_rx_bytes_per_s == R_TCP


def test_a_separate_cluster_network_is_measured_by_its_own_pairs_and_bounds_writes_with_its_own_rate():
    # the lab with --public-net 200mbit --cluster-net 50mbit: replication crosses the slower network
    md = [{**m, "back_addr": m["back_addr"].replace("198.18.1.", "198.19.1.")} for m in MH_MD]
    r_cluster = R_TCP / 4
    cluster_pairs = [result("net_baseline", {"pattern": "pair", "network": "cluster", "sender": a, "receivers": [b],
                                             "hosts": MH_HOSTS, "streams": 1, "part_of": "002-baseline-net-osd-hosts"},
                            Measurement(tool="iperf3", op="send", duration_s=3, bytes_per_s=r_cluster,
                                        extra={"loopback": False, "bits_per_s": r_cluster * 8}), 2)
                     for a in MH_HOSTS[1:] for b in MH_HOSTS[1:] if a != b]
    f = facts_from_run({"osd_metadata": md}, mh_baselines() + cluster_pairs, "vm", 2)
    assert f.public_bytes_per_s == R_TCP                     # the cluster pairs are not public links
    assert f.cluster_bytes_per_s == r_cluster
    an = RunAnalyzer(cluster={"osd_metadata": md}, client_hostname="vm", cpus=2, seen=mh_baselines() + cluster_pairs)
    write = an.attach(mh_rados("write", 0.3 * R_TCP)).analysis
    assert write.bottleneck == "cluster network"
    assert write.ceiling_bytes_per_s == 3 * r_cluster / 2   # 3 hosts' cluster links ÷ 2 replica streams
    # without its own pairs, the cluster network is assumed as fast as the public one (and the model says so)
    g = facts_from_run({"osd_metadata": md}, mh_baselines(), "vm", 2)
    assert g.cluster_bytes_per_s == R_TCP and any("cluster network was not measured" in n for n in g.notes)
    assert not any("cluster network was not measured" in n for n in f.notes)


def test_reads_from_client_hosts_are_bound_by_the_clients_own_links():
    # issue 15's ground truth: client links shaped to R, OSD hosts' links 5R; c1 alone gets R, c1 and c2 get 2R
    fat = 5 * R_TCP
    base = [mh_net("pair", [a], [b], fat, 2) for a in MH_HOSTS for b in MH_HOSTS if a != b]
    base += [mh_net("many-to-one", MH_HOSTS[1:], ["vm"], 3 * fat, 2)]
    for c in ("c1", "c2"):
        base += [mh_net("one-to-many", [c], MH_HOSTS[1:], R_TCP, 2), mh_net("many-to-one", MH_HOSTS[1:], [c], R_TCP, 2)]
    base += [disk("write-4MiB", 5000e6, 4000e6), disk("read-4MiB", 5000e6, 4000e6)]
    an = RunAnalyzer(cluster={"osd_metadata": MH_MD}, client_hostname="vm", cpus=2, seen=base)

    def seq(hosts: list[str], bps: float) -> Result:
        r = mh_rados("seq", bps)
        r.measurement.instances = [Measurement(tool="rados bench", op="seq", duration_s=5, bytes_per_s=bps / len(hosts),
                                               host=h) for h in hosts]
        return r

    one = an.attach(seq(["c1"], 0.95 * R_TCP)).analysis
    assert one.bottleneck == "client network" and one.ceiling_bytes_per_s == R_TCP, one
    two = an.attach(seq(["c1", "c2"], 1.9 * R_TCP)).analysis
    assert two.bottleneck == "client network" and two.ceiling_bytes_per_s == 2 * R_TCP, two
    assert "2 clients" in two.reason
    alone = an.attach(mh_rados("seq", 2 * R_TCP)).analysis          # from this machine: its own fat fan-in
    assert alone.ceiling_bytes_per_s == 3 * fat


def test_osd_bench_without_a_disk_baseline_is_no_ceiling_of_its_own():
    # issue 36: without a disk baseline, osd bench made the RADOS ceiling it was then judged against ("384.4 MiB/s =
    # 33% of a 1,153.1 MiB/s ceiling (3 disks × 384.4 MiB/s ÷ 1 for 1 replica)", then CPU inferred). Failed before
    from conftest import FIXTURES
    from cephbench.drivers.osd_bench import parse
    m = parse((FIXTURES / "osd_bench" / "ceph16.2.15_osd0_1GiB_4MiB.json").read_text())   # a real bench, 1.2 GB/s
    an = RunAnalyzer(cluster={"osd_metadata": LAB_MD}, client_hostname="vm", cpus=2)
    ob = an.attach(result("osd_bench", {"total": 1 << 30, "block_size": 4 * MIB, "phase": "write"}, m, 5))
    a = ob.analysis
    assert a.ceiling_bytes_per_s is None and a.efficiency is None and a.bottleneck == "unknown"
    assert "no disk baseline" in a.reason and "baseline: {disks" in a.reason
    # and it still feeds the RADOS ceilings after it (docs/model.md, Inputs)
    w = an.attach(result("rados_bench", {"phase": "write", "object_size": 4 * MIB,
                                         "pool_profile": {"type": "replicated", "size": 3}},
                         Measurement(tool="rados bench", op="write", duration_s=10, bytes_per_s=200 * MIB,
                                     op_size_bytes=4 * MIB), 9))
    assert w.analysis.ceiling_bytes_per_s and "ceph tell osd bench" in w.analysis.reason
