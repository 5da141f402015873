"""A search instead of a guess (issue 29 item 3): `concurrency: auto` on the one-host lab runs its steps, stops,
says why on its last step, skips the steps past it, and leaves nothing behind."""

import json
import subprocess

from cephbench.analysis.curves import curves
from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

# 1 s steps of 4 KiB objects, each lengthened to 5 s (its tool's warm-up, 3 whole seconds and one more, issue 36).
# The first workload doubles to its max of 4 (three steps: the knee rule needs three loads before it can stop on
# throughput, so it stops at 4 either way: on throughput, at its max, or with its two changes within their noise); the second's latency bound, 10 µs, is below
# any round trip through librados, so its write and its rand each stop at their first step; fio's search of iodepth
# runs its two steps to its max; the S3 GETs' search through the lab's RGW runs until the knee rule or its max of 4
# stops it, each step on a key space it prefills.
SUITE = """
name: search
pools:
  rep2: {type: replicated, size: 2, pg_num: 16}
workloads:
  - name: climb
    type: rados_bench
    pool: rep2
    modes: [write]
    object_size: 4KiB
    concurrency: {auto: {max: 4}}
    duration: 1s
  - name: bound
    type: rados_bench
    pool: rep2
    modes: [write, rand]
    object_size: 4KiB
    concurrency: {auto: {max: 4, latency_max: 0.01ms}}
    duration: 1s
  - name: fio
    type: fio_rados
    pool: rep2
    rw: [write]
    block_size: 4KiB
    iodepth: {auto: {max: 2}}
    duration: 1s
  - name: s3
    type: rgw
    op: [get]
    object_size: 4KiB
    objects: 64
    concurrency: {auto: {max: 4}}
    duration: 1s
"""


def test_a_search_runs_its_steps_stops_and_says_why(lab, lab_cluster, cephbench_env, tmp_path):
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, SUITE)), "--out", str(out)], cephbench_env)
    assert res.returncode == 0, res.stderr[-2000:] + res.stdout[-2000:]
    results, _ = RunDir(out).results()
    by = {(r.test.workload, r.test.params["phase"], r.test.params.get("concurrency") or r.test.params["iodepth"]): r
          for r in results}
    assert len(by) == len(results) == 14         # every step the plan holds has its result

    climb = [by["climb", "write", n] for n in (1, 2, 4)]
    assert [r.status for r in climb] == ["ok"] * 3, [r.error for r in climb]
    assert all(r.test.search is not None and r.test.search.max == 4 for r in climb)
    assert [r.search_stop for r in climb[:2]] == [None, None]
    assert climb[-1].search_stop is not None and climb[-1].search_stop.reason in ("throughput", "max", "unclear")
    # the steps are a curve as any sweep's: the report's curves and knee read them
    (curve,) = [c for c in curves(results) if "climb" in c.title]
    assert [p.load for p in curve.points] == [1, 2, 4]
    assert all(r.test.params["duration_s"] == 5 for r in climb)

    for phase in ("write", "rand"):
        first = by["bound", phase, 1]
        assert first.status == "ok", first.error
        assert first.search_stop is not None and first.search_stop.reason == "latency"
        assert "passed latency_max 0.01 ms" in first.search_stop.text
        for n in (2, 4):
            past = by["bound", phase, n]
            assert past.status == "skipped" and past.measurement is None
            assert past.error.startswith("not run: the search of concurrency stopped at 1 (mean latency")
    fio = [by["fio", "write", n] for n in (1, 2)]
    assert [r.status for r in fio] == ["ok", "ok"], [r.error for r in fio]
    assert fio[0].search_stop is None and fio[1].search_stop.reason == "max"
    assert fio[1].test.search.param == "iodepth" and fio[1].measurement.latency.percentiles_ns.get("99")
    # RGW: the steps run in order until the one the search stopped at, each with its percentiles; those past it
    # are skipped, saying where it stopped
    s3 = [by["s3", "get", n] for n in (1, 2, 4)]
    ran = [r for r in s3 if r.status == "ok"]
    assert ran and ran == s3[:len(ran)] and ran[-1].search_stop is not None, [(r.status, r.error) for r in s3]
    assert all(r.search_stop is None for r in ran[:-1]) and all(r.measurement.latency.percentiles_ns.get("99")
                                                               for r in ran)
    for past in s3[len(ran):]:
        assert past.status == "skipped" and past.error.startswith("not run: the search of concurrency stopped at")
    print("\n" + "\n".join(f"{r.test.id}: {r.status} "
                           f"{r.measurement.ops_per_s if r.measurement else '':.0f} ops/s "
                           f"{(r.measurement.latency.mean_ns or 0) / 1e6 if r.measurement else 0:.1f} ms"
                           f"{' stop: ' + r.search_stop.text if r.search_stop else ''}"
                           for r in results if r.status == "ok"))

    # nothing left: the group's pools are gone, and so is everything the ledger held (the run's RGW user and
    # buckets with it)
    assert not [p for p in lab_cluster.pool_names() if p.startswith("cephbench-")]
    admin = ["radosgw-admin", "--conf", cephbench_env["CEPH_CONF"]]
    users = json.loads(subprocess.run([*admin, "user", "list"], capture_output=True, text=True, timeout=60).stdout)
    buckets = json.loads(subprocess.run([*admin, "bucket", "list"], capture_output=True, text=True, timeout=60).stdout)
    assert not [u for u in users if u.startswith("cephbench-") and u != "cephbench-lab"], users
    assert not [b for b in buckets if b.startswith("cephbench-")], buckets
    assert json.loads((out / "resources.json").read_text() or "[]") == []
    (run_id,) = json.loads((out / "run.json").read_text())["run_ids"]
    assert not [ln for ln in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
                if f"cephbench-{run_id}" in ln]
