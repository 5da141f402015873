"""The verdict names mClock's client limit when it held the client ops (issue 27 item 3), on the real `ceph tell
osd.0 config show -f json` of Ceph 18.2.7: the default `balanced` profile (client limit 0: none) and a `custom` one
with client res 0.1 and lim 0.3 (tests/fixtures/README.md). The counters are a one-OSD Reef lab's 5 s 4 KiB rados
bench write at 16 in flight: about 2,200 ops/s unlimited, 94 ops/s under that limit."""

import json
from pathlib import Path

from cephbench.analysis import analyse, osd_rotational
from cephbench.analysis.scheduler import NAME, osd_cap, scheduler_cap
from cephbench.analysis.rules import from_evidence
from cephbench.evidence.settings import capping_settings
from cephbench.core.results import Evidence, HostLoad, Latency, Measurement, OsdCounters, Result, Test

FIXTURES = Path(__file__).parent.parent / "fixtures" / "config_show"
BALANCED = capping_settings(json.loads((FIXTURES / "ceph18.2.7_osd0_tell_config_show.json").read_text()))
CUSTOM = capping_settings(json.loads(
    (FIXTURES / "ceph18.2.7_osd0_tell_config_show_custom_res0.1_lim0.3.json").read_text()))
KIB4 = 4096


def counters(ops: float, size: int = KIB4, reads: float = 0) -> OsdCounters:
    return OsdCounters(osd=0, host="vm", op_w=ops, op_r=reads, op_in_bytes=ops * size, op_w_latency_s=0.15,
                       op_w_process_latency_s=0.002)


def result(ops_per_s: float, settings: dict[str, str], size: int = KIB4, seconds: float = 5.0,
           cpu: float = 0.99) -> Result:
    ev = Evidence(osds=[counters(ops_per_s * seconds, size)], settings={"osd.0": settings})
    m = Measurement(tool="rados bench", op="write", duration_s=seconds, bytes_per_s=ops_per_s * size,
                    ops_per_s=ops_per_s, op_size_bytes=size, latency=Latency(mean_ns=16 / ops_per_s * 1e9))
    return Result(test=Test(id="001-x", index=1, workload="w", kind="rados_bench", group="g",
                            params={"phase": "write", "object_size": size, "concurrency": 16,
                                    "pool_profile": {"type": "replicated", "size": 1}}),
                  status="ok", started_unix=0, duration_s=seconds, measurement=m, evidence=ev,
                  hosts=[HostLoad(host="vm", role="client", cpus=2, cpu_busy_mean=cpu, cpu_busy_median=cpu,
                                  cpu_busy_max=cpu)])


def test_the_settings_keep_what_the_cap_is_made_of():
    assert CUSTOM["osd_mclock_profile"] == "custom"
    assert CUSTOM["osd_mclock_scheduler_client_lim"] == "0.300000"
    assert CUSTOM["osd_mclock_max_capacity_iops_hdd"] == "315.000000"
    assert CUSTOM["osd_mclock_max_sequential_bandwidth_hdd"] == "157286400"


def test_a_custom_limit_reached_names_the_scheduler_with_its_figures():
    """94 ops/s against 0.3 x 315 IOPS: the limit held them, whatever the client's busy CPUs say."""
    v = from_evidence(result(94, CUSTOM), None, None, rotational={0: True})
    assert v.bottleneck == NAME
    assert v.sentence == "measured: osd.0 served 99% of the client ops its mClock client limit allows"
    assert ("osd.0 mClock, profile custom: client limit 0.3 of osd_mclock_max_capacity_iops_hdd 315 and "
            "max_sequential_bandwidth_hdd 150 MiB/s = 94 client ops/s, writes of 4.0 KiB on average; "
            "served 94 client ops/s = 99% of it") in v.lines


def test_the_whole_analysis_names_it_too_with_the_rotational_flag_from_osd_metadata():
    cluster = {"osd_metadata": [{"id": 0, "bluestore_bdev_rotational": "1"}]}
    assert osd_rotational(cluster) == {0: True}
    a = analyse(result(94, CUSTOM), None, cluster=cluster)
    assert a is not None and a.bottleneck == NAME


def test_the_default_profile_is_never_named():
    """balanced: client limit 0, no cap at any rate; no line either."""
    for rate in (94, 300, 2200):
        v = from_evidence(result(rate, BALANCED, cpu=0.3), None, None, rotational={0: True})
        assert v.bottleneck != NAME
        assert not any("mClock" in line for line in v.lines)
    assert scheduler_cap(result(2200, BALANCED)) is None


def test_well_under_the_cap_is_not_named_but_the_line_is_there():
    v = from_evidence(result(60, CUSTOM, cpu=0.3), None, None, rotational={0: True})
    assert v.bottleneck != NAME
    assert any(line.endswith("served 60 client ops/s = 63% of it") for line in v.lines)


def test_the_reservation_above_the_limit_is_what_holds():
    """Measured on the lab: res 0.5 lim 0.3 served 151 ops/s; res 0.3 lim 0.1 served 94."""
    s = dict(CUSTOM, osd_mclock_scheduler_client_res="0.500000")
    c = osd_cap(counters(151 * 5), s, 5.0, True)
    assert c is not None and round(c.share, 2) == 0.96 and "client limit 0.3 under its reservation 0.5" in c.line


def test_large_writes_are_held_at_the_share_of_the_bandwidth():
    """1 MiB writes cost their bytes: lim 0.3 of 150 MiB/s = 45 ops/s (the lab served 45)."""
    c = osd_cap(counters(45 * 5, 1024**2), CUSTOM, 5.0, True)
    assert c is not None and "= 45 client ops/s, writes of 1.0 MiB on average" in c.line and round(c.share, 2) == 1.0


def test_reads_cost_one_io_and_without_a_bandwidth_every_op_does():
    no_bw = {k: v for k, v in CUSTOM.items() if "bandwidth" not in k}
    c = osd_cap(counters(0, reads=94 * 5), CUSTOM, 5.0, True)
    assert c is not None and "= 94 client ops/s;" in c.line
    c = osd_cap(counters(45 * 5, 1024**2), no_bw, 5.0, True)
    assert c is not None and "= 94 client ops/s" in c.line and c.share < 0.85


def test_an_unknown_medium_takes_the_larger_cap_and_says_so():
    c = osd_cap(counters(94 * 5), CUSTOM, 5.0, None)
    assert c is not None and "capacity_iops_ssd 21,500" in c.line and "medium unknown" in c.line and c.share < 0.02


def test_nothing_to_cap_under_wpq_or_with_a_limit_that_is_not_a_fraction():
    assert osd_cap(counters(94 * 5), dict(CUSTOM, osd_op_queue="wpq"), 5.0, True) is None
    assert osd_cap(counters(94 * 5), dict(CUSTOM, osd_mclock_scheduler_client_lim="999999"), 5.0, True) is None
    assert osd_cap(counters(0), CUSTOM, 5.0, True) is None
