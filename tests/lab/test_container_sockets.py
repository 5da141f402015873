"""The OSDs' admin sockets where cephadm puts them (issue 28, item 4): on a multi-host lab whose OSDs keep their
sockets in /var/run/ceph/<fsid>/ (`Lab.up(container_sockets=True)`), which the hosts' ceph.conf does not name, a run
reads every OSD's counters through its socket over ssh, not through `ceph tell`, and its evidence says where each
socket was found: one named by the cluster's config (`run_dir` with `$fsid`), the others by cephadm's layout."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cephbench.lab import Lab
from cephbench.lab.multihost import MultiHostSpec

from labcli import run_cli, write_suite

MULTI_HOST = True      # makes namespaces, bridges and loop devices: runs with the multi-host tests

SUITE = """
name: sockets
pools:
  rep2: {type: replicated, size: 2, pg_num: 16}
workloads:
  - name: rados
    type: rados_bench
    pool: rep2
    modes: [write]
    object_size: [64KiB]
    concurrency: 8
    duration: 3s
"""


@pytest.fixture
def sockets_lab(tmp_path: Path):
    lb = Lab(tmp_path / "lab")
    try:
        lb.up(osd_size_bytes=4 * 1024**3, rgw=False, container_sockets=True,
              multi=MultiHostSpec(hosts=3, osds_per_host=1))
        yield lb
    finally:
        info = lb.info()
        lb.down()
        if info is not None and info.osd_sockets:
            assert not Path(info.osd_sockets).exists()      # `down` removes the directory it made


def test_counters_are_read_through_the_sockets_cephadm_places_over_ssh(sockets_lab: Lab, tmp_path: Path):
    lb = sockets_lab
    info = lb.info()
    assert info is not None and info.osd_sockets == f"/var/run/ceph/{info.fsid}"
    env = {**os.environ, **lb.env()}
    for n in range(3):
        assert Path(f"{info.osd_sockets}/ceph-osd.{n}.asok").is_socket()
        # what the hosts' ceph.conf names (a lab host's sessions have CEPH_CONF): no socket there
        named = subprocess.run(["ceph-conf", "--name", f"osd.{n}", "--show-config-value", "admin_socket"],
                               env=env, capture_output=True, text=True, check=True).stdout.strip()
        assert named and not named.startswith("/var/run/ceph/") and not Path(named).exists(), named
    # osd.0's socket named by the cluster's config, through its run_dir: the central config is read, not the conf
    for who, name, value in (("osd.0", "run_dir", "/var/run/ceph/$fsid"),
                             ("osd.0", "admin_socket", "$run_dir/$cluster-$name.asok")):
        subprocess.run(["ceph", "config", "set", who, name, value], env=env, check=True, capture_output=True,
                       timeout=60)

    out = tmp_path / "run"
    res = run_cli(["run", write_suite(tmp_path, SUITE), "--out", out], env)
    assert res.returncode == 0, res.stdout + res.stderr
    result = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    ev = result["evidence"]
    sources = {o["osd"]: o["source"] for o in ev["osds"]}
    assert sources == {0: "admin socket, cluster config", 1: "admin socket, cephadm layout",
                       2: "admin socket, cephadm layout"}, (sources, ev["notes"])
    assert not [n for n in ev["notes"] if "counters not read" in n], ev["notes"]
    assert sum(o["op_w"] or 0 for o in ev["osds"]) >= result["measurement"]["ops_total"] * 0.9
    # the socket's peer gave each OSD's CPU per op, over ssh on its host: what `ceph tell` cannot
    cpu = {c["who"]: c for c in ev["cpu"]}
    assert all(cpu[f"osd.{n}"]["source"] == "/proc/PID/stat over ssh" and cpu[f"osd.{n}"]["cpu_s"] > 0
               for n in range(3)), ev["cpu"]
    said = result["analysis"]["evidence"]
    assert any("OSD counters through the admin sockets (cluster config, cephadm layout)" in line
               for line in said), said
