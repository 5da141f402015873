"""The lab's disk check counts what its sparse OSD files take (issue 38: `lab up` refused 3 OSD files of 10 GiB on
28.7 GiB free): a lab whose files' sizes add up to more than is free starts with Ceph's full ratio lowered so the
cluster is full before the disk is; one that could hold under half of them is refused."""

from pathlib import Path

from cephbench.lab.conf import LabPorts, disk_room, render_conf

GiB = 1 << 30


def test_three_10gib_files_on_28_7gib_free_start_with_a_lower_full_ratio():
    room = disk_room(int(28.7 * GiB), 3, 10 * GiB)
    assert room.refusal is None
    assert room.full_ratio == 0.91          # (28.7 - 1 - 3 x 64 MiB) / 30 = 0.917
    assert "28.7GiB free holds 91% of their 30GiB" in room.note()


def test_a_disk_that_holds_the_files_keeps_cephs_ratios():
    room = disk_room(80 * GiB, 3, 10 * GiB)
    assert room.full_ratio is None and room.refusal is None and room.note() is None


def test_a_disk_that_holds_under_half_is_refused_with_what_it_holds():
    room = disk_room(int(7.4 * GiB), 3, 8 * GiB)
    assert room.refusal and "may grow to 24GiB" in room.refusal and "holds 26% of that" in room.refusal
    assert room.note() is None


def test_the_ratios_reach_the_conf_below_one_another():
    def lines(**kw):
        return render_conf(Path("/l"), "fsid", LabPorts(1, 2, 3), 3, 4 * GiB, **kw).splitlines()
    got = lines(full_ratio=0.68)
    assert {"mon osd full ratio = 0.68", "mon osd backfillfull ratio = 0.63", "mon osd nearfull ratio = 0.58"} <= set(got)
    assert not [line for line in lines() if "full ratio" in line]
