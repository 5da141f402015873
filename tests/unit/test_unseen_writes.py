"""The capacity guard's count of this run's writes that `ceph df` does not show yet (issue 23)."""

from cephbench.cluster import marker
from cephbench.cluster.safety import CapacityBudget, UnseenWrites, settle_seconds

MIB = 2**20


def test_a_write_is_unseen_until_df_grows_by_it_or_the_settle_time_passes():
    u = UnseenWrites(settle_seconds(1.0))
    assert u.settle_s == 3.0
    u.add(400 * MIB, used_before=1000 * MIB, now=10.0)
    assert u.pending(used_now=1000 * MIB, now=10.5) == 400 * MIB       # the mgr has not reported it
    assert u.pending(used_now=1300 * MIB, now=11.0) == 100 * MIB       # in part
    assert u.pending(used_now=1400 * MIB, now=11.5) == 0                # all of it
    assert u.pending(used_now=1000 * MIB, now=13.1) == 0                # past the settle time: df is the truth


def test_two_unseen_writes_are_counted_against_the_growth_since_the_first():
    u = UnseenWrites(10.0)
    u.add(300 * MIB, used_before=1000 * MIB, now=0.0)
    u.add(200 * MIB, used_before=1000 * MIB, now=1.0)                  # started before df showed the first
    assert u.pending(used_now=1300 * MIB, now=2.0) == 200 * MIB
    # space freed meanwhile (a pool removed) hides growth: the count errs on the safe side
    assert u.pending(used_now=900 * MIB, now=2.0) == 500 * MIB


def test_the_budget_says_what_it_counted_as_unseen():
    b = CapacityBudget(10_000 * MIB, 1_500 * MIB, 0.5, unseen=500 * MIB)
    assert b.allowed_raw == 3_500 * MIB
    assert "not yet counted by `ceph df`" in b.describe()


def test_other_runs_count_a_marker_s_unseen_write_until_its_time():
    runs = marker.parse_dump({marker.key("a"): marker.value("/r", 0.0, 100, unseen_raw_bytes=50,
                                                             unseen_until_unix=1000.0),
                              marker.key("b"): '{"reserved_raw_bytes": "x"}'})
    assert marker.reserved_by_others(runs, "b", now_unix=999.0) == 150
    assert marker.reserved_by_others(runs, "b", now_unix=1001.0) == 100
    assert marker.reserved_by_others(runs, "a", now_unix=999.0) == 0      # a damaged marker reserves nothing


def test_a_write_counts_the_objects_its_summaries_say_it_made():
    from pathlib import Path
    from cephbench.drivers.rados_bench import objects_written
    fixtures = sorted((Path(__file__).parents[1] / "fixtures" / "rados_bench").glob("*write*"))
    texts = [f.read_text() for f in fixtures]
    assert len(texts) >= 2, "the rados bench write fixtures (text and json)"
    assert objects_written([t for t in texts if "total_writes_made" in t][:1]) == 5133
    made = objects_written(texts[:1])
    assert made is not None and made > 0
    assert objects_written(texts[:1] + ["  sec Cur ops   started  finished\n    1      16        20         4\n"]) is None
    assert objects_written([]) is None
