"""Ground truth of many clients (issue 15, the CenterDevice lesson as a test), on conftest's `clients_lab`: client
hosts c1 and c2 whose links alone are shaped to R = 200 Mbit/s, the OSD hosts' links unshaped.

- The network baseline measures each client against every OSD host at once, started together, over the flows'
  window: R, not more.
- One client reads 4 MiB objects at about R, and the verdict names the client network.
- Two clients read at about 2R: per-client instances (hosts, start and end), merged over their common window, the
  start spread recorded, and the report's per-client table shows both.
- A client whose tool is killed mid-run fails the test naming it; the other client's tool is stopped, and nothing
  is left on the cluster or on either client.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cephbench.lab import Lab

from conftest import CLIENT_RATE_BITS
from test_ground_truth import TCP_SHARE, by_kind

CLI = [sys.executable, "-m", "cephbench.entry"]
MIB = 2**20
R = CLIENT_RATE_BITS / 8 * TCP_SHARE          # what TCP carries of one client's shaped link

SUITE = """
name: gt-clients
clients: lab
baseline:
  network: {hosts: osd-hosts, streams: 1, duration: 1s}
pools:
  rep: {type: replicated, size: 3, pg_num: 32}
workloads:
  - {name: rados, type: rados_bench, pool: rep, modes: [write, seq], object_size: 4MiB, concurrency: 8,
     duration: {write: 6s, seq: 3s}, clients: [1, 2]}
"""


def run(lab: Lab, tmp_path: Path, text: str) -> tuple[subprocess.CompletedProcess, Path]:
    suite = tmp_path / "suite.yaml"
    suite.write_text(text)
    out = tmp_path / "run"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}, **lab.env()}
    res = subprocess.run([*CLI, "run", str(suite), "--out", str(out)], capture_output=True, text=True, timeout=900,
                         env=env)
    return res, out


def results_of(out: Path) -> list[dict]:
    return [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines() if ln.strip()]


@pytest.mark.groundtruth
def test_one_client_reads_its_link_and_two_clients_read_twice_that(clients_lab, tmp_path):
    res, out = run(clients_lab, tmp_path, SUITE)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    results = results_of(out)
    net = by_kind(results, "net_baseline")
    hosts = net[0]["test"]["params"]["hosts"]
    assert sorted(hosts) == ["h1", "h2", "h3"], hosts     # no load from this machine: it is not measured
    for c in ("c1", "c2"):
        (fan_in,) = [r for r in net if r["test"]["params"].get("receivers") == [c]]
        got = fan_in["measurement"]["bytes_per_s"]
        print(f"\nevery OSD host -> {c} at once: {got / MIB:.1f} MiB/s (its link: {R / MIB:.1f} MiB/s of TCP)")
        # over the flows' window: their own rates summed read up to +13 % (one flow's handshake queues behind the
        # others' data), a staggered start +25 %
        assert abs(got - R) <= 0.07 * R, fan_in["measurement"]
    seq = {r["test"]["params"]["clients"]: r for r in by_kind(results, "rados_bench", phase="seq")}
    one, two = seq[1], seq[2]
    for n, r in seq.items():
        m, a = r["measurement"], r["analysis"]
        print(f"seq 4 MiB from {n} client(s): {m['bytes_per_s'] / MIB:.1f} MiB/s = {m['bytes_per_s'] / (n * R):.0%} "
              f"of {n} link(s); {a['reason']}")
    assert 0.80 * R <= one["measurement"]["bytes_per_s"] <= 1.05 * R
    assert one["analysis"]["bottleneck"].startswith("client network (c1 pub0)"), one["analysis"]
    assert one["measurement"]["host"] == "c1"
    assert 0.80 * 2 * R <= two["measurement"]["bytes_per_s"] <= 1.05 * 2 * R
    assert two["analysis"]["bottleneck"].startswith("client network (c"), two["analysis"]
    inst = two["measurement"]["instances"]
    assert sorted(i["host"] for i in inst) == ["c1", "c2"]
    assert all(i["start_unix_s"] and i["end_unix_s"] > i["start_unix_s"] for i in inst)
    spread = two["measurement"]["extra"]["clients"]["start_spread_s"]
    print(f"start spread of the two clients: {spread * 1000:.1f} ms")
    assert spread < 0.05
    report = (out / "report.md").read_text()
    assert "| c1 |" in report and "| c2 |" in report, report[-2000:]


KILL_SUITE = """
name: gt-kill
clients: lab
pools:
  rep: {type: replicated, size: 2, pg_num: 16}
workloads:
  - {name: rados, type: rados_bench, pool: rep, modes: [write], object_size: 64KiB, concurrency: 4, duration: 10s,
     clients: all}
"""


def _pids_on(lab: Lab, host: str, pattern: str) -> list[int]:
    """PIDs of processes whose command line has `pattern`, seen from `host` (the lab's hosts share this kernel, so
    this lists them all; the namespace is where ssh reaches)."""
    # "[c]ephbench-..." matches the tools' command lines, not the shell's that runs pgrep
    res = subprocess.run(["ssh", "-F", str(lab.dir / "ssh" / "config"), host,
                          f"pgrep -f -- '[{pattern[0]}]{pattern[1:]}' || true"], capture_output=True, text=True,
                         timeout=30)
    return [int(p) for p in res.stdout.split()]


def _start_kill_suite(lab: Lab, tmp_path: Path, hosts: tuple[str, ...]) -> tuple[subprocess.Popen, Path, Path]:
    """`cephbench run` of KILL_SUITE, returned once rados bench reports on every one of `hosts`."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(KILL_SUITE)
    out = tmp_path / "run"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}, **lab.env()}
    proc = subprocess.Popen([*CLI, "run", str(suite), "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    raw = out / "raw" / "001-rados-write-64KiB-t4"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not all(
            "sec Cur ops" in ((raw / f"rados-bench-write-{c}-i0.txt").read_text()
                              if (raw / f"rados-bench-write-{c}-i0.txt").exists() else "") for c in hosts):
        time.sleep(0.2)
    return proc, out, raw


def test_a_client_killed_mid_run_fails_the_test_by_name_and_nothing_is_left(clients_lab, tmp_path):
    proc, out, raw = _start_kill_suite(clients_lab, tmp_path, ("c1",))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}, **clients_lab.env()}
    text = (raw / "rados-bench-write-c1-i0.txt").read_text()
    pid = int(text.split("@cephbench pid=")[1].split()[0])     # the tool's pid, as `at` printed it
    subprocess.run(["ssh", "-F", str(clients_lab.dir / "ssh" / "config"), "c1", f"kill -9 {pid}"], check=True,
                   timeout=30)
    _, stderr = proc.communicate(timeout=180)
    results = results_of(out)
    (w,) = results
    assert w["status"] == "failed" and "c1" in w["error"], w["error"]
    print(f"\n{w['error']}")
    run_id = json.loads((out / "run.json").read_text())["run_ids"][-1]
    assert not _pids_on(clients_lab, "c2", f"cephbench-{run_id}"), "a client's tool outlived the test"
    assert json.loads((out / "resources.json").read_text()) == []
    pools = subprocess.run(["ceph", "osd", "pool", "ls"], capture_output=True, text=True, env=env, timeout=60)
    assert not [p for p in pools.stdout.split() if p.startswith("cephbench-")]


def test_ctrl_c_stops_every_client_and_leaves_nothing(clients_lab, tmp_path):
    proc, out, _ = _start_kill_suite(clients_lab, tmp_path, ("c1", "c2"))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}, **clients_lab.env()}
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 130, stderr
    run_id = json.loads((out / "run.json").read_text())["run_ids"][-1]
    for c in ("c1", "c2"):
        assert not _pids_on(clients_lab, c, f"cephbench-{run_id}"), f"a tool on {c} outlived Ctrl-C"
    assert json.loads((out / "resources.json").read_text()) == []
    pools = subprocess.run(["ceph", "osd", "pool", "ls"], capture_output=True, text=True, env=env, timeout=60)
    assert not [p for p in pools.stdout.split() if p.startswith("cephbench-")]
