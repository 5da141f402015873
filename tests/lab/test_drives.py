"""The multi-host lab's drives and cgroups, for real (root; no Ceph cluster, so no `lab` fixture).

Loop devices are attached, one is throttled through blkio and a direct dd measured through it, each FileStore
file system is made and a FileStore OSD made on it starts (up to the point it needs a monitor), cpuacct counts a
host's CPU, and after destroy `losetup -a`, `mount` and the cgroup folders show nothing of the lab, also after a
create killed half-way.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cephbench.core.errors import OperationFailed, UserError
from cephbench.lab import cgroups, drives, netns
from cephbench.lab.conf import AIO_POLL_START_MS
from cephbench.lab.throttle import DriveRef, parse_throttle_specs

MULTI_HOST = True      # makes namespaces, bridges or loop devices: runs with the multi-host tests

MiB = 2**20
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(autouse=True)
def needs_root():
    if os.geteuid() != 0:
        pytest.skip("the lab's drives need root (loop devices, mounts, cgroups)")


def host_state() -> str:
    """What a lab may leave behind: loop devices, mounts and cgroup folders, as one text."""
    def out(*argv):
        return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=20).stdout
    folders = [str(p) for root in (cgroups.BLKIO_ROOT, cgroups.CPUACCT_ROOT) for p in root.glob("cephbench-*/**")]
    return "\n".join([out("losetup", "-a"), out("mount"), *folders])


def assert_gone(rec: drives.LabDrives, lab_dir: Path) -> None:
    after = host_state()
    assert rec.lab_id not in after and str(lab_dir.resolve()) not in after, after
    assert drives.leftovers(rec) == []


def dd_bytes_per_s(argv_prefix: list[str], device: str, count: int, bs: str = "1M") -> float:
    """A direct write of `count` blocks of `bs` to `device`, started through `argv_prefix`; dd's own timing."""
    res = subprocess.run([*argv_prefix, "dd", "if=/dev/zero", f"of={device}", f"bs={bs}", f"count={count}",
                          "oflag=direct"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    m = re.search(r"^(\d+) bytes .* copied, ([\d.]+) s", res.stderr, re.M)
    assert m, res.stderr
    return int(m.group(1)) / float(m.group(2))


def test_a_throttled_loop_drive_holds_its_rate_and_leaves_nothing(tmp_path):
    lab_id = netns.lab_id_for(tmp_path)
    t0 = time.monotonic()
    rec = drives.create(drives.plan(lab_id, tmp_path, {0: "h1", 1: "h2"}, 1 << 30, 256 * MiB, hosts=["h3"]),
                        tmp_path / "drives.json")
    created_s = time.monotonic() - t0
    try:
        assert drives.LabDrives.load(tmp_path / "drives.json") == rec
        assert rec.fallback is None and {d.kind for d in rec.drives} == {"loop"}
        assert all(d.direct_io for d in rec.drives), rec.drives
        osd1 = rec.drive(DriveRef(1))
        inside = cgroups.join_argv(rec.osd_cgroups(1, "h2"), [])
        free = dd_bytes_per_s(inside, osd1.path, 64)
        drives.apply_throttle(rec, parse_throttle_specs("osd.1=20MiB/s")[0])
        assert cgroups.limits(Path(osd1.cgroup))[osd1.dev] == rec.drive(DriveRef(1)).limit
        slow = dd_bytes_per_s(inside, osd1.path, 40)
        # the other OSD's group, and osd.1's own DB device, are not limited
        other = dd_bytes_per_s(cgroups.join_argv(rec.osd_cgroups(0, "h1"), []), osd1.path, 40)
        db = dd_bytes_per_s(inside, rec.drive(DriveRef(1, "db")).path, 40)
        drives.apply_throttle(rec, parse_throttle_specs("osd.1.db=100iops")[0])
        iops = dd_bytes_per_s(inside, rec.drive(DriveRef(1, "db")).path, 150, bs="4k") / 4096
        drives.clear_throttle(rec, DriveRef(1))
        assert cgroups.limits(Path(osd1.cgroup)).get(osd1.dev) is None
        cleared = dd_bytes_per_s(inside, osd1.path, 40)
        print(f"RESULT drives_blkio created_s={created_s:.3f} unthrottled={free / MiB:.0f}MiB/s "
              f"throttled_20MiB/s={slow / MiB:.1f}MiB/s other_osd={other / MiB:.0f}MiB/s "
              f"own_db={db / MiB:.0f}MiB/s db_100iops={iops:.0f}iops cleared={cleared / MiB:.0f}MiB/s")
        assert 0.5 * 20 * MiB <= slow <= 1.5 * 20 * MiB
        assert min(free, other, db, cleared) > 2 * 20 * MiB
        assert 50 <= iops <= 150
        assert drives.LabDrives.load(tmp_path / "drives.json").drive(DriveRef(1, "db")).limit.iops == 100
    finally:
        t0 = time.monotonic()
        removed = drives.destroy(rec)
        print(f"RESULT drives_destroy drives=4 destroy_s={time.monotonic() - t0:.3f}")
    assert {d.device for d in rec.drives} <= set(removed) and set(rec.cgroups) <= set(removed)
    assert_gone(rec, tmp_path)
    assert drives.destroy(rec) == []           # idempotent


def test_cpuacct_counts_a_hosts_cpu_also_through_a_network_namespace(tmp_path):
    lab_id = netns.lab_id_for(tmp_path)
    rec = drives.create(drives.plan(lab_id, tmp_path, {}, 0, hosts=["h1", "h2"]), tmp_path / "drives.json")
    ns = f"cb-{lab_id}-dt"                      # a namespace of this test's own, as the lab's hosts have
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        h1, h2 = rec.host_cgroups("h1"), rec.host_cgroups("h2")
        before = cgroups.cpu_usage_ns(h2[0])
        # join_argv wraps `ip netns exec`: inside the namespace /sys/fs/cgroup is not there to join from
        res = subprocess.run(cgroups.join_argv(h1, netns.exec_argv(ns, [
            sys.executable, "-c", "import time; t = time.process_time() + 0.3\nwhile time.process_time() < t: "
            "pass\nprint(open('/proc/self/cgroup').read())"])), capture_output=True, text=True, check=True)
        used = cgroups.cpu_usage_ns(h1[0])
        print(f"RESULT drives_cpuacct h1_ns={used} h2_ns={cgroups.cpu_usage_ns(h2[0]) - before}")
        assert f"cpuacct:/cephbench-{lab_id}/h1" in res.stdout
        assert 0.25e9 <= used <= 5e9
        assert cgroups.cpu_usage_ns(h2[0]) == before
    finally:
        subprocess.run(["ip", "netns", "delete", ns], check=True)
        drives.destroy(rec)
    assert_gone(rec, tmp_path)


def start_osd(d: Path, rec: drives.LabDrives, choice: drives.StoreChoice) -> str:
    """mkfs an OSD on the lab's drives and start it until it asks for a monitor (there is none); its log.

    What the OSD checks before that is what can fail on a drive or file system: the store mounts, its journal
    or DB opens on the DB device, and the object name lengths fit (ext4's refusal comes there, after a mkfs that
    succeeds).
    """
    conf = d / "ceph.conf"
    conf.write_text(f"[global]\nfsid = {uuid.uuid4()}\nmon host = 127.0.0.1:1\nlog file = {d}/osd.log\n"
                    f"admin socket = {d}/osd.asok\n[osd]\nosd data = {d}/osd/$id\nkeyring = {d}/osd/$id/keyring\n"
                    # the lab's own start-up settings (docs/lab.md): BlueStore's mkfs 7 s -> 1 s
                    f"bdev aio poll ms = {AIO_POLL_START_MS}\nbluestore fsck on mkfs = false\n"
                    + drives.objectstore_conf(choice) + drives.drive_conf(rec, 0, choice))
    base = ["ceph-osd", "--conf", str(conf), "-i", "0", "--no-mon-config"]
    mkfs = subprocess.run([*base, "--mkfs", "--osd-uuid", str(uuid.uuid4())], capture_output=True, text=True,
                          timeout=60)
    assert mkfs.returncode == 0, mkfs.stderr[-2000:]
    subprocess.run(["ceph-authtool", f"{d}/osd/0/keyring", "--create-keyring", "--gen-key", "-n", "osd.0"],
                   capture_output=True, check=True)
    osd = subprocess.Popen(cgroups.join_argv(rec.osd_cgroups(0, "h1"), [*base, "-f"]), stdout=subprocess.DEVNULL,
                           stderr=subprocess.STDOUT)
    log = d / "osd.log"
    try:
        deadline = time.monotonic() + 30
        while "load_pgs opened" not in (log.read_text() if log.exists() else ""):
            assert osd.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the OSD did not reach load_pgs in 30 s"
            time.sleep(0.05)
        group = Path(f"/proc/{osd.pid}/cgroup").read_text()
        assert f"blkio:/cephbench-{rec.lab_id}/osd.0" in group and f"cpuacct:/cephbench-{rec.lab_id}/h1" in group
        return log.read_text()
    finally:
        osd.kill()
        osd.wait()


@pytest.mark.parametrize("store,fs", [("bluestore", None), *(("filestore", fs) for fs in sorted(drives.FILESYSTEMS))])
def test_osd_starts_on_loop_drives_with_its_db_or_journal_on_the_db_device(tmp_path, store, fs):
    if shutil.which("ceph-osd") is None:
        pytest.fail("Ceph is not installed: run scripts/setup.sh")
    rec = drives.plan(netns.lab_id_for(tmp_path), tmp_path, {0: "h1"}, 1 << 30, 128 * MiB, fs=fs)
    t0 = time.monotonic()
    drives.create(rec, tmp_path / "drives.json")
    created_s = time.monotonic() - t0
    try:
        data, db = rec.drive(DriveRef(0)), rec.drive(DriveRef(0, "db"))
        if fs:
            assert drives.mounted(data.mount)
            assert subprocess.run(["findmnt", "-n", "-o", "FSTYPE", data.mount], capture_output=True,
                                  text=True).stdout.strip() == fs
        else:
            (tmp_path / "osd" / "0").mkdir(parents=True)
        t0 = time.monotonic()
        log = start_osd(tmp_path, rec, drives.check_objectstore(store, fs))
        print(f"RESULT drives_osd store={store} fs={fs} create_s={created_s:.3f} "
              f"mkfs_and_start_s={time.monotonic() - t0:.2f}")
        if fs:
            assert f"backend {'generic' if fs == 'ext4' else fs}" in log
            assert f"journal _open {db.device}" in log
        else:
            assert os.readlink(tmp_path / "osd/0/block") == data.device
            assert os.readlink(tmp_path / "osd/0/block.db") == db.device
            assert "add_block_device bdev 1 path" in log
    finally:
        drives.destroy(rec)
    assert_gone(rec, tmp_path)


def test_create_killed_half_way_is_destroyed_from_its_record(tmp_path):
    lab_id, record = netns.lab_id_for(tmp_path), tmp_path / "drives.json"
    # The create SIGKILLs itself right after its third loop device is attached, before that is recorded.
    code = ("import os, signal; from pathlib import Path; from cephbench.lab import drives\n"
            "run, n = drives._run, []\n"
            "def killing(argv):\n"
            "    res = run(argv)\n"
            "    n.extend(['x'] if argv[:2] == ['losetup', '--find'] else [])\n"
            "    if len(n) == 3: os.kill(os.getpid(), signal.SIGKILL)\n"
            "    return res\n"
            "drives._run = killing\n"
            f"drives.create(drives.plan({lab_id!r}, Path({str(tmp_path)!r}), {{0: 'h1', 1: 'h2', 2: 'h2'}}, "
            f"1 << 30, fs='ext4'), Path({str(record)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    rec = drives.LabDrives.load(record)
    left = drives.leftovers(rec)
    assert rec.drives[2].device is None and any(str(rec.drives[2].backing) in x for x in left), left
    assert f"{tmp_path.resolve()}/osd/1" in left                               # mounted, then killed
    drives.destroy(rec)
    assert_gone(rec, tmp_path)


def test_destroy_waits_for_exiting_processes_and_names_those_that_stay(tmp_path):
    rec = drives.create(drives.plan(netns.lab_id_for(tmp_path), tmp_path, {0: "h1"}, 1 << 30),
                        tmp_path / "drives.json")
    group = rec.osd_cgroups(0)
    short = subprocess.Popen(cgroups.join_argv(group, ["sleep", "0.5"]))
    stays = subprocess.Popen(["sleep", "60"])
    cgroups.join(group[0], stays.pid)          # joining a running process by its PID
    try:
        deadline = time.monotonic() + 5
        while len(cgroups.tasks(group[0])) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(OperationFailed) as e:
            drives.destroy(rec, wait_s=1.0)
        assert str(stays.pid) in str(e.value) and str(short.pid) not in str(e.value)
        assert set(drives.leftovers(rec)) == {str(group[0]), str(group[0].parent)}     # the drive is gone
    finally:
        stays.kill()
        stays.wait()
        short.wait()
    drives.destroy(rec)
    assert_gone(rec, tmp_path)


def test_without_loop_devices_drives_are_files_and_a_file_system_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(drives, "LOOP_CONTROL", tmp_path / "no-loop-control")
    lab_id = netns.lab_id_for(tmp_path)
    with pytest.raises(UserError) as e:
        drives.create(drives.plan(lab_id, tmp_path, {0: "h1"}, 1 << 30, fs="xfs"), tmp_path / "a.json")
    assert "needs loop devices" in e.value.one_line() and "no-loop-control does not exist" in e.value.one_line()
    assert not (tmp_path / "a.json").exists()
    rec = drives.create(drives.plan(lab_id, tmp_path, {0: "h1"}, 1 << 30, 128 * MiB), tmp_path / "b.json")
    try:
        assert rec.fallback and "no-loop-control does not exist" in rec.fallback
        data = rec.drive(DriveRef(0))
        assert data.kind == "file" and data.path == data.backing and data.dev == drives.block_device_of(tmp_path)
        assert os.stat(data.backing).st_size == 1 << 30 and os.stat(data.backing).st_blocks == 0     # sparse
        with pytest.raises(UserError) as e:
            drives.apply_throttle(rec, parse_throttle_specs("osd.0.db=5MiB/s")[0])
        assert "same disk" in e.value.one_line()
        # a second create of the same lab is refused while the first one's groups exist
        with pytest.raises(UserError) as e:
            drives.create(drives.plan(lab_id, tmp_path, {0: "h1"}, 1 << 30), tmp_path / "c.json")
        assert "already exist" in e.value.one_line() and not (tmp_path / "c.json").exists()
    finally:
        drives.destroy(rec)
    assert_gone(rec, tmp_path)


def test_destroy_waits_for_a_detached_loop_device_still_held_open(tmp_path):
    """`losetup --detach` of a loop device something still holds open succeeds, and the kernel frees the device only
    once it is closed (an unmounted btrfs a moment after its umount did so on a busy machine): destroy waits for that
    instead of failing on it. Before, it raised 'could not remove /dev/loopN' with no error from the detach."""
    import threading
    rec = drives.create(drives.plan(netns.lab_id_for(tmp_path), tmp_path, {0: None}, 64 * MiB, None),
                        tmp_path / "drives.json")
    dev = rec.drive(DriveRef(0)).device
    held = os.open(dev, os.O_RDONLY)
    closer = threading.Timer(1.5, os.close, (held,))
    closer.start()
    try:
        drives.destroy(rec)
    finally:
        closer.join()
    assert_gone(rec, tmp_path)
