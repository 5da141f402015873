"""Disk baseline: what refuses a path or a device, the fio jobs, and the per-pattern figures."""

import json

import pytest

from conftest import FIXTURES
from cephbench.drivers.disk_baseline import (PATTERNS, DiskTarget, check_directory, make_tests, pattern_measurement,
                                             raw_device_problems, scope_jobs, steps_for)
from cephbench.drivers.fio import fio_argv
from cephbench.errors import UserError
from cephbench.results import Latency, Measurement

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
    assert any("154.0 MB/s per disk alone, 93.0 MB/s per disk with all 3 at once (40% less" in n for n in notes)
    assert any("share one device" in n for n in notes)
    assert any(n.startswith("dd-equivalent (1GiB in one direct write): 154.0 MB/s") for n in notes)
