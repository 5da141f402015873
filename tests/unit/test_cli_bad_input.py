"""Bad input at the command line: one line, exit 2, nothing created, no traceback at any moment of start-up."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cephbench.lab import netns
from clirun import cephbench

CLI = [sys.executable, "-m", "cephbench.entry"]
ENV = {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")}


def cli(*args):
    return cephbench(*args)      # in this process: start-up is tested apart, below


def one_line_exit_2(res, *fragments):
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cephbench: "), res.stderr
    assert "Traceback" not in res.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.mark.parametrize("text, fragments", [
    ("name: t\nworkloads:\n  - {type: osd_bench, repeat: 0}\n", ["workloads[0].repeat", "greater than zero"]),
    ("name: t\nworkloads:\n  - {type: rados_bench, object_size: 0}\n", ["workloads[0].object_size"]),
    ("name: t\nworkloads:\n  - {type: rados_bench, duration: 2ms}\n", ["workloads[0].duration", "at least 1s"]),
    ("name: t\nworkloads:\n  - {type: rados_bench, object_size: 4 MB}\n", ["ambiguous", "4MiB"]),
    ("name: t\nworkloads:\n  - {type: rados_bench, concurrency: \"4,16\"}\n", ["[4, 16]"]),
    ("name: t\nname: u\nworkloads: [{type: osd_bench}]\n", ["given twice"]),
    ("name: t\nworkloads:\n  - {type: rados_bench, duration: .inf}\n", ["workloads[0].duration"]),
    ("name: t\nworkloads:\n  - {type: rados_bench, duration: 1000000h}\n", ["longer than 24h"]),
    ("name: t\nworkloads:\n  - {type: rados_bench, concurrency: 100000000}\n", ["settings.max_in_flight"]),
])
def test_bad_suites_refused_by_validate_and_run(tmp_path, text, fragments):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    one_line_exit_2(cli("validate", p), *fragments)
    # run refuses it before looking for a cluster or making a run directory
    one_line_exit_2(cli("run", p, "--conf", tmp_path / "no.conf", "--out", tmp_path / "run"), *fragments)
    assert not (tmp_path / "run").exists()


def test_binary_suite_and_taken_paths(tmp_path):
    binary = tmp_path / "s.yaml"
    binary.write_bytes(bytes(range(256)))
    one_line_exit_2(cli("validate", binary), "not UTF-8")
    afile = tmp_path / "afile"
    afile.write_text("x")
    quick = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
    one_line_exit_2(cli("run", quick, "--out", afile, "--conf", tmp_path / "no.conf"), "--out", "is a file")
    one_line_exit_2(cli("lab", "up", "--dir", afile), "--dir", "is a file")
    one_line_exit_2(cli("lab", "up", "--dir", "/proc/nope"), "--dir", "cannot make the lab directory")
    assert not Path("/proc/nope").exists()


def _catches_sigterm(pid: int) -> bool:
    """The entry point has installed its handlers: before that the interpreter itself is starting up (site,
    runpy), which is Python's, not cephbench's, to report."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_start_up_is_one_line_never_a_traceback(sig):
    # aimed across the start-up window (imports, click, the command): each moment ends in exit 130, or the
    # command finished first (exit 2: the suite does not exist)
    for delay in (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5):
        p = subprocess.Popen([*CLI, "validate", "/nonexistent.yaml"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=ENV)
        while p.poll() is None and not _catches_sigterm(p.pid):
            time.sleep(0.001)
        time.sleep(delay)
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        assert "Traceback" not in err, (delay, err)
        # 130: interrupted; 2: it finished first; -sig: it had finished (its one line is out) and was exiting,
        # past the point where Python runs signal handlers
        assert p.returncode in (130, 2) or (p.returncode == -sig and "does not exist" in err), \
            (delay, p.returncode, err)
        assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("args, fragments", [
    (["--hosts", "0"], ["--hosts", "1 to"]),
    (["--hosts", "-2"], ["--hosts"]),
    (["--hosts", "3", "--public-net", "1gbps"], ["--public-net", "bytes per second", "1gbit"]),
    (["--hosts", "3", "--public-net", "fast"], ["--public-net", "not a number with a unit"]),
    (["--hosts", "3", "--cluster-net", "100mbit/2parsecs"], ["--cluster-net", "delay"]),
    (["--hosts", "3", "--osds-per-host", "0"], ["--osds-per-host"]),
    (["--hosts", "3", "--clients", "-1"], ["--clients"]),
    (["--hosts", "3", "--osds", "4"], ["--osds", "--osds-per-host"]),
    (["--public-net", "1gbit"], ["--public-net", "add --hosts"]),
    (["--clients", "2"], ["--clients", "add --hosts"]),
    (["--hosts", "3", "--objectstore", "filestore", "--fs", "zfs"], ["--fs", "zfs", "xfs"]),
    (["--hosts", "3", "--objectstore", "bluestore", "--fs", "xfs"], ["--fs", "BlueStore"]),
    (["--hosts", "3", "--objectstore", "kstore"], ["--objectstore", "bluestore or filestore"]),
    (["--hosts", "3", "--osd-throttle", "osd.9=5MiB/s"], ["--osd-throttle", "osd.9", "osd.0, osd.1, osd.2"]),
    (["--hosts", "3", "--osd-throttle", "osd.1=5MB/s"], ["--osd-throttle", "ambiguous", "5MiB"]),
    (["--hosts", "3", "--osd-throttle", "osd.1.db=5MiB/s"], ["--osd-throttle", "osd.1.db"]),
    (["--hosts", "3", "--db-device", "lots"], ["--db-device"]),
    (["--osd-throttle", "osd.1=5MiB/s"], ["--osd-throttle", "add --hosts"]),
])
def test_bad_multi_host_lab_flags_make_nothing(tmp_path, args, fragments):
    def state() -> set[str]:
        cgroups = {str(p) for p in Path("/sys/fs/cgroup").glob("*/cephbench-*")}
        return {line for argv in (["ip", "netns", "list"], ["losetup", "-a"])
                for line in subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()} | cgroups
    # Other labs start and stop meanwhile (`make test` runs the multi-host lab tests beside these): what this lab
    # would have made is named by its id or directory.
    own = netns.lab_id_for(tmp_path / "lab")
    before = state()
    one_line_exit_2(cli("lab", "up", "--dir", tmp_path / "lab", *args), *fragments)
    assert not (tmp_path / "lab").exists()
    after = state()
    assert not [x for x in after - before if own in x or str(tmp_path) in x], after - before


def test_lab_throttle_without_a_lab_is_one_line(tmp_path):
    one_line_exit_2(cli("lab", "throttle", "--dir", tmp_path / "nolab", "osd.1=5MiB/s"), "--dir", "no lab running")
    one_line_exit_2(cli("lab", "throttle", "--dir", tmp_path / "nolab", "--clear", "osd.1"), "no lab running")
    assert not (tmp_path / "nolab").exists()


SHAPED = """name: t
variants:
  - name: hdd
    lab: {hosts: 3, public_net: 200mbit, osd_throttle: {osd.0: 15MiB/s}}
  - name: ssd
    lab: {hosts: 3, public_net: 200mbit}
  - name: private
    lab: {hosts: 3, public_net: 200mbit, cluster_net: 200mbit}
  - sweep: {who: osd, name: osd_max_backfills, values: [1, 2]}
workloads:
  - {type: rados_bench, concurrency: [1, 4], object_size: [4KiB, 4MiB], repeat: 3}
  - {type: fio_rbd, rw: [write, randread], iodepth: [1, 8], variants: [ssd, private]}
  - {type: osd_bench, repeat: 5}
"""


@pytest.mark.parametrize("suite", [*sorted((Path(__file__).resolve().parents[2] / "suites").glob("*.yaml")),
                                   "shaped"])
def test_the_plan_size_is_counted_without_expanding_it(tmp_path, suite):
    # the count that guards expand() is the number of tests expand() makes, variants, shapes and phases included
    from cephbench.suite.config import load_suite
    from cephbench.suite.plan import _sizes, baseline_tests, expand
    if suite == "shaped":
        suite = tmp_path / "s.yaml"
        suite.write_text(SHAPED)
    s = load_suite(suite)
    assert sum(n for n, _ in _sizes(s)) + len(baseline_tests(s)) == len(expand(s).tests)


@pytest.mark.parametrize("text, path", [
    ("name: t\nworkloads:\n  - {type: rados_bench, repeat: 100000000}\n", "workloads[0].repeat"),
    ("name: t\nworkloads:\n  - {type: osd_bench}\n  - {type: fio_rados, iodepth: [1, 2, 3, 4, 5, 6, 7, 8, 9], "
     "repeat: 2,\n     block_size: [" + ", ".join(f"{k}KiB" for k in range(1, 601)) + "]}\n",
     "workloads[1].block_size"),
    ("name: t\nvariants:\n  - sweep: {who: osd, name: osd_max_backfills, values: [" +
     ", ".join(str(k) for k in range(1, 102)) + "]}\nworkloads:\n  - {type: rados_bench, modes: [write],\n"
     "     concurrency: [" + ", ".join(str(k) for k in range(1, 101)) + "]}\n", "variants"),
])
def test_a_plan_too_big_is_refused_at_once_naming_what_multiplies_it(tmp_path, text, path):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    t0 = time.monotonic()
    one_line_exit_2(cli("validate", p), f"cephbench: {path}: the plan would have", "more than the 10,000",
                    f"lower {path}")
    assert time.monotonic() - t0 < 1.0
    one_line_exit_2(cli("run", p, "--conf", tmp_path / "no.conf", "--out", tmp_path / "run"), path)
    assert not (tmp_path / "run").exists()


def _bounded(*args: object) -> subprocess.CompletedProcess:
    """The command in a process of its own, with 1 GiB of memory and 30 s: what used to hang or eat all memory
    fails the test instead of the machine."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
    try:
        return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=ENV, timeout=30,
                              preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"cephbench {' '.join(map(str, args))} hung")


@pytest.fixture
def special_files(tmp_path):
    import socket
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    yield {"a FIFO": fifo, "a character device": Path("/dev/zero"), "a socket": sock_path,
           "a directory": tmp_path}
    sock.close()


@pytest.mark.parametrize("command", [["validate"], ["suite", "from-cbt"], ["import"], ["run", "--conf"]])
def test_special_files_are_refused_never_read(tmp_path, special_files, command):
    quick = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
    for kind, path in special_files.items():
        if command == ["run", "--conf"]:
            args = ["run", quick, "--conf", path, "--out", tmp_path / "run"]
        else:
            args = [*command, path]
        # a FIFO blocked and /dev/zero ate all memory: each in a process of its own, bounded
        res = _bounded(*args) if kind in ("a FIFO", "a character device") else cli(*args)
        one_line_exit_2(res, str(path), f"is {kind}")
    assert not (tmp_path / "run").exists()


def test_files_too_large_are_refused(tmp_path):
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(300 * 1024**2)          # sparse: no disk used
    one_line_exit_2(cli("validate", big), "larger than 4MiB")
    one_line_exit_2(cli("suite", "from-cbt", big), "larger than 4MiB")
    one_line_exit_2(cli("import", big, "--out", tmp_path / "run"), "larger than 256MiB")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text, fragments", [
    ("", ["is empty"]),
    ("# nothing but comments\n[global]\n", ["is empty"]),
    ("[global]\nfsid = 5e1f0c6a-0000-0000-0000-000000000000\n", ["names no monitor", "mon_host"]),
])
def test_a_conf_that_names_no_monitor_is_blamed_not_the_keyring(tmp_path, text, fragments):
    conf = tmp_path / "ceph.conf"
    conf.write_text(text)
    quick = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
    res = cli("run", quick, "--conf", conf, "--out", tmp_path / "run")
    one_line_exit_2(res, "--conf", *fragments)
    assert "keyring" not in res.stderr
    assert not (tmp_path / "run").exists()


def test_run_paths_that_are_not_directories(tmp_path):
    quick = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
    afile = tmp_path / "afile"
    afile.write_text("x")
    one_line_exit_2(cli("run", quick, "--lab-dir", afile, "--out", tmp_path / "run"), "--lab-dir", "is a file")
    one_line_exit_2(cli("run", "--resume", afile), "--resume", "is not a directory")
    one_line_exit_2(cli("run", "--resume", tmp_path / "gone"), "--resume", "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_suite_given_with_resume_must_be_the_resumed_runs(tmp_path):
    from cephbench.suite.config import load_suite
    from cephbench.core.results import RunDir
    suites = Path(__file__).resolve().parents[2] / "suites"
    suite = load_suite(suites / "quick.yaml")
    RunDir.create(tmp_path / "run", {"cephbench_version": "test", "suite_name": suite.name, "run_ids": ["abc123"],
                                     "suite": suite.model_dump(mode="json"), "started_unix": 1_700_000_000.0})
    args = ["--resume", tmp_path / "run", "--dry-run", "--conf", tmp_path / "no.conf"]
    one_line_exit_2(cli("run", suites / "rbd.yaml", *args), "SUITE", "rbd.yaml is not the suite of the run")
    # its own suite is no mismatch: the resume goes on to the cluster (here, a conf that does not exist)
    one_line_exit_2(cli("run", suites / "quick.yaml", *args), "--conf", "does not exist")


FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def _with(fixture: str, key: str, value: str) -> str:
    """A real output with one JSON field's number replaced as written ("timestamp" : 1795238909)."""
    import re
    text = (FIXTURES / fixture).read_text()
    out, n = re.subn(rf'("{key}"\s*:\s*)\d+', rf"\g<1>{value}", text, count=1)
    assert n == 1
    return out


@pytest.mark.parametrize("fixture, key, value, field", [
    ("fio/fio3.33_libaio_write_4M_qd1.json", "timestamp", "1e30", "timestamp"),
    ("fio/fio3.33_libaio_write_4M_qd1.json", "timestamp", "-1e12", "timestamp"),
    ("iperf3/iperf3.12_loopback_1stream.json", "timesecs", "1e20", "start.timestamp.timesecs"),
])
def test_an_imported_date_no_calendar_holds_is_refused(tmp_path, fixture, key, value, field):
    from cephbench.core.errors import ParseError
    from cephbench.rundirs.importer import content_date, detect
    text = _with(fixture, key, value)
    with pytest.raises(ParseError, match=f"^{field} is .*not a time"):
        content_date(detect(text), text)
    src = tmp_path / "out.json"
    src.write_text(text)
    one_line_exit_2(cli("import", src, "--out", tmp_path / "run", "--db", tmp_path / "h.db"), field, "not a time")
    assert not (tmp_path / "run").exists() and not (tmp_path / "h.db").exists()


@pytest.mark.parametrize("date, fragment", [
    ("0001-01-01T00:00+01:00", "before 1970"), ("1900-01-01", "before 1970"), ("0001-01-01", "before 1970"),
])
def test_an_import_date_out_of_range_makes_nothing(tmp_path, date, fragment):
    src = FIXTURES / "fio" / "fio3.33_libaio_write_4M_qd1.json"
    one_line_exit_2(cli("import", src, "--date", date, "--out", tmp_path / "run", "--db", tmp_path / "h.db"),
                    "--date", fragment)
    assert list(tmp_path.iterdir()) == []


def test_history_never_breaks_on_a_bad_run(tmp_path):
    import json
    import sqlite3
    db = tmp_path / "h.db"
    src = FIXTURES / "fio" / "fio3.33_libaio_write_4M_qd1.json"
    assert cli("import", src, "--out", tmp_path / "good", "--db", db).returncode == 0
    assert cli("import", src, "--out", tmp_path / "bad", "--db", tmp_path / "other.db").returncode == 0
    meta_path = tmp_path / "bad" / "run.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "started_unix": 1e30}))
    # refused at add, before the catalog is touched
    one_line_exit_2(cli("history", "--db", db, "add", tmp_path / "good", tmp_path / "bad"), "started_unix",
                    "not a time")
    # a bad row already in the catalog (written by hand, or by an older cephbench) is shown, not a traceback
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT * FROM runs").fetchone()
        for i, (started, tests) in enumerate([(1e30, 1), (-1e12, "x"), ("soon", 2.5)]):
            conn.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                         (f"/nowhere/{i}", *row[1:5], started, started, row[7], tests, 0, row[10]))
    res = cli("history", "--db", db, "list")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "/nowhere/2" in res.stdout.replace("\n", "") or "nowhere" in res.stdout
    assert cli("history", "--db", db).returncode == 0


def test_history_db_that_is_no_catalog(tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(bytes(range(256)) * 20)
    for args in (["list"], [], ["--trend", "bw", "--test", "x"]):
        one_line_exit_2(cli("history", "--db", tmp_path, *args), "--db", "is a directory")
        one_line_exit_2(cli("history", "--db", garbage, *args), "--db", "not a database")
