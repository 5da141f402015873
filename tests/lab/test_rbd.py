"""RBD and fio-rados against the real lab: images prefilled, percentiles and series, the read guard, krbd skip,
bad inputs refused with nothing left behind, and Ctrl-C removing images and pools."""

import json
import signal
import subprocess
import time

from cephbench.drivers.rbd_images import SYS_BUS_RBD
from cephbench.core.results import RunDir

from labcli import CLI, cli_here, run_cli, write_suite
PCT = {"50", "90", "99", "99.9", "99.99"}

SMALL = """
name: rbd-small
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
  ec21: {type: erasure, k: 2, m: 1, pg_num: 8}
workloads:
  - name: fio-ec
    type: fio_rbd
    pool: ec21
    metadata_pool: rep2
    images: 2
    image_size: 64MiB
    rw: [randwrite, randread]
    block_size: 4KiB
    iodepth: 8
    duration: 2s
  - name: bench
    type: rbd_bench
    pool: rep2
    image_size: 32MiB
    io_type: [write, read]
    io_size: 4KiB
    io_pattern: rand
    io_total: 2MiB
    prefill: false
    read_unprefilled: true
  - name: krbd
    type: fio_rbd
    client: krbd
    pool: rep2
    image_size: 32MiB
    rw: randread
    duration: 2s
  - name: rados
    type: fio_rados
    pool: rep2
    rw: [write, randread]
    block_size: 64KiB
    iodepth: 4
    duration: 2s
"""


def leftovers(cluster) -> dict:
    """Every cephbench pool (an image cannot outlive its pool) and EC profile on the cluster."""
    pools = sorted(p for p in cluster.pool_names() if p.startswith("cephbench-"))
    profiles = sorted(p for p in cluster.ceph_json("osd", "erasure-code-profile", "ls") if p.startswith("cephbench-"))
    return {"pools": pools, "ec_profiles": profiles}


def images_in(cluster, pool: str) -> list[str]:
    res = cluster.host.run(["rbd", *cluster.target.client_args(), "ls", pool], timeout_s=60)
    return res.stdout.split() if res.ok else []


def test_rbd_and_fio_rados_results_guards_and_cleanup(lab_cluster, cephbench_env, tmp_path):
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, SMALL)), "--out", str(out)], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    results = {r.test.id: r for r in RunDir.open(out).results()[0]}
    assert list(results) == ["001-fio-ec-randwrite-4KiB-qd8", "002-fio-ec-randread-4KiB-qd8",
                             "003-bench-write-4KiB-t16", "004-bench-read-4KiB-t16", "005-krbd-randread-4KiB-qd32",
                             "006-rados-write-64KiB-qd4", "007-rados-randread-64KiB-qd4"]
    # fio on two images of an EC data pool: merged percentiles, a per-second series, prefilled
    for tid in ("001-fio-ec-randwrite-4KiB-qd8", "002-fio-ec-randread-4KiB-qd8"):
        r = results[tid]
        assert r.status == "ok", r.error
        m = r.measurement
        assert m.tool == "fio rbd" and m.op_size_bytes == 4096 and m.ops_per_s > 0 and m.bytes_per_s > 0
        assert set(m.latency.percentiles_ns) == PCT
        assert m.latency.percentiles_ns["50"] <= m.latency.percentiles_ns["99.9"]
        assert m.timeseries and all(s.ops_per_s is not None for s in m.timeseries)
        assert m.extra["prefilled"] is True and m.extra["images"] == 2 and m.extra["data_pool"] is True
        assert any(n.startswith("prefilled 2 image(s) of 64MiB") for n in r.notes)
        assert m.extra["jobs"] == 2
    # rbd bench on an image that was never prefilled: the read ran only because the suite asked, and says so
    w, rd = results["003-bench-write-4KiB-t16"], results["004-bench-read-4KiB-t16"]
    assert w.status == rd.status == "ok", (w.error, rd.error)
    assert w.measurement.ops_total == 512 and w.measurement.op == "randwrite"
    assert rd.measurement.extra["prefilled"] is False
    assert any("NOT PREFILLED" in n for n in rd.warnings) and not any("NOT PREFILLED" in n for n in w.warnings)
    # krbd: here with the kernel module, skipped with one line without it
    k = results["005-krbd-randread-4KiB-qd32"]
    if SYS_BUS_RBD.is_dir():
        assert k.status == "ok", k.error
    else:
        assert k.status == "skipped" and "krbd skipped" in k.error and "\n" not in k.error
    # fio rados: whole objects, percentiles
    for tid in ("006-rados-write-64KiB-qd4", "007-rados-randread-64KiB-qd4"):
        m = results[tid].measurement
        assert results[tid].status == "ok" and m.tool == "fio rados" and set(m.latency.percentiles_ns) == PCT
        assert m.object_size_bytes == 64 * 1024
    for r in results.values():
        assert all((out / p).is_file() for p in r.raw)
    assert leftovers(lab_cluster) == {"pools": [], "ec_profiles": []}
    assert json.loads((out / "resources.json").read_text()) == []


BAD = {
    "iodepth 0": ("  - {type: fio_rbd, pool: rep2, image_size: 32MiB, iodepth: 0}\n", "iodepth: must be greater than zero"),
    "unknown rw": ("  - {type: fio_rbd, pool: rep2, image_size: 32MiB, rw: [randwrite, trim]}\n", "rw[1]"),
    "ec without overwrites": ("  - {type: fio_rbd, pool: ecno, image_size: 32MiB}\n", "needs allow_ec_overwrites"),
    "read before prefill": ("  - {type: rbd_bench, pool: rep2, image_size: 32MiB, prefill: false}\n",
                            "not prefilled"),
    "image bigger than the pool": ("  - {type: fio_rbd, pool: rep2, image_size: 64GiB, rw: randwrite}\n",
                                   "image_size: 1 image(s) of 64GiB need 64GiB in pool 'rep2'"),
}
BAD_POOLS = """name: bad
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
  ecno: {type: erasure, k: 2, m: 1, allow_ec_overwrites: false}
workloads:
"""


def test_bad_inputs_are_one_line_exit_2_and_leave_nothing(lab_cluster, cephbench_env, tmp_path):
    before = leftovers(lab_cluster)
    for i, (case, (workload, expect)) in enumerate(BAD.items()):
        suite = write_suite(tmp_path, BAD_POOLS + workload, f"bad{i}.yaml")
        res = cli_here(["run", str(suite), "--out", str(tmp_path / f"run{i}")], cephbench_env)
        assert res.returncode == 2, (case, res.stderr)
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cephbench: "), (case, res.stderr)
        assert expect in lines[0], (case, lines[0])
        assert "Traceback" not in res.stderr
        assert not (tmp_path / f"run{i}").exists(), case
        assert leftovers(lab_cluster) == before, case


def test_ctrl_c_removes_images_and_pools(lab_cluster, cephbench_env, tmp_path):
    suite = write_suite(tmp_path, """
name: rbd-interrupt
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
workloads:
  - type: fio_rbd
    pool: rep2
    image_size: 64MiB
    rw: [randwrite, randread]
    duration: 10s
""")
    out = tmp_path / "run"
    proc = subprocess.Popen([*CLI, "run", str(suite), "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cephbench_env)
    seen: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not seen and proc.poll() is None:
        for pool in leftovers(lab_cluster)["pools"]:
            seen = images_in(lab_cluster, pool)
        time.sleep(0.3)
    assert seen, "no image appeared"
    time.sleep(3)   # prefilling or inside fio
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 130, stderr
    assert "could not remove" not in stderr and "left behind" not in stderr, stderr
    assert leftovers(lab_cluster) == {"pools": [], "ec_profiles": []}, "Ctrl-C left RBD pools behind"
    assert json.loads((out / "resources.json").read_text()) == []
