import json
import time

import pytest

from cephbench.core.errors import UserError
from cephbench.core.results import SCHEMA_VERSION, Measurement, Result, RunDir, Test
from cephbench.core.units import format_size, parse_duration, parse_size


def test_sizes_and_durations():
    assert parse_size("4KiB") == parse_size("4k") == parse_size("4K") == 4096
    assert parse_size("4MiB") == parse_size("4M") == 4 * 1024**2
    assert parse_size(512) == 512 and parse_size("1.5GiB") == 1536 * 1024**2 and parse_size(4096.0) == 4096
    for bad in ("4X", "", "-1", "four", True, 4.5, "1.5B", "0.1KiB"):
        with pytest.raises(ValueError):
            parse_size(bad)
    for ambiguous, offer in (("4 MB", "4MiB"), ("1GB", "1GiB"), ("8kb", "8KiB"), ("2TB", "2TiB")):
        with pytest.raises(ValueError, match=f"ambiguous.*write {offer}"):
            parse_size(ambiguous)
    assert parse_duration("30s") == 30 and parse_duration("2m") == 120 and parse_duration("500ms") == 0.5
    for bad in ("soon", float("inf"), float("nan")):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert format_size(4096) == "4KiB" and format_size(4 * 1024**2) == "4MiB" and format_size(100) == "100B"


def _result(i):
    t = Test(id=f"{i:03d}-x", index=i, workload="x", kind="rados_bench", group="g001", params={"a": i})
    return Result(test=t, status="ok", started_unix=time.time(), duration_s=1.0,
                  measurement=Measurement(tool="rados bench", op="write", duration_s=1.0, bytes_per_s=1.0))


def test_run_dir_appends_and_survives_a_corrupt_line(tmp_path):
    rd = RunDir.create(tmp_path / "run", {"suite_name": "x"})
    rd.append(_result(1))
    with open(rd.results_jsonl, "a") as f:
        f.write('{"schema_version": 1, "test": {"id": "trunc\n')
    rd.append(_result(2))
    results, bad = rd.results()
    assert [r.test.id for r in results] == ["001-x", "002-x"]
    assert len(bad) == 1 and bad[0].line_no == 2


def test_run_dir_refuses_what_is_not_a_run_and_newer_schemas(tmp_path):
    with pytest.raises(UserError, match="not a cephbench run directory"):
        RunDir.open(tmp_path)
    (tmp_path / "run.json").write_text("[]")
    with pytest.raises(UserError, match="not a cephbench run.json"):
        RunDir.open(tmp_path)
    (tmp_path / "run.json").write_text("{trunc")
    with pytest.raises(UserError, match="cannot be read"):
        RunDir.open(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(UserError) as e:
        RunDir.open(tmp_path)
    assert "schema 2" in e.value.one_line() and "upgrade cephbench" in e.value.one_line()


def test_run_dir_will_not_overwrite(tmp_path):
    RunDir.create(tmp_path / "r", {})
    with pytest.raises(UserError, match="already exists"):
        RunDir.create(tmp_path / "r", {})
