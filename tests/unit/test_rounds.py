"""A steady-state test's evidence is its window's rounds seen as one (evidence/rounds.py)."""

import pytest

from cephbench.evidence.rounds import ClusterSeen, Seen, combine
from cephbench.core.results import ClusterDuringTest, DeviceLoad, Evidence, HostLoad, LinkLoad, OsdCounters, OtherLoad


def _round(op_w: float, lat_s: float, busy: list[float], *, osds=(0, 1), events=(), stop=None, other=None) -> Seen:
    return Seen(
        hosts=[HostLoad(host="h", cpus=2, cpu_busy_mean=sum(busy) / len(busy), cpu_busy_median=busy[0],
                        cpu_busy_max=max(busy), iowait_mean=0.1, cpu_busy_series=busy)],
        evidence=Evidence(
            osds=[OsdCounters(osd=n, host="h", op_w=op_w, op_r=0, subop_w=op_w, op_w_latency_s=lat_s,
                              commit_latency_s=lat_s / 2, bluefs_db_used_bytes=op_w, missing=["osd.x"])
                  for n in osds],
            devices=[DeviceLoad(host="h", device="sdb", osds=[0], start_unix_s=busy[0], busy=busy,
                                write_bytes_per_s=[b * 10 for b in busy])],
            links=[LinkLoad(host="h", iface="eth0", start_unix_s=busy[0], rx_bytes_per_s=busy, tx_bytes_per_s=busy)],
            settings={"osd.0": {"osd_op_num_shards": "8"}}, other_load=other, notes=["a note"]),
        cluster=ClusterSeen(ClusterDuringTest(pgs_degraded_max=int(op_w), raw_used_max=op_w / 1000,
                                              events=list(events), stopped=stop, mon_silent_s=1.0),
                            [stop] if stop else [], stop, stopped_for_capacity=stop is not None))


def test_counters_add_up_latencies_weigh_by_their_ops_and_gauges_are_the_last():
    seen = combine([_round(100, 0.010, [0.1, 0.2]), _round(300, 0.030, [0.3, 0.4])], [0.0, 5.0])
    [o0, o1] = seen.evidence.osds
    assert (o0.osd, o1.osd) == (0, 1)
    assert o0.op_w == 400 and o0.subop_w == 400 and o0.op_r == 0
    assert o0.op_w_latency_s == pytest.approx((100 * 0.010 + 300 * 0.030) / 400)
    assert o0.commit_latency_s == pytest.approx((100 * 0.005 + 300 * 0.015) / 400)
    assert o0.op_r_latency_s is None                   # no reads in any round
    assert o0.bluefs_db_used_bytes == 300 and o0.missing == ["osd.x"]


def test_series_are_concatenated_in_order_and_the_host_s_figures_cover_them_all():
    seen = combine([_round(1, 0.01, [0.1, 0.2]), _round(1, 0.01, [0.3, 0.4, 0.9])], [0.0, 5.0])
    [dev], [link], [host] = seen.evidence.devices, seen.evidence.links, seen.hosts
    assert dev.busy == [0.1, 0.2, 0.3, 0.4, 0.9] and dev.write_bytes_per_s == [1, 2, 3, 4, 9]
    assert dev.start_unix_s == 0.1                     # the first round's first second
    assert link.rx_bytes_per_s == [0.1, 0.2, 0.3, 0.4, 0.9]
    assert host.cpu_busy_series == [0.1, 0.2, 0.3, 0.4, 0.9]
    assert host.cpu_busy_mean == pytest.approx(0.38) and host.cpu_busy_median == 0.3 and host.cpu_busy_max == 0.9
    assert host.iowait_mean == 0.1
    assert seen.evidence.settings == {"osd.0": {"osd_op_num_shards": "8"}} and seen.evidence.notes == ["a note"]


def test_the_cluster_s_worst_over_the_rounds_with_events_on_the_test_s_clock():
    stop = "capacity guard: stopped"
    seen = combine([_round(2, 0.01, [0.1], events=["1.5 s: 1 of 3 OSD(s) down"]),
                    _round(5, 0.01, [0.1], events=["0.2 s: healthy again"], stop=stop)], [0.0, 4.0])
    c = seen.cluster
    assert c.summary.pgs_degraded_max == 5 and c.summary.raw_used_max == 0.005
    assert c.summary.events == ["1.5 s: 1 of 3 OSD(s) down", "4.2 s: healthy again"]
    assert c.summary.mon_silent_s == 2.0 and c.summary.stopped == stop
    assert c.stop_reason == stop and c.stopped_for_capacity and c.warnings == [stop]


def test_an_osd_not_read_in_every_round_is_left_out_with_a_note():
    seen = combine([_round(1, 0.01, [0.1], osds=(0, 1)), _round(1, 0.01, [0.1], osds=(0,))], [0.0, 2.0])
    assert [o.osd for o in seen.evidence.osds] == [0]
    assert any("osd.1" in n and "every round" in n for n in seen.evidence.notes)


def test_other_clients_load_is_the_mean_of_the_rounds():
    a = OtherLoad(write_bytes_per_s=100, ops_per_s=10, pools=["p"])
    b = OtherLoad(write_bytes_per_s=300, ops_per_s=30, pools=["q"])
    other = combine([_round(1, 0.01, [0.1], other=a), _round(1, 0.01, [0.1], other=b)], [0.0, 2.0]).evidence.other_load
    assert other.write_bytes_per_s == 200 and other.ops_per_s == 20 and other.pools == ["p", "q"]


def test_one_round_is_itself():
    one = _round(1, 0.01, [0.1])
    assert combine([one], [0.0]) is one
