"""The run marker's value and what other runs read from it: reservations, and the Ceph options each run's variants
change (issue 24: two runs that changed one option undid each other's variant and left the option set)."""

import json

from cephbench.cluster import marker


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


def test_a_marker_carries_the_scrub_flags_its_run_holds():
    v = json.loads(marker.value("/r", 0, scrub_flags=["noscrub", "nodeep-scrub"]))
    assert v["scrub_flags"] == ["noscrub", "nodeep-scrub"]
    assert "scrub_flags" not in json.loads(marker.value("/r", 0))      # holds none: as before


def test_the_scrub_flags_other_runs_hold_leave_out_the_named_runs():
    """A run's own marker, and a dead run's whose flags its cleanup removes, keep no flag set."""
    runs = marker.parse_dump(dump(
        aaaaaa=marker.value("/a", 0, scrub_flags=["noscrub", "nodeep-scrub"]),
        bbbbbb=marker.value("/b", 0, scrub_flags=["nodeep-scrub"]),
        cccccc=json.dumps({"host": "h", "scrub_flags": "noscrub"}),     # damaged: holds nothing
        dddddd="not json"))
    assert marker.scrub_flags_of_others(runs, ["aaaaaa"]) == {"nodeep-scrub"}
    assert marker.scrub_flags_of_others(runs, ["bbbbbb"]) == {"noscrub", "nodeep-scrub"}
    assert marker.scrub_flags_of_others(runs, ["aaaaaa", "bbbbbb"]) == set()


def test_every_option_of_other_runs_is_found_when_no_name_is_given():
    runs = marker.parse_dump(dump(
        aaaaaa=marker.value("/a", 0, options=[("osd", "osd_max_backfills")]),
        bbbbbb=marker.value("/b", 0, options=[("osd", "osd_recovery_sleep")]),
        cccccc=marker.value("/c", 0)))
    found = marker.options_of_others(runs, "cccccc")
    assert [(r["run_id"], name) for r, _, name in found] == [("aaaaaa", "osd_max_backfills"),
                                                            ("bbbbbb", "osd_recovery_sleep")]
    assert marker.options_of_others(runs, "aaaaaa") == [(runs[1], "osd", "osd_recovery_sleep")]


def test_flags_an_ending_run_let_go_of_count_only_for_a_run_that_starts():
    """A starting run takes them as set by cephbench (it holds them); an ending run does not keep them for it."""
    v = json.loads(marker.value("/a", 0, scrub_letting_go=["noscrub"]))
    assert v["scrub_letting_go"] == ["noscrub"] and "scrub_flags" not in v
    runs = marker.parse_dump(dump(aaaaaa=json.dumps(v)))
    assert marker.scrub_flags_of_others(runs, ["bbbbbb"]) == set()
    assert marker.scrub_flags_of_others(runs, ["bbbbbb"], letting_go=True) == {"noscrub"}


def test_a_marker_carries_whether_its_run_holds_mon_allow_pool_delete_and_what_to_put_back():
    v = json.loads(marker.value("/r", 0, pool_delete=("false",)))
    assert v["pool_delete"] == {"previous": "false"}
    assert json.loads(marker.value("/r", 0, pool_delete=(None,)))["pool_delete"] == {"previous": None}
    assert "pool_delete" not in json.loads(marker.value("/r", 0))      # holds it not: as before
    runs = marker.parse_dump(dump(
        aaaaaa=marker.value("/a", 0, pool_delete=(None,)),
        bbbbbb=marker.value("/b", 0),
        cccccc=json.dumps({"host": "h", "pool_delete": "true"}),       # damaged: holds nothing
        dddddd="not json"))
    assert [r["run_id"] for r in marker.pool_delete_holders(runs, "bbbbbb")] == ["aaaaaa"]
    assert marker.pool_delete_holders(runs, "aaaaaa") == []
