"""Every `--out FILE` (export, suite from-cbt, compare) writes the very text the command prints without it, as a
whole file or not at all, and a file it cannot write is one line naming --out, exit 2 (issue 26 item 5: one
writer)."""

from __future__ import annotations

from clirun import cephbench
from conftest import FIXTURES
from runfactory import fixture_measurement, repeats, write_run
from test_export import make_run

W4M = {"pool": "rep", "object_size": 4194304, "concurrency": 16, "phase": "write", "duration_s": 5.0}
CBT = FIXTURES / "cbt" / "radosbench-replicated.yaml"


def _compared(tmp_path):
    w = fixture_measurement()
    return [write_run(tmp_path / n, [("rados_bench", W4M, repeats(w, f, n=4))]) for n, f in (("A", 1.0), ("B", 1.2))]


def _commands(tmp_path, compare_format="html"):
    run, _ = make_run(tmp_path / "run")
    a, b = _compared(tmp_path)
    return {"export": ["export", run, "--format", "csv"], "suite": ["suite", "from-cbt", CBT],
            "compare": ["compare", a, b, "--format", compare_format]}


def test_the_file_holds_what_stdout_would_and_nothing_half_written(tmp_path):
    for name, args in _commands(tmp_path).items():
        printed = cephbench(*args)
        assert printed.returncode == 0, (name, printed.stderr)
        dest = tmp_path / f"{name}.out"
        written = cephbench(*args, "--out", dest)
        assert written.returncode == 0, (name, written.stderr)
        assert dest.read_text() == printed.stdout, name
        assert not list(tmp_path.glob("*.tmp")), name


def test_a_file_that_cannot_be_written_is_one_line_exit_2(tmp_path):
    # markdown: compare writes its charts beside the file first (they were a FileNotFoundError traceback)
    for name, args in _commands(tmp_path, compare_format="markdown").items():
        dest = tmp_path / "no-such-dir" / f"{name}.out"
        res = cephbench(*args, "--out", dest)
        assert res.returncode == 2, (name, res.stdout, res.stderr)
        last = res.stderr.strip().splitlines()[-1]
        assert last.startswith(f"cephbench: --out: {dest.parent}/"), (name, last)
        assert f"cannot be written: its directory {dest.parent} does not exist (give --out " in last, (name, last)
        assert not dest.parent.exists()
