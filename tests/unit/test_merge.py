"""core/merge.py on real per-instance outputs (rados bench, fio json+, cephbench-loadgen fixtures) placed at start and
end times set here: the common window's sums, first/last done, spreads, the notes naming a late, early or slow
client, and merged percentiles equal to those of the pooled data."""

from __future__ import annotations

import json
import random

import pytest
from hdrh.histogram import HdrHistogram

from conftest import FIXTURES
from cephbench.core import merge
from cephbench.core.errors import ParseError
from cephbench.drivers import fio
from cephbench.drivers import rados_bench as rb
from cephbench.drivers.rgw import parse as loadgen
from cephbench.core.results import Measurement, Sample

MIB = 1024 * 1024
T0 = 1_700_000_000.0
RADOS_4M = FIXTURES / "rados_bench" / "ceph16.2.15_write_4M.txt"
FIO_2IMAGES = FIXTURES / "fio" / "fio3.33_ceph16.2.15_rbd_randread_4K_qd8_2images.json"
PUT = FIXTURES / "loadgen" / "loadgen0.1_rgw16.2.15_s3_put_4K_t8.json"


def placed(m: Measurement, host: str, start: float, length: float | None = None) -> Measurement:
    """The instance as a client host ran it: from `start` (seconds after T0) for its own duration."""
    return m.model_copy(update={"host": host, "start_unix_s": T0 + start,
                                "end_unix_s": T0 + start + (m.duration_s if length is None else length)})


def slower(m: Measurement, factor: float) -> Measurement:
    return m.model_copy(update={
        "bytes_per_s": m.bytes_per_s * factor, "ops_per_s": m.ops_per_s * factor,
        "timeseries": [s.model_copy(update={"bytes_per_s": s.bytes_per_s * factor, "ops_per_s": s.ops_per_s * factor})
                       for s in m.timeseries]})


def rados() -> Measurement:
    return rb.parse(RADOS_4M.read_text(), "write")


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def test_rados_bench_clients_summed_over_the_common_window_and_the_late_client_named():
    a, b = rados(), rados()           # 5 per-second samples each, 5.14 s
    bw = [s.bytes_per_s for s in a.timeseries]
    m = merge.merge_instances([placed(a, "c1", 0.0), placed(b, "c2", 2.0)], latency="mean-max")
    c = m.extra["clients"]
    # window: c2's start (2.0) to c1's end (5.14263); c1's seconds 3..5, c2's seconds 1..3 lie in it
    assert c["window_s"] == pytest.approx(5.14263 - 2.0)
    assert m.duration_s == pytest.approx(c["window_s"])
    assert m.bytes_per_s == pytest.approx(mean(bw[2:5]) + mean(bw[0:3]))
    assert [s.t_s for s in m.timeseries] == [1.0, 2.0, 3.0]
    assert m.timeseries[0].bytes_per_s == pytest.approx(bw[2] + bw[0])
    assert c["first_done_s"] == pytest.approx(5.14263) and c["last_done_s"] == pytest.approx(7.14263)
    assert c["start_spread_s"] == pytest.approx(2.0) and c["end_spread_s"] == pytest.approx(2.0)
    assert c["last_done_bytes_per_s"] == pytest.approx(2 * a.bytes_total / 7.14263)
    notes = " | ".join(c["notes"])
    assert "client c2 started 2.00 s after the first" in notes
    assert "client c1 stopped 2.00 s before the last" in notes
    assert "no percentiles exist" in notes
    # c2's window seconds are its ramp-up (20, 124, 152 MiB/s against c1's 152, 176, 188): it shows as slow
    assert c["imbalanced"] == ["c2"]
    # rados bench: op-weighted mean and the largest max, never a percentile
    assert m.latency.mean_ns == pytest.approx(a.latency.mean_ns) and m.latency.max_ns == a.latency.max_ns
    assert m.latency.percentiles_ns == {}
    assert m.ops_total == 2 * a.ops_total
    assert [i.host for i in m.instances] == ["c1", "c2"]
    per = {p["host"]: p for p in c["per_client"]}
    assert per["c2"]["start_offset_s"] == pytest.approx(2.0) and per["c1"]["start_offset_s"] == 0.0
    assert per["c1"]["bytes_per_s"] == pytest.approx(mean(bw[2:5]))
    assert per["c1"]["share"] + per["c2"]["share"] == pytest.approx(1.0)


def test_clients_started_together_are_not_named_and_a_slow_one_is():
    a = rados()
    m = merge.merge_instances([placed(a, "c1", 0.0), placed(a, "c2", 0.03, 5.3), placed(slower(a, 0.5), "c3", 0.01)],
                              latency="mean-max")
    c = m.extra["clients"]
    assert c["imbalanced"] == ["c3"]
    assert not any("started" in n or "stopped" in n for n in c["notes"])
    assert any(n.startswith("imbalance: client c3 ran 50% below") for n in c["notes"])
    per = {p["host"]: p for p in c["per_client"]}
    assert per["c3"]["below_others"] == pytest.approx(0.5)
    assert per["c1"]["below_others"] < 0          # above the others' median: never flagged
    # all samples in the window: the sum of each client's mean second
    assert m.bytes_per_s == pytest.approx(2.5 * mean(s.bytes_per_s for s in a.timeseries))


def test_instances_of_one_host_without_times_keep_the_old_aggregate():
    a = rados()
    m = merge.merge_instances([a, a], latency="mean-max")
    assert "clients" not in m.extra and m.extra == {"instances": 2, "common_interval_s": 5}
    assert m.duration_s == a.duration_s


def test_several_instances_per_client_group_into_one_row():
    a = rados()
    parts = [placed(a, "c1", 0.0), placed(a, "c1", 0.0), placed(a, "c2", 0.0)]
    c = merge.merge_instances(parts, latency="mean-max").extra["clients"]
    per = {p["host"]: p for p in c["per_client"]}
    assert c["hosts"] == 2 and per["c1"]["instances"] == 2
    assert per["c1"]["share"] == pytest.approx(2 / 3)
    assert c["imbalanced"] == ["c2"]      # a client's figures are all its instances': half of c1's
    assert any("client c1 (instance 1)" in n for n in merge.merge_instances(
        [placed(a, "c1", 0.0), placed(a, "c1", 1.5), placed(a, "c2", 0.0)], latency="mean-max").extra["clients"]["notes"])


def fio_clients() -> tuple[list[fio.JobResult], list[Measurement]]:
    jobs = fio.parse_fio_json(FIO_2IMAGES.read_text())
    assert len(jobs) == 2
    return jobs, [fio.to_measurement([j], "randread", tool="fio rbd", keep_bins=True) for j in jobs]


def test_fio_clients_merge_their_bins_into_the_percentiles_of_the_pooled_ios():
    jobs, (a, b) = fio_clients()
    m = merge.merge_instances([placed(a, "c1", 0.0), placed(b, "c2", 0.02)], latency="bins")
    pooled = fio.to_measurement(jobs, "randread")        # one fio that ran both jobs: its merged histogram
    assert m.latency.percentiles_ns == pooled.latency.percentiles_ns
    assert m.latency.mean_ns == pytest.approx(pooled.latency.mean_ns)
    assert m.latency.stddev_ns == pytest.approx(pooled.latency.stddev_ns)
    assert m.ops_total == pooled.ops_total
    # no per-second series (no logs): each client's whole-run average, and the notes say so
    assert m.bytes_per_s == pytest.approx(a.bytes_per_s + b.bytes_per_s)
    assert any("whole-run averages" in n and "c1, c2" in n for n in m.extra["clients"]["notes"])
    # the merged bins stay on the merge only
    assert sum(m.extra["clat_bins"].values()) == sum(j.read.clat.n for j in jobs)
    assert all("clat_bins" not in i.extra for i in m.instances)


def test_fio_without_bins_is_refused():
    _, (a, b) = fio_clients()
    bare = a.model_copy(update={"extra": {}})
    with pytest.raises(ParseError, match="instance 1 kept no latency bins"):
        merge.merge_instances([placed(b, "c1", 0), placed(bare, "c2", 0)], latency="bins")
    with pytest.raises(ValueError, match="unknown latency merge"):
        merge.merge_instances([a, b], latency="average")
    with pytest.raises(ValueError):
        merge.merge_instances([], latency="bins")
    assert merge.merge_instances([a], latency="bins") is a


def loadgen_with(values: list[int]) -> Measurement:
    """The real PUT document whose latency histogram holds `values` (ns), as loadgen records them."""
    h = HdrHistogram(merge.HDR_LOWEST_NS, merge.HDR_HIGHEST_NS, merge.HDR_SIG_FIGS)
    for v in values:
        h.record_value(v)
    doc = json.loads(PUT.read_text())
    doc["total"]["hdr_lat"] = h.encode().decode()
    return loadgen.parse(json.dumps(doc))


def test_loadgen_clients_merge_hdr_into_the_percentiles_of_the_concatenated_values():
    rnd = random.Random(15)
    va = [int(rnd.lognormvariate(15, 0.4)) for _ in range(3000)]      # ~3 ms
    vb = [int(rnd.lognormvariate(17, 0.6)) for _ in range(800)]       # a slower client, ~24 ms
    m = merge.merge_instances([placed(loadgen_with(va), "c1", 0.0), placed(loadgen_with(vb), "c2", 0.01)],
                              latency="hdr")
    pooled = HdrHistogram(merge.HDR_LOWEST_NS, merge.HDR_HIGHEST_NS, merge.HDR_SIG_FIGS)
    for v in va + vb:
        pooled.record_value(v)
    assert m.latency.percentiles_ns == {k: float(pooled.get_value_at_percentile(float(k)))
                                        for k in ("50", "90", "99", "99.9")}
    # an average of the two clients' p99 would be something else entirely
    p99 = [loadgen_with(v).latency.percentiles_ns for v in (va, vb)]
    assert m.latency.percentiles_ns["99"] != (p99[0]["99"] + p99[1]["99"]) / 2
    assert merge.decode_hdr(m.extra["hdr_lat"]).get_total_count() == len(va) + len(vb)


def test_loadgen_merge_of_timed_clients_sums_the_window_and_keeps_its_own_figures():
    a = loadgen.parse(PUT.read_text())           # 2 s, seconds 1, 2 and 3 (171, 106, 8 ops)
    late = placed(a, "c2", 1.0)
    m = loadgen.merge([placed(a, "c1", 0.0), late])
    c = m.extra["clients"]
    assert c["window_s"] == pytest.approx(1.0)
    # c1's second 2 and c2's second 1 are the window's one second; too short for seconds: the averages
    assert m.ops_per_s == pytest.approx(2 * a.ops_per_s)
    assert m.extra["errors_by_kind"] == a.extra["errors_by_kind"] and m.extra["instances"] == 2
    assert "hdr_lat" in m.extra and all(not k.startswith("hdr_") for i in m.instances for k in i.extra)
    assert any("client c2 started 1.00 s after the first" in n for n in c["notes"])
    # without times the old merge: whole runs, seconds aligned on start_unix_ns
    old = loadgen.merge([a, a])
    assert "clients" not in old.extra and len(old.timeseries) == 3


def test_sum_series_places_seconds_by_absolute_time():
    a = Measurement(tool="t", op="write", duration_s=4, timeseries=[Sample(t_s=t, bytes_per_s=10.0, ops_per_s=1.0)
                                                                      for t in (1, 2, 3, 4)])
    b = a.model_copy(update={"timeseries": [Sample(t_s=t, bytes_per_s=100.0, ops_per_s=2.0) for t in (1, 2, 3, 4)]})
    series = merge.sum_series([a, b], [T0, T0 + 2.1])
    assert [(s.t_s, s.bytes_per_s) for s in series] == [(1, 10), (2, 10), (3, 110), (4, 110), (5, 100), (6, 100)]
    window = merge.sum_series([a, b], [T0, T0 + 2.1], T0 + 2.1, T0 + 4)
    assert [(s.t_s, s.bytes_per_s) for s in window] == [(1, 110), (2, 110)]
