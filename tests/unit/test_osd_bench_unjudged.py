"""An OSD bench with no ceiling says why where a person reads it (issue 36: OSD bench never its own ceiling; without
a disk baseline it says what is missing). The 2-host run of the operator's day (Ceph 16.2.15) had no disk baseline:
its analysis said so, but `show` and report.md had neither an OSD verdict line nor the table's efficiency and
bottleneck columns (none had one), so the sentence was in results.jsonl alone."""

from runfactory import copy_fixture_run

from conftest import FIXTURES
from cephbench.core.results import RunDir
from cephbench.report.format import messages


def notes_of(name: str, tmp_path) -> list[tuple[list[str], str]]:
    run = copy_fixture_run(str(FIXTURES / "report" / name), tmp_path / "r")
    return messages(RunDir.open(run).results()[0])[2]


def test_an_osd_bench_without_a_disk_baseline_says_what_is_missing(tmp_path):
    notes = [(ids, text) for ids, text in notes_of("ceph16.2.15_2hosts_2clients_rados", tmp_path)
             if "osd bench cannot be its own ceiling" in text]
    assert [ids for ids, _ in notes] == [["001-osd-4MiB"]], notes
    assert "add `baseline: {disks: ...}` to the suite" in notes[0][1]


def test_an_osd_bench_judged_against_a_disk_baseline_adds_no_note(tmp_path):
    notes = notes_of("ceph16.2.15_quick_multihost3", tmp_path)
    assert not [t for _, t in notes if "osd bench" in t and "no ceiling" in t], notes
