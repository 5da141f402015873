"""fio on client hosts: the command line a client gets (its outputs in its own work directory there, no path of
this machine, the id through the environment), the work directories (ledger first, only cephbench's removed,
fetched back as files only), and the merge of two clients' json+ by bins (fixture: fio 3.33 rbd engine against the
Ceph 16.2.15 lab, 2 images, randrw 70/30)."""

import os
import shutil
import stat
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import FIXTURES
from cephbench.cluster.ceph import Target
from cephbench.suite.config import SshSettings, parse_suite
from cephbench.drivers.fio_rados import job_for, job_name, remote_conf
from cephbench.drivers.fio_run import FioRun, client_runs, fio_run
from cephbench.drivers.rbd_images import Images, preflight
from cephbench.core.errors import OperationFailed, UserError
from cephbench.hosts.local import LocalHost
from cephbench.core.merge import merge_instances, percentiles_from_bins
from cephbench.suite.plan import expand
from cephbench.cluster.recovery import how_to_remove
from cephbench.hosts.remote import HostRef
from cephbench.hosts.remote_dirs import REMOTE_DIR, dir_path, fetch_dir, make_dir, remove_dir, resource_name
from cephbench.core.resources import Ledger, Resource

RW = FIXTURES / "fio" / "fio3.33_ceph16.2.15_rbd_randrw70_4K_qd8_2images"
HERE = HostRef("here", None)


def _arg(argv, name):
    return next(a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}="))


def test_a_clients_fio_writes_into_its_work_directory_there_and_is_read_here(tmp_path):
    run = fio_run(tmp_path / "c1", [job_for("write", {"block_size": 4096, "iodepth": 2, "duration_s": 3}, "p", 16,
                                            None, "bench")], remote_dir="/tmp/cephbench-r1-c1-001")
    argv = [str(a) for a in run.spawn.argv]
    assert _arg(argv, "output") == "/tmp/cephbench-r1-c1-001/fio.json"
    assert _arg(argv, "write_bw_log") == _arg(argv, "write_iops_log") == "/tmp/cephbench-r1-c1-001/fio"
    assert run.json_path == tmp_path / "c1" / "fio.json" and run.log_prefix == tmp_path / "c1" / "fio"
    assert run.spawn.output == tmp_path / "c1" / "fio-stdout.txt"
    assert not any(a.startswith("--conf=") for a in argv)


def test_client_runs_carry_no_path_of_this_machine_and_the_id_in_the_environment(tmp_path):
    target = Target(conf=Path("/here/ceph.conf"), keyring=Path("/here/keyring"), id="bench")
    ctx = SimpleNamespace(rundir=SimpleNamespace(raw_dir=lambda t: tmp_path / t), run_id="r1",
                          target=target)
    clients = [SimpleNamespace(name="c1"), SimpleNamespace(name="c/2")]
    params = {"block_size": 65536, "iodepth": 4, "duration_s": 2}
    runs = client_runs(ctx, "003-x", clients,
                       lambda c: [job_for("read", params, "pool", 8, None, target.id, name=job_name(c.name))],
                       wrap=remote_conf)
    assert [r.remote_dir for r in runs] == ["/tmp/cephbench-r1-c1-003-x", "/tmp/cephbench-r1-c_2-003-x"]
    assert [r.run.json_path.parent for r in runs] == [tmp_path / "003-x" / "c1", tmp_path / "003-x" / "c_2"]
    for r in runs:
        argv = [str(a) for a in r.run.spawn.argv]
        assert argv[:4] == remote_conf([])[:4] and argv[4] == "fio"
        assert not any("/here/" in a for a in argv), argv
        assert r.run.spawn.env == {"CEPH_ARGS": "--id bench"}
    assert _arg(runs[1].run.spawn.argv, "name") == "obj-c_2"     # objects of its own
    assert client_runs(SimpleNamespace(rundir=None, run_id="r", target=Target(Path("/c"))), "t",
                       clients[:1], lambda c: [job_for("read", params, "p", 8, None, None)])[0].run.spawn.env is None


@pytest.mark.parametrize("conf_env, expect", [("/lab/ceph.conf", "/lab/ceph.conf"), (None, "/etc/ceph/ceph.conf")])
def test_remote_conf_is_the_clients_own(conf_env, expect):
    env = {k: v for k, v in os.environ.items() if k != "CEPH_CONF"}
    if conf_env:
        env["CEPH_CONF"] = conf_env
    out = subprocess.run(remote_conf(["echo", "--name=obj"]), capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["--name=obj", f"--conf={expect}"]


def test_images_of_one_client():
    imgs = Images(pool="p", data_pool=None, names=["a0", "b0", "a1"], size_bytes=1 << 20, pools=["p"],
                  prefilled=True, owners=["a", "b", "a"])
    mine = imgs.of("a")
    assert mine.names == ["a0", "a1"] and mine.specs == ["p/a0", "p/a1"] and mine.pools == []
    assert mine.describe() == {"prefilled": True, "images": 2, "image_size_bytes": 1 << 20, "data_pool": False}


def _tests(**w):
    s = parse_suite({"name": "t", "clients": ["c1", "c2"], "pools": {"rep": {"type": "replicated"}},
                     "workloads": [{"type": "fio_rbd", "pool": "rep", "duration": "5s", **w}]}, "s")
    return expand(s).tests


def test_krbd_from_client_hosts_is_refused_before_anything():
    with pytest.raises(UserError) as e:
        preflight(None, _tests(client="krbd", clients=2), None)   # refused before the cluster is asked
    assert "krbd" in str(e.value) and "client hosts" in str(e.value) and e.value.where.endswith("clients")


def test_images_of_every_client_must_fit():
    cluster = SimpleNamespace(raw_capacity=lambda: (3 * 2**29, 0))
    settings = SimpleNamespace(max_raw_used=0.75)
    preflight(cluster, _tests(image_size="256MiB", clients=1), settings)
    with pytest.raises(UserError, match=r"2 image\(s\) of 256MiB need 512MiB"):
        preflight(cluster, _tests(image_size="256MiB", clients=2), settings)


# ---- work directories ------------------------------------------------------------------------------------

def test_a_work_directory_is_in_the_ledger_private_fetched_as_files_and_removed(tmp_path):
    ledger = Ledger(None)
    path = dir_path("unit", str(os.getpid()), "c1", "001 x")
    assert path == f"/tmp/cephbench-unit-{os.getpid()}-c1-001_x"
    res = make_dir(LocalHost(), HERE, SshSettings(), ledger, path)
    try:
        assert ledger.pending() == [Resource(REMOTE_DIR, f"localhost:{path}")]
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
        Path(path, "fio.json").write_text("{}")
        Path(path, "sub").mkdir()
        Path(path, "sub", "fio_bw.1.log").write_text("1000, 5, 0, 0, 0\n")
        os.symlink("/etc/passwd", Path(path, "link"))
        got = fetch_dir(LocalHost(), HERE, SshSettings(), path, tmp_path / "into")
        assert got == [tmp_path / "into" / "fio.json", tmp_path / "into" / "sub" / "fio_bw.1.log"]
        assert not (tmp_path / "into" / "link").exists()         # files only
        ledger.release_one(res)
        assert not Path(path).exists() and ledger.pending() == []
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_directory_that_exists_is_refused_and_not_ours_to_remove(tmp_path):
    path = dir_path("unit", str(os.getpid()), "taken")
    os.mkdir(path)
    try:
        ledger = Ledger(None)
        with pytest.raises(OperationFailed, match="mkdir"):
            make_dir(LocalHost(), HERE, SshSettings(), ledger, path)
        assert ledger.pending() == [] and Path(path).is_dir()
    finally:
        os.rmdir(path)


def test_only_cephbench_work_directories_are_removed(tmp_path):
    with pytest.raises(OperationFailed, match="not a cephbench work directory"):
        remove_dir(LocalHost(), SshSettings(), f"localhost:{tmp_path}")
    with pytest.raises(OperationFailed, match="not a cephbench work directory"):
        remove_dir(LocalHost(), SshSettings(), "c1:/tmp/cephbench-x/../../home")
    assert tmp_path.is_dir()
    name = resource_name(HostRef("c1", "10.0.0.5"), "/tmp/cephbench-r-c1-t")
    assert how_to_remove(Resource(REMOTE_DIR, name)) == "ssh 10.0.0.5 rm -rf /tmp/cephbench-r-c1-t"


def test_fetching_a_missing_directory_fails_in_one_line(tmp_path):
    with pytest.raises(OperationFailed, match="fetching /tmp/cephbench-unit-none"):
        fetch_dir(LocalHost(), HERE, SshSettings(), "/tmp/cephbench-unit-none", tmp_path)


# ---- two clients' json+ merged ----------------------------------------------------------------------------

def test_two_clients_fio_merge_by_bins_and_stay_instances(tmp_path):
    parts = []
    for i, host in enumerate(("c1", "c2")):
        d = tmp_path / host
        d.mkdir()
        shutil.copy(f"{RW}.json", d / "fio.json")
        for log in Path(f"{RW}_logs").iterdir():
            shutil.copy(log, d / log.name)
        m = FioRun(None, d / "fio.json", d / "fio").measurement("randrw", "fio rbd", keep_bins=True)
        m.host, m.start_unix_s, m.end_unix_s = host, 1000.0 + 0.01 * i, 1004.0
        parts.append(m)
    one = parts[0]
    assert abs(sum(one.extra["clat_bins"].values()) - one.ops_total) < 0.01 * one.ops_total
    merged = merge_instances(parts, latency="bins")
    assert [p.host for p in merged.instances] == ["c1", "c2"]
    assert merged.ops_total == 2 * one.ops_total
    # the same histogram twice: the same percentiles, from the merged bins
    assert merged.latency.percentiles_ns == one.latency.percentiles_ns == percentiles_from_bins(
        {int(k): v for k, v in one.extra["clat_bins"].items()})
    assert merged.extra["clients"]["hosts"] == 2
