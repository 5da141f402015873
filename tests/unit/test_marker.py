"""The run marker's value and what other runs read from it: reservations, and the Ceph options each run's variants
change (issue 24: two runs that changed one option undid each other's variant and left the option set)."""

import json

from cephbench import marker


def dump(**runs: str) -> dict[str, str]:
    return {marker.key(rid): v for rid, v in runs.items()}


def test_a_marker_carries_the_options_its_run_changes():
    v = json.loads(marker.value("/r", 1700000000.4, 5,
                                 options=[("osd", "osd_max_backfills"), ("osd.1", "osd_recovery_sleep")]))
    assert v["options"] == [["osd", "osd_max_backfills"], ["osd.1", "osd_recovery_sleep"]]
    assert v["reserved_raw_bytes"] == 5 and v["run_dir"] == "/r" and v["started_unix"] == 1700000000
    assert "options" not in json.loads(marker.value(None, 0))      # a run without variants: as before


def test_another_runs_option_is_found_by_name_whatever_its_target():
    runs = marker.parse_dump(dump(
        aaaaaa=marker.value("/a", 0, options=[("osd", "osd_max_backfills")]),
        bbbbbb=marker.value("/b", 0, options=[("global", "osd_max_backfills"), ("osd", "osd_recovery_sleep")]),
        cccccc=json.dumps({"host": "h", "pid": 1}),          # a marker of a version before options: claims none
        dddddd="not json"))
    found = marker.options_of_others(runs, "aaaaaa", {"osd_max_backfills"})
    assert [(r["run_id"], who, name) for r, who, name in found] == [("bbbbbb", "global", "osd_max_backfills")]
    assert marker.options_of_others(runs, "bbbbbb", {"osd_max_backfills", "osd_recovery_sleep"})[0][0][
        "run_id"] == "aaaaaa"
    assert marker.options_of_others(runs, "zzzzzz", {"osd_op_queue"}) == []


def test_another_run_is_described_by_its_marker():
    run = marker.parse_dump(dump(abc123=marker.value("/runs/x", 3600)))[0]
    text = marker.describe(run)
    assert text.startswith("run abc123 from host ") and text.endswith(", since 01:00:00 UTC"), text
    assert marker.describe({"run_id": "x"}) == "run x from host ?, PID ?, since 00:00:00 UTC"
