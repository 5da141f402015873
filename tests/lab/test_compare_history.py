"""compare and history on real runs: a suite with repeats run twice on the lab, catalogued at the end of each
run, compared test by test, and followed with --trend."""


from labcli import run_cli

REPEATED = """
name: repeated
pools:
  rep2: {type: replicated, size: 2, pg_num: 16}
workloads:
  - name: rados
    type: rados_bench
    pool: rep2
    modes: [write]
    object_size: 64KiB
    concurrency: 4
    duration: 1s
    repeat: 3
"""


def test_two_runs_are_catalogued_compared_and_trended(lab_cluster, cephbench_env, tmp_path):
    env = {**cephbench_env, "CEPHBENCH_HISTORY": str(tmp_path / "history.sqlite")}
    suite = tmp_path / "suite.yaml"
    suite.write_text(REPEATED)
    runs = [tmp_path / "first", tmp_path / "second"]
    for out in runs:
        res = run_cli(["run", str(suite), "--out", str(out)], env)
        assert res.returncode == 0, res.stderr + res.stdout
        assert "history catalog" not in res.stderr          # catalogued without a warning
    res = run_cli(["history", "--suite", "repeated"], env)
    assert res.returncode == 0 and all(str(r) in res.stdout for r in runs), res.stdout
    res = run_cli(["compare", *map(str, runs), "--fail-on-regression", "1000"], env)
    assert res.returncode == 0, res.stderr
    row = next(ln for ln in res.stdout.splitlines() if "rados-write-64KiB-t4" in ln)
    assert "MiB/s" in row and "3/3" in row               # the 3 repeats of each run are the samples
    assert "geometric mean" in res.stdout
    res = run_cli(["history", "--trend", "iops", "--test", "rados_bench phase=write object_size=64KiB"], env)
    assert res.returncode == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if "rados-write-64KiB-t4" in ln]
    assert [("first" in rows[0]), ("second" in rows[1])] == [True, True] and " 3 " in rows[0]
