"""`cephbench suite from-cbt` on CBT configurations written in the layout of CBT's examples (tests/fixtures/cbt)."""

from __future__ import annotations

import pytest
import yaml

from clirun import cephbench
from conftest import FIXTURES
from cephbench.rundirs.cbt import translate_file
from cephbench.suite.config import load_suite
from cephbench.suite.plan import expand

CBT = FIXTURES / "cbt"


def suite_of(name, tmp_path):
    text, lines = translate_file(CBT / name)
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return load_suite(path), yaml.safe_load(text), lines


def test_radosbench_replicated_sweep(tmp_path):
    suite, data, lines = suite_of("radosbench-replicated.yaml", tmp_path)
    assert data["pools"] == {"replicated": {"type": "replicated", "size": 3, "pg_num": 4096}}
    w = data["workloads"][0]
    assert w["type"] == "rados_bench" and w["modes"] == ["write", "seq"]          # write_only: False, readmode seq
    assert w["object_size"] == [4194304, 524288, 4096] and w["concurrency"] == 128 and w["repeat"] == 3
    assert suite.workloads[0].duration == [300.0]
    assert len(expand(suite).tests) == 3 * 3 * 2                                  # sizes x iterations x modes
    assert "cluster.head: CBT's cluster deployment; cephbench benchmarks the cluster that -c (or --lab) names" \
        in lines
    assert not any(ln.startswith(("cluster.iterations", "benchmarks.radosbench.op_size")) for ln in lines)


def test_radosbench_erasure_profile_without_its_definition(tmp_path):
    _, data, lines = suite_of("radosbench-erasure.yaml", tmp_path)
    assert data["pools"]["erasure"] == {"type": "erasure", "k": 6, "m": 2, "pg_num": 4096}
    assert any(ln.startswith("cluster.pool_profiles.erasure.erasure_profile: 'myec' is not in") for ln in lines)


def test_erasure_profile_with_k_and_m(tmp_path):
    cbt = tmp_path / "ec.yaml"
    cbt.write_text("cluster:\n  erasure_profiles: {ec42: {erasure_k: 4, erasure_m: 2}}\n  pool_profiles:\n"
                   "    ec: {pg_size: 64, replication: erasure, erasure_profile: ec42}\n"
                   "benchmarks:\n  radosbench: {op_size: 65536, time: 20, write_time: 40, pool_profile: ec,"
                   " readmode: rand, concurrent_procs: 2}\n")
    text, lines = translate_file(cbt)
    data = yaml.safe_load(text)
    assert data["pools"]["ec"] == {"type": "erasure", "k": 4, "m": 2, "pg_num": 64}
    w = data["workloads"][0]
    assert w["modes"] == ["write", "rand"] and w["duration"] == {"write": "40s", "rand": "20s"}
    assert w["instances"] == 2 and any("pool_per_proc" in ln for ln in lines)


def test_librbdfio_nested_workloads(tmp_path):
    suite, data, lines = suite_of("librbdfio-workloads.yaml", tmp_path)
    names = [w["name"] for w in data["workloads"]]
    assert names == ["librbdfio-test1", "librbdfio-test2"]                        # precondition: cephbench prefills
    t1 = data["workloads"][0]
    assert t1["rw"] == "randread" and t1["iodepth"] == [1, 2, 3, 4, 5, 8, 16, 32, 64, 128] and t1["numjobs"] == 1
    assert t1["image_size"] == "1024MiB" and t1["ramp"] == "30s" and t1["repeat"] == 3
    assert suite.workloads[0].image_size == 1024 ** 3
    assert "benchmarks.librbdfio.workloads.precondition: cephbench prefills every group's images itself " \
           "(prefill: true)" in lines
    assert "monitoring_profiles: no cephbench equivalent (cephbench watches CPU and the cluster itself)" in lines
    assert "benchmarks.librbdfio.log_iops: cephbench records per-second figures itself" in lines


def test_librbdfio_flat_with_an_unsupported_mode(tmp_path):
    _, data, lines = suite_of("librbdfio-flat.yaml", tmp_path)
    w = data["workloads"][0]
    assert w["rw"] == ["read", "write", "randread", "randwrite", "randrw"] and w["images"] == 2
    assert data["pools"]["rbd"] == {"type": "replicated", "size": 3, "pg_num": 8192}
    assert any(ln.startswith("benchmarks.librbdfio.mode: 'rw' is not one of") for ln in lines)
    assert "cluster.use_existing: CBT's cluster deployment; cephbench benchmarks the cluster that -c (or --lab) " \
           "names" in lines                                                        # use_existing: False: CBT builds


def test_rawfio_becomes_a_disk_baseline(tmp_path):
    _, data, lines = suite_of("rawfio.yaml", tmp_path)
    assert data["baseline"]["disks"] == {"paths": ["/dev/vdb"], "patterns": ["dd", "write-4MiB"], "runtime": "60s",
                                         "size": "1024MiB"}
    assert data["workloads"] == [{"type": "osd_bench"}]
    assert any("4096000 B at iodepth 16 is measured as the disk baseline's nearest pattern, write-4MiB" in ln
               for ln in lines)
    assert any(ln.startswith("benchmarks.rawfio.block_devices: raw devices are overwritten only with") for ln in lines)


def test_cli_prints_the_suite_and_one_line_per_key(tmp_path):
    out = tmp_path / "s.yaml"
    res = cephbench("suite", "from-cbt", CBT / "radosbench-replicated.yaml", "--out", out)
    assert res.returncode == 0, res.stderr
    text, lines = translate_file(CBT / "radosbench-replicated.yaml")
    assert out.read_text() == text
    err = res.stderr.strip().splitlines()
    assert err[:-1] == [f"cephbench: not translated: {ln}" for ln in lines] and err[-1].startswith("suite: ")
    res = cephbench("suite", "from-cbt", CBT / "radosbench-replicated.yaml")
    assert res.returncode == 0 and res.stdout == text


def one_line_exit_2(res, *fragments):
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cephbench: ") and "Traceback" not in res.stderr, res.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.mark.parametrize("text, fragments", [
    ("cluster: {head: h\n", ["not-cbt.yaml:", "fix the YAML syntax"]),
    ("cluster: {head: h}\n", ["not-cbt.yaml: not a CBT configuration: no benchmarks block"]),
    ("- a\n- b\n", ["no benchmarks block"]),
    ("benchmarks: {}\n", ["no benchmarks block"]),
    ("benchmarks: {hsbench: {time: 10}}\n", ["no radosbench, librbdfio or rawfio benchmark", "hsbench"]),
    ("benchmarks: {radosbench: {concurrent_ops: 0}}\n", ["translated", "workloads[0].concurrency"]),
])
def test_bad_cbt_files(tmp_path, text, fragments):
    f = tmp_path / "not-cbt.yaml"
    f.write_text(text)
    one_line_exit_2(cephbench("suite", "from-cbt", f), *fragments)


def test_missing_and_binary_files(tmp_path):
    one_line_exit_2(cephbench("suite", "from-cbt", tmp_path / "nope.yaml"), "does not exist")
    (tmp_path / "b.yaml").write_bytes(b"\xff\xfe\x00")
    one_line_exit_2(cephbench("suite", "from-cbt", tmp_path / "b.yaml"), "not UTF-8")
