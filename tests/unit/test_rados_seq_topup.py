"""How many objects a rados bench seq needs before it starts, how long a write would have fed one that ran out, and
whose objects each read instance reads."""

from cephbench.drivers.rados_bench import (Fed, RadosBenchCommand, read_sources, seq_objects, seq_ratio,
                                          topup_concurrency, write_seconds_for)

MIB = 1024 * 1024


def test_the_ratio_is_the_labs_bound_with_room_until_a_seq_of_the_run_measured_more():
    """A fresh clone's CI (Ceph 16.2.15, a quiet 2-core VM) read topped-up 4 MiB objects at 7.8x the write's rate
    (266 against 34 objects/s): the lab's bound of 6 ran the seq out at 1.5 s of 2. The objects a top-up just
    wrote are still in the OSDs' own cache, which the page-cache drop leaves: the top-up takes the bound + 25 %,
    as it does a measured ratio."""
    assert seq_ratio(4 * MIB, None)[0] == 7.5 and seq_ratio(64 * 1024, None)[0] == 12.5
    assert seq_ratio(4 * MIB, 3.0)[0] == 7.5                   # a lower measure never lowers the bound
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


def test_a_top_up_writes_with_more_in_flight_than_a_small_test_within_a_bound_of_bytes_and_objects():
    """The top-up is not recorded: it writes as fast as the cluster takes objects (the lab's 3 OSDs took 4 KiB
    objects about 3x as fast at 64 in flight as at 4), holding at most 64 MiB in flight and never more writes at
    once than it has objects to write (its first writes all start, whatever --max-objects says)."""
    assert topup_concurrency(4, 4096, 40000) == 64
    assert topup_concurrency(4, 4 * MIB, 800) == 16
    assert topup_concurrency(128, 4096, 40000) == 128         # never fewer than the test's own
    assert topup_concurrency(4, 4096, 20) == 20
    assert topup_concurrency(16, 4096, 10) == 16


def test_a_read_reads_its_own_hosts_objects_and_past_the_hosts_a_write_reached_those_of_one_that_wrote():
    """`clients: auto`: a read step may run on more client hosts than the write's search reached (it stopped
    early); those hosts read what the hosts that wrote made, in turn, each instance the same instance there."""
    c1, c2, c3 = [("c1", 0), ("c1", 1)], [("c2", 0), ("c2", 1)], [("c3", 0), ("c3", 1)]
    assert read_sources(c1, c1 + c2) == c1                     # fewer hosts than wrote: each its own
    assert read_sources(c1 + c2 + c3, c1 + c2 + c3) == c1 + c2 + c3
    assert read_sources(c1 + c2 + c3, c1) == c1 + c1 + c1
    assert read_sources(c1 + c2 + c3, c1 + c2) == c1 + c2 + c1
    assert read_sources([(None, 0)], [(None, 0)]) == [(None, 0)]     # this machine: as before


def test_reads_from_two_hosts_started_apart_did_not_run_out():
    """CI (stop 32) ran rand for 2 s from two client hosts: each host's rados bench ran its 2 s, but the ssh starts
    put 0.6 s between them, so the merged measurement's common window was 1.4 s, under 80 % of 2 s, and the step
    was warned as having run out of objects (and its curve dropped). Running out is each instance's own: one that
    read every object stops before its duration."""
    from pathlib import Path

    from cephbench.core.merge import merge_instances
    from cephbench.drivers.rados_bench import parse, ran_out

    text = (Path(__file__).parents[1] / "fixtures" / "rados_bench" / "ceph16.2.15_rand_4K.txt").read_text()
    a, b = parse(text, "rand", 5), parse(text, "rand", 5)
    a.start_unix_s, a.end_unix_s = 1000.0, 1000.0 + a.duration_s
    b.start_unix_s, b.end_unix_s = 1001.2, 1001.2 + b.duration_s
    merged = merge_instances([a, b], latency="mean-max")
    assert merged.duration_s < 0.8 * 5          # the window alone would have said "ran out"
    assert ran_out([a, b], 5) is None
    short = parse(text, "rand", 5)
    short.duration_s = 2.5                      # an instance that read every object there was, half-way
    assert ran_out([a, short], 5) == 2.5


def _recorded_seq(test_id: str):
    """A seq's measurement as a real run recorded it (tests/fixtures/report: the quick suite on the one-host lab,
    Ceph 16.2.15)."""
    import json
    from pathlib import Path

    from cephbench.core.results import Measurement

    path = Path(__file__).parents[1] / "fixtures" / "report" / "ceph16.2.15_quick_search_onehost.results.jsonl"
    (line,) = [ln for ln in path.read_text().splitlines() if f'"id":"{test_id}"' in ln.replace(" ", "")]
    return Measurement.model_validate(json.loads(line)["measurement"])


def test_a_top_up_says_how_many_objects_it_added_and_that_a_seq_reading_fewer_changed_nothing_in_count():
    """The quick suite's 2 s seq of 4 MiB objects after a 12 s write of 848: topped up by 210 to 1,058, and it read
    558 (264 and 278 objects in its two seconds). A seq typed by hand after the same write reads those 558 too:
    the note says so, and the result carries the counts (extra.topup) with no effect figure."""
    from cephbench.drivers.rados_bench import topup_effect

    m = _recorded_seq("010-rados-seq-4MiB-t16")
    note = topup_effect(m, 848, 1058, 16)
    assert "added 210 objects to the 848" in note and "read 558, no more than the write made" in note
    assert m.extra["topup"] == {"objects_before": 848, "objects_added": 210, "objects_after": 1058, "in_flight": 16,
                                "hand_ops_per_s": None, "hand_seconds": None, "effect": None}


def test_what_a_seq_of_the_writes_objects_alone_would_have_measured_is_the_pace_of_the_seqs_first_seconds():
    """A seq reading past what the write left: a hand seq of the write's objects would have stopped once it read
    them, so its figure is this seq's pace until then (a stalled second counted whole), and the note says by how
    much the top-up changed the figure. The same recorded seconds (264, then 278 objects)."""
    from cephbench.drivers.rados_bench import hand_seq, topup_effect

    m = _recorded_seq("010-rados-seq-4MiB-t16")
    assert hand_seq(m.timeseries, 264) == (264.0, 1.0)
    rate, secs = hand_seq(m.timeseries, 300)
    assert secs == 1 + 36 / 278 and rate == 300 / secs
    assert hand_seq(m.timeseries, 543) is None          # its whole seconds read 542
    assert hand_seq(m.timeseries, 0) is None
    note = topup_effect(m, 300, 1058, 16)
    effect = m.extra["topup"]["effect"]
    assert effect == m.ops_per_s / rate
    assert f"over its 2.1 s ({effect - 1:+.0%})" in note and "about 1.1 s" in note
    # what the seq's own seconds miss, as bench fidelity measured it by hand: the 4 MiB figure for a 4 MiB seq
    assert "at 4MiB, a topped-up seq read 0.84x as fast as the seq of the write's objects alone (0.65-1.15" in note
    assert m.extra["topup"]["measured_on_lab"] == {"object_size": 4 * MIB, "median": 0.84, "lowest": 0.65,
                                                   "highest": 1.15}


def test_the_measured_effect_is_the_nearest_measured_sizes():
    from cephbench.kinds.rados_bench import topup_effect_measured

    assert topup_effect_measured(64 * 1024)[0] == 4096
    assert topup_effect_measured(1 * MIB)[0] == 4 * MIB
    assert topup_effect_measured(16 * MIB)[0] == 4 * MIB


def test_an_erasure_coded_pools_top_up_writes_new_objects_for_the_seq_rather_than_rewrite_the_writes():
    """A real top-up into an EC 2+1 pool (the 2-host lab, Ceph 16.2.15): `--reuse-bench` rewrites the run name's
    objects, which an EC pool without allow_ec_overwrites refuses at once (error 95), so the seq read the 212
    objects of its 6 s write and ran out. There the top-up writes its objects anew under the run name (the seq reads
    the last write's prefix), every one of them taking room; a replicated pool's rewrite takes room only for those
    past the write's."""
    from pathlib import Path

    import pytest

    from cephbench.core.errors import ParseError
    from cephbench.drivers.rados_bench import parse, topup_target

    refused = (Path(__file__).parents[1] / "fixtures" / "rados_bench" /
               "ceph16.2.15_ec21_topup_reuse_bench_eopnotsupp.txt").read_text()
    assert "(95) Operation not supported" in refused
    with pytest.raises(ParseError):
        parse(refused, "write", 48)
    ec = {"type": "erasure", "k": 2, "m": 1, "plugin": "jerasure"}
    assert topup_target(ec, 769, 212, 5000) == (769, False)
    assert topup_target(ec, 769, 212, 500) == (500, False)        # all of them take room
    assert topup_target(ec, 769, 212, 200) == (200, False)        # no more than the write's: no top-up (target <= have)
    rep = {"type": "replicated", "size": 2}
    assert topup_target(rep, 769, 212, 500) == (712, True)
    argv = RadosBenchCommand("p", "write", 48, 64, MIB, "rn", max_objects=769, reuse=False).argv([])
    assert "--reuse-bench" not in argv and argv[-2:] == ["--max-objects", "769"]


def test_a_capacity_stop_that_came_as_every_instance_finished_cut_nothing():
    """seed-bobtail-2012 on FileStore (2026-12-07): the watch stopped the 4 MiB write for capacity (73.4 % raw used,
    rising) as its 8 instances finished the 61 objects the guard allowed each; every rados bench had printed its
    summary and written its metadata object, yet the write counted as cut and both seqs of the group failed with
    "nothing to read". A stop cuts the write only when an instance did not end on its own (SIGINT: no summary)."""
    from pathlib import Path

    from cephbench.drivers.rados_bench import parse, parse_interrupted, stopped_mid_write
    from cephbench.evidence.rounds import ClusterSeen, Seen
    from cephbench.hosts.local import CommandResult

    fixtures = Path(__file__).parents[1] / "fixtures" / "rados_bench"
    done = (fixtures / "ceph16.2.15_write_4M_t2_max_objects_61_filestore_ext4.txt").read_text()
    cut = (fixtures / "ceph16.2.15_write_1M_sigint_at_2.5s.txt").read_text()
    ended = [CommandResult(["rados"], 0, done, "", 15.0) for _ in range(8)]
    stopped, quiet = Seen(cluster=ClusterSeen(stopped_for_capacity=True)), Seen()
    assert parse(done, "write", 20).ops_total == 61
    assert not stopped_mid_write(ended, stopped)
    interrupted = [*ended[:7], CommandResult(["rados"], -2, cut, "", 2.5)]
    assert parse_interrupted(cut, "write", 1 << 20).ops_total
    assert stopped_mid_write(interrupted, stopped)
    assert not stopped_mid_write(interrupted, quiet)     # a failure of its own, not the guard's
    assert not stopped_mid_write(ended, None)            # a dry run
