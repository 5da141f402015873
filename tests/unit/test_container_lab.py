"""A lab in containers, its pure parts (lab/containers.py): the limits' flags, cephadm's paths and names, the daemons'
conf, the podman command of a daemon, a container's cgroups; and `lab up --containers`'s refusals, one line each. The
lab itself is started in tests/lab/test_container_lab.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.lab import containers
from cephbench.lab.conf import LabPorts, render_conf

from clirun import cephbench


def test_limits_by_type_or_daemon_in_cores_and_sizes():
    assert containers.parse_limits(("osd=0.5", "osd.1=0.2,mon=1"), "--cpus") == {"osd": 0.5, "osd.1": 0.2, "mon": 1}
    assert containers.parse_limits(("osd=1GiB", "rgw=512MiB"), "--memory") == {"osd": 2**30, "rgw": 2**29}
    limits = {"osd": 0.5, "osd.1": 0.2, "rgw": 1}
    assert containers.limit_for(limits, "osd.1") == 0.2 and containers.limit_for(limits, "osd.0") == 0.5
    assert containers.limit_for(limits, "mgr.x") is None and containers.limit_for(limits, "client.rgw.lab") == 1


@pytest.mark.parametrize("flag, value, says", [
    ("--cpus", "osd", "give DAEMON=AMOUNT"), ("--cpus", "mds=1", "give DAEMON=AMOUNT"),
    ("--cpus", "osd=lots", "not a number of cores"), ("--cpus", "osd=0.001", "cores from 0.01 to 64"),
    ("--cpus", "osd=65", "cores from 0.01 to 64"), ("--memory", "osd=1MB", "ambiguous"),
    ("--memory", "osd=1MiB", "at least 64MiB")])
def test_a_bad_limit_is_refused_naming_its_flag(flag, value, says):
    with pytest.raises(UserError) as exc:
        containers.parse_limits((value,), flag)
    assert exc.value.where == flag and says in str(exc.value), str(exc.value)


def test_cephadms_layout_of_a_cluster_on_a_host():
    lay = containers.Layout("f5")
    assert lay.dirs == (Path("/var/lib/ceph/f5"), Path("/var/run/ceph/f5"), Path("/var/log/ceph/f5"))
    assert lay.data("osd.0") == Path("/var/lib/ceph/f5/osd.0") and lay.container("osd.0") == "ceph-f5-osd-0"
    assert lay.data_inside("mon.a") == "/var/lib/ceph/mon/ceph-a"
    # RGW as cephadm names it: rgw.lab on the host, its data where Ceph's default looks for client.rgw.lab's
    assert lay.data("client.rgw.lab") == Path("/var/lib/ceph/f5/rgw.lab")
    assert lay.container("client.rgw.lab") == "ceph-f5-rgw-lab"
    assert lay.data_inside("client.rgw.lab") == "/var/lib/ceph/radosgw/ceph-rgw.lab"
    assert lay.mounts("osd.1") == ["/var/lib/ceph/f5/osd.1:/var/lib/ceph/osd/ceph-1",
                                   "/var/lib/ceph/f5/osd.1/config:/etc/ceph/ceph.conf:ro",
                                   "/var/run/ceph/f5:/var/run/ceph", "/var/log/ceph/f5:/var/log/ceph"]
    boot = Path("/lab/run/bootstrap/config")
    assert lay.mounts("mon.a", boot)[1] == "/lab/run/bootstrap/config:/etc/ceph/ceph.conf:ro"


def test_the_daemons_conf_names_no_path_of_the_lab_directory():
    """So that Ceph's defaults, which are cephadm's layout once mounted, place data, sockets, logs and keyrings."""
    lab_dir = Path("/tmp/some-lab")
    text = render_conf(lab_dir, "f5", LabPorts(3300, 6789, 7480), 1, 3 * 2**30)
    conf = containers.daemon_conf(text, lab_dir)
    assert str(lab_dir) not in conf
    for kept in ("fsid = f5", "mon host = ", "osd pool default size = 1", "paxos propose interval = 0.1", "[osd]",
                 "bluestore block size = 3221225472", "[mgr]"):
        assert kept in conf, kept
    assert "admin socket = /var/run/ceph/$cluster-$name.asok" in conf and "log file = /var/log/ceph/" in conf
    for gone in ("osd data =", "mon data =", "rgw data =", "keyring = ", "pid file", "crash dir"):
        assert gone not in conf, gone


def test_a_daemons_podman_run_is_attached_labelled_with_the_lab_and_limited():
    lay = containers.Layout("f5")
    argv = containers.run_argv(["podman"], lay, "osd.1", "localhost/cephbench:reef", ["ceph-osd", "-i", "1", "-f"],
                               Path("/lab/ceph.conf"), cidfile=Path("/lab/run/osd.1.cid"), cpus=0.3, memory=2**31)
    joined = " ".join(argv)
    assert argv[:3] == ["podman", "run", "--rm"] and "--net host" in joined and "--workdir /" in joined
    # the lab's conf in the command line: how `down` knows the process for the lab's
    assert "--label io.cephbench.lab=/lab/ceph.conf" in joined and "--name ceph-f5-osd-1" in joined
    assert "--cpus 0.3" in joined and "--memory 2147483648" in joined and "--privileged" in joined
    assert "--cidfile /lab/run/osd.1.cid" in joined
    assert argv[argv.index("--entrypoint") + 1:] == ["ceph-osd", "localhost/cephbench:reef", "-i", "1", "-f"]
    mon = containers.run_argv(["podman"], lay, "mon.a", "img", ["ceph-mon", "-i", "a"], Path("/lab/ceph.conf"))
    assert "--privileged" not in mon and "--cpus" not in mon and "--cidfile" not in mon and "--hostname" not in mon


def test_a_multi_host_labs_daemon_runs_in_its_hosts_network_namespace_under_its_name():
    argv = containers.run_argv(["podman"], containers.Layout("f5"), "osd.2", "img", ["ceph-osd", "-i", "2"],
                               Path("/lab/ceph.conf"), netns="cb-ab12cd-h3", hostname="h3")
    joined = " ".join(argv)
    assert "--net ns:/run/netns/cb-ab12cd-h3" in joined and "--net host" not in joined
    assert "--hostname h3" in joined


def test_a_limit_of_one_daemon_names_one_the_lab_runs():
    names = ["mon.a", "mgr.x", "osd.0", "osd.1", "osd.2", "client.rgw.lab"]
    containers.check_targets({"osd": 1, "osd.2": 0.5, "rgw.lab": 1}, {"rgw": 2**30}, names)
    with pytest.raises(UserError) as exc:
        containers.check_targets({}, {"osd.3": 2**30}, names)
    assert exc.value.where == "--memory" and "osd.3: the lab has no such daemon" in str(exc.value)
    assert "osd.2, rgw.lab" in str(exc.value)


def test_lab_status_says_each_containers_limits_as_asked_and_as_its_cgroups_held_them():
    from cephbench.cli.lab import _container_limits
    c = {"cpus": 0.3, "memory_bytes": 2 * 2**30, "cgroup": {"cfs_quota_us": 30000, "cfs_period_us": 100000}}
    assert _container_limits(c) == "cpus 0.3 (quota 30000/100000 us), memory 2GiB"
    assert _container_limits({"cpus": None, "memory_bytes": None, "cgroup": {}}) == "no limits"
    assert _container_limits({"cpus": 1, "memory_bytes": None, "cgroup": {"cfs_quota_us": -1}}) == "cpus 1"


def test_a_containers_cgroups_from_proc():
    text = "12:memory:/libpod_parent/libpod-abc\n4:cpu,cpuacct:/libpod_parent/libpod-abc\n1:name=systemd:/x\n0::/\n"
    assert containers.cgroup_paths(text) == {"memory": "/libpod_parent/libpod-abc", "cpu": "/libpod_parent/libpod-abc",
                                             "cpuacct": "/libpod_parent/libpod-abc", "name=systemd": "/x"}


@pytest.mark.parametrize("args, says", [
    (["--containers", "--hosts", "3", "--monitoring"], "no monitoring stack yet"),
    (["--containers", "--hosts", "3", "--cpu-limit", "osd.1=0.5"], "give --cpus osd.N=CORES"),
    (["--containers", "--hosts", "3", "--objectstore", "filestore"], "runs BlueStore OSDs"),
    (["--containers", "--cpu-limit", "osd.1=0.5"], "--cpu-limit describes a multi-host lab"),
    (["--no-rgw", "--cpus", "osd=1"], "--cpus limits a container: it needs --containers"),
    (["--containers", "--no-rgw", "--memory", "osd=lots"], "--memory 'osd=lots'"),
])
def test_lab_up_in_containers_refuses_what_it_does_not_do_in_one_line(tmp_path, args, says):
    res = cephbench("lab", "up", "--dir", tmp_path / "lab", *args)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], res.stderr
    assert not (tmp_path / "lab").exists()
