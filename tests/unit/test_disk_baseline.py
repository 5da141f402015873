"""Disk baseline: what refuses a path or a device, the fio jobs, and the per-pattern figures."""

import json

import pytest

from conftest import FIXTURES
from cephbench.suite.config import SshSettings, parse_suite
from cephbench.core.errors import ParseError
from cephbench.drivers.disk_baseline import (DiskTarget, LabDisks, check_directory, directory_target, fio_command,
                                             lab_ssh, lab_targets, parse_probe, pattern_measurement,
                                             raw_device_problems, resolve_hosts, scope_jobs, with_lab_drives, capped,
                                             fio_job)
from cephbench.kinds.disk_baseline import PATTERNS, estimated_paths, make_tests, steps_for
from cephbench.drivers.fio import fio_argv
from cephbench.core.errors import UserError
from cephbench.hosts.remote import HostRef
from cephbench.core.results import Latency, Measurement

LSBLK = FIXTURES / "lsblk"
MOUNTS = "/dev/vda / ext4 rw,relatime 0 0\ntmpfs /dev/shm tmpfs rw 0 0\n"
GIB = 1024**3


def lsblk(name: str) -> dict:
    return json.loads((LSBLK / name).read_text())


def unused(size: int = 100 * GIB) -> dict:
    return {"blockdevices": [{"name": "sdx", "path": "/dev/sdx", "type": "disk", "size": size, "ro": False,
                              "mountpoints": [None], "fstype": None}]}


def test_an_unused_device_has_no_problems():
    assert raw_device_problems(unused(), 2, "", GIB) == []


def test_mounted_device_is_refused():
    probs = raw_device_problems(lsblk("util-linux2.38_vda_mounted_root.json"), 2, "", GIB)
    assert any("mounted (/)" in p for p in probs)


def test_blkid_that_cannot_read_the_device_is_a_refusal_not_a_pass():
    text = (LSBLK / "util-linux2.38_blkid_vda_not_permitted.txt").read_text()
    probs = raw_device_problems(unused(), 2, text, GIB)
    assert probs and "blkid could not check" in probs[0]


def test_device_smaller_than_size_is_refused():
    probs = raw_device_problems(lsblk("util-linux2.38_zram0_unused_size0.json"), 2, "", GIB)
    assert probs == ["it holds 0B, less than --size 1GiB"]


@pytest.mark.parametrize("change, expect", [
    (lambda d: d.update(children=[{"name": "sdx1", "type": "part", "mountpoints": [None], "fstype": "xfs"}]),
     "it has partitions (sdx1)"),
    (lambda d: d.update(fstype="LVM2_member", children=[{"name": "ceph--vg-osd--block", "type": "lvm",
                                                         "mountpoints": [None], "fstype": None}]),
     "an LVM physical volume"),
    (lambda d: d.update(fstype="ceph_bluestore"), "a Ceph BlueStore OSD"),
    (lambda d: d.update(fstype="xfs"), "a xfs signature"),
    (lambda d: d.update(ro=True), "read-only"),
])
def test_devices_in_use_are_refused_with_the_reason(change, expect):
    data = unused()
    change(data["blockdevices"][0])
    assert any(expect in p for p in raw_device_problems(data, 2, "", GIB))


def test_blkid_signature_without_udev_is_caught():
    probs = raw_device_problems(unused(), 0, "DEVNAME=/dev/sdx\nTYPE=ceph_bluestore\n", GIB)
    assert probs == ["it carries a Ceph BlueStore OSD (blkid)"]
    probs = raw_device_problems(unused(), 0, "DEVNAME=/dev/sdx\nPTTYPE=gpt\n", GIB)
    assert probs == ["it carries a gpt partition table (blkid)"]


def test_device_in_proc_swaps_is_in_use():
    swaps = "Filename Type Size Used Priority\n/dev/sdx partition 100 0 -2\n"
    assert "mounted ([SWAP])" in raw_device_problems(unused(), 2, "", GIB, swaps_text=swaps)[0]


def test_directory_checks(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        check_directory(tmp_path / "nope", GIB, MOUNTS, "t.dat")
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UserError, match="is not a directory"):
        check_directory(f, GIB, MOUNTS, "t.dat")
    with pytest.raises(UserError, match="less than the test file"):
        check_directory(tmp_path, 1024**6, MOUNTS, "t.dat")
    t = check_directory(tmp_path, 1024, MOUNTS, "t.dat")
    assert t.file == str(tmp_path / "t.dat") and not t.raw
    assert list(tmp_path.iterdir()) == [f]                           # the write probe is gone


def test_tmpfs_is_memory_not_a_disk(tmp_path):
    mounts = f"tmpfs {tmp_path} tmpfs rw 0 0\n"
    with pytest.raises(UserError, match="tmpfs, which is memory"):
        check_directory(tmp_path, 1024, mounts, "t.dat")


def test_dd_runs_first_and_steps_wait_for_each_other():
    steps = steps_for(["randread-4KiB-qd32", "write-4MiB"])
    assert [p.name for p in steps] == ["dd", "write-4MiB", "randread-4KiB-qd32"]
    targets = [DiskTarget("/a", "/a/t.dat", False, "8:0"), DiskTarget("/b", "/b/t.dat", False, "8:16")]
    jobs = scope_jobs(steps, targets, 256 * 1024**2, 3)
    assert [j.name for j in jobs] == ["dd@0", "dd@1", "write-4MiB@0", "write-4MiB@1",
                                      "randread-4KiB-qd32@0", "randread-4KiB-qd32@1"]
    assert [("stonewall" in j.extra) for j in jobs] == [True, False] * 3
    argv = fio_argv(jobs, {}, "/tmp/x.json")
    dd = argv[argv.index("--name=dd@0"):argv.index("--name=dd@1")]
    assert "--bs=268435456" in dd and "--size=268435456" in dd and not any(a.startswith("--runtime") for a in dd)
    assert "--direct=1" in dd


def test_make_tests_one_per_pattern_in_run_order_dd_always():
    tests = make_tests(["randwrite-4KiB-qd1"], {"paths": ["/a"], "size": GIB, "runtime_s": 5.0})
    assert [t.id for t in tests] == ["001-baseline-disk-dd", "002-baseline-disk-randwrite-4KiB-qd1"]
    assert {t.kind for t in tests} == {"disk_baseline"}


def _m(bw: float) -> Measurement:
    return Measurement(tool="fio", op="write", duration_s=5, bytes_per_s=bw, ops_per_s=bw / 4096,
                       latency=Latency(mean_ns=1e6))


def test_parallel_drop_and_shared_device_are_reported():
    targets = [DiskTarget(f"/d{i}", f"/d{i}/t", False, "254:0") for i in range(3)]
    m, notes = pattern_measurement(PATTERNS["dd"], targets, {i: _m(154e6) for i in range(3)},
                                   {i: _m(93e6) for i in range(3)}, GIB)
    assert m.bytes_per_s == 154e6
    assert m.extra["parallel_median_bytes_per_s"] == 93e6
    assert m.extra["parallel_drop"] == pytest.approx(1 - 93 / 154)
    assert m.extra["shared_device"] is True
    assert any("146.9 MiB/s per disk alone, 88.7 MiB/s per disk with all 3 at once (40% less" in n for n in notes)
    assert any("share one device" in n for n in notes)
    assert any(n.startswith("dd-equivalent (1GiB in one direct write): 146.9 MiB/s per disk = 154.0 MB/s as dd")
               for n in notes)


# ---- one probe for every host: the checks a remote path gets are the local ones ------------------------------

PROBE = FIXTURES / "disk-probe"


def test_probe_of_real_paths_gives_each_kind_and_the_hosts_mounts():
    p = parse_probe((PROBE / "debian12-dir-missing-block-file-tmpfs.txt").read_text())
    assert {"fio", "timeout", "lsblk", "blkid"} <= p.tools and len(p.boot_id) == 36
    kinds = {f.path: f.kind for f in p.paths}
    assert kinds == {"/var/tmp/rb-a": "dir", "/var/tmp/nope": "missing", "/dev/vda": "block",
                     "/etc/hostname": "other", "/dev/shm": "dir"}
    d, block = p.paths[0], p.paths[2]
    assert d.device == "254:0" and d.free == 20071057 * 4096 and d.write_error is None   # st_dev 65024 = 254:0
    assert block.device == "254:0"                                                       # rdev fe:0, hex
    assert "/dev/vda / ext4" in p.mounts and p.swaps.startswith("Filename")


def test_a_path_on_another_host_is_refused_for_the_same_reasons_and_names_the_host():
    p = parse_probe((PROBE / "debian12-dir-missing-block-file-tmpfs.txt").read_text())
    node = HostRef("node1", "10.0.0.11")
    facts = {f.path: f for f in p.paths}

    def refusal(path: str, size: int = GIB) -> str:
        with pytest.raises(UserError) as exc:
            directory_target(facts[path], size, p.mounts, "t.dat", node, p.boot_id)
        return str(exc.value)
    assert "/var/tmp/nope does not exist on host node1 (10.0.0.11)" in refusal("/var/tmp/nope")
    assert "is not a directory" in refusal("/etc/hostname")
    assert "on tmpfs, which is memory" in refusal("/dev/shm")
    assert "free, less than the test file of 1TiB" in refusal("/var/tmp/rb-a", 1024**4)
    t = directory_target(facts["/var/tmp/rb-a"], GIB, p.mounts, "t.dat", node, p.boot_id)
    assert (t.file, t.host, t.label, t.machine) == ("/var/tmp/rb-a/t.dat", "node1", "node1:/var/tmp/rb-a", p.boot_id)


def test_a_directory_that_cannot_be_written_says_why():
    p = parse_probe((PROBE / "debian12-immutable-dir.txt").read_text())
    assert p.paths[0].write_error == "Operation not permitted"
    with pytest.raises(UserError, match=r"cannot write in /var/tmp/rb-ro on host n2: Operation not permitted"):
        directory_target(p.paths[0], 1024, p.mounts, "t.dat", HostRef("n2", "n2"))


def test_a_probe_cut_short_is_a_parse_error():
    text = (PROBE / "debian12-immutable-dir.txt").read_text()
    with pytest.raises(ParseError, match="ended early"):
        parse_probe(text.split("@mounts")[0])
    with pytest.raises(ParseError):
        parse_probe(text.replace("dev=65024", "dev=x"))


def host_targets(spec: dict[str, list[float]]) -> tuple[list[DiskTarget], dict[int, Measurement]]:
    """Disks on several hosts of different machines, and a figure per disk."""
    targets, figures = [], {}
    for host, bws in spec.items():
        for k, bw in enumerate(bws):
            figures[len(targets)] = _m(bw)
            targets.append(DiskTarget(f"/srv/d{k}", f"/srv/d{k}/t", False, f"8:{16 * k}", HostRef(host, f"{host}.lan"),
                                      host))
    return targets, figures


def test_each_host_has_its_median_disk_and_the_slowest_host_is_named():
    targets, alone = host_targets({"n1": [150e6, 160e6], "n2": [155e6, 145e6], "n3": [40e6, 50e6]})
    par = {i: _m(m.bytes_per_s * 0.8) for i, m in alone.items()}
    m, notes = pattern_measurement(PATTERNS["write-4MiB"], targets, alone, par, GIB)
    x = m.extra
    assert x["hosts"] == ["n1", "n2", "n3"] and x["slowest_host"] == "n3"
    assert x["per_host"]["n3"] == {"disks": 2, "alone_median_bytes_per_s": 45e6, "alone_median_ops_per_s": 45e6 / 4096,
                                   "parallel_median_bytes_per_s": 36e6, "parallel_median_ops_per_s": 36e6 / 4096}
    assert x["alone"]["n3:/srv/d1"] == {"host": "n3", "path": "/srv/d1", "bytes_per_s": 50e6,
                                        "ops_per_s": 50e6 / 4096, "lat_mean_ns": 1e6, "lat_p99_ns": None,
                                        "duration_s": 5}
    assert len(x["alone"]) == len(x["parallel"]) == 6
    assert x["shared_device"] is False          # the same major:minor on different machines is not one disk
    assert m.bytes_per_s == 147.5e6             # the median disk of all hosts
    assert any(n.startswith("write-4MiB: slowest host n3, 34.3 MiB/s per disk against 116.3 on the other 2 host(s)")
               for n in notes), notes


def test_hosts_that_are_one_machine_share_its_disk():
    targets = [DiskTarget(f"/lab/osd/{i}", f"/lab/osd/{i}/t", False, "254:0", HostRef(f"h{i}", f"198.18.0.{i}"),
                          "same-boot-id") for i in range(1, 4)]
    m, _ = pattern_measurement(PATTERNS["dd"], targets, {i: _m(1e8) for i in range(3)}, {}, GIB)
    assert m.extra["shared_device"] is True and m.extra["paths"] == ["h1:/lab/osd/1", "h2:/lab/osd/2", "h3:/lab/osd/3"]


def test_fio_jobs_of_one_host_keep_their_numbers_in_the_whole_baseline():
    targets = [DiskTarget("/a", "/a/t", False, "8:0"), DiskTarget("/b", "/b/t", False, "8:16")]
    jobs = scope_jobs(steps_for(["dd"]), targets, GIB, 3, numbers=[4, 7])
    assert [j.name for j in jobs] == ["dd@4", "dd@7"] and "stonewall" in jobs[0].extra
    assert not any(a.startswith("--output=") for a in fio_argv(jobs, {}, None))     # JSON to stdout, over ssh
    argv = fio_command(fio_argv(jobs, {}, None), 100, "/a/t.pid")
    assert argv[:2] == ["sh", "-c"] and argv[2].startswith("timeout -k 10 101 fio ")
    assert "echo $! > /a/t.pid" in argv[2] and "rm -f /a/t.pid" in argv[2]


LAB_JSON = {"dir": "/lab", "topology": {
    "hosts": [{"name": "h1", "role": "osd", "addresses": {"public": "198.18.0.1", "cluster": "198.19.0.1"},
               "osds": [0, 1]},
              {"name": "h2", "role": "osd", "addresses": {"public": "198.18.0.2"}, "osds": [2]},
              {"name": "c1", "role": "client", "addresses": {"public": "198.18.0.3"}, "osds": []}],
    "ssh": {"user": "root", "options": ["UserKnownHostsFile=/lab/ssh/known_hosts"],
            "hosts": {"h1": "198.18.0.1", "h2": "198.18.0.2", "c1": "198.18.0.3"}}}}


def test_lab_targets_are_each_osd_hosts_address_and_osd_directories(tmp_path):
    (tmp_path / "lab.json").write_text(json.dumps(LAB_JSON))
    got = lab_targets(tmp_path / "lab.json")
    assert got == [LabDisks("h1", "198.18.0.1", [str(tmp_path / "osd" / "0"), str(tmp_path / "osd" / "1")]),
                   LabDisks("h2", "198.18.0.2", [str(tmp_path / "osd" / "2")])]
    ssh = lab_ssh(tmp_path / "lab.json")
    assert ssh.user == "root" and ssh.hosts["h2"] == "198.18.0.2"
    (tmp_path / "lab.json").write_text(json.dumps({"dir": "/lab"}))        # today's one-host lab
    assert lab_targets(tmp_path / "lab.json") == [] and lab_ssh(tmp_path / "lab.json") is None


class _Target:
    def __init__(self, conf, is_lab=True):
        self.conf, self.is_lab = conf, is_lab


def test_suite_paths_resolve_to_hosts(tmp_path):
    ssh = SshSettings(hosts={"node1": "10.0.0.11"})
    per_host, _ = resolve_hosts({"paths": ["/srv/a"]}, _Target(tmp_path / "ceph.conf", False), ssh)
    assert per_host == [(None, ["/srv/a"])]                                 # no hosts: this machine, as before
    per_host, _ = resolve_hosts({"paths": ["/srv/a"], "hosts": ["node1", "node2"]}, _Target(None, False), ssh)
    assert per_host == [(HostRef("node1", "10.0.0.11"), ["/srv/a"]), (HostRef("node2", "node2"), ["/srv/a"])]
    per_host, _ = resolve_hosts({"paths": {"node1": ["/a", "/b"], "localhost": ["/c"]}}, _Target(None, False), ssh)
    assert per_host == [(HostRef("node1", "10.0.0.11"), ["/a", "/b"]), (HostRef("localhost", None), ["/c"])]
    (tmp_path / "lab.json").write_text(json.dumps(LAB_JSON))
    per_host, lab = resolve_hosts({"paths": "lab-osds"}, _Target(tmp_path / "ceph.conf"), ssh)
    assert [(r.name, r.address) for r, _ in per_host] == [("h1", "198.18.0.1"), ("h2", "198.18.0.2")]
    assert lab.user == "root"                                               # the lab's own ssh settings
    with pytest.raises(UserError, match="only works against a lab"):
        resolve_hosts({"paths": "lab-osds"}, _Target(tmp_path / "ceph.conf", False), ssh)


@pytest.mark.parametrize("section, words", [
    ({"paths": {"n1": ["/a"]}, "hosts": ["n1"]}, "paths already names the hosts"),
    ({"paths": "lab-osds", "hosts": "osd-hosts"}, "lab-osds already names"),
    ({"paths": ["/a"], "hosts": ["n1", "n1"]}, "a host is given twice"),
    ({"paths": {"n1": []}}, "n1 has no paths"),
    ({"paths": 3}, "give a list of paths"),
])
def test_bad_disk_hosts_are_refused_naming_the_key(section, words):
    with pytest.raises(UserError) as exc:
        parse_suite({"name": "s", "baseline": {"disks": section}, "workloads": [{"type": "osd_bench"}]}, "s.yaml")
    line = exc.value.one_line()
    assert words in line and "s.yaml: baseline.disks" in line, line


def test_the_plan_counts_every_hosts_paths():
    assert estimated_paths({"a": ["/1", "/2"], "b": ["/3"]}, None) == 3
    assert estimated_paths(["/1", "/2"], ["a", "b", "c"]) == 6 and estimated_paths(["/1"], None) == 1


def _drives_json(tmp_path, filestore_osd: int | None = None):
    """A lab's drives.json as lab/drives.py writes it: 3 OSDs on loop devices, osd.2 throttled."""
    from dataclasses import replace
    from cephbench.lab import drives
    from cephbench.lab.throttle import DriveLimit
    rec = drives.plan("ab12cd", tmp_path, {0: "h1", 1: "h2", 2: "h3"}, 2 * GIB)
    for i, d in enumerate(rec.drives):
        rec.drives[i] = replace(d, kind="loop", device=f"/dev/loop{d.osd + 5}", dev=f"7:{d.osd + 5}", direct_io=True,
                                limit=DriveLimit(3 * 2**20, None) if d.osd == 2 else None,
                                fs="xfs" if d.osd == filestore_osd else None)
    (tmp_path / "drives.json").write_text(json.dumps(rec.to_json()))


def test_a_labs_osd_directories_name_their_drives_and_bluestore_devices_are_only_read(tmp_path):
    _drives_json(tmp_path, filestore_osd=1)
    targets = [DiskTarget(str(tmp_path / "osd" / str(i)), str(tmp_path / "osd" / str(i) / "t"), False, "254:0",
                          HostRef(f"h{i + 1}", None), "boot") for i in range(3)]
    got = with_lab_drives(targets, {"paths": "lab-osds"}, _Target(tmp_path / "ceph.conf"))
    assert [t.label for t in got] == ["h1:/dev/loop5 (osd.0)", "h2:/dev/loop6 (osd.1)", "h3:/dev/loop7 (osd.2)"]
    assert [t.device for t in got] == ["7:5", "7:6", "7:7"] and len({t.group for t in got}) == 3
    # BlueStore: reads on the device, every write on the test file; FileStore: its file system is on the drive
    for p in PATTERNS.values():
        job = fio_job(p, got[0], GIB, 1, "x", False)
        assert job.extra["filename"] == ("/dev/loop5" if p.op == "read" else got[0].file), p.name
        assert fio_job(p, got[0], 4 * GIB, 1, "x", False).size == (2 * GIB if p.op == "read" else 4 * GIB)
        assert fio_job(p, got[1], GIB, 1, "x", False).extra["filename"] == got[1].file
    # fio joins the OSD's blkio group before it starts
    argv = fio_command(["fio"], 10, "/t.pid", got[2].drive.cgroup)
    assert argv[2].startswith(f"echo $$ > {got[2].drive.cgroup}/cgroup.procs || exit 126; timeout")
    # the throttled BlueStore device: writes capped by its throttle, reads as fio measured them (in its group)
    w = capped(_m(500e6), PATTERNS["write-4MiB"], got[2])
    assert w.bytes_per_s == 3 * 2**20 and w.ops_per_s == 0.75          # 3 MiB/s of 4 MiB writes
    assert capped(_m(3e6), PATTERNS["read-4MiB"], got[2]).bytes_per_s == 3e6
    assert capped(_m(500e6), PATTERNS["write-4MiB"], got[0]).bytes_per_s == 500e6
    m, notes = pattern_measurement(PATTERNS["dd"], got, {0: _m(5e8), 1: _m(6e8), 2: w}, {}, GIB)
    assert m.extra["slowest_host"] == "h3" and m.extra["slowest_disk"] == "h3:/dev/loop7 (osd.2)"
    assert any(n.startswith("h3:/dev/loop7 (osd.2): reads on the device itself") and "throttle (3MiB/s)" in n
               for n in notes), notes
    # not lab-osds, or a lab without drives.json: the directories as given
    assert with_lab_drives(targets, {"paths": ["/x"]}, _Target(tmp_path / "ceph.conf")) == targets
    assert with_lab_drives(targets, {"paths": "lab-osds"}, _Target(tmp_path / "none" / "ceph.conf")) == targets
