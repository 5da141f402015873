"""Ground truth for CPU causes (issue 35): an OSD held by a container-style CPU limit is named with its limit, a
CPU-burning neighbour on a lab host is named as other processes, and a throttled drive is still named with a
neighbour burning beside it.

Each builds a 3-host lab with the cause (`lab up --cpu-limit osd.2=0.08`, `--host-load h2=1.5`), runs a short rados
bench write on it with `cephbench run` and reads the verdict. The lab's hosts are cpuacct groups of this machine, so
the neighbour's loops are h2's processes as another tenant's are a shared host's; they get the CPU the machine has
left, which on the shared development VM was 0.26 of the 1.5 cores asked (tests/fixtures/cpu_split/).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GROUND_TRUTH = True    # measures a verdict against a known bottleneck
MULTI_HOST = True      # makes namespaces, bridges, loop devices and cgroups

CLI = [sys.executable, "-m", "cephbench.entry"]
SUITE = """
name: cpu-causes
pools:
  rep: {{type: replicated, size: 3, pg_num: 32}}
workloads:
  - {{name: rados, type: rados_bench, pool: rep, modes: [write], object_size: {size}, concurrency: 16, duration: 6s}}
"""


def _verdict(tmp_path: Path, lab_flags: list[str], size: str) -> dict:
    """A 3-host lab with `lab_flags`, one write of `size` objects run on it, the lab taken down (and checked gone:
    its cpu groups and its neighbour's loops); the result's analysis."""
    if os.geteuid() != 0:
        pytest.fail("the multi-host lab needs root (network namespaces, cgroups)")
    lab = tmp_path / "lab"
    try:
        up = subprocess.run([*CLI, "lab", "up", "--dir", str(lab), "--hosts", "3", "--osd-size", "4GiB", "--no-rgw",
                             *lab_flags], capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        lab_id = json.loads((lab / "drives.json").read_text())["lab_id"]
        loops = [int(p.read_text()) for p in (lab / "run").glob("load.*.pid")]
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE.format(size=size))
        out = tmp_path / "run"
        run = subprocess.run([*CLI, "run", str(suite), "--lab-dir", str(lab), "--out", str(out)],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    finally:
        down = subprocess.run([*CLI, "lab", "down", "--dir", str(lab)], capture_output=True, text=True, timeout=300)
    assert down.returncode == 0, down.stdout + down.stderr
    assert not Path(f"/sys/fs/cgroup/cpu/cephbench-{lab_id}").exists()
    assert all(not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
               for pid in loops), loops
    [result] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    a = result["analysis"]
    print(a["bottleneck"], a["reason"], *a["evidence"], sep="\n")
    return a


def test_an_osd_held_by_its_cpu_limit_is_named_with_its_limit(tmp_path: Path):
    a = _verdict(tmp_path, ["--cpu-limit", "osd.2=0.08"], "64KiB")
    assert a["bottleneck"] == "CPU limit of osd.2 (h3)", a["reason"]
    # (the slow store's line starts with the OSD too, its cause the same limit)
    [line] = [ln for ln in a["evidence"] if ln.startswith("osd.2 (h3") and "held by its CPU limit" in ln]
    assert "held by its CPU limit, 0.08 cores, throttled in" in line
    used = float(re.search(r"it used ([\d.]+) cores", line).group(1))
    assert used <= 0.08 * 1.05, line          # the quota held it


TOOLBOX_SUITE = """
name: cpu-limit-toolbox
settings:
  prometheus: {url}
pools:
  rep: {{type: replicated, size: 3, pg_num: 32}}
workloads:
  - {{name: rados, type: rados_bench, pool: rep, modes: [write], object_size: 64KiB, concurrency: 16, duration: 6s}}
"""


def test_an_osd_held_by_its_cpu_limit_is_named_from_cadvisors_series_without_ssh(tmp_path: Path):
    """From a toolbox (the conf and key alone, Prometheus, no ssh): the lab's cAdvisor's series of osd.2's cgroup
    name its CPU limit, as the ssh watch's cgroup files do above (before cAdvisor, only its slowness named it)."""
    from cephbench.lab.monitoring import cadvisor_binary
    if cadvisor_binary(shutil.which) is None:
        pytest.skip("cAdvisor is not built (make cadvisor): the lab's Prometheus has no container series")
    if os.geteuid() != 0:
        pytest.fail("the multi-host lab needs root (network namespaces, cgroups)")
    lab = tmp_path / "lab"
    try:
        up = subprocess.run([*CLI, "lab", "up", "--dir", str(lab), "--hosts", "3", "--osd-size", "4GiB", "--no-rgw",
                             "--monitoring", "--cpu-limit", "osd.2=0.05"], capture_output=True, text=True, timeout=300)
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        url = json.loads((lab / "lab.json").read_text())["monitoring"]["prometheus"]
        box = tmp_path / "toolbox"
        box.mkdir()
        shutil.copyfile(lab / "ceph.conf", box / "ceph.conf")
        shutil.copyfile(lab / "keyring" / "ceph.client.admin.keyring", box / "keyring")
        suite = tmp_path / "suite.yaml"
        suite.write_text(TOOLBOX_SUITE.format(url=url))
        out = tmp_path / "run"
        env = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}
        run = subprocess.run([*CLI, "run", str(suite), "--conf", str(box / "ceph.conf"), "--keyring",
                              str(box / "keyring"), "--out", str(out)], capture_output=True, text=True, timeout=300,
                             env=env)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    finally:
        down = subprocess.run([*CLI, "lab", "down", "--dir", str(lab)], capture_output=True, text=True, timeout=300)
    assert down.returncode == 0, down.stdout + down.stderr
    assert subprocess.run(["pgrep", "-f", f"{lab}/monitoring/"], capture_output=True).stdout == b""
    [result] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    a, ev = result["analysis"], result["evidence"]
    print(a["bottleneck"], a["reason"], *a["evidence"], sep="\n")
    assert all(h.get("source") != "cpuacct" for h in result.get("hosts", [])), "ssh watched a lab host"
    assert a["bottleneck"] == "CPU limit of osd.2 (h3)", (a["reason"], a["evidence"])
    # (the slow store's line starts with the OSD too, its cause the same limit)
    [line] = [ln for ln in a["evidence"] if ln.startswith("osd.2 (h3") and "held by its CPU limit" in ln]
    assert "held by its CPU limit, 0.05 cores, throttled in" in line and line.endswith(
        "; cAdvisor's container series in Prometheus"), line
    assert any(n.startswith('cAdvisor\'s series of osd.2 on h3: the container {id="/cephbench-') for n in ev["notes"]), \
        ev["notes"]


def test_a_cpu_burning_neighbour_is_named_as_other_processes(tmp_path: Path):
    a = _verdict(tmp_path, ["--host-load", "h2=1.5"], "4KiB")
    # where the CPUs are what is named, it says whose: the other processes', or the Ceph daemons' where they used
    # more of the saturated cores than the neighbour got (CI, the test alone on the 2-core VM: Ceph 1.23 cores, others
    # 0.66); either way the neighbour is named as other load, with how much and on which host (on a machine of more
    # cores the neighbour may leave them under 80 % busy: the result is still said not to be the cluster's alone)
    assert not a["bottleneck"].startswith("CPU") or a["bottleneck"].startswith(
        ("CPU (other processes on ", "CPU (Ceph daemons on ")), a["reason"]
    assert "the cluster was not measured alone" in a["reason"] and "on h2" in a["reason"], a["reason"]
    [split] = [ln for ln in a["evidence"] if ln.startswith("CPU of ") and " by consumer " in ln]
    on = {h: float(c) for h, c in re.findall(r"(h\d) ([\d.]+)", split.split("(of them on ", 1)[1])}
    # the neighbour is h2's: its other processes stand above the other hosts' (cephbench's own readers there)
    assert on["h2"] >= 0.1 and on["h2"] > 5 * max(on["h1"], on["h3"]), split


def test_a_throttled_drive_is_named_with_a_neighbour_burning_beside_it(tmp_path: Path):
    a = _verdict(tmp_path, ["--osd-throttle", "osd.1=8MiB/s", "--host-load", "h2=1.5"], "1MiB")
    assert a["bottleneck"].startswith("disk h2:"), a["reason"]
