"""A host's devices and links from its watch stream, and what each host is told to watch (evidence/hoststream.py,
evidence/watch.py). Fixtures: real watch streams and `ceph osd metadata` of the labs (tests/fixtures/README.md)."""

import json
from pathlib import Path

import pytest

from cephbench.evidence.hoststream import (WantedAddress, WantedDevice, file_backed, loads, parse_stream,
                                            watch_targets)
from cephbench.evidence.watch import plans
from cephbench.evidence.hostload import load_from_stream, watch_argv
from cephbench.hosts.remote import HostRef

FIX = Path(__file__).parent.parent / "fixtures"
H1 = (FIX / "watch" / "linux6.18_ceph16.2.15_lab-h1_public-100mbit_rados-write-1M.txt").read_text()
CONTROLLER = (FIX / "watch" / "linux6.18_ceph16.2.15_controller-route_rados-write-1M.txt").read_text()
MULTI = json.loads((FIX / "osd_metadata" / "ceph16.2.15_multihost3_bluestore_db.json").read_text())
ONE = json.loads((FIX / "osd_metadata" / "ceph16.2.15_onehost3_bluestore_files.json").read_text())
MIB = 1024 ** 2


def test_a_lab_hosts_stream_gives_its_link_against_the_shaped_speed_and_its_device():
    s = parse_stream(H1)
    assert s.ifaces["198.18.0.1"] == ("pub0", None)        # a veth whose sysfs speed read -1
    assert s.shaped == {"pub0": 100e6}
    assert len(s.disks) == len(s.nets) >= 8
    devs, links, notes = loads("h1", s, [WantedDevice("loop0", (0,), "data")],
                               [WantedAddress("198.18.0.1", "public")])
    assert notes == []
    [link] = links
    assert (link.iface, link.network, link.speed_bits_per_s, link.speed_source) == ("pub0", "public", 100e6,
                                                                                    "lab shaping")
    # the write filled the link: some seconds received close to 100 Mbit/s (11.9 MiB/s), none above it by much
    assert 9 * MIB < max(link.rx_bytes_per_s) < 13 * MIB
    [dev] = devs
    assert dev.osds == [0] and dev.role == "data"
    assert len(dev.busy) == len(dev.write_bytes_per_s) == len(dev.write_ops_per_s) == len(s.disks) - 1
    assert max(dev.write_bytes_per_s) > 1 * MIB and all(0 <= b <= 1 for b in dev.busy)
    assert dev.limit_write_bytes_per_s is None


def test_the_cpu_of_the_same_stream_still_reads():
    load = load_from_stream(H1, "h1", "OSD host")
    assert load is not None and load.source == "cpuacct" and load.cpus == 2
    assert len(load.cpu_busy_series) >= 7


def test_a_client_route_and_a_speed_sysfs_gives():
    s = parse_stream(CONTROLLER)
    [link] = loads("vm", s, [], [WantedAddress("198.18.0.1", "public")])[1]
    assert (link.iface, link.speed_bits_per_s, link.speed_source) == ("cbp-16f3f7", 10e9, "sysfs")
    assert max(link.tx_bytes_per_s) > 5 * MIB           # the write went out this way


def test_a_throttled_device_carries_its_limits():
    text = ("2\nlimit loop2 /sys/fs/cgroup/blkio/cephbench-fee6bd/osd.1/blkio.throttle.read_bps_device:7:2 8388608\n"
            "limit loop2 /sys/fs/cgroup/blkio/cephbench-fee6bd/osd.1/blkio.throttle.write_iops_device:7:2 200\n"
            "limit loop3 /sys/fs/cgroup/x/io.max:7:3 rbps=max wbps=1048576 riops=max wiops=max\n")
    assert parse_stream(text).limits == {"loop2": {"read_bytes_per_s": 8388608, "write_iops": 200},
                                         "loop3": {"write_bytes_per_s": 1048576}}


def test_what_cannot_be_measured_is_a_note_never_an_error():
    s = parse_stream("2\niface 198.18.0.9 ? -1\nroute 10.0.0.1 eth0 -1\nt 1\ncpu  1 0 0 1 0 0 0 0 0 0\n"
                     "net eth0: 1 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0\nt 1000000001\ncpu  2 0 0 2 0 0 0 0 0 0\n"
                     "net eth0: 1001 0 0 0 0 0 0 0 2001 0 0 0 0 0 0 0\n")
    devs, links, notes = loads("h9", s, [WantedDevice("sdz", (4,), "data")],
                               [WantedAddress("198.18.0.9", "public"), WantedAddress("10.0.0.1", "public")])
    assert devs == []
    [link] = links
    assert link.speed_bits_per_s is None and link.rx_bytes_per_s == [1000.0] and link.tx_bytes_per_s == [2000.0]
    assert notes == ["device h9:sdz (data of osd.4): no /proc/diskstats entry",
                     "link of h9 198.18.0.9: its interface is unknown (`ip` found none)",
                     "link h9 eth0: the kernel does not report its speed"]


def test_a_stream_cut_mid_line_or_with_ssh_noise_loses_only_that_line():
    s = parse_stream("ControlSocket /tmp/x already exists, disabling multiplexing\n" + H1[:len(H1) // 2])
    assert len(s.disks) >= 3 and s.shaped == {"pub0": 100e6}


def test_each_osd_host_watches_its_osds_devices_and_both_networks():
    t = watch_targets(MULTI)
    assert sorted(t) == ["h1", "h2", "h3"]
    devs, addrs = t["h2"]
    assert devs == [WantedDevice("loop2", (1,), "data"), WantedDevice("loop3", (1,), "db")]
    assert addrs == [WantedAddress("198.18.0.2", "public"), WantedAddress("198.19.0.2", "cluster")]
    assert file_backed(MULTI) == []


def test_a_file_backed_osd_is_named_with_the_disk_its_file_is_on():
    t = watch_targets(ONE)
    [(host, (devs, addrs))] = t.items()
    assert devs == [WantedDevice("vda", (0, 1, 2), "data")]      # three OSD files on one disk
    assert addrs == [WantedAddress("127.0.0.1", "public")]       # no cluster network: one address
    assert file_backed(ONE) == [(host, 0, "vda"), (host, 1, "vda"), (host, 2, "vda")]


def test_clients_route_to_the_public_network_and_this_machine_only_when_the_load_is_here():
    hosts = [HostRef(n, f"198.18.0.{i}") for i, n in enumerate(["h1", "h2", "h3"], 1)]
    c1, here = HostRef("c1", "198.18.0.4"), HostRef("vm", None)
    with_clients = plans(MULTI, hosts, [c1], here, here_is_client=False)
    assert [(p.host.name, p.role, p.cpu) for p in with_clients] == [
        ("h1", "OSD host", True), ("h2", "OSD host", True), ("h3", "OSD host", True), ("c1", "client", True)]
    assert with_clients[3].routes == [WantedAddress("198.18.0.1", "public")]
    from_here = plans(MULTI, hosts, [], here, here_is_client=True)
    assert [(p.host.name, p.cpu) for p in from_here][-1] == ("vm", False)     # CpuSampler reads its CPU
    one = plans(ONE, [HostRef("vm", None)], [], here, here_is_client=True)
    assert len(one) == 1 and one[0].cpu is False and [d.device for d in one[0].devices] == ["vda"]


@pytest.mark.parametrize("args", [([], [], []), (["loop0", "loop1"], ["198.18.0.1"], ["198.18.0.254"])])
def test_the_watch_takes_its_targets_as_words(args):
    argv = watch_argv(*args)
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["watch", *(" ".join(a) for a in args), "", "1"]
    assert watch_argv(*args, daemons=True)[-2] == "1"       # and its Ceph daemons listed
    assert watch_argv(*args, held=False)[-1] == ""          # not held by its input: runs until killed


def test_a_host_whose_watch_never_started_is_not_watched_not_a_device_without_diskstats(tmp_path):
    """A run with only a ceph.conf and a key (a toolbox: no settings.ssh), on a two-host lab: ssh to the OSD hosts by
    their names failed, and every device and link of theirs was noted as 'no /proc/diskstats entry' or 'interface
    unknown', and the verdict's missing line blamed diskstats. One note per host now says why and what measures it."""
    from cephbench.analysis.utilization import missing_evidence
    from cephbench.evidence.watch import WatchPlan, Watcher, collect
    from cephbench.core.results import Evidence
    raw = FIX / "watch" / "ssh_unresolved_host_toolbox_h1.txt"
    h1 = HostRef("h1", "h1")
    plan = WatchPlan(h1, "OSD host", [WantedDevice("loop3", (0,), "data")], [WantedAddress("198.18.1.1", "public")])
    got = collect([Watcher(plan, None, raw)], {})
    assert got.devices == [] and got.links == [] and got.hosts == []
    assert got.notes == ["h1: not watched (ssh: Could not resolve hostname h1: Name or service not known): its "
                         "devices, links and CPU are not measured; settings.ssh (hosts, user, identity_file) reaches "
                         "it, or settings.prometheus reads its devices and links from node-exporter"]
    missing = missing_evidence(Evidence(notes=got.notes), [])
    assert missing[1].startswith("device load (h1 not watched: settings.ssh") and missing[2] == "link load (h1 not watched)"
