"""How many objects a rados bench seq needs before it starts, and how long a write would have fed one that ran out."""

from cephbench.drivers.rados_bench import Fed, RadosBenchCommand, seq_objects, seq_ratio, write_seconds_for

MIB = 1024 * 1024


def test_the_ratio_is_the_labs_bound_until_a_seq_of_the_run_measured_more():
    assert seq_ratio(4 * MIB, None)[0] == 6 and seq_ratio(64 * 1024, None)[0] == 10
    assert seq_ratio(4 * MIB, 3.0)[0] == 6                     # a lower measure never lowers the bound
    ratio, whence = seq_ratio(4 * MIB, 8.0)
    assert ratio == 10 and "measured by an earlier seq" in whence


def test_the_objects_a_seq_needs_follow_the_slowest_instances_write():
    fed = [Fed(150, 2.0), Fed(100, 2.0)]                       # 75 and 50 objects/s
    assert seq_objects(fed, 2, 6.0) == 600


def test_a_seq_that_ran_out_says_how_long_the_write_must_be():
    # the write made 60 objects/s, the seq read them at 300/s: a 2 s seq needs 600, 10 s of writing
    assert write_seconds_for([Fed(120, 2.0)], [Fed(120, 0.4)], 2) == 10


def test_a_top_up_rewrites_the_run_names_objects():
    argv = RadosBenchCommand("p", "write", 30, 16, 4 * MIB, "rn", max_objects=409, reuse=True).argv([])
    assert argv[-3:] == ["--max-objects", "409", "--reuse-bench"]
