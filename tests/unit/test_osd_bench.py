from pathlib import Path

import pytest

from cephbench.suite.config import parse_suite
from cephbench.core.errors import ParseError
from cephbench.drivers import osd_bench
from cephbench.core.errors import UserError
from cephbench.suite.plan import expand
from cephbench.report.osd_bench import osd_tables as _osd_tables
from cephbench.report.verdict import slow_osds
from cephbench.core.results import Measurement, Result, Test

FIX = Path(__file__).parent.parent / "fixtures" / "osd_bench"
MIB = 2**20
# 3 rounds of `ceph tell osd.N bench 256MiB 4MiB` on the 3-OSD lab (files on one shared disk), round-robin
UNTOUCHED = "ceph16.2.15_lab3_256MiB_4MiB_untouched"
THROTTLED = "ceph16.2.15_lab3_256MiB_4MiB_osd2-throttled-100MiBps"      # osd.2 in a blkio cgroup: 100 MiB/s
THROTTLED_240 = "ceph16.2.15_lab3_256MiB_4MiB_osd2-throttled-240MiBps"


def rounds(name: str, only: int | None = None) -> dict[str, list[Measurement]]:
    """osd.N -> its benches in round order, parsed from the captured `r<round>-osd<N>.json` files."""
    out: dict[str, list[Measurement]] = {}
    for f in sorted((FIX / name).glob("r*-osd*.json")):
        rnd, osd = f.stem.split("-")
        if only is None or int(rnd[1:]) <= only:
            out.setdefault(f"osd.{osd[3:]}", []).append(osd_bench.parse(f.read_text()))
    return out


def test_parse_compact_and_pretty_json():
    m = osd_bench.parse((FIX / "ceph16.2.15_osd0_1GiB_4MiB.json").read_text())
    assert m.bytes_total == 1073741824 and m.op_size_bytes == 4194304
    assert m.bytes_per_s == pytest.approx(1289779105.8174632)
    assert m.ops_total == 256
    pretty = osd_bench.parse((FIX / "ceph16.2.15_osd2_plain.txt").read_text())
    assert pretty.ops_per_s == pytest.approx(344.23758413159834)


def test_error_output_is_a_parse_error_and_yields_the_limit():
    text = (FIX / "ceph16.2.15_osd1_100MiB_4KiB_err.json").read_text()
    with pytest.raises(ParseError):
        osd_bench.parse(text)
    assert osd_bench.limit_from_error(text) == 12288000


def test_argv():
    assert osd_bench.argv(["--conf", "c"], 3, 1024, 4096)[-6:] == ["osd.3", "bench", "1024", "4096", "-f", "json"]


def test_rounds_are_interleaved_round_robin_each_starting_further_on():
    # no OSD always first or last in its round (a CI run flagged osd.0, always first, on an untouched lab)
    assert osd_bench.round_robin([0, 1, 2], 3) == [(1, 0), (1, 1), (1, 2), (2, 1), (2, 2), (2, 0),
                                                   (3, 2), (3, 0), (3, 1)]
    assert osd_bench.round_robin([5], 2) == [(1, 5), (2, 5)]


def test_untouched_lab_flags_no_osd_and_keeps_every_repeat():
    per = rounds(UNTOUCHED)
    m, notes = osd_bench.summarise(per, 3, 0.2, 4 * MIB)
    assert m.extra["slow_osds"] == [] and notes == []
    osd0 = m.extra["per_osd"]["osd.0"]
    # the cold first bench of the run (178.3 MiB/s) is one of osd.0's three, not its whole verdict
    assert [round(v / MIB, 1) for v in osd0["bytes_per_s_repeats"]] == [178.3, 284.4, 305.9]
    assert osd0["repeats"] == 3 and osd0["bytes_per_s"] == osd0["bytes_per_s_repeats"][1]
    assert (osd0["bytes_per_s_min"], osd0["bytes_per_s_max"]) == (min(osd0["bytes_per_s_repeats"]),
                                                                  max(osd0["bytes_per_s_repeats"]))
    medians = sorted(v["bytes_per_s"] for v in m.extra["per_osd"].values())
    assert m.bytes_per_s == m.extra["median_bytes_per_s"] == medians[1]     # the median OSD, stored in bytes/s
    assert m.extra["repeat"] == 3 and m.extra["order"] == "round-robin, rotated"
    assert m.bytes_total == 9 * 256 * MIB


def test_one_bench_per_osd_cannot_accuse_a_drive():
    """`make demo` flagged osd.0 from one cold bench; its first round alone is 28% below the others here."""
    per = rounds(UNTOUCHED, only=1)
    checks = osd_bench.flag_slow({k: [x.bytes_per_s for x in v] for k, v in per.items()}, 0.2)
    assert checks["osd.0"].below > 0.2 and not checks["osd.0"].slow and checks["osd.0"].p is None
    m, notes = osd_bench.summarise(per, 1, 0.2, 4 * MIB)
    assert m.extra["slow_osds"] == []
    (note,) = notes
    assert note.startswith("osd.0 not flagged") and "1 against 2 repeats cannot separate" in note
    assert "raise repeat" in note


def test_overlapping_repeats_are_not_flagged():
    # with a 10% threshold osd.0's median is far enough below, but its repeats sit among the others'
    m, notes = osd_bench.summarise(rounds(UNTOUCHED), 3, 0.1, 4 * MIB)
    assert m.extra["slow_osds"] == [] and notes == []     # noise, not news: the OSD table shows the gap and p
    osd0 = m.extra["per_osd"]["osd.0"]
    assert osd0["below_others"] > 0.1 and osd0["p_value"] > 0.05
    r = Result(test=Test(id="018-osd-4MiB", index=18, workload="osd", kind="osd_bench", group="g7",
                         params={"total": 256 * MIB, "block_size": 4 * MIB, "repeat": 3}),
               status="ok", started_unix=0, duration_s=10, measurement=m)
    (t,) = _osd_tables([r])
    assert t.rows[0][4] == f"-15%, p {osd0['p_value']:.2g}" and t.rows[0][-1] == ""


@pytest.mark.parametrize("name", [THROTTLED, THROTTLED_240])
def test_a_throttled_osd_is_separated_and_flagged(name):
    m, notes = osd_bench.summarise(rounds(name), 3, 0.2, 4 * MIB)
    assert m.extra["slow_osds"] == ["osd.2"]
    (note,) = notes
    assert note.startswith("osd.2 is slow: median ") and "over 3 repeats" in note
    # every one of its 3 repeats below all 6 of the others': the smallest two-sided p of 3 against 6
    assert "Mann-Whitney U" in note and "p = 0.0238 < 0.05" in note
    assert m.extra["per_osd"]["osd.2"]["below_others"] > 0.5
    r = Result(test=Test(id="018-osd-4MiB", index=18, workload="osd", kind="osd_bench", group="g7",
                         params={"total": 256 * MIB, "block_size": 4 * MIB, "repeat": 3}),
               status="ok", started_unix=0, duration_s=10, measurement=m, notes=notes)
    assert slow_osds([r]) == ["osd.2"]


def test_the_same_throttled_osd_is_not_flagged_with_a_threshold_above_its_gap():
    m, _ = osd_bench.summarise(rounds(THROTTLED_240), 3, 0.6, 4 * MIB)
    assert m.extra["slow_osds"] == []


def test_osd_table_shows_median_spread_and_repeats():
    m, notes = osd_bench.summarise(rounds(THROTTLED), 3, 0.2, 4 * MIB)
    r = Result(test=Test(id="018-osd-4MiB", index=18, workload="osd", kind="osd_bench", group="g7",
                         params={"total": 256 * MIB, "block_size": 4 * MIB, "repeat": 3}),
               status="ok", started_unix=0, duration_s=10, measurement=m, notes=notes)
    (t,) = _osd_tables([r])
    assert t.headers[:5] == ["OSD", "median MiB/s", "spread MiB/s (min–max)", "repeats", "vs other OSDs"]
    assert [row[0] for row in t.rows] == ["osd.0", "osd.1", "osd.2"]
    osd2 = t.rows[2]
    assert osd2[1] == "101.1" and osd2[2] == "100.8–101.3" and osd2[3] == "3" and osd2[-1] == "SLOW"
    assert osd2[4] == "-70%, p 0.024"
    assert "benched 3 times, round-robin" in t.notes[0] and "Mann-Whitney" in t.notes[0]


def test_repeat_is_rounds_inside_one_test_default_3():
    plan = expand(parse_suite({"name": "t", "workloads": [{"type": "osd_bench", "total": "256MiB"}]}, "s"))
    (t,) = plan.tests
    assert t.params["repeat"] == 3 and t.repeat == 1 and t.id == "001-osd_bench-4MiB"
    plan = expand(parse_suite({"name": "t", "workloads": [{"type": "osd_bench", "repeat": 5}]}, "s"))
    (t,) = plan.tests
    assert t.params["repeat"] == 5
    # other kinds still repeat as separate tests
    plan = expand(parse_suite({"name": "t", "workloads": [{"type": "rados_bench", "modes": ["write"],
                                                            "repeat": 2}]}, "s"))
    assert [t.repeat for t in plan.tests] == [1, 2] and "repeat" not in plan.tests[0].params


def test_repeat_zero_is_refused_with_its_path():
    with pytest.raises(UserError) as exc:
        parse_suite({"name": "t", "workloads": [{"type": "osd_bench", "repeat": 0}]}, "s.yaml")
    assert exc.value.one_line() == "s.yaml: workloads[0].repeat: must be greater than zero, got 0"


def test_an_osd_level_with_the_others_in_one_round_is_not_slow():
    # figures (MiB/s) of a CI run on the lab's shared disk: osd.1 23% below the others' median and its three
    # repeats all below theirs (p = 0.024), but level with osd.0 in the first round: noise of the moment
    mib = 2**20
    rounds = {"osd.0": [326, 378, 350], "osd.1": [326, 282, 230], "osd.2": [402, 352, 380]}
    checks = osd_bench.flag_slow({k: [v * mib for v in vs] for k, vs in rounds.items()}, 0.2)
    c = checks["osd.1"]
    assert c.below > 0.2 and c.p is not None and c.p < 0.05
    assert not c.slow
    # below the others by more than the threshold in every round: slow
    rounds["osd.1"] = [250, 282, 230]
    assert osd_bench.flag_slow({k: [v * mib for v in vs] for k, vs in rounds.items()}, 0.2)["osd.1"].slow


META = Path(__file__).parent.parent / "fixtures" / "osd_metadata"


def metadata(name: str) -> list[dict]:
    import json
    return json.loads((META / name).read_text())


def test_osds_that_share_a_data_device_are_found_from_their_metadata():
    shared = osd_bench.shared_devices(metadata("ceph16.2.15_onehost3_bluestore_files.json"))
    assert {k: (v.device, v.mates) for k, v in shared.items()} == {
        "osd.0": ("vda on vm", ("osd.1", "osd.2")), "osd.1": ("vda on vm", ("osd.0", "osd.2")),
        "osd.2": ("vda on vm", ("osd.0", "osd.1"))}
    # each OSD of the multi-host lab on a drive of its own (its DB drive aside: data lands on the main device)
    assert osd_bench.shared_devices(metadata("ceph16.2.15_multihost3_bluestore_db.json")) == {}
    assert osd_bench.shared_devices([{"id": "x"}, {"id": 1, "hostname": "a"}]) == {}      # nothing to tell by


def test_an_osd_below_the_others_on_its_own_drive_is_not_called_a_slow_drive():
    """osd.2's figures (a real throttle of 100 MiB/s) as if its data shared the one-host lab's disk with osd.0 and
    osd.1, which bench 4x faster there: the drive is not what is slow, and the note says whose the gap is."""
    shared = osd_bench.shared_devices(metadata("ceph16.2.15_onehost3_bluestore_files.json"))
    m, notes = osd_bench.summarise(rounds(THROTTLED), 3, 0.2, 4 * MIB, shared=shared)
    assert m.extra["slow_osds"] == []
    (note,) = notes
    assert note.startswith("osd.2 not flagged as a slow drive: median ") and "vda on vm also holds osd.0, osd.1" in note
    assert "the gap is the OSD's, not the drive's" in note
    osd2 = m.extra["per_osd"]["osd.2"]
    assert osd2["not_the_drive"] is True and osd2["shares_device"] == {"device": "vda on vm", "with": ["osd.0", "osd.1"]}
    assert "not_the_drive" not in m.extra["per_osd"]["osd.0"]
    # the same figures with each OSD on a drive of its own (the lab it was measured on): flagged
    m, _ = osd_bench.summarise(rounds(THROTTLED), 3, 0.2, 4 * MIB,
                               shared=osd_bench.shared_devices(metadata("ceph16.2.15_multihost3_bluestore_db.json")))
    assert m.extra["slow_osds"] == ["osd.2"]


def test_every_osd_of_a_slow_shared_drive_is_flagged():
    """Two OSDs on sda bench 400 MiB/s, two on sdb 100: sdb is slow, and both of its OSDs are flagged, for they are
    not below each other."""
    figures = {"osd.0": [400, 410, 395], "osd.1": [405, 398, 402], "osd.2": [100, 104, 98], "osd.3": [99, 101, 103]}
    meta = [{"id": i, "hostname": "n1", "bluestore_bdev_devices": "sda" if i < 2 else "sdb"} for i in range(4)]
    checks = osd_bench.flag_slow({k: [v * MIB for v in vs] for k, vs in figures.items()}, 0.2,
                                 shared=osd_bench.shared_devices(meta))
    assert [k for k, c in checks.items() if c.slow] == ["osd.2", "osd.3"]
    assert all(c.not_the_drive is None for c in checks.values())


def test_the_osd_table_says_an_osd_below_its_own_drive_is_not_the_drive():
    shared = osd_bench.shared_devices(metadata("ceph16.2.15_onehost3_bluestore_files.json"))
    m, notes = osd_bench.summarise(rounds(THROTTLED), 3, 0.2, 4 * MIB, shared=shared)
    r = Result(test=Test(id="018-osd-4MiB", index=18, workload="osd", kind="osd_bench", group="g7",
                         params={"total": 256 * MIB, "block_size": 4 * MIB, "repeat": 3}),
               status="ok", started_unix=0, duration_s=10, measurement=m, notes=notes)
    (t,) = _osd_tables([r])
    by_osd = {row[0]: row[-1] for row in t.rows}
    assert by_osd == {"osd.0": "", "osd.1": "", "osd.2": "below the OSDs on its own drive (vda on vm): not the drive"}
    assert "judged as one drive" in t.notes[0] and slow_osds([r]) == []
