"""Where a run of a test's tools keeps what was watched: with its round, never over an earlier run's."""

from types import SimpleNamespace

from cephbench.core.results import RunDir
from cephbench.drivers.base import RunContext


def _dir(tmp_path, test_id, outputs):
    ctx = SimpleNamespace(rundir=RunDir(tmp_path))
    raw = tmp_path / "raw" / test_id
    return RunContext._evidence_dir(ctx, SimpleNamespace(id=test_id), [raw / o for o in outputs])   # type: ignore


def test_a_round_s_evidence_is_in_its_round_and_a_client_s_output_does_not_move_it(tmp_path):
    t = "001-fio"
    assert _dir(tmp_path, t, ["round2/fio.json"]) == tmp_path / "raw" / t / "round2"
    assert _dir(tmp_path, t, ["round3/c1/fio.json", "round3/c2/fio.json"]) == tmp_path / "raw" / t / "round3"
    # a client's own directory is no round: the test's (lab tests read raw/<test>/host-c1-watch.txt there)
    assert _dir(tmp_path, t, ["c1/fio.json"]) == tmp_path / "raw" / t
    assert _dir(tmp_path, t, ["rados-bench-write-i0.txt"]) == tmp_path / "raw" / t
    assert _dir(tmp_path, t, []) == tmp_path / "raw" / t


def test_a_run_again_does_not_write_over_the_one_before(tmp_path):
    t = "002-rados-write"
    first = _dir(tmp_path, t, ["rados-bench-write-round1-i0.txt"])
    (first / "host-vm-watch.txt").write_text("t 1\n")
    second = _dir(tmp_path, t, ["rados-bench-write-round2-i0.txt"])
    assert second == first / "run2"
    (second / "osd-perf-dump-start.json.gz").write_bytes(b"")
    assert _dir(tmp_path, t, ["rados-bench-write-round3-i0.txt"]) == first / "run3"
