"""Capping settings from real `ceph config show-with-defaults osd.0 -f json` of Ceph 16.2.15."""

from __future__ import annotations

import json
from pathlib import Path

from cephbench.evidence.settings import capping_settings

DOC = json.loads((Path(__file__).parent.parent / "fixtures" / "config_show" /
                  "ceph16.2.15_osd0_with_defaults.json").read_text())


def test_pacific_defaults_under_wpq_leave_mclock_out():
    s = capping_settings(DOC)
    assert s["osd_op_queue"] == "wpq" and s["bluestore_cache_autotune"] == "true"
    assert s["osd_memory_target"] == "1073741824"          # the lab sets 1 GiB
    assert not any(k.startswith("osd_mclock") for k in s)


def test_under_mclock_its_profile_and_capacity_are_kept():
    doc = [dict(e, value="mclock_scheduler") if e["name"] == "osd_op_queue" else e for e in DOC]
    s = capping_settings(doc)
    assert s["osd_mclock_profile"] == "high_client_ops"
    assert s["osd_mclock_max_capacity_iops_ssd"] == "21500.000000"


def test_documents_that_do_not_read_give_nothing():
    assert capping_settings(None) == {} and capping_settings([1, {"name": 2}, {"value": "x"}]) == {}


def test_the_admin_sockets_config_show_gives_the_same_as_show_with_defaults():
    """`ceph daemon osd.0 config show` (every option, a flat mapping) of the same lab, Ceph 16.2.15."""
    asok = json.loads((Path(__file__).parent.parent / "fixtures" / "config_show" /
                       "ceph16.2.15_osd0_asok_config_show.json").read_text())
    got = capping_settings(asok)
    assert got["osd_op_queue"] == "wpq" and got["osd_memory_target"] == "1073741824"
    assert not any(k.startswith("osd_mclock") for k in got)


def test_reefs_mclock_scheduler_is_recorded_from_ceph_tell_config_show():
    """Reef 18.2.7's `ceph tell osd.0 config show` (what the run reads where the admin socket is out of reach):
    mClock by default, its profile, and the capacity the OSD measured of itself at its first start."""
    doc = json.loads((Path(__file__).parent.parent / "fixtures" / "config_show" /
                      "ceph18.2.7_osd0_tell_config_show.json").read_text())
    s = capping_settings(doc)
    assert s["osd_op_queue"] == "mclock_scheduler" and s["osd_mclock_profile"] == "balanced"
    assert s["osd_mclock_max_capacity_iops_hdd"] == "315.000000"
    assert s["osd_mclock_max_capacity_iops_ssd"] == "21500.000000"
    assert "osd_mclock_scheduler_client_lim" in s


def test_pacifics_ceph_tell_config_show_reads_as_its_admin_socket():
    doc = json.loads((Path(__file__).parent.parent / "fixtures" / "config_show" /
                      "ceph16.2.15_osd0_tell_config_show.json").read_text())
    s = capping_settings(doc)
    assert s["osd_op_queue"] == "wpq" and not any(k.startswith("osd_mclock") for k in s)
