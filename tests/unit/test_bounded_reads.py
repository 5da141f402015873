"""Every file of a run directory is read with a bound and never waited on (issue 34 item 8): a results.jsonl that is
a FIFO hung show, report, export, compare and history add forever, and one linked to /dev/zero grew to 24 GiB
until the kernel's OOM killer came. Each is one line, exit 2, naming the file, within the test's time and memory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clirun import cephbench
from test_cli_bad_input import _bounded as bounded, one_line_exit_2     # 1 GiB of memory and 30 s: a hang fails
from test_export import make_run


def _fifo(p):
    os.mkfifo(p)


def _zero(p):
    p.symlink_to("/dev/zero")


def _sparse(p):
    with open(p, "wb") as f:
        f.truncate(24 * 1024**3)        # sparse: no disk used, no newline to end a line


def _directory(p):
    p.mkdir()


BAD = {"a FIFO": _fifo, "a character device": _zero, "larger than": _sparse, "a directory": _directory}


@pytest.mark.parametrize("name", ["results.jsonl", "run.json"])
@pytest.mark.parametrize("kind", list(BAD))
def test_a_run_directory_file_that_is_not_a_sane_file_is_refused_by_every_reader(tmp_path, name, kind):
    run, _ = make_run(tmp_path / "run")
    good, _ = make_run(tmp_path / "good")
    (run / name).unlink()
    BAD[kind](run / name)
    commands = [["show", run], ["compare", good, run]]
    if kind in ("a FIFO", "a directory"):   # every command the trial hung; each reads through RunDir (core/results.py)
        commands += [["history", "--db", tmp_path / "h.sqlite", "add", run], ["show", "--json", run],
                     ["report", run], ["export", run, "--format", "csv"]]
    for args in commands:
        # what hung or ate memory runs in a process of its own, bounded; a directory in this one
        one_line_exit_2((cephbench if kind == "a directory" else bounded)(*args), str(run / name), kind)
    assert not (run / "report.html").exists()


def test_a_result_line_without_end_is_skipped_and_said(tmp_path):
    """A results.jsonl under the file bound that holds a line of 100 MiB of zeros (a sparse hole): the line is one
    unreadable result, the others are read."""
    run, results = make_run(tmp_path / "run")
    with open(run / "results.jsonl", "r+b") as f:
        f.seek(0, os.SEEK_END)
        f.truncate(f.tell() + 100 * 1024**2)
    res = bounded("show", run)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "unreadable result skipped (longer than 64 MiB)" in res.stderr
    assert res.stderr.count("cephbench:") == 1


def test_run_json_nested_too_deep_is_one_line(tmp_path):
    run, _ = make_run(tmp_path / "run")
    (run / "run.json").write_text("[" * 100_000 + "]" * 100_000)
    for args in (["show", run], ["report", run], ["export", run, "--format", "json"]):
        one_line_exit_2(cephbench(*args), str(run / "run.json"), "nested too deep")


def test_a_run_directory_that_is_a_link_is_read_and_one_that_is_a_file_is_refused(tmp_path):
    run, _ = make_run(tmp_path / "run")
    (tmp_path / "link").symlink_to(run)
    through_link = cephbench("export", tmp_path / "link", "--format", "csv")
    assert through_link.returncode == 0
    assert through_link.stdout.replace("\nlink,", "\nrun,") == cephbench("export", run, "--format", "csv").stdout
    (tmp_path / "afile").write_text("x")
    one_line_exit_2(cephbench("show", tmp_path / "afile"), "not a cephbench run directory")
    os.mkfifo(tmp_path / "afifo")
    one_line_exit_2(bounded("show", tmp_path / "afifo"), "not a cephbench run directory")


def test_read_lines_skips_an_over_long_line_and_reads_on(tmp_path):
    from cephbench.core.userfiles import open_read, read_lines
    p = tmp_path / "f"
    p.write_bytes(b"a\n" + b"x" * 3_000_000 + b"\nb\n" + b"y" * 150 + b"\n" + b"c")
    with open_read(p, "", "", 10**9) as f:
        assert list(read_lines(f, 100, 10**9)) == [(1, b"a\n"), (2, None), (3, b"b\n"), (4, None), (5, b"c")]
    with open_read(p, "", "", 10**9) as f:       # the bound in all stops the reading
        assert list(read_lines(f, 100, 1000)) == [(1, b"a\n"), (2, None)]


def test_a_keyring_is_a_regular_file_of_a_keyrings_size(tmp_path):
    from cephbench.core.errors import UserError
    from cephbench.core.userfiles import check_ceph_conf
    conf = tmp_path / "ceph.conf"
    conf.write_text("[global]\nmon_host = 127.0.0.1:1\n")
    big = tmp_path / "keyring"
    with open(big, "wb") as f:
        f.truncate(24 * 1024**3)
    os.mkfifo(tmp_path / "fifo")
    for keyring, what in ((big, "larger than 1MiB"), (tmp_path / "fifo", "is a FIFO"), (Path("/dev/zero"),
                                                                                     "is a character device")):
        with pytest.raises(UserError, match=what) as exc:
            check_ceph_conf(conf, keyring)
        assert exc.value.one_line().startswith("--keyring: "), exc.value.one_line()
    (tmp_path / "small").write_text("[client.admin]\n\tkey = x\n")
    check_ceph_conf(conf, tmp_path / "small")
