"""rados bench seq after a write too short for it (issue 25 item 7): the driver tops the objects up before the seq."""

from cephbench.core.results import RunDir

from labcli import TINY_RADOS, run_cli, write_suite


def test_a_seq_longer_than_its_write_can_feed_is_topped_up_and_runs_its_duration(lab, cephbench_env, tmp_path):
    """A 2 s write of 4 MiB objects feeds a seq of about half a second on the lab (reads run up to 4.5x as many
    objects per second). The driver knows the write's objects and rate when the seq starts: it writes more objects
    (not recorded) before the seq, so that the seq runs its 2 s, and says so in a note."""
    suite = TINY_RADOS.replace("[64KiB, 1MiB]", "[4MiB]").replace("concurrency: 4", "concurrency: 16").replace(
        "modes: [write, rand]", "modes: [write, seq]")
    out = tmp_path / "seq"
    res = run_cli(["run", str(write_suite(tmp_path, suite)), "--out", str(out)], cephbench_env)
    assert res.returncode == 0, res.stderr[-2000:] + res.stdout[-2000:]
    (write, seq), _ = RunDir(out).results()
    assert write.status == "ok" and seq.status == "ok", (write.error, seq.error)
    assert not [w for w in seq.warnings if "ran out" in w], seq.warnings
    assert seq.measurement.duration_s >= 0.8 * 2, seq.measurement.duration_s
    (note,) = [n for n in seq.notes if "topped up" in n]
    print(f"\n{note}\nseq: {seq.measurement.duration_s:.1f} s, {seq.measurement.ops_total:.0f} objects; "
          f"write: {write.measurement.duration_s:.1f} s, {write.measurement.ops_total:.0f} objects")
    assert (out / "raw" / seq.test.id / "rados-bench-topup-write-i0.txt").is_file()
    assert seq.measurement.ops_total > write.measurement.ops_total
