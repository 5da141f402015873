"""Issue 25 item 7: each disk baseline path says whether it measured an OSD's own device, and the model uses only
those (real probe output of this VM and real `ceph osd metadata` of the one-host and the 3-host lab, Ceph 16.2.15)."""

import json

from conftest import FIXTURES
from cephbench.analysis import analyse, facts_from_run
from cephbench.drivers.disk_baseline import (PATTERNS, LabDrive, directory_target, parse_probe, pattern_measurement,
                                             with_osd_devices)
from cephbench.drivers.osd_devices import check
from cephbench.hosts.remote import HostRef
from cephbench.core.results import Latency, Measurement, Result, Test

GIB, MIB = 1024**3, 1024**2
PROBE = parse_probe((FIXTURES / "disk-probe" / "debian12-dir-on-vda-and-loop0.txt").read_text())
ONEHOST = json.loads((FIXTURES / "osd_metadata" / "ceph16.2.15_onehost3_bluestore_files.json").read_text())
MULTIHOST = json.loads((FIXTURES / "osd_metadata" / "ceph16.2.15_multihost3_bluestore_db.json").read_text())
LAB = {"paths": "lab-osds"}


def test_the_probe_names_the_whole_disk_under_a_directory_and_a_device():
    assert [(f.path, f.disks) for f in PROBE.paths] == [("/var/tmp/g1-probe/osd/0", ("vda",)),
                                                       ("/dev/loop0", ("loop0",))]


def _dir(host: str):
    return directory_target(PROBE.paths[0], GIB, PROBE.mounts, "t.dat", HostRef(host, None), PROBE.boot_id)


def test_one_host_lab_osd_directory_is_on_the_osds_device():
    # BlueStore files on the VM's disk: <lab>/osd/0 is on vda, which Ceph names as osd.0's device
    (t,) = with_osd_devices([_dir("vm")], LAB, ONEHOST)
    assert t.osd_device.own is True and t.osd_device.osds == (0,) and t.osd_device.device == "vda"


def test_multi_host_lab_osd_directory_without_its_drive_is_not_the_osds_device():
    (t,) = with_osd_devices([_dir("h1")], LAB, MULTIHOST)
    assert t.osd_device.own is False
    assert t.osd_device.text == "disk baseline measured /var/tmp/g1-probe/osd/0 on vda, not osd.0's loop0: not used"


def test_a_path_on_a_real_cluster_stands_for_the_osds_of_its_host_on_its_disk():
    assert check("h1:/dev/loop0", "h1", ("loop0",), MULTIHOST).osds == (0,)
    wrong = check("h2:/dev/loop0", "h2", ("loop0",), MULTIHOST)
    assert wrong.own is False and "not osd.1's loop2: not used" in wrong.text
    assert check("x:/srv", "x", ("sdb",), MULTIHOST).own is None          # no OSD there: cannot tell
    assert check("h1:/srv", "h1", (), MULTIHOST).own is None              # sysfs did not say: cannot tell
    # the DB device is not where data lands
    assert check("h1:/dev/loop1", "h1", ("loop1",), MULTIHOST).own is False


def _m(bw: float) -> Measurement:
    return Measurement(tool="fio", op="write", duration_s=5, bytes_per_s=bw, ops_per_s=bw / (4 * MIB),
                       latency=Latency(mean_ns=1e6))


def _baseline(figures: list[float], drives: list[bool], pattern: str = "write-4MiB") -> Result:
    """A write-4MiB disk baseline on the 3-host lab: osd.N's directory, with its drive recorded or not."""
    targets = []
    for i, drive in enumerate(drives):
        t = _dir(f"h{i + 1}")
        t = t.__class__(**{**t.__dict__, "path": f"/lab/osd/{i}", "drive": LabDrive(
            i, f"/dev/loop{2 * i}", f"7:{2 * i}", "/cg", f"/dev/loop{2 * i}") if drive else None})
        targets.append(t)
    targets = with_osd_devices(targets, LAB, MULTIHOST)
    m, notes = pattern_measurement(PATTERNS[pattern], targets, {i: _m(b) for i, b in enumerate(figures)}, {},
                                   GIB)
    return Result(test=Test(id="001-d", index=1, workload="d", kind="disk_baseline", group="g",
                            params={"pattern": pattern}), status="ok", started_unix=0, duration_s=1,
                  measurement=m, notes=notes)


def _write(facts) -> str:
    r = Result(test=Test(id="002-w", index=2, workload="w", kind="rados_bench", group="g",
                         params={"phase": "write", "object_size": 4 * MIB, "pool_profile": {"size": 3}}),
               status="ok", started_unix=0, duration_s=1,
               measurement=Measurement(tool="rados bench", op="write", duration_s=10, bytes_per_s=20 * MIB,
                                       op_size_bytes=4 * MIB))
    return analyse(r, facts).reason


def test_the_model_uses_only_the_osds_own_devices():
    b = _baseline([900e6, 100e6, 200e6], [False, True, True])
    assert b.measurement.extra["osd_devices"]["/lab/osd/0"]["own"] is False
    assert any("not osd.0's loop0: not used" in n for n in _baseline([1.0] * 3, [False, True, True], "dd").notes)
    f = facts_from_run({"osd_metadata": MULTIHOST}, [b])
    assert f.disk.write_bytes_per_s == 150e6                    # osd.1 and osd.2; not 200e6, the median of all three
    assert "disk baseline measured /lab/osd/0 on vda, not osd.0's loop0: not used" in _write(f)


def test_no_osd_device_measured_means_no_disk_ceiling_and_says_why():
    f = facts_from_run({"osd_metadata": MULTIHOST}, [_baseline([900e6], [False])])
    assert f.disk.write_bytes_per_s is None
    reason = _write(f)
    assert "no ceiling" in reason and "not osd.0's loop0: not used" in reason
