"""A drive held by a cgroup throttle, named without ssh (issue 28, item 5): one OSD's BlueStore commit far above its
peers'. The multi-host lab with osd.1's data drive at 8 MiB/s (`lab up --hosts 3 --osd-throttle osd.1=8MiB/s
--monitoring`), an 8 s rados bench write of 1 MiB objects × 16: what a run without ssh has of it, captured there
(tests/fixtures/README.md): node-exporter's series from the lab's Prometheus 2.42 (h2:loop1 writes 8 MiB/s 0-4 %
busy, as its peers do, and node-exporter knows no throttle) and each OSD's `ceph tell osd.N perf dump` before and
after, Ceph 16.2.15."""

from __future__ import annotations

import json
from pathlib import Path

from cephbench.analysis import analyse
from cephbench.analysis.slowstore import MIN_SPREAD, SPREAD_K, slow_store, stands_out
from cephbench.analysis.rules import from_evidence
from cephbench.core.results import Evidence, HostLoad, OsdCounters, Result, Test
from cephbench.drivers import rados_bench as rb
from cephbench.evidence import promanswer as pa
from cephbench.evidence.counters import deltas
from cephbench.evidence.hoststream import watch_targets

FIX = Path(__file__).parent.parent / "fixtures"
START, END = 1795679729.0, 1795679739.0          # the test's window as the run would read it
CASE = "lab3_osd1_throttled"


def prom(name: str) -> list[pa.Series]:
    return pa.parse_answer((FIX / "prometheus" / f"prom2.42_{CASE}_write_{name}.json").read_text())


def metadata() -> list:
    return json.loads((FIX / "prometheus" / f"ceph16.2.15_{CASE}_osd_metadata.json").read_text())


def figures() -> pa.PromFigures:
    """The answers as evidence/prometheus.py asked them over the window (its steps, one a second)."""
    steps = [START + 1 + i for i in range(round(END - START))]
    fig = pa.PromFigures(start_unix_s=START, steps=steps, resolution_s={"h1": 1.0, "h2": 1.0, "h3": 1.0})
    fig.disk = {m: prom(m) for m in pa.DISK_RATES.values()}
    fig.net = {m: prom(m) for m in pa.NET_RATES.values()}
    fig.speed, fig.address_info = prom(pa.SPEED), prom(pa.ADDRESS_INFO)
    return fig


def prometheus_devices() -> list:
    targets = watch_targets(metadata())
    return [d for h in ("h1", "h2", "h3") for d in pa.device_loads(h, targets[h][0], figures())[0]]


def prometheus_links() -> list:
    targets, ifaces = watch_targets(metadata()), pa.metadata_ifaces(metadata())
    return [k for h in ("h1", "h2", "h3") for k in pa.link_loads(h, targets[h][1], ifaces.get(h, {}), figures())[0]]


def tell_counters() -> list[OsdCounters]:
    hosts = {m["id"]: m["hostname"] for m in metadata()}

    def dump(n: int, when: str) -> dict:
        name = f"ceph16.2.15_{CASE}_osd{n}_tell_{when}_rados_write_1M.json"
        return json.loads((FIX / "perf_dump" / name).read_text())

    return [deltas(dump(n, "before"), dump(n, "after"), n, hosts[n], source="ceph tell") for n in range(3)]


def result(osds: list[OsdCounters], cpu: float = 0.5) -> Result:
    text = (FIX / "perf_dump" / f"ceph16.2.15_{CASE}_rados_write_1M_between.txt").read_text()
    m = rb.parse(text, "write", 8)
    return Result(test=Test(id="001-verdict-osd-drive", index=1, workload="w", kind="rados_bench", group="g",
                            params={"phase": "write", "object_size": 1024**2, "concurrency": 16,
                                    "pool_profile": {"type": "replicated", "size": 3}}),
                  status="ok", started_unix=START, duration_s=END - START, measurement=m,
                  evidence=Evidence(osds=osds, devices=prometheus_devices(), links=prometheus_links()),
                  hosts=[HostLoad(host="vm", role="controller and OSD host", cpus=2, cpu_busy_mean=cpu,
                                  cpu_busy_median=cpu, cpu_busy_max=min(1.0, cpu + 0.1))])


def test_node_exporter_alone_shows_the_throttled_drive_as_its_peers():
    devs = {d.device: d for d in prometheus_devices()}
    assert set(devs) == {"loop0", "loop1", "loop2"}
    assert max(devs["loop1"].busy) < 0.05 and max(max(d.busy) for d in devs.values()) < 0.1
    assert all(d.limit_write_bytes_per_s is None for d in devs.values())


def test_the_throttled_drives_osd_commits_far_above_its_peers():
    by = {o.osd: o for o in tell_counters()}
    assert by[1].commit_latency_s > 1.5 and max(by[0].commit_latency_s, by[2].commit_latency_s) < 0.01
    slow = slow_store(list(by.values()), prometheus_devices(), result(list(by.values())).measurement.latency.mean_ns
                      / 1e9)
    assert slow is not None and slow.osd.osd == 1 and slow.bottleneck == "disk h2:loop1"
    assert "BlueStore commit 1,560.5 ms per write against 9.0 ms on its peers (median of osd.0, osd.2)" in slow.text
    assert "its data device's writes 353.2 ms (peers 2.1 ms)" in slow.text


def test_without_ssh_the_verdict_names_the_throttled_drive_from_its_osds_counters():
    """What CEPHBENCH_VERDICT_SOURCES=prometheus missed: no throttle in node-exporter, h2:loop1 0-4 % busy, so the
    verdict was `CPU` or `latency (16 ops in flight)` by the machine's load."""
    for cpu in (0.5, 0.89):
        a = analyse(result(tell_counters(), cpu), None)
        assert a is not None and a.bottleneck == "disk h2:loop1", (cpu, a.bottleneck, a.evidence)
        assert "osd.1's BlueStore commit took 1,560.5 ms per write against 9.0 ms on its peers" in a.reason
        line = next(ln for ln in a.evidence if ln.startswith("osd.1 (h2): BlueStore commit"))
        assert line.endswith("→ disk h2:loop1; OSD counters through ceph tell"), line
        assert any(ln.startswith("device h2:loop1 (data of osd.1)") and "from Prometheus (node-exporter), 1 s "
                   "resolution" in ln for ln in a.evidence), a.evidence


def test_a_wal_db_device_of_its_own_is_named_when_its_kv_sync_grew_most():
    osds = tell_counters()
    slow = next(o for o in osds if o.osd == 1)
    osds = [o for o in osds if o.osd != 1] + [slow.model_copy(update={"aio_wait_latency_s": 0.003})]
    db = prometheus_devices()[1].model_copy(update={"device": "loop4", "role": "db"})
    got = slow_store(osds, prometheus_devices() + [db], 1.94)
    assert got is not None and got.bottleneck == "WAL/DB device h2:loop4"
    # its devices not read: whether the KV sync has a drive of its own is not known
    assert slow_store(osds, [], 1.94).bottleneck == "drive of osd.1 (h2)"
    assert slow_store(tell_counters(), [], 1.94).bottleneck == "drive of osd.1 (h2)"    # the lab's: KV sync grew most
    aio_most = [o.model_copy(update={"kv_sync_latency_s": 0.004}) for o in tell_counters()]
    assert slow_store(aio_most, [], 1.94).bottleneck == "disk of osd.1 (h2)"


def test_no_slow_store_in_healthy_or_evenly_limited_runs():
    """Every write result of the runs kept as fixtures (healthy labs, every WAL/DB drive at the same throttle,
    every OSD's bluestore_throttle_bytes at 16 KiB; not cpu_split/, whose osd.2 is held to 0.08 cores): their
    slowest OSD's commit is at most 2.5× its peers'."""
    seen = 0
    for path in sorted(p for p in FIX.glob("**/*.jsonl") if p.parent.name != "cpu_split"):
        for line in path.read_text().splitlines():
            r = Result.model_validate_json(line)
            if r.evidence is None or not r.evidence.osds or r.measurement is None:
                continue
            seen += 1
            lat = r.measurement.latency.mean_ns / 1e9 if r.measurement.latency.mean_ns else None
            assert slow_store(r.evidence.osds, r.evidence.devices, lat) is None, (path.name, r.test.id)
            v = from_evidence(r, None, None)
            assert "BlueStore commit" not in v.sentence, (path.name, r.test.id)
    assert seen >= 40


def test_the_thresholds_both_hold():
    base = [OsdCounters(osd=i, host=f"h{i + 1}", op_w=20, subop_w=40, commit_latency_s=0.010) for i in range(3)]
    # 10× its peers but a small share of the writes' latency: not where they waited
    assert slow_store(base[:2] + [base[2].model_copy(update={"commit_latency_s": 0.10})], [], 1.0) is None
    # most of the latency, but within its peers' spread (at least MIN_SPREAD of their median): every OSD was slow
    bar = 0.010 + SPREAD_K * MIN_SPREAD * 0.010
    assert slow_store(base[:2] + [base[2].model_copy(update={"commit_latency_s": bar * 0.98})], [], 0.02) is None
    assert slow_store(base[:2] + [base[2].model_copy(update={"commit_latency_s": bar * 1.02})], [], 0.02) is not None
    assert bar == 0.025         # a 2.5× bar for peers alike: the fixtures' healthy runs reach it
    # peers far apart widen the bar: 10 and 30 ms put it at 90
    spread = [base[0], base[1].model_copy(update={"commit_latency_s": 0.030})]
    assert slow_store(spread + [base[2].model_copy(update={"commit_latency_s": 0.085})], [], 0.1) is None
    assert slow_store(spread + [base[2].model_copy(update={"commit_latency_s": 0.095})], [], 0.1) is not None
    # too few commits to count
    assert slow_store(base[:2] + [base[2].model_copy(update={"commit_latency_s": 1.0, "op_w": 1, "subop_w": 2})],
                      [], 1.0) is None


def test_beside_a_throttle_read_over_ssh_the_throttle_names_it_and_the_commit_line_follows():
    """With ssh the drive's throttle is read on its host: it names the drive, as before; the slow store's line is
    kept after the others."""
    r = result(tell_counters())
    held = [d.model_copy(update={"limit_write_bytes_per_s": 8 * 1024**2, "source": "ssh"}) if d.device == "loop1"
            else d for d in r.evidence.devices]
    r = r.model_copy(update={"evidence": r.evidence.model_copy(update={"devices": held})})
    a = analyse(r, None)
    assert a.bottleneck == "disk h2:loop1" and "carried 100% of its cgroup throttle" in a.reason
    assert a.evidence[0].startswith("device h2:loop1 (data of osd.1)") and "allowed by its cgroup throttle" in \
        a.evidence[0]
    assert a.evidence[-1].startswith("osd.1 (h2): BlueStore commit") and len(a.evidence) > 3


def test_a_wal_db_drive_held_while_the_cpus_are_full_is_named_from_a_toolbox_run():
    """The verdict benchmark's wal-db case from a toolbox (`cephbench run` with a copy of the conf and key and
    settings.prometheus, no ssh; `lab up --hosts 3 --db-device 1GiB --osd-throttle osd.1.db=1MiB/s --monitoring`):
    4 KiB writes × 16 with the machine's 2 CPUs 100 % busy, which slowed every OSD's commit, so osd.1's stood 7.7×
    above its peers', 81 % of the writes' latency. Under a 10× rule the verdict was `CPU`."""
    r = Result.model_validate_json((FIX / "prometheus" / "ceph16.2.15_lab3_osd1db_throttled_toolbox_write_4K"
                                    ".result.json").read_text())
    a = analyse(r.model_copy(update={"analysis": None}), None)
    assert a is not None and a.bottleneck == "WAL/DB device h2:loop3", (a.bottleneck, a.evidence)
    assert a.evidence[0].startswith("osd.1 (h2): BlueStore commit 91.1 ms per write against 11.8 ms on its peers")
    assert any(ln.startswith("device h2:loop3 (db of osd.1)") and "from Prometheus (node-exporter)" in ln
               for ln in a.evidence), a.evidence


def test_the_mgr_modules_series_hold_the_same_commits_once_a_refresh():
    """What the operator's Prometheus holds of the same figure (docs/model.md, "Without ssh"): the mgr prometheus
    module's per-OSD BlueStore commit counters, which it refreshes every 15 s whatever Prometheus's 1 s scrape. Over
    the test and 16 s after it, they moved once, by the 73 commits `ceph tell` counted, and give osd.1's commit the
    same mean: the rule would read the same there, from a window wider than the module's refresh."""
    def per_osd(name: str) -> dict[str, list[float]]:
        return {s.labels["ceph_daemon"]: [v for _, v in s.values] for s in prom(name)}

    sums, counts = per_osd("ceph_bluestore_commit_lat_sum"), per_osd("ceph_bluestore_commit_lat_count")
    tell = {f"osd.{o.osd}": o for o in tell_counters()}
    for osd, c in counts.items():
        assert len({*c}) == 2 and c[-1] - c[0] == 73, (osd, c)      # one refresh, in samples a second apart
        mean = (sums[osd][-1] - sums[osd][0]) / (c[-1] - c[0])
        assert abs(mean - tell[osd].commit_latency_s) < 1e-3 * tell[osd].commit_latency_s, osd
    assert prom("ceph_osd_subop_w") == []        # below the module's priority: not exported


def test_writes_queued_in_front_of_a_held_store_count_as_waiting_on_it():
    """A toolbox run of the Prometheus lab test that fell to `latency` (fresh clone, 2026-11-26): osd.1's drive at
    8 MiB/s, 1 MiB writes × 16. osd.1 committed in 928 ms against 2 ms on its peers, 49 % of the writes' 1,878 ms,
    under SHARE; but its replica writes took 1,742 ms against its peers' 94 ms: the ops waited in osd.1's queue in
    front of its store, and then for the commit. The wait is the longer of the two."""
    r = Result.model_validate_json((FIX / "prometheus" / "ceph16.2.15_lab3_osd1_throttled_toolbox_bare_write_1M"
                                    ".result.json").read_text())
    a = analyse(r.model_copy(update={"analysis": None}), None)
    assert a is not None and a.bottleneck == "disk h2:loop1", (a.bottleneck, a.evidence)
    line = next(ln for ln in a.evidence if ln.startswith("osd.1 (h2): BlueStore commit 928.0 ms per write"))
    assert "its replica writes 1,741.6 ms (peers 94.2 ms), 88% of the writes' latency" in line, line


def cpu_limited() -> Result:
    """The 3-host lab with osd.2 held to 0.08 cores (`lab up --cpu-limit osd.2=0.08 --host-load h2=1.5`), 64 KiB
    writes × 16 (tests/fixtures/cpu_split/): osd.2 committed in 81.2 ms against 21.5 and 22.9 ms on its peers
    (3.6×), its replica writes 90.3 ms against 21.7 and 23.8: under the 4× rule it was not named (issue 35)."""
    lines = (FIX / "cpu_split" / "ceph16.2.15_cpu_limit_osd2_load_h2.jsonl").read_text().splitlines()
    return Result.model_validate_json(lines[-1])


def test_an_osd_slower_than_its_peers_by_less_than_4x_is_named_with_its_cause_the_cpu_limit():
    r = cpu_limited()
    lat = r.measurement.latency.mean_ns / 1e9
    slow = slow_store(r.evidence.osds, r.evidence.devices, lat, r.hosts, r.evidence.links)
    assert slow is not None and slow.osd.osd == 2 and slow.bottleneck == "CPU limit of osd.2 (h3)"
    assert "(its CPU limit (0.08 cores, throttled in 79% of periods))" in slow.sentence
    assert stands_out(0.0812, [0.0215, 0.0229]) and not stands_out(0.0300, [0.0215, 0.0229])


def test_an_osd_slower_than_its_peers_without_a_cause_in_the_evidence_says_so():
    r = cpu_limited()
    lat = r.measurement.latency.mean_ns / 1e9
    for h in r.hosts:      # the watch's daemon list not read: no cgroup, no limit
        h.processes = []
    slow = slow_store(r.evidence.osds, r.evidence.devices, lat, r.hosts, r.evidence.links)
    # its KV sync and data device's writes grew by 41 of its commit's 59 ms excess: its store's own waits, the drive,
    # and that a CPU limit is not ruled out without its cgroup
    assert slow is not None and slow.bottleneck == "disk h3:loop2"
    assert "whether a CPU limit held it is not known: h3's daemons and their cgroups were not read" in slow.sentence
    bare = [o.model_copy(update={"kv_sync_latency_s": None, "aio_wait_latency_s": None}) for o in r.evidence.osds]
    slow = slow_store(bare, r.evidence.devices, lat, r.hosts, r.evidence.links)
    assert slow is not None and slow.bottleneck == "osd.2 (h3), slower than its peers"
    assert slow.sentence.endswith("osd.2 is slower than its peers; the evidence does not say why")
    assert slow.text.endswith("; the evidence does not say why")


def test_an_osd_slower_than_its_peers_and_throttled_in_a_quarter_of_its_periods_is_held_by_its_limit():
    """Throttled in under HELD_THROTTLED of its periods, a limit alone does not name the daemon; an OSD already
    slower than its peers and throttled in LIMIT_CAUSE of them or more is slower for its limit."""
    from cephbench.analysis.cpusplit import held_daemons
    r = cpu_limited()
    osd2 = next(p for h in r.hosts for p in h.processes if p.who == "osd.2")
    osd2.throttled_periods = round(0.3 * osd2.periods)
    assert held_daemons(r.hosts) == []
    v = from_evidence(r, None, None)
    assert v.bottleneck == "CPU limit of osd.2 (h3)" and "its CPU limit (0.08 cores, throttled in 29% of periods)" \
        in v.sentence, v.sentence
    osd2.throttled_periods = round(0.2 * osd2.periods)
    assert not from_evidence(r, None, None).bottleneck.startswith("CPU limit")
