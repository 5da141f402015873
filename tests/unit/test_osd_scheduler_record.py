"""Every run records the OSDs' scheduler (issue 38: mClock was recorded only inside each result's evidence): run.json's
`osd_scheduler` and the report's environment, from real `config show` answers of Pacific 16.2.15 and Reef 18.2.7."""

import json
from pathlib import Path

from cephbench.evidence.settings import capping_settings, scheduler_of
from cephbench.report.sections import _scheduler

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "config_show"


def _settings(name: str) -> dict:
    return capping_settings(json.loads((FIX / name).read_text()))


def test_reefs_mclock_profile_and_capacities_are_recorded_and_shown():
    found = scheduler_of({"osd.0": _settings("ceph18.2.7_osd0_tell_config_show.json"),
                          "osd.1": _settings("ceph18.2.7_osd0_tell_config_show_custom_res0.1_lim0.3.json")})
    assert found["osd.0"]["osd_op_queue"] == "mclock_scheduler" and "osd_mclock_profile" in found["osd.0"]
    assert "osd_memory_target" not in found["osd.0"]          # the scheduler alone
    shown = _scheduler(found)
    assert shown.startswith("mclock_scheduler, profile ") and "osd_mclock_max_capacity_iops_" in shown, shown


def test_pacifics_wpq_is_the_queue_alone():
    found = scheduler_of({"osd.0": _settings("ceph16.2.15_osd0_tell_config_show.json")})
    assert found == {"osd.0": {"osd_op_queue": "wpq"}}
    assert _scheduler(found) == "wpq (1 OSD)"


def test_nothing_read_is_nothing_recorded():
    assert scheduler_of({}) == {} and scheduler_of(None) == {} and _scheduler(None) == "-"
