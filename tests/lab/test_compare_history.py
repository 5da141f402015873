"""history on real runs: each `cephbench run` catalogues itself at its end, without a warning, and `history`
lists both runs of a suite.

What compare and history make of such runs (each side's median, min–max and n; the compare page in Chromium;
each pool profile followed apart with --trend) is checked on two real runs kept as fixtures:
tests/unit/test_compare_history_runs.py."""

from labcli import run_cli

ONE = """
name: catalogued
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
workloads:
  - {name: rados, type: rados_bench, pool: rep2, modes: [write], object_size: 64KiB, concurrency: 4, duration: 1s}
"""


def test_two_runs_are_catalogued_at_their_end(lab_cluster, cephbench_env, tmp_path):
    env = {**cephbench_env, "CEPHBENCH_HISTORY": str(tmp_path / "history.sqlite")}
    suite = tmp_path / "suite.yaml"
    suite.write_text(ONE)
    runs = [tmp_path / "first", tmp_path / "second"]
    for out in runs:
        res = run_cli(["run", str(suite), "--out", str(out)], env)
        assert res.returncode == 0, res.stderr + res.stdout
        assert "history catalog" not in res.stderr          # catalogued without a warning
    res = run_cli(["history", "--suite", "catalogued"], env)
    assert res.returncode == 0 and all(str(r) in res.stdout for r in runs), res.stdout
    res = run_cli(["history", "--trend", "iops", "--test", "rados_bench phase=write object_size=64KiB"], env)
    assert res.returncode == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if "rados-write" in ln]
    assert [("first" in rows[0]), ("second" in rows[1])] == [True, True], res.stdout
