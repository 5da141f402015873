"""`cephbench baseline disk|network` on the lab machine, the baseline section of a suite, and every bad input
the issue lists: one line, exit 2, nothing left behind."""

import json
import os
import socket
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from cephbench.core.results import RunDir

from labcli import cli_here, run_cli as cli

QUICK = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
# the quick suite's own network baseline (this host and every OSD host), shortened: on the one-host lab, a loopback
# pair at 1 and 4 streams
QUICK_NETWORK = {**yaml.safe_load(QUICK.read_text())["baseline"]["network"], "duration": "1s"}
SUITE = f"""
name: baselined
baseline:
  disks: {{paths: lab-osds, size: 32MiB, runtime: 1s, patterns: [read-4MiB]}}
  network: {json.dumps(QUICK_NETWORK)}
pools:
  rep2: {{type: replicated, size: 2, pg_num: 16}}
workloads:
  - name: rados
    type: rados_bench
    pool: rep2
    modes: [write, seq]
    object_size: 4MiB
    concurrency: 8
    duration: {{write: 6s, seq: 1s}}        # the write feeds the seq (no top-up: plan.seq_write_ratio)
"""


def osd_dirs(lab) -> list[str]:
    return sorted(str(p) for p in (Path(lab.dir) / "osd").iterdir() if p.is_dir())


def leftovers(dirs: list[str]) -> list[str]:
    return [str(p) for d in dirs for p in Path(d).iterdir() if "cephbench-" in p.name and "baseline" in p.name]


def iperf3_pids() -> set[str]:
    """iperf3 processes not of a multi-host lab (whose tests may run beside these, all on 198.18.0.0/15)."""
    res = subprocess.run(["pgrep", "-a", "-x", "iperf3"], capture_output=True, text=True)
    return {line.split()[0] for line in res.stdout.splitlines() if " 198.1" not in line}


def one_line_exit_2(res) -> str:
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("cephbench: "), res.stderr
    return lines[0]


def test_disk_baseline_on_the_lab_osd_directories(lab, tmp_path):
    dirs = osd_dirs(lab)
    out = tmp_path / "disk"
    res = cli(["baseline", "disk", *dirs, "--size", "32MiB", "--runtime", "1s",
               "--pattern", "randread-4KiB-qd32", "--out", str(out)])
    assert res.returncode == 0, res.stderr + res.stdout
    results, bad = RunDir.open(out).results()
    assert not bad
    assert [r.test.params["pattern"] for r in results] == ["dd", "randread-4KiB-qd32"]
    for r in results:
        assert r.status == "ok" and r.test.kind == "disk_baseline"
        x = r.measurement.extra
        assert set(x["alone"]) == set(dirs) and set(x["parallel"]) == set(dirs)
        assert x["alone_median_bytes_per_s"] > 0 and x["parallel_median_bytes_per_s"] > 0
    assert results[0].measurement.extra["shared_device"] is True     # the lab's OSD files share one disk
    assert "Disk baseline" in res.stdout and "dd-equivalent" in res.stdout
    assert leftovers(dirs) == []
    assert (out / "raw" / "baseline-disk" / "fio-parallel.json").is_file()


def test_network_baseline_on_loopback_starts_and_stops_its_servers(tmp_path):
    before = iperf3_pids()
    out = tmp_path / "net"
    res = cli(["baseline", "network", "--duration", "1s", "--streams", "2", "--out", str(out)])
    assert res.returncode == 0, res.stderr + res.stdout
    results, _ = RunDir.open(out).results()
    assert [(r.test.params["streams"], r.status) for r in results] == [(1, "ok"), (2, "ok")]
    m = results[1].measurement
    assert m.extra["bits_per_s"] > 0 and m.extra["stream_count"] == 2 and m.extra["loopback"]
    assert "retransmits" in m.extra
    assert "Network baseline" in res.stdout and "Gbit/s" in res.stdout
    assert iperf3_pids() <= before


@pytest.fixture(scope="module")
def baselined_run(lab, tmp_path_factory):
    """One run of SUITE: its disk and network baselines, then the rados bench they give a ceiling."""
    tmp = tmp_path_factory.mktemp("baselined")
    suite = tmp / "s.yaml"
    suite.write_text(SUITE)
    res = cli(["run", str(suite), "--out", str(tmp / "run")], env={**os.environ, **lab.env()}, timeout=600)
    assert res.returncode == 0, res.stderr + res.stdout
    return res, RunDir.open(tmp / "run").results()[0]


def test_suite_baseline_gives_every_cluster_result_a_ceiling(lab, baselined_run):
    res, results = baselined_run
    kinds = [r.test.kind for r in results]
    assert kinds[:2] == ["disk_baseline"] * 2 and kinds[2:4] == ["net_baseline"] * 2    # dd + read-4MiB
    cluster = [r for r in results if r.test.kind == "rados_bench"]
    assert [r.test.params["phase"] for r in cluster] == ["write", "seq"]
    for r in cluster:
        a = r.analysis
        assert a is not None and a.ceiling_bytes_per_s > 0 and a.efficiency > 0, r.model_dump()
        # a modelled limit, or a device the host watch saw busy (on a shared machine, others' I/O on its disk), or the
        # CPUs with whose they were (issue 35: "CPU (Ceph daemons on vm)")
        assert a.bottleneck in ("client network", "public network", "cluster network", "disks",
                                "replication/EC write amplification", "journal double write", "CPU") \
            or a.bottleneck.startswith(("disk ", "CPU (")), a.bottleneck
        assert "MiB/s" in a.reason and "loopback" in a.reason and "share one device" in a.reason
    assert "efficiency" in res.stdout and "bottleneck" in res.stdout
    assert leftovers(osd_dirs(lab)) == []


def test_quick_suite_network_baseline_is_the_loopback_pair_on_the_one_host_lab(baselined_run):
    res, results = baselined_run
    net = [r for r in results if r.test.kind == "net_baseline"]
    assert [(r.test.params["pattern"], r.test.params["streams"]) for r in net] == [("pair", 1), ("pair", 4)], \
        res.stdout
    for r in net:
        p = r.test.params
        assert p["sender"] == p["receivers"][0] == p["hosts"][0] and len(p["hosts"]) == 1
        assert r.measurement.extra["loopback"] and any("loopback" in n for n in r.notes), r


# ---- bad input: one line, exit 2, nothing left behind -------------------------------------------------------

def test_path_that_does_not_exist(tmp_path):
    line = one_line_exit_2(cli_here(["baseline", "disk", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]))
    assert "does not exist" in line
    assert not (tmp_path / "o").exists() and not (tmp_path / "nope").exists()   # fio would have created it


def test_path_that_is_not_writable(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    if subprocess.run(["chattr", "+i", str(d)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not supported here (needs root and ext4/xfs)")
    try:
        line = one_line_exit_2(cli_here(["baseline", "disk", str(d), "--size", "1MiB", "--out", str(tmp_path / "o")]))
    finally:
        subprocess.run(["chattr", "-i", str(d)], check=True)
    assert "cannot write in" in line
    assert list(d.iterdir()) == [] and not (tmp_path / "o").exists()


def test_less_free_space_than_size(tmp_path):
    line = one_line_exit_2(cli_here(["baseline", "disk", str(tmp_path), "--size", "100TiB",
                                     "--out", str(tmp_path / "o")]))
    assert "free, less than the test file of 100TiB" in line
    assert list(tmp_path.iterdir()) == []


def test_raw_device_needs_the_flag_and_a_device_in_use_is_refused(tmp_path):
    root = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "/"], capture_output=True, text=True).stdout.strip()
    if not root.startswith("/dev/") or not Path(root).exists():
        pytest.skip(f"the root filesystem is not on a block device here ({root!r})")
    line = one_line_exit_2(cli_here(["baseline", "disk", root, "--out", str(tmp_path / "o")]))
    assert "raw block device" in line and "--allow-raw-device" in line
    line = one_line_exit_2(cli_here(["baseline", "disk", root, "--allow-raw-device", "--out", str(tmp_path / "o")]))
    assert "refusing to write to" in line and "mounted" in line
    assert not (tmp_path / "o").exists()


def test_iperf3_port_that_is_taken(tmp_path):
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        port = s.getsockname()[1]
        line = one_line_exit_2(cli_here(["baseline", "network", "--port", str(port), "--duration", "1s",
                                         "--out", str(tmp_path / "o")]))
    assert f"port {port} is taken" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("host, words", [("no-such-host.invalid", "does not resolve"),
                                          ("192.0.2.1", "cannot be reached over ssh")])
def test_host_that_cannot_be_reached(tmp_path, host, words):
    before = iperf3_pids()
    line = one_line_exit_2(cli_here(["baseline", "network", "--hosts", f"localhost,{host}", "--duration", "1s",
                                     "--out", str(tmp_path / "o")]))
    assert words in line and host in line
    assert not (tmp_path / "o").exists() and iperf3_pids() <= before


def test_bad_baseline_section_names_the_yaml_path(tmp_path):
    suite = tmp_path / "s.yaml"
    assert '"streams": 4' in SUITE
    suite.write_text(SUITE.replace('"streams": 4', '"streams": 0'))
    line = one_line_exit_2(cli_here(["validate", str(suite)]))
    assert "baseline.network.streams" in line


def test_suite_with_a_bad_baseline_is_refused_before_anything_runs(cephbench_env, tmp_path, lab_cluster):
    flags = lab_cluster.osd_flags()
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace("paths: lab-osds", f"paths: [{tmp_path / 'missing'}]"))
    line = one_line_exit_2(cli_here(["run", str(suite), "--out", str(tmp_path / "o")], cephbench_env))
    assert line.startswith("cephbench: baseline.disks.paths: ") and "does not exist" in line
    assert [p.name for p in tmp_path.iterdir()] == ["s.yaml"]
    assert not (tmp_path / "o").exists() and lab_cluster.osd_flags() == flags


def test_two_addresses_of_this_host_give_pairs_both_ways_and_one_to_many(tmp_path):
    """127.0.0.1 and 127.0.0.2 stand in for two hosts: the multi-host plan without SSH."""
    before = iperf3_pids()
    out = tmp_path / "net2"
    res = cli(["baseline", "network", "--hosts", "127.0.0.1,127.0.0.2", "--streams", "1", "--duration", "1s",
               "--out", str(out)])
    assert res.returncode == 0, res.stderr + res.stdout
    results, _ = RunDir.open(out).results()
    got = [(r.test.params["pattern"], r.test.params["sender"], r.test.params["receivers"]) for r in results]
    assert got == [("pair", "127.0.0.1", ["127.0.0.2"]), ("pair", "127.0.0.2", ["127.0.0.1"]),
                   ("one-to-many", "127.0.0.1", ["127.0.0.2"]), ("one-to-many", "127.0.0.2", ["127.0.0.1"])]
    assert all(r.status == "ok" and r.measurement.extra["bits_per_s"] > 0 for r in results)
    assert iperf3_pids() <= before


# ---- `cephbench baseline` runs as a run's baseline does: ledger, host watch, cleanup (issue 26) --------------------

def _resources(out: Path) -> list[dict]:
    try:
        return json.loads((out / "resources.json").read_text() or "[]")
    except (OSError, ValueError):       # not written yet, or caught between its write and its rename
        return []


def _alive(tag: str) -> bool:
    """The process of a ledger tag "pid:start-ticks" still runs (the same process, not a reused PID)."""
    pid, _, ticks = tag.partition(":")
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19] == ticks
    except (OSError, IndexError):
        return False


def _start_until(args, out: Path, ready, timeout: float = 120) -> tuple[subprocess.Popen, list[dict]]:
    """The CLI started, once `ready(entries of its resources.json)` holds: (the process, those entries)."""
    from labcli import CLI
    proc = subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        left = _resources(out)
        if ready(left):
            return proc, left
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"never ready: {proc.communicate()}")


def _processes(left: list[dict]) -> list[str]:
    return [r["name"] for r in left if r["kind"] == "process"]


def test_network_baseline_is_a_run_its_results_carry_host_loads(tmp_path):
    out = tmp_path / "net"
    res = cli(["baseline", "network", "--duration", "1s", "--streams", "1", "--out", str(out)])
    assert res.returncode == 0, res.stderr + res.stdout
    results, _ = RunDir.open(out).results()
    assert results and all(r.status == "ok" for r in results)
    for r in results:       # this machine's CPU while iperf3 ran: a loopback figure is a CPU figure
        assert [h.host for h in r.hosts] == [socket.gethostname()], r.hosts
        assert r.hosts[0].cpu_busy_mean is not None
    meta = RunDir.open(out).meta()
    assert {t["kind"] for t in meta["plan"]} == {"net_baseline"} and meta["finished_unix"]
    assert _resources(out) == [] and (out / "resources.json").is_file()


def test_network_baseline_sigint_leaves_no_iperf3_server(tmp_path):
    out = tmp_path / "net"
    proc, left = _start_until(["baseline", "network", "--duration", "30s", "--out", out], out,
                              lambda left: any(_alive(t) for t in _processes(left)))
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert [t for t in _processes(left) if _alive(t)] == []
    assert _resources(out) == []


def test_network_baseline_kill_9_then_cleanup_stops_its_iperf3_server(tmp_path):
    out = tmp_path / "net"
    proc, left = _start_until(["baseline", "network", "--duration", "30s", "--out", out], out,
                              lambda left: any(_alive(t) for t in _processes(left)))
    proc.kill()
    proc.communicate()
    servers = [t for t in _processes(_resources(out)) if _alive(t)]
    assert servers, "the iperf3 server outlives a kill -9 (what cleanup is for)"
    res = cli(["cleanup", out])
    assert res.returncode == 0, res.stdout + res.stderr
    assert [t for t in servers if _alive(t)] == []
    assert _resources(out) == []


def test_disk_baseline_is_a_run_with_host_loads_and_sigterm_leaves_no_file(tmp_path):
    out = tmp_path / "disk"
    res = cli(["baseline", "disk", str(tmp_path), "--size", "16MiB", "--runtime", "1s", "--pattern", "dd",
               "--out", str(out)])
    assert res.returncode == 0, res.stderr + res.stdout
    [r] = RunDir.open(out).results()[0]
    assert r.status == "ok" and [h.host for h in r.hosts] == [socket.gethostname()], r.hosts
    assert [t["kind"] for t in RunDir.open(out).meta()["plan"]] == ["disk_baseline"]
    out2 = tmp_path / "disk2"
    proc, left = _start_until(["baseline", "disk", tmp_path, "--size", "64MiB", "--runtime", "30s",
                               "--pattern", "randread-4KiB-qd1", "--out", out2], out2,
                              lambda left: any(_alive(t) for t in _processes(left)))
    files = [r["name"].partition(":")[2] for r in left if r["kind"] == "disk-file"]
    assert files
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert [f for f in files if Path(f).exists() or Path(f + ".pid").exists()] == []
    assert [t for t in _processes(left) if _alive(t)] == []
    assert _resources(out2) == []


def test_disk_baseline_kill_9_then_cleanup_leaves_no_file(tmp_path):
    out = tmp_path / "disk"
    proc, left = _start_until(["baseline", "disk", tmp_path, "--size", "64MiB", "--runtime", "30s",
                               "--pattern", "randread-4KiB-qd1", "--out", out], out,
                              lambda left: any(_alive(t) for t in _processes(left)))
    proc.kill()
    proc.communicate()
    files = [r["name"].partition(":")[2] for r in _resources(out) if r["kind"] == "disk-file"]
    assert files
    res = cli(["cleanup", out])
    assert res.returncode == 0, res.stdout + res.stderr
    assert [f for f in files if Path(f).exists() or Path(f + ".pid").exists()] == []
    assert [t for t in _processes(left) if _alive(t)] == []
    assert _resources(out) == []
