"""Nothing left behind, for real: SIGINT and SIGTERM aimed at each cluster change and each undo, kill -9 and
`cephbench cleanup`, a resume after a crash.

The signals are aimed with the monitor's own log: the test follows ceph-mon.a.log and sends the signal the moment
the mon logs the command's dispatch, so it lands while that change (or its undo) is in flight, not by luck.
"""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cephbench.results import RunDir

from labcli import CLI, run_cli, write_suite

EC_WRITE = """
name: sig
pools:
  ec21: {type: erasure, k: 2, m: 1, pg_num: 8}
workloads:
  - {name: rados, type: rados_bench, pool: ec21, modes: [write], object_size: 64KiB, concurrency: 4, duration: 1s}
"""


def snapshot(env) -> dict:
    """What a run may change on the lab: OSD flags, pools, EC profiles, users and keys, RGW users and buckets,
    the configuration database."""
    def ceph(*args):
        out = subprocess.run(["ceph", *args, "-f", "json"], capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def rgw(*args):
        out = subprocess.run(["radosgw-admin", *args], capture_output=True, text=True, env=env, timeout=60)
        return json.loads(out.stdout) if out.returncode == 0 else out.stderr
    return {"flags": sorted(ceph("osd", "dump")["flags"].split(",")), "pools": sorted(ceph("osd", "pool", "ls")),
            "ec-profiles": sorted(ceph("osd", "erasure-code-profile", "ls")),
            "auth": sorted(e["entity"] for e in ceph("auth", "ls")["auth_dump"]),
            "config": sorted((c["section"], c["name"], c["value"]) for c in ceph("config", "dump")),
            "rgw-users": sorted(rgw("user", "list")), "buckets": sorted(rgw("bucket", "list"))}


def run_and_signal_at(args, env, mon_log: Path, prefix: str, sig: int, nth: int = 1, timeout: float = 180):
    """Start the CLI; send `sig` when the mon dispatches the `nth` command with this prefix."""
    pattern = re.compile(r'log_channel\(audit\).*"prefix":\s*"' + re.escape(prefix) + r'".*: dispatch')
    with open(mon_log, "rb") as log:
        log.seek(0, os.SEEK_END)
        proc = subprocess.Popen([*CLI, *map(str, args)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        seen, deadline, buf = 0, time.monotonic() + timeout, b""
        while seen < nth and proc.poll() is None and time.monotonic() < deadline:
            chunk = log.read()
            if not chunk:
                time.sleep(0.005)
                continue
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if pattern.search(line.decode(errors="replace")):
                    seen += 1
                    if seen == nth:
                        proc.send_signal(sig)
                        break
        out, err = proc.communicate(timeout=timeout)
    return proc.returncode, seen >= nth, out, err


@pytest.mark.parametrize("prefix, nth, sig", [
    ("osd set", 1, signal.SIGINT),                          # noscrub being set
    ("osd set", 2, signal.SIGTERM),                         # nodeep-scrub being set
    ("osd erasure-code-profile set", 1, signal.SIGINT),
    ("osd pool create", 1, signal.SIGTERM),
    ("osd pool application enable", 1, signal.SIGINT),
    ("osd pool delete", 1, signal.SIGTERM),                 # the undo of the pool, at the end of the group
    ("osd unset", 1, signal.SIGINT),                        # the undo of the flags, at the end of the run
], ids=lambda v: str(v).replace(" ", "-") if isinstance(v, str) else str(v))
def test_a_signal_at_any_change_or_undo_leaves_the_cluster_as_it_was(lab, cephbench_env, tmp_path, prefix, nth, sig):
    before = snapshot(cephbench_env)
    rc, aimed, out, err = run_and_signal_at(["run", write_suite(tmp_path, EC_WRITE), "--out", tmp_path / "run"],
                                            cephbench_env, lab.dir / "log" / "ceph-mon.a.log", prefix, sig, nth)
    assert aimed, f"the mon never dispatched {prefix!r}: {err}"
    assert "Traceback" not in err, err
    assert "left behind" not in err and "could not remove" not in err, err
    assert rc == 130, (rc, err)
    assert snapshot(cephbench_env) == before
    assert json.loads((tmp_path / "run" / "resources.json").read_text()) == []


def test_kill_9_then_cleanup_leaves_nothing(lab, cephbench_env, tmp_path):
    before = snapshot(cephbench_env)
    suite = write_suite(tmp_path, EC_WRITE.replace("duration: 1s", "duration: 30s"))
    proc = subprocess.Popen([*CLI, "run", str(suite), "--out", str(tmp_path / "run")], env=cephbench_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    resources = tmp_path / "run" / "resources.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:     # until rados bench runs: its process is in the ledger
        if resources.exists() and any(r["kind"] == "process" for r in json.loads(resources.read_text() or "[]")):
            break
        time.sleep(0.1)
    left = json.loads(resources.read_text())
    assert {r["kind"] for r in left} >= {"osd-flags", "pool", "ec-profile", "process"}, left
    proc.kill()
    proc.wait()
    [tool] = [r["name"] for r in left if r["kind"] == "process"]
    assert Path(f"/proc/{tool.split(':')[0]}").exists()          # the orphaned rados bench goes on writing
    [ctl] = [r["name"] for r in left if r["kind"] == "ssh-control"]
    assert Path(ctl).is_dir()                                    # the run's ssh sockets, in /tmp
    res = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    for kind in ("process", "pool", "ec-profile", "osd-flags"):
        assert f"removed {kind}" in res.stdout, res.stdout
    assert not Path(f"/proc/{tool.split(':')[0]}").exists() and not Path(ctl).exists()
    assert json.loads(resources.read_text()) == []
    assert snapshot(cephbench_env) == before
    again = run_cli(["cleanup", tmp_path / "run"], cephbench_env)
    assert again.returncode == 0 and "nothing left behind" in again.stdout


def test_resume_after_kill_9_first_removes_what_was_left(lab, cephbench_env, tmp_path):
    before = snapshot(cephbench_env)
    suite = write_suite(tmp_path, EC_WRITE)
    rc, aimed, _, err = run_and_signal_at(["run", suite, "--out", tmp_path / "run"], cephbench_env,
                                          lab.dir / "log" / "ceph-mon.a.log", "osd pool create", signal.SIGKILL)
    assert aimed and rc == -9, err
    # a torn last line, as if the run had died writing a result
    with open(tmp_path / "run" / "results.jsonl", "a") as f:
        f.write('{"schema_version": 1, "test": {"id": "001-ra')
    res = run_cli(["run", "--resume", tmp_path / "run"], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "removed pool" in res.stderr and "removed osd-flags" in res.stderr, res.stderr
    assert "its last line was cut short" in res.stderr
    results, bad = RunDir.open(tmp_path / "run").results()
    assert [r.status for r in results] == ["ok"] and bad == []
    assert (tmp_path / "run" / "results.torn.jsonl").read_text().startswith('{"schema_version": 1')
    assert snapshot(cephbench_env) == before
