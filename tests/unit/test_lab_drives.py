"""The multi-host lab's drives, pure parts: throttle specs, the object store check, conf text, the plan and record."""

import subprocess
from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.lab import cgroups, drives
from cephbench.lab.throttle import (DriveLimit, DriveRef, ThrottleSpec, check_drives, parse_byte_rate,
                                    parse_drive_refs, parse_throttle_specs)

MiB = 2**20


def refusal(call, *args, where: str = "--osd-throttle", **kw) -> str:
    """The one line a bad input gives: it names the flag first and has no line break."""
    with pytest.raises(UserError) as e:
        call(*args, **kw)
    line = e.value.one_line()
    assert line.startswith(f"{where}:") and e.value.where == where and "\n" not in line, line
    return line


# ---- rates and specs ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("50MiB/s", 50 * MiB), ("8MiB/s", 8 * MiB), ("50M/s", 50 * MiB), ("512KiB/s", 512 * 1024),
    ("1GiB/s", 2**30), ("1G/s", 2**30), ("1.5MiB/s", 3 * MiB // 2), ("70000B/s", 70000), ("1mIB/s", MiB),
])
def test_byte_rates(text, value):
    assert parse_byte_rate(text) == value


@pytest.mark.parametrize("text,words", [
    ("20MB/s", "ambiguous"), ("100kB/s", "ambiguous"), ("2GB/s", "write 2GiB"),
    ("50MiB", "not per second"), ("50", "not per second"), ("50Mb/s", "in bits"), ("50mbit/s", "in bits"),
    ("50XB/s", "not a size"), ("50iB/s", "not a size"), ("fast", "not per second"), ("-5MiB/s", "must be positive"),
    ("10KiB/s", "below 64KiB/s"), ("0MiB/s", "below"),
])
def test_bad_rates_say_what_and_how(text, words):
    assert words in refusal(parse_byte_rate, text)


def test_ambiguous_mb_says_to_write_mib():
    # as a size in a suite: MB is 10^6 to dd and 2^20 to rados bench
    assert "write 50MiB" in refusal(parse_byte_rate, "50MB/s")


def test_specs_in_every_spelling():
    assert parse_throttle_specs(["osd.1=50MiB/s"]) == (ThrottleSpec(DriveRef(1), DriveLimit(50 * MiB, None)),)
    assert parse_throttle_specs("osd.1=8MiB/s,200iops") == (ThrottleSpec(DriveRef(1), DriveLimit(8 * MiB, 200)),)
    assert parse_throttle_specs("osd.1=200iops") == (ThrottleSpec(DriveRef(1), DriveLimit(None, 200)),)
    assert parse_throttle_specs("osd.1.db=20MiB/s") == (ThrottleSpec(DriveRef(1, "db"), DriveLimit(20 * MiB)),)
    # several in one value (comma or space) and in repeated flags; a part without '=' belongs to the one before
    many = parse_throttle_specs(["osd.1=8MiB/s,200IOPS,osd.2=20M/s osd.0.db=100iops", "osd.3=1GiB/s"])
    assert [(str(s.drive), s.limit) for s in many] == [
        ("osd.1", DriveLimit(8 * MiB, 200)), ("osd.2", DriveLimit(20 * MiB)), ("osd.0.db", DriveLimit(None, 100)),
        ("osd.3", DriveLimit(2**30))]


@pytest.mark.parametrize("values,words", [
    (["50MiB/s"], "does not say which drive"), ([""], "no throttle given"), (["osd.1="], "has no rate"),
    (["osd1=5MiB/s"], "does not name an OSD's drive"), (["osd.1.wal=5MiB/s"], "osd.N.db"),
    (["osd.x=5MiB/s"], "does not name"), (["osd.1=5MiB/s,6MiB/s"], "two rates"),
    (["osd.1=100iops,200iops"], "two IOPS"), (["osd.1=5MiB/s", "osd.1=6MiB/s"], "throttled twice"),
    (["osd.1=5iops"], "below 10iops"), (["osd.1=2.5iops"], "not an IOPS figure"), (["osd.1=50MB/s"], "ambiguous"),
])
def test_bad_specs_are_one_line_naming_the_flag(values, words):
    assert words in refusal(parse_throttle_specs, values)


def test_clear_takes_names_only():
    assert parse_drive_refs(["osd.1", "osd.2.db,osd.1"]) == (DriveRef(1), DriveRef(2, "db"))
    assert "without a rate" in refusal(parse_drive_refs, ["osd.1=5MiB/s"], where="lab throttle --clear")
    assert "no drive given" in refusal(parse_drive_refs, [], where="lab throttle --clear")


def test_an_osd_the_lab_lacks_is_refused_naming_those_it_has():
    specs = parse_throttle_specs("osd.9=5MiB/s")
    assert refusal(check_drives, [s.drive for s in specs], [0, 1, 2]) == (
        "--osd-throttle: osd.9: the lab has no osd.9 (its OSDs are osd.0, osd.1, osd.2)")
    line = refusal(check_drives, [DriveRef(1, "db")], [0, 1, 2], db_osd_ids=[])
    assert "no separate WAL/DB device" in line and "--db-device" in line
    check_drives([DriveRef(1, "db"), DriveRef(2)], [0, 1, 2], db_osd_ids=[0, 1, 2])


# ---- object store and file system ---------------------------------------------------------------

def test_objectstore_choices():
    assert drives.check_objectstore("bluestore", None) == drives.StoreChoice("bluestore", None)
    assert drives.check_objectstore("filestore", None).fs == "xfs"
    assert drives.check_objectstore("filestore", "xfs").notes == ()
    assert "256 characters" in drives.check_objectstore("filestore", "ext4").notes[0]
    assert "experimental" in drives.check_objectstore("filestore", "btrfs").notes[0]


@pytest.mark.parametrize("store,fs,where,words", [
    ("filestore", "zfs", "--fs", "built without ZFS"), ("filestore", "ntfs", "--fs", "use --fs xfs, ext4 or btrfs"),
    ("bluestore", "xfs", "--fs", "no file system"), ("kstore", None, "--objectstore", "bluestore or filestore"),
])
def test_objectstore_refusals_are_one_line_saying_why(store, fs, where, words):
    assert words in refusal(drives.check_objectstore, store, fs, where=where)


def test_objectstore_conf():
    assert drives.objectstore_conf(drives.check_objectstore("bluestore", None)) == ""
    xfs = drives.objectstore_conf(drives.check_objectstore("filestore", "xfs"), 512 * MiB)
    assert xfs == "osd objectstore = filestore\nosd journal size = 512\n"
    ext4 = drives.objectstore_conf(drives.check_objectstore("filestore", "ext4"))
    assert "osd max object name len = 256\nosd max object namespace len = 64" in ext4
    btrfs = drives.objectstore_conf(drives.check_objectstore("filestore", "btrfs"))
    assert "enable experimental unrecoverable data corrupting features = btrfs" in btrfs


# ---- plan, record, conf per OSD -----------------------------------------------------------------

def made(rec: drives.LabDrives, kind: str = "loop") -> drives.LabDrives:
    """The record as create leaves it, without the system: loop devices numbered in order."""
    for i, d in enumerate(rec.drives):
        rec.drives[i] = drives.Drive(**{**d.__dict__, "kind": kind, "device": f"/dev/loop{i}" if kind == "loop"
                                        else None, "dev": f"7:{i}" if kind == "loop" else "254:0",
                                        "direct_io": kind == "loop"})
    return rec


def test_plan_names_carry_the_lab_id(tmp_path):
    rec = drives.plan("ab12cd", tmp_path, {0: "h1", 1: "h2", 2: "h2"}, 10 * 2**30, 2**30, "xfs", hosts=["h10", "h3"])
    lab = tmp_path.resolve()
    assert [(str(d.ref), d.backing) for d in rec.drives] == [
        ("osd.0", f"{lab}/drives/osd.0.data.img"), ("osd.0.db", f"{lab}/drives/osd.0.db.img"),
        ("osd.1", f"{lab}/drives/osd.1.data.img"), ("osd.1.db", f"{lab}/drives/osd.1.db.img"),
        ("osd.2", f"{lab}/drives/osd.2.data.img"), ("osd.2.db", f"{lab}/drives/osd.2.db.img")]
    assert [d.mount for d in rec.drives] == [f"{lab}/osd/0", None, f"{lab}/osd/1", None, f"{lab}/osd/2", None]
    assert rec.cgroups == [
        "/sys/fs/cgroup/blkio/cephbench-ab12cd", "/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.0",
        "/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.1", "/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.2",
        "/sys/fs/cgroup/cpuacct/cephbench-ab12cd", "/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h1",
        "/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h2", "/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h3",
        "/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h10"]
    assert rec.osd_cgroups(1, "h2") == [Path("/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.1"),
                                       Path("/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h2")]
    assert rec.host_cgroups("h3") == [Path("/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h3")]


def test_one_host_plan_has_no_cpuacct_and_bluestore_no_mounts(tmp_path):
    rec = drives.plan("ab12cd", tmp_path, {0: None, 1: None}, 2**30)
    assert [d.mount for d in rec.drives] == [None, None] and rec.hosts == {}
    assert all("cpuacct" not in g for g in rec.cgroups)
    assert rec.osd_cgroups(0) == [Path("/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.0")]


def test_record_round_trip_and_save_is_atomic(tmp_path):
    rec = made(drives.plan("ab12cd", tmp_path, {0: "h1"}, 2**30, 2**28))
    rec.drives[0] = drives.Drive(**{**rec.drives[0].__dict__, "limit": DriveLimit(8 * MiB, 200)})
    rec.path = tmp_path / "drives.json"
    rec.save()
    assert not (tmp_path / "drives.json.tmp").exists()
    back = drives.LabDrives.load(tmp_path / "drives.json")
    assert back == rec and back.drives[0].limit == DriveLimit(8 * MiB, 200)


def test_drive_conf_bluestore_and_filestore(tmp_path):
    rec = made(drives.plan("ab12cd", tmp_path, {0: "h1", 1: "h1"}, 2**30, 2**28))
    blue = drives.check_objectstore("bluestore", None)
    assert drives.drive_conf(rec, 1, blue) == ("[osd.1]\nbluestore block path = /dev/loop2\n"
                                               "bluestore block db path = /dev/loop3\n")
    assert drives.drive_conf(rec, 0, drives.check_objectstore("filestore", "xfs")) == (
        "[osd.0]\nosd journal = /dev/loop1\nosd journal size = 0\n")
    files = made(drives.plan("ab12cd", tmp_path, {0: "h1"}, 2**30, 2**28), kind="file")
    lab = tmp_path.resolve()
    assert drives.drive_conf(files, 0, blue) == (
        f"[osd.0]\nbluestore block path = {lab}/drives/osd.0.data.img\n"
        f"bluestore block db path = {lab}/drives/osd.0.db.img\nbluestore block db size = {2**28}\n")
    no_db = made(drives.plan("ab12cd", tmp_path, {0: "h1"}, 2**30, fs="xfs"))
    # the journal a file in the data dir: Ceph's default path is not under the lab's `osd data` (mkfs failed)
    assert drives.drive_conf(no_db, 0, drives.check_objectstore("filestore", "xfs")) == (
        f"[osd.0]\nosd journal = {no_db.drive(DriveRef(0)).mount}/journal\n")
    assert no_db.drive(DriveRef(0)).mount == f"{lab}/osd/0"


def test_throttling_a_db_file_on_the_data_files_disk_is_refused(tmp_path):
    rec = made(drives.plan("ab12cd", tmp_path, {0: "h1"}, 2**30, 2**28), kind="file")
    rec.fallback = "losetup failed: no free loop device"
    line = refusal(drives.apply_throttle, rec, parse_throttle_specs("osd.0.db=5MiB/s")[0])
    assert "same disk (254:0)" in line and "throttle osd.0" in line
    assert "osd.3: the lab has no such drive" in refusal(drives.clear_throttle, rec, DriveRef(3),
                                                         where="lab throttle --clear")


# ---- cgroup text --------------------------------------------------------------------------------

def test_cgroup_paths_and_throttle_lines():
    assert cgroups.osd_blkio("ab12cd", 3) == Path("/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.3")
    assert cgroups.host_cpuacct("ab12cd", "h2") == Path("/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h2")
    assert cgroups.throttle_lines("7:3", DriveLimit(8 * MiB, 200)) == {
        "blkio.throttle.read_bps_device": "7:3 8388608", "blkio.throttle.write_bps_device": "7:3 8388608",
        "blkio.throttle.read_iops_device": "7:3 200", "blkio.throttle.write_iops_device": "7:3 200"}
    # clearing writes 0, which removes the kernel's rule
    assert set(cgroups.throttle_lines("7:3", DriveLimit()).values()) == {"7:3 0"}
    assert set(cgroups.throttle_lines("7:3", DriveLimit(None, 50)).values()) == {"7:3 0", "7:3 50"}


def test_join_argv_runs_the_command_unchanged_inside_the_groups(tmp_path):
    # Folders standing in for cgroups: the shell writes its PID into each, then execs the command (same PID).
    groups = [tmp_path / "blk io", tmp_path / "cpu;acct"]
    for g in groups:
        g.mkdir()
    argv = cgroups.join_argv(groups, ["sh", "-c", 'echo "$$ $1"', "sh", "a b"])
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    assert out[1:] == ["a", "b"]
    assert [(g / "cgroup.procs").read_text().strip() for g in groups] == [out[0], out[0]]
    assert cgroups.join_argv([], ["true"]) == ["true"]
    (groups[0] / "cgroup.procs").unlink()
    (groups[0] / "cgroup.procs").mkdir()        # a group it cannot enter: the command does not run
    assert subprocess.run(argv, capture_output=True, text=True).returncode == 126


def test_controllers_missing_is_one_line(tmp_path):
    with pytest.raises(UserError) as e:
        cgroups.check_controllers([tmp_path / "blkio"])
    line = e.value.one_line()
    assert "blkio controller is not mounted" in line and "drive throttles" in line and "\n" not in line


# ---- CPU limits and host loads (issue 35) -------------------------------------------------------

def test_cpu_limits_and_host_loads_in_every_spelling():
    from cephbench.lab.cpulimit import CpuLimitSpec, HostLoadSpec, parse_cpu_limits, parse_host_loads
    assert parse_cpu_limits(["osd.2=0.08", "osd.0=1.5cores,osd.1=.5"]) == (
        CpuLimitSpec("osd.2", 0.08), CpuLimitSpec("osd.0", 1.5), CpuLimitSpec("osd.1", 0.5))
    assert parse_cpu_limits("osd.2=0.08")[0].quota_us == 8000
    [h2] = parse_host_loads(["h2=1.5"])
    assert (h2.quota_us, h2.loops, h2.names()) == (150000, 2, ["load.h2.0", "load.h2.1"])


@pytest.mark.parametrize("call, values, where, words", [
    ("parse_cpu_limits", ["osd.2"], "--cpu-limit", "is not NAME=CORES"),
    ("parse_cpu_limits", ["mon.a=0.5"], "--cpu-limit", "is not an OSD"),
    ("parse_cpu_limits", ["osd.2=0.001"], "--cpu-limit", "outside 0.01 to 64"),
    ("parse_cpu_limits", ["osd.2=lots"], "--cpu-limit", "is not a number of cores"),
    ("parse_cpu_limits", ["osd.2=0.1,osd.2=0.2"], "--cpu-limit", "limited twice"),
    ("parse_host_loads", ["x1=1"], "--host-load", "is not a host of the lab"),
])
def test_bad_cpu_specs_are_one_line_naming_the_flag(call, values, where, words):
    from cephbench.lab import cpulimit
    assert words in refusal(getattr(cpulimit, call), values, where=where)


def test_a_cpu_spec_the_lab_cannot_hold_is_refused():
    from cephbench.lab.multihost import multi_host, parse_values

    def shape(hosts, clients=0, **given):
        return multi_host(parse_values({"hosts": hosts, "clients": clients, **given}))
    assert "the lab has no such OSD" in refusal(shape, 3, cpu_limit=["osd.3=0.1"], where="--cpu-limit")
    assert "the lab has no such host" in refusal(shape, 3, host_load=["h4=1"], where="--host-load")
    assert "describes a multi-host lab" in refusal(shape, None, host_load=["h2=1"], where="--host-load")
    assert "it has no client hosts (--clients)" in refusal(shape, 3, host_load=["c1=1"], where="--host-load")
    # a client host's neighbour, on a lab that has one
    assert shape(3, 1, host_load=["c1=0.5"]).cpu_quotas() == {"load.c1": 50000}


def test_the_plan_records_a_cpu_group_per_limit_and_per_neighbour_before_they_are_made(tmp_path):
    rec = drives.plan("ab12cd", tmp_path, {0: "h1", 1: "h2", 2: "h3"}, 2**30, hosts=["h1", "h2", "h3"],
                      cpu_quota_us={"osd.2": 8000, "load.h2": 150000})
    cpu = "/sys/fs/cgroup/cpu/cephbench-ab12cd"
    assert rec.cgroups[-3:] == [cpu, f"{cpu}/load.h2", f"{cpu}/osd.2"]       # parent first: made in this order
    assert rec.osd_cgroups(2, "h3") == [Path("/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.2"), Path(f"{cpu}/osd.2"),
                                       Path("/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h3")]
    assert rec.osd_cgroups(1, "h2") == [Path("/sys/fs/cgroup/blkio/cephbench-ab12cd/osd.1"),
                                       Path("/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h2")]
    assert rec.load_cgroups("h2") == [Path(f"{cpu}/load.h2"), Path("/sys/fs/cgroup/cpuacct/cephbench-ab12cd/h2")]
    rec.path = tmp_path / "drives.json"
    rec.save()
    assert drives.LabDrives.load(rec.path) == rec
