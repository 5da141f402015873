"""Running the `cephbench` CLI the way a user does, for every lab test."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

from cephbench.lab import Lab

CLI = [sys.executable, "-m", "cephbench.cli"]


# The small suite of test_run.py: one pool, rados bench write and rand at two sizes, and one round of OSD bench
# (5 tests). rand, not seq: a seq after a 2 s write is topped up first (up to 10x the write's objects, 10-40 s of
# writing on a busy machine: test_rados_seq.py checks that), and nothing here is about the seq
TINY = """
name: tiny
pools:
  rep2: {type: replicated, size: 2, pg_num: 16}
workloads:
  - name: rados
    type: rados_bench
    pool: rep2
    modes: [write, rand]
    object_size: [64KiB, 1MiB]
    concurrency: 4
    duration: 2s
  - name: osd
    type: osd_bench
    total: 32MiB
    block_size: 4MiB
    repeat: 1
"""
# TINY's rados bench alone, for the tests that have no use for its OSD bench (9 `ceph tell` round trips at the
# default of 3 rounds; the rounds are test_osd_bench.py's)
TINY_RADOS = TINY[:TINY.index("  - name: osd")]


def run_cli(args, env=None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout)


def write_suite(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def cli_here(args, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
    """`cephbench ARGS` in this process (click's runner), with `env` as its whole environment: for a command that
    is refused before it makes anything, or a dry run. Same output and exit code as run_cli, without the Python
    start-up and imports of a process (~1 s each on a loaded 2-core machine). What librados or a tool writes to
    file descriptors 1 and 2 is captured too, as a process's output would hold it. What a process does with
    signals stays run_cli's (and tests/unit/test_cli_bad_input.py's)."""
    from click.testing import CliRunner
    from cephbench.cli import main
    given = dict(os.environ if env is None else env)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with tempfile.TemporaryFile() as fd1, tempfile.TemporaryFile() as fd2:
        saved = {fd: os.dup(fd) for fd in (1, 2)}
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd1.fileno(), 1)
        os.dup2(fd2.fileno(), 2)
        try:
            res = CliRunner().invoke(main, [str(a) for a in args],
                                     env={**{k: None for k in os.environ if k not in given}, **given})
        finally:
            for fd, copy in saved.items():
                os.dup2(copy, fd)
                os.close(copy)
            for s, handler in handlers.items():      # the command makes SIGTERM interrupt it: not this test's
                signal.signal(s, handler)
        fd1.seek(0)
        fd2.seek(0)
        raw_out, raw_err = (f.read().decode(errors="replace") for f in (fd1, fd2))
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception                     # a traceback is a bug: the test fails with it
    return subprocess.CompletedProcess(list(args), res.exit_code, raw_out + res.stdout, raw_err + res.stderr)


@contextmanager
def own_lab(prefix: str, osds: int) -> Iterator[Lab]:
    """A one-host lab of a test's own (2 GiB OSDs, no RGW), for a test that rebuilds it (lab shapes): the session's
    labs are never rebuilt under other tests."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    lb = Lab(d / "lab")
    try:
        lb.up(osds=osds, osd_size_bytes=2 * 1024**3, rgw=False)
        yield lb
    finally:
        lb.down()
        shutil.rmtree(d, ignore_errors=True)


def tool_processes(left: list[dict], tool: str = "rados") -> list[str]:
    """The `process` entries of a resources.json whose process runs `tool` (the host watchers are processes of the
    ledger too, started before the tools)."""
    out = []
    for r in left:
        if r["kind"] != "process":
            continue
        try:
            argv = Path(f"/proc/{r['name'].partition(':')[0]}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(Path(os.fsdecode(a)).name == tool for a in argv[:6]):     # behind a wrapper (timeout) too
            out.append(r["name"])
    return out
