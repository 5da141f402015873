"""Steady state on the real lab: a rados bench write runs in rounds of its duration until the SNIA criteria hold
over the window or steady_state.max has passed, and the result says which, with every round."""

import pytest

from cephbench.core.results import RunDir, SteadyState

from labcli import run_cli, write_suite

STEADY = """
name: steady
workloads:
  - {name: rados, type: rados_bench, modes: [write], object_size: 64KiB, concurrency: 4, duration: 1s,
     steady_state: {max: 40s, window: 3, max_range: 0.95, max_slope: 0.95}}
"""


def test_a_write_runs_in_rounds_until_steady_and_says_so(lab, cephbench_env, tmp_path):
    res = run_cli(["run", write_suite(tmp_path, STEADY), "--out", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    [r] = RunDir.open(tmp_path / "run").results()[0]
    st = SteadyState.model_validate(r.measurement.extra["steady_state"])
    assert len(st.rounds) >= 3 and st.window == 3
    assert len(r.raw) == len(st.rounds)                      # each round's own output is kept
    # loose bounds (about the widest the schema takes): 3 one-second rounds of a quiet lab vary far less than 95%; beside
    # the rest of make test's first phase (CPUs 96 % busy) every window of a 30 s run once varied more than 90 % (CI
    # of 9070a17: 124 % at the end), so max is 40 s. A round costs 1.5-5 s here (rados bench starts, counters read
    # around it)
    assert st.reached and st.reached_after_s <= 40 and st.range <= 0.95, st
    assert r.measurement.bytes_per_s == sum(x.bytes_per_s for x in st.rounds[-3:]) / 3
    assert any(n.startswith("steady state reached after") for n in r.notes), r.notes
    # and each round's evidence: its host's stream and its OSDs' counters, none written over by the next round's
    raw = tmp_path / "run" / "raw" / r.test.id
    for name in ("host-*-watch.txt", "osd-perf-dump-end.json.gz"):
        assert len(list(raw.glob(name)) + list(raw.glob(f"run*/{name}"))) == len(st.rounds), sorted(raw.rglob("*"))


def test_a_steady_write_s_evidence_covers_the_window_not_its_last_round(lab, cephbench_env, tmp_path):
    # max_range/max_slope this small are never met: the write runs its rounds until max, and the window is its last 3
    suite = STEADY.replace("max: 40s, window: 3, max_range: 0.95, max_slope: 0.95",
                           "max: 20s, window: 3, max_range: 0.0001, max_slope: 0.0001")
    res = run_cli(["run", write_suite(tmp_path, suite), "--out", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    [r] = RunDir.open(tmp_path / "run").results()[0]
    st = SteadyState.model_validate(r.measurement.extra["steady_state"])
    assert len(st.rounds) >= 3 and not st.reached, st
    ops = r.measurement.ops_total                           # the window's rounds' ops
    window = [x.ops_per_s * x.duration_s for x in st.rounds[-3:]]
    last = window[-1]
    assert ops == pytest.approx(sum(window), rel=0.01), (ops, window)
    # so evidence of the last round alone (its ops and the few below) would fail the check of op_w below; not "twice
    # the last round": under make test's CPUs the rounds' rates differ, and the last once wrote 792 of 1,442 (run DD)
    assert ops > last * 1.05 + 30, (ops, window)
    op_w = sum(o.op_w or 0 for o in r.evidence.osds)        # each write is one op_w on its primary OSD
    # a few more: rados bench's metadata object per round, the mgr's own writes
    assert ops <= op_w <= ops * 1.05 + 30, (op_w, ops, last)
    # the host's CPU seconds and the OSDs' devices cover the window's rounds too, not the last alone: a device's
    # series counts whole seconds (procfs.whole_seconds joins a round's short last interval to the one before), and
    # under make test's CPUs three one-second rounds left two of them (CI of 9e802bb)
    assert all(len(h.cpu_busy_series) >= 3 for h in r.hosts), r.hosts
    assert all(len(d.busy) >= 2 for d in r.evidence.devices), r.evidence.devices


FIO_STEADY = """
name: steady-fio
workloads:
  - {name: fio, type: fio_rbd, image_size: 32MiB, rw: [randwrite], block_size: 4KiB, iodepth: 4, duration: 1s,
     steady_state: {max: 40s, window: 3, max_range: 0.9, max_slope: 0.9}}
"""


def test_fio_rbd_runs_in_rounds_of_its_duration_through_the_core_loop(lab, cephbench_env, tmp_path):
    """Not rados bench alone: any kind with a duration runs in rounds (drivers/rounds.py), each round's output kept
    apart, and the result says whether it got steady, with its window."""
    res = run_cli(["run", write_suite(tmp_path, FIO_STEADY), "--out", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    [r] = RunDir.open(tmp_path / "run").results()[0]
    assert r.error is None, r.error
    st = SteadyState.model_validate(r.measurement.extra["steady_state"])
    assert len(st.rounds) >= 3 and st.window == 3, st
    assert st.reached and st.range <= 0.9, st
    assert r.measurement.bytes_per_s == sum(x.bytes_per_s for x in st.rounds[-3:]) / 3
    assert any(n.startswith("steady state reached after") and "the figure is the last 3 rounds" in n
               for n in r.notes), r.notes
    for i in range(1, len(st.rounds) + 1):      # each round's fio output in a directory of its own, and its evidence
        assert any(f"/round{i}/fio.json" in p for p in r.raw), r.raw
        assert list((tmp_path / "run" / "raw" / r.test.id / f"round{i}").glob("host-*-watch.txt")), i
    assert r.hosts, "the window's host loads"


def test_rbd_bench_rounds_each_find_the_image_free(lab, cephbench_env, tmp_path):
    """rbd bench ends a duration by SIGINT, which may leave its image watched: each round waits for it first. The
    watch of an rbd bench that exited without closing its image lasts until the OSDs time it out
    (osd_client_watch_timeout, 30 s), and the wait counts in the rounds' time: 120 s leave room for three rounds
    with two such waits (a fresh clone's CI had 2 rounds in 40 s)."""
    suite = FIO_STEADY.replace("type: fio_rbd, image_size: 32MiB, rw: [randwrite], block_size: 4KiB, iodepth: 4",
                               "type: rbd_bench, image_size: 32MiB, io_type: [write], io_pattern: rand, io_threads: 4"
                               ).replace("max: 40s", "max: 120s")
    res = run_cli(["run", write_suite(tmp_path, suite), "--out", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    [r] = RunDir.open(tmp_path / "run").results()[0]
    assert r.error is None, r.error
    st = SteadyState.model_validate(r.measurement.extra["steady_state"])
    assert len(st.rounds) >= 3 and st.reached, st
    assert [p.rsplit("/", 1)[1] for p in r.raw] == [f"rbd-bench-write-img0-round{i}.txt"
                                                    for i in range(1, len(st.rounds) + 1)]
