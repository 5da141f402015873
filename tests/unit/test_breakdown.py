"""The latency breakdown from OSD counters: each part is a difference of Ceph's own averages, weighted by ops.

Figures are of the size a one-host Pacific lab shows for 4 KiB writes at 16 in flight (ms-scale op latency,
sub-ms BlueStore commit)."""

import pytest

from cephbench.analysis.breakdown import breakdown, describe, largest_part
from cephbench.core.results import OsdCounters


def osd(n, **kw):
    return OsdCounters(osd=n, host="lab", **kw)


WRITE_OSDS = [
    osd(0, op_w=3000, op_w_latency_s=0.0040, op_w_process_latency_s=0.0030, subop_w=6000, subop_w_latency_s=0.0018,
        commit_latency_s=0.0012, kv_sync_latency_s=0.0004, aio_wait_latency_s=0.0003),
    osd(1, op_w=1000, op_w_latency_s=0.0080, op_w_process_latency_s=0.0050, subop_w=2000, subop_w_latency_s=0.0022,
        commit_latency_s=0.0016, kv_sync_latency_s=0.0006, aio_wait_latency_s=0.0005),
]


def test_write_parts_are_weighted_by_each_osds_ops():
    b = breakdown(0.0060, WRITE_OSDS, "write")
    op_lat = (3000 * 0.004 + 1000 * 0.008) / 4000          # 5.0 ms
    proc = (3000 * 0.003 + 1000 * 0.005) / 4000            # 3.5 ms
    assert b.network_s == pytest.approx(0.006 - op_lat)
    assert b.queue_s == pytest.approx(op_lat - proc)
    commit = (9000 * 0.0012 + 3000 * 0.0016) / 12000       # weighted by op_w + subop_w
    subop = (6000 * 0.0018 + 2000 * 0.0022) / 8000
    assert b.commit_s == pytest.approx(commit)
    assert b.replica_s == pytest.approx(subop - commit)
    assert b.kv_sync_s == pytest.approx((9000 * 0.0004 + 3000 * 0.0006) / 12000)
    assert b.other_s == pytest.approx(proc - commit - (subop - commit))


def test_read_has_no_commit_and_the_rest_is_processing():
    osds = [osd(0, op_r=5000, op_r_latency_s=0.0009, op_r_process_latency_s=0.0006, op_w=0)]
    b = breakdown(0.0015, osds, "read")
    assert b.network_s == pytest.approx(0.0006)
    assert b.queue_s == pytest.approx(0.0003)
    assert b.commit_s is None and b.replica_s is None
    assert b.other_s == pytest.approx(0.0006)
    assert largest_part(b)[0] in ("network/messenger", "other OSD processing")


def test_missing_counters_leave_their_parts_unknown():
    osds = [osd(0, op_w=100, op_w_latency_s=0.002, missing=["op_w_process_latency", "commit_lat"])]
    b = breakdown(0.003, osds, "write")
    assert b.network_s == pytest.approx(0.001)
    assert b.queue_s is None and b.commit_s is None and b.other_s is None


def test_no_ops_of_that_kind_or_no_client_latency_gives_none():
    assert breakdown(0.003, [osd(0, op_r=10, op_r_latency_s=0.001)], "write") is None
    assert breakdown(None, WRITE_OSDS, "write") is None
    assert breakdown(0.003, WRITE_OSDS, "mixed") is None


def test_client_faster_than_osd_average_clamps_network_to_zero():
    assert breakdown(0.004, WRITE_OSDS, "write").network_s == 0.0


def test_describe_names_the_largest_part_first_in_ms():
    text = describe(breakdown(0.0200, WRITE_OSDS, "write"))
    assert text.startswith("latency 20.00 ms = network/messenger 15.00 ms + ")
    assert "kv_sync 0.45 ms" in text


def _analysis_of(name: str):
    """A captured run's result analysed again (tests/fixtures/cpu_split/, README there)."""
    import json
    from pathlib import Path
    from cephbench.analysis import analyse
    from cephbench.core.results import Result
    line = (Path(__file__).parent.parent / "fixtures" / "cpu_split" / f"ceph16.2.15_{name}.jsonl").read_text()
    r = Result.model_validate(json.loads(line.splitlines()[-1]))
    return analyse(r.model_copy(update={"analysis": None}), None)


def test_the_largest_part_is_attributed_where_the_evidence_puts_it():
    """Issue 35: with the cluster link as the limit, most of the latency was "other OSD processing" and nothing said
    why. The 3-host lab with a 50 Mbit/s cluster network, 1 MiB writes × 16: 1,762 of 2,205 ms."""
    a = _analysis_of("cluster_net_50mbit_1MiB")
    assert a.bottleneck == "cluster network (h1 clu0, h2 clu0, h3 clu0)"
    at = next(i for i, ln in enumerate(a.evidence) if ln.startswith("latency 2205.09 ms = other OSD processing 1762.36"))
    assert a.evidence[at + 1] == ("breakdown: other OSD processing 1762.36 ms: the primaries' wait for their replicas "
                                  "beyond the replicas' own time, which holds the sends to them over the cluster "
                                  "network at its limit")
    held = _analysis_of("cpu_limit_osd2_load_h2")
    assert any(ln.startswith("breakdown: other OSD processing") and "osd.2 (h3) waits for CPU time its limit does "
               "not give" in ln for ln in held.evidence), held.evidence


def test_a_largest_part_with_no_cause_in_the_evidence_says_the_counters_cannot_tell():
    from cephbench.analysis.breakdown import attribution
    b = breakdown(0.0060, WRITE_OSDS, "write")
    assert largest_part(b)[0] == "other OSD processing"
    assert "the counters do not say where" in attribution(b, "latency (16 ops in flight)")
    assert attribution(b, "disk h2:loop1") is not None and attribution(b.model_copy(update={"other_s": 0.0001}),
                                                                       "latency (16 ops in flight)") is None
