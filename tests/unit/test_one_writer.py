"""Every path cephbench writes goes through one writer (core/userfiles.py) that writes only a new path or a regular
file, never a device, FIFO, socket or a file a symbolic link names outside its directory (issue 34 item 5:
`export --out /dev/full` once replaced the machine's /dev/full with a CSV file). Each bad target is one line,
exit 2, naming the flag or path, and the target is as it was; the commands run in processes of their own, bounded
in time, since a FIFO written to blocks forever."""

from __future__ import annotations

import ast
import os
import re
import socket
import stat
from pathlib import Path

import pytest

from clirun import cephbench
from conftest import FIXTURES, REPO
from runfactory import fixture_measurement, repeats, write_run
from test_cli_bad_input import _bounded as bounded, one_line_exit_2
from test_export import make_run

from cephbench.core.errors import UserError
from cephbench.core.userfiles import append_file, open_output, write_file

W4M = {"pool": "rep", "object_size": 4194304, "concurrency": 16, "phase": "write", "duration_s": 5.0}


def snapshot(p: Path) -> tuple:
    """What a path is and holds, without opening a FIFO or a device."""
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(p))
    if stat.S_ISREG(st.st_mode):
        return ("file", p.read_bytes(), st.st_ino)
    return (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_ino)


@pytest.fixture
def targets(tmp_path):
    """Paths no writer may replace, each with what it must stay: a private /dev/full (made here: the machine's own is
    never risked), a FIFO, a socket, a directory, links out of their directory to a device and to a user's file,
    and a link to the machine's /dev/null."""
    d = tmp_path / "out"
    d.mkdir()
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "thesis.txt").write_text("four years of work\n")
    made: dict[str, Path] = {}
    if os.geteuid() == 0:
        os.mknod(d / "full", stat.S_IFCHR | 0o666, os.makedev(1, 7))
        made["is a character device"] = d / "full"
        (d / "full-link").symlink_to(d / "full")
        made["full-link is a symbolic link to a character device"] = d / "full-link"
        os.mknod(d / "blk", stat.S_IFBLK | 0o600, os.makedev(7, 250))     # never opened: no loop device behind it
        made["is a block device"] = d / "blk"
    os.mkfifo(d / "fifo")
    made["is a FIFO"] = d / "fifo"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(d / "sock"))
    made["is a socket"] = d / "sock"
    (d / "adir").mkdir()
    made["is a directory"] = d / "adir"
    (d / "to-thesis").symlink_to(outside / "thesis.txt")
    made["is a symbolic link to"] = d / "to-thesis"
    (d / "to-null").symlink_to("/dev/null")
    made["to-null is a symbolic link to a character device"] = d / "to-null"
    (d / "to-outside-dir").symlink_to(outside)
    made["to-outside-dir is a symbolic link to"] = d / "to-outside-dir"
    before = {p: snapshot(p) for p in [*made.values(), outside / "thesis.txt", Path("/dev/null")]}
    yield made
    sock.close()
    assert {p: snapshot(p) for p in before} == before
    assert not [p for p in d.rglob("*.tmp")], "a temporary file was left"


def _out_commands(tmp_path: Path) -> dict[str, list]:
    run, _ = make_run(tmp_path / "run")
    w = fixture_measurement()
    a, b = (write_run(tmp_path / n, [("rados_bench", W4M, repeats(w, f, n=4))]) for n, f in (("A", 1.0), ("B", 1.2)))
    return {"export csv": ["export", run, "--format", "csv"],
            "export openmetrics": ["export", run, "--format", "openmetrics"],
            "compare html": ["compare", a, b, "--format", "html"],
            "compare markdown": ["compare", a, b, "--format", "markdown"],
            "compare text": ["compare", a, b],
            "suite from-cbt": ["suite", "from-cbt", FIXTURES / "cbt" / "radosbench-replicated.yaml"]}


def test_every_out_refuses_what_is_not_a_regular_file_or_a_new_path(tmp_path, targets):
    for name, args in _out_commands(tmp_path).items():
        for fragment, target in targets.items():
            res = cephbench(*args, "--out", target)     # in this process: a write never opens its target
            one_line_exit_2(res, "--out", str(target), fragment)
            assert "--out a new path or a regular file" in res.stderr, (name, res.stderr)


def test_out_writes_a_regular_file_and_a_link_inside_its_directory_and_keeps_its_mode(tmp_path):
    args = _out_commands(tmp_path)["export csv"]
    printed = cephbench(*args).stdout
    d = tmp_path / "out"
    d.mkdir()
    (d / "real.csv").write_text("old\n")
    os.chmod(d / "real.csv", 0o640)
    (d / "link.csv").symlink_to("real.csv")
    assert cephbench(*args, "--out", d / "link.csv").returncode == 0
    assert (d / "link.csv").is_symlink() and (d / "real.csv").read_text() == printed
    assert stat.S_IMODE(os.stat(d / "real.csv").st_mode) == 0o640
    assert cephbench(*args, "--out", d / "new.csv").returncode == 0 and (d / "new.csv").read_text() == printed
    assert sorted(p.name for p in d.iterdir()) == ["link.csv", "new.csv", "real.csv"]


def test_report_writes_only_regular_files_inside_the_run_directory(tmp_path):
    outside = tmp_path / "thesis.txt"
    outside.write_text("four years of work\n")
    for name, make in (("report.html", lambda p: p.symlink_to(outside)), ("report.md", os.mkfifo),
                       ("report.html", lambda p: p.mkdir()), ("report.md", lambda p: p.symlink_to("/dev/null"))):
        run, _ = make_run(tmp_path / f"run-{name}-{len(list(tmp_path.iterdir()))}")
        make(run / name)
        before = snapshot(run / name)
        # a FIFO was opened and blocked on: in a process of its own, bounded; the rest in this one
        one_line_exit_2((bounded if make is os.mkfifo else cephbench)("report", run), str(run / name))
        assert snapshot(run / name) == before
    assert outside.read_text() == "four years of work\n"
    # a run directory that is itself a link is the run: its report is written inside it
    run, _ = make_run(tmp_path / "real-run")
    (tmp_path / "run-link").symlink_to(run)
    res = cephbench("report", tmp_path / "run-link")
    assert res.returncode == 0, res.stderr
    assert (run / "report.html").is_file() and (run / "report.md").is_file()


def test_the_history_catalog_is_a_regular_file_or_a_new_path(tmp_path, targets):
    run, _ = make_run(tmp_path / "run")
    for fragment, target in targets.items():
        if "is a directory" in fragment:
            continue            # a catalog path that is a directory: sqlite's own refusal, below
        one_line_exit_2(cephbench("history", "--db", target, "add", run), "--db", str(target))
        one_line_exit_2(cephbench("history", "add", run, env={"CEPHBENCH_HISTORY": str(target)}), str(target))
    one_line_exit_2(cephbench("history", "--db", tmp_path, "add", run), str(tmp_path))
    ok = cephbench("history", "--db", tmp_path / "h.sqlite", "add", run)
    assert ok.returncode == 0 and (tmp_path / "h.sqlite").is_file(), ok.stderr


def test_the_writer_itself(tmp_path):
    d = tmp_path / "run"
    (d / "raw").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    # a run directory's raw/ made a link out of it: nothing is written there, by any of the three writers
    (d / "raw" / "t1").symlink_to(outside, target_is_directory=True)
    for write in (lambda p: write_file(p, "x", "hint", within=d), lambda p: append_file(p, b"x", "hint", within=d),
                  lambda p: open_output(p, "hint", within=d).close()):
        with pytest.raises(UserError, match="outside"):
            write(d / "raw" / "t1" / "out.txt")
    assert list(outside.iterdir()) == []
    # a link to a file inside the directory writes that file; the temporary file is never left
    (d / "a.txt").write_text("old")
    (d / "raw" / "b.txt").symlink_to(d / "a.txt")
    assert write_file(d / "raw" / "b.txt", "new", "hint", within=d) == d / "a.txt"
    assert (d / "a.txt").read_text() == "new" and (d / "raw" / "b.txt").is_symlink()
    append_file(d / "a.txt", b"+", "hint", within=d)
    assert (d / "a.txt").read_text() == "new+"
    with open_output(d / "a.txt", "hint", within=d) as f:
        f.write(b"stream")
    assert (d / "a.txt").read_text() == "stream"
    os.mkfifo(d / "f")
    for write in (lambda p: write_file(p, "x", "hint"), lambda p: append_file(p, b"x", "hint"),
                  lambda p: open_output(p, "hint").close()):
        with pytest.raises(UserError, match="is a FIFO"):
            write(d / "f")
    assert sorted(p.name for p in d.iterdir()) == ["a.txt", "f", "raw"]


# ---- nothing writes around the writer ----------------------------------------------------------------------------

SRC = REPO / "src" / "cephbench"
_REMOVERS = {"unlink", "rmdir", "rename", "touch", "write_text", "write_bytes", "symlink_to", "hardlink_to"}
_OS = {"replace", "rename", "remove", "unlink", "rmdir", "removedirs", "symlink", "link", "mkfifo", "mknod",
       "truncate", "write"}
_SHUTIL = {"copy", "copy2", "copyfile", "copytree", "move", "rmtree"}
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")

# Where a file is written, renamed or removed without the writer, and why that is right. A module's own directory
# of state (the lab's, proved by its marker), the ledger's resources.json (its own atomic save: it must never refuse
# mid-cleanup), a kernel knob, and the removal of a directory the same code made moments before.
ALLOWED = {
    "core/userfiles.py": "the writer itself",
    "core/resources.py": "the ledger's resources.json, saved atomically by the ledger itself",
    "cluster/recovery.py": "the run lock beside resources.json, and the ledger's save after a cleanup",
    "cluster/safety.py:drop_caches_local": "/proc/sys/vm/drop_caches, a kernel knob",
    "rundirs/history.py:History.open": "sqlite writes the catalog in place, once writable() has checked its path",
    "core/results.py:RunDir.set_aside_torn_tail": "truncates results.jsonl in place, checked by open_read first",
    "hosts/remote.py": "ssh control directories it made (mkdtemp), by their prefix",
    "run/launch.py:start": "the run directory this run made, removed when refused before its first result",
    "rundirs/importer.py:import_files": "the run directory this import made, removed when it cannot be written",
    "lab/": "the lab's own directory and host objects, made and recorded by the lab (labdir.py's marker)",
}


def _writes(tree: ast.AST):
    """(line, qualified function, what) of every call that writes, renames or removes a file."""
    found = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call):
                what = _write_call(child)
                if what:
                    found.append((child.lineno, ".".join(scope), what))
            visit(child, scope)
    visit(tree, [])
    return found


def _write_call(node: ast.Call) -> str | None:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    base = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
    if base == "os":
        if name in _OS:
            return f"os.{name}"
        if name == "open" and len(node.args) > 1 and any(w in ast.unparse(node.args[1]) for w in _WRITE_FLAGS):
            return "os.open for writing"
        return None
    if base == "shutil":
        return f"shutil.{name}" if name in _SHUTIL else None
    if base == "sqlite3" and name == "connect":
        return "sqlite3.connect"
    if name in _REMOVERS:
        return name
    if name == "replace" and len(node.args) == 1 and not node.keywords:     # Path.replace, not str.replace
        return "replace"
    if name == "open":
        # open(path, mode) and gzip.open(path, mode): a mode that is not a constant may write; Path.open(mode): a
        # constant mode (an object's own open(path), RunDir.open or History.open, takes no mode)
        if isinstance(f, ast.Name) or base in ("gzip", "bz2", "lzma", "io", "tarfile"):
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"),
                                                                 None)
            text = mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else \
                None if mode is None else "?"
        else:
            mode = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mode"), None)
            text = mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) \
                and re.fullmatch(r"[rwxabt+]+", mode.value) else None
        return f"open({text!r})" if text and (text == "?" or set(text) & set("wax+")) else None
    return None


def _allowed(module: str, scope: str, allowed: dict[str, str] = ALLOWED) -> bool:
    return any(module == key or module.startswith(key) if ":" not in key
               else f"{module}:{scope}" == key or f"{module}:{scope}".startswith(key + ".")
               for key in allowed)


def test_nothing_under_src_writes_a_file_around_the_one_writer():
    around = [f"{p.relative_to(SRC)}:{line} ({scope or 'module'}): {what}"
              for p in sorted(SRC.rglob("*.py"))
              for line, scope, what in _writes(ast.parse(p.read_text()))
              if not _allowed(str(p.relative_to(SRC)), scope)]
    assert not around, "write through core/userfiles.py (write_file, append_file, open_output, writable):\n" + \
        "\n".join(around)


# Where a file is read without a bound (core/userfiles.py: read_bytes, read_output, open_read), and why that is right.
# A read of the kernel's /proc and /sys is one by nature (its files are small and never block).
READS_ALLOWED = {
    "core/userfiles.py": "the bounded readers themselves",
    "lab/": "the lab's own records in the directory its marker proves it made",
    "evidence/asok.py": "its own module's source, sent to a host",
    "hosts/clients.py:sha256_of": "the loadgen binary, hashed a MiB at a time",
    "drivers/base.py:tail_lines": "the last 4 KiB of a running tool's output, from a seek",
    "drivers/disk_baseline.py": "the lab's own records (lab.json, drives.json)",
    "evidence/hostload.py:boot_id": "/proc/sys/kernel/random/boot_id, its default",
    "rundirs/history.py:History.open": "the first 16 bytes of a catalog writable() found regular: its SQLite header",
}


def _reads(tree: ast.AST):
    """(line, qualified function, what) of every read of a whole file, or of one opened to be read."""
    found = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, [*scope, child.name])
                continue
            if isinstance(child, ast.Call) and "/proc" not in ast.unparse(child) and "/sys" not in ast.unparse(child):
                f = child.func
                if isinstance(f, ast.Attribute) and f.attr in ("read_text", "read_bytes"):
                    found.append((child.lineno, ".".join(scope), f.attr))
                elif isinstance(f, ast.Attribute) and f.attr == "load" and ast.unparse(f.value) == "json":
                    found.append((child.lineno, ".".join(scope), "json.load"))
                elif isinstance(f, ast.Name) and f.id == "open" and not _write_call(child):
                    found.append((child.lineno, ".".join(scope), "open"))
            visit(child, scope)
    visit(tree, [])
    return found


def test_nothing_under_src_reads_a_whole_file_without_a_bound():
    unbounded = [f"{p.relative_to(SRC)}:{line} ({scope or 'module'}): {what}"
                 for p in sorted(SRC.rglob("*.py"))
                 for line, scope, what in _reads(ast.parse(p.read_text()))
                 if not _allowed(str(p.relative_to(SRC)), scope, READS_ALLOWED)]
    assert not unbounded, "read through core/userfiles.py (read_bytes, read_output, open_read):\n" + \
        "\n".join(unbounded)


def test_the_check_sees_each_way_of_writing():
    code = """
def f(p, q):
    p.write_text("x"); p.write_bytes(b""); open(p, "w"); open(p, mode="ab"); p.open("w"); gzip.open(p, "wt")
    os.replace(p, q); p.replace(q); p.rename(q); shutil.copyfile(p, q); shutil.rmtree(p); p.unlink()
    os.open(p, os.O_WRONLY | os.O_CREAT); sqlite3.connect(p); p.touch()
    open(p); open(p, "rb"); p.open(); "a".replace("a", "b"); os.open(p, os.O_RDONLY); p.read_text()
"""
    assert len(_writes(ast.parse(code))) == 15
    assert [what for _, _, what in _reads(ast.parse(code))] == ["open", "open", "read_text"]


def test_a_run_directory_that_is_not_one_to_write_is_one_line(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    res = bounded("import", FIXTURES / "rados_bench" / "ceph16.2.15_write_4M.txt", "--out", tmp_path / "fifo")
    one_line_exit_2(res, "--out", "is a FIFO (named pipe), not a directory")
    # a resumed run's raw/ that is a file: one line, not a FileExistsError
    from cephbench.core.results import RunDir
    run, _ = make_run(tmp_path / "run")
    (run / "raw").rmdir()
    (run / "raw").write_text("not a directory\n")
    with pytest.raises(UserError, match="cannot make .*raw/t1"):
        RunDir.open(run).write_raw("t1", "out.txt", "x")
    assert (run / "raw").read_text() == "not a directory\n"


def test_out_is_never_a_file_the_command_reads(tmp_path):
    """`export RUN --out RUN/results.jsonl` put the export in place of the run's results (a regular file: the
    writer alone allowed it)."""
    run, _ = make_run(tmp_path / "run")
    other, _ = make_run(tmp_path / "other")
    (tmp_path / "link").symlink_to(run / "results.jsonl")
    cbt = tmp_path / "cbt.yaml"
    cbt.write_bytes((FIXTURES / "cbt" / "radosbench-replicated.yaml").read_bytes())
    before = {p: p.read_bytes() for p in [*run.glob("*.json*"), *other.glob("*.json*"), cbt]}
    for args in (["export", run, "--format", "json", "--out", run / "results.jsonl"],
                 ["export", run, "--format", "csv", "--out", run / "run.json"],
                 ["compare", run, other, "--format", "html", "--out", other / "results.jsonl"],
                 ["suite", "from-cbt", cbt, "--out", cbt]):
        one_line_exit_2(cephbench(*args), "--out", "this command reads: not written")
    one_line_exit_2(cephbench("export", run, "--format", "csv", "--out", tmp_path / "link"),
                    f"link is {run / 'results.jsonl'}, a file this command reads")
    assert {p: p.read_bytes() for p in before} == before
