"""Which fio and iperf3 the baselines run on a lab of another release (issue 27: a host of a Reef lab is a Reef host):
the root's, wherever this machine stands for one of the lab's hosts, else this machine's with one line saying so.
The lab is a lab.json as `lab up --release` writes it, and a root with (or without) the tool; nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

from cephbench.cluster.ceph import Target
from cephbench.drivers import disk_baseline, iperf
from cephbench.hosts.remote import HostRef
from cephbench.lab.chroot import HELPER


def lab_of(tmp_path: Path, tools: tuple[str, ...], topology: dict | None = None) -> Target:
    root = tmp_path / "roots" / "reef" / "root"
    (root / "usr" / "bin").mkdir(parents=True)
    for t in tools:
        (root / "usr" / "bin" / t).touch()
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "lab.json").write_text(json.dumps({
        "dir": str(lab), "fsid": "f", "osds": 1, "osd_size_bytes": 1, "rgw": False, "ports": {}, "created_unix": 0.0,
        "release": "reef", "root": {"release": "reef", "path": str(root)}, "topology": topology}))
    return Target(lab / "ceph.conf", None, None, is_lab=True)


def target_here(path: str) -> disk_baseline.DiskTarget:
    return disk_baseline.DiskTarget(path, f"{path}/t.dat", False, "254:0")


def test_the_disk_baselines_fio_runs_from_the_labs_root(tmp_path):
    lab = lab_of(tmp_path, ("fio", "iperf3"))
    remote = disk_baseline.DiskTarget("/x", "/x/t.dat", False, "254:1", HostRef("n2", "10.0.0.2"))
    targets, notes = disk_baseline.with_lab_root([target_here("/lab/osd/0"), remote], {"paths": "lab-osds"}, lab)
    assert notes == [] and targets[1] == remote          # a host reached over ssh runs its own (the root's, there)
    argv = targets[0].in_root.argv(["fio", "--version"])
    assert argv[:4] == ["unshare", "--mount", "--propagation", "private"] and str(HELPER) in argv
    assert argv[-5:] == [str(tmp_path / "roots" / "reef" / "root"), str(tmp_path / "lab"), "--", "fio", "--version"]
    # paths the user named are this machine's, which the root does not see
    same, notes = disk_baseline.with_lab_root([target_here("/srv/d")], {"paths": ["/srv/d"]}, lab)
    assert same[0].in_root is None and notes == []


def test_a_root_without_fio_leaves_this_machines_and_says_so_in_one_line(tmp_path):
    lab = lab_of(tmp_path, ("iperf3",))
    targets, notes = disk_baseline.with_lab_root([target_here("/lab/osd/0")], {"paths": "lab-osds"}, lab)
    assert targets[0].in_root is None
    assert notes == ["the lab's reef root has no fio: this machine's fio ran instead"]


def test_the_one_host_labs_iperf3_runs_from_its_root_and_a_multi_host_labs_client_is_its_own(tmp_path):
    me = iperf.NetHost("vm", "127.0.0.1", True, bind=True)
    hosts, notes = iperf.with_lab_root([me], lab_of(tmp_path / "one", ("fio", "iperf3")))
    assert notes == [] and hosts[0].in_root is not None
    assert hosts[0].wrap(["iperf3", "-s"])[0] == "unshare" and hosts[0].wrap(["iperf3", "-s"])[-2:] == ["iperf3", "-s"]
    # a multi-host lab: this machine is the client on the public bridge, not a host of the lab
    hosts, notes = iperf.with_lab_root([me], lab_of(tmp_path / "multi", ("fio", "iperf3"), {"hosts": []}))
    assert notes == [] and hosts[0].in_root is None and hosts[0].wrap(["iperf3"]) == ["iperf3"]
    hosts, notes = iperf.with_lab_root([me], lab_of(tmp_path / "bare", ("fio",)))
    assert hosts[0].in_root is None
    assert notes == ["the lab's reef root has no iperf3: this machine's iperf3 ran instead"]
    # not a lab: nothing to look for
    assert iperf.with_lab_root([me], Target(tmp_path / "ceph.conf", None, None)) == ([me], [])
