"""The lab's keys, and waits that follow processes rather than a clock (real processes, no cluster)."""

import base64
import pathlib
import struct
import subprocess
import sys
import time

import pytest

from cephbench.core.errors import OperationFailed
from cephbench.lab import daemons as dm
from cephbench.lab.keys import Entity, keyring_text, new_secret


def test_new_secret_is_a_cephx_aes_key():
    raw = base64.b64decode(new_secret(now=1_700_000_000))
    kind, created, _, length = struct.unpack("<HIIH", raw[:12])
    assert (kind, created, length, len(raw)) == (1, 1_700_000_000, 16, 28)
    assert new_secret() != new_secret()


def test_new_secret_of_tentacle_is_an_aes256k_key():
    """Tentacle's `ceph-authtool --gen-print-key` printed 'AgCRZQdr...' (a throwaway key): type 2, 32 bytes."""
    from cephbench.lab.keys import KEY_AES256K
    raw = base64.b64decode(new_secret(now=1_700_000_000, key_type=KEY_AES256K))
    kind, created, _, length = struct.unpack("<HIIH", raw[:12])
    assert (kind, created, length, len(raw)) == (2, 1_700_000_000, 32, 44)


def test_keyring_text_is_what_ceph_authtool_writes():
    text = keyring_text([Entity("osd.0", "AQ==", {"mon": "allow profile osd", "osd": "allow *"}),
                         Entity("mon.", "AR==")])
    assert text == ('[osd.0]\n\tkey = AQ==\n\tcaps mon = "allow profile osd"\n\tcaps osd = "allow *"\n'
                    "[mon.]\n\tkey = AR==\n")


def _daemon(tmp_path, name="osd.7"):
    (tmp_path / "run").mkdir(exist_ok=True)
    (tmp_path / "log").mkdir(exist_ok=True)
    return dm.Daemon(name, tmp_path / "run", tmp_path / "log")


def _spawn(*argv):
    return subprocess.Popen([sys.executable, "-c", *argv], stdout=subprocess.DEVNULL)


def test_a_daemon_that_exits_fails_the_wait_at_once_with_its_log(tmp_path):
    d = _daemon(tmp_path)
    d.log.write_text("starting\nbluestore mount failed: (5) Input/output error\n")
    proc = _spawn("import sys; sys.exit(1)")
    proc.wait()
    t0 = time.monotonic()
    with pytest.raises(OperationFailed) as e:
        dm.wait_for(lambda: (False, "0/1 up"), "1 OSD to come up", [d], lambda _: proc.pid)
    assert time.monotonic() - t0 < 2
    msg = str(e.value)
    assert "osd.7 exited while waiting for 1 OSD to come up" in msg and str(d.log) in msg
    assert msg.splitlines()[-1].strip() == "bluestore mount failed: (5) Input/output error"


def test_a_wait_keeps_going_while_the_state_moves_and_fails_when_it_stops(tmp_path):
    d = _daemon(tmp_path)
    proc = _spawn("import time; time.sleep(60)")
    try:
        states = iter(range(1000))
        t0 = time.monotonic()
        # a new state every poll: progress, so a stall bound of 0.3 s never trips; done after 1 s
        dm.wait_for(lambda: (time.monotonic() - t0 > 1.0, f"step {next(states)}"), "x", [d], lambda _: proc.pid,
                    stall_s=0.3)
        with pytest.raises(OperationFailed) as e:
            dm.wait_for(lambda: (False, "1/3 up"), "3 OSDs to come up", [d], lambda _: proc.pid, stall_s=0.3)
        assert "still waiting for 3 OSDs to come up" in str(e.value) and "1/3 up" in str(e.value)
    finally:
        proc.kill()
        proc.wait()


def test_a_starting_daemons_log_lines_count_as_progress(tmp_path):
    d = _daemon(tmp_path)
    proc = _spawn("import time; time.sleep(60)")
    try:
        t0 = time.monotonic()

        def check():
            with open(d.log, "a") as f:
                f.write("still mounting\n")
            return time.monotonic() - t0 > 1.0, "booting"

        dm.wait_for(check, "x", [d], lambda _: proc.pid, starting=[d], stall_s=0.3)
    finally:
        proc.kill()
        proc.wait()


def test_only_processes_started_with_the_labs_conf_are_the_labs(tmp_path):
    conf = tmp_path / "ceph.conf"
    conf.write_text("")
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--conf", str(conf)])
    other = _spawn("import time; time.sleep(60)")
    try:
        assert dm.is_lab_process(ours.pid, conf) and not dm.is_lab_process(other.pid, conf)
        # a PID file naming someone else's process: stop() leaves it alone
        dm.stop([("osd.0", other.pid), ("osd.1", ours.pid)], conf, grace_s=0)
        assert other.poll() is None and ours.poll() is not None
        assert not dm.is_lab_process(ours.pid, conf)
    finally:
        other.kill()
        other.wait()
        ours.wait()


def test_a_process_just_started_is_known_by_its_command_line():
    """Popen returns once the child's exec has closed its close-on-exec pipe, before the kernel has set up the new
    command line: /proc/PID/cmdline then reads empty (275 of 300 reads on the development VM, with a CI run
    beside). A stop right after a start (SIGTERM as `lab up` started the mgr) took the daemon for someone else's
    and left it running."""
    conf = pathlib.Path("/nonexistent-lab") / "ceph.conf"
    procs = []
    try:
        for _ in range(20):
            procs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "--conf", str(conf)]))
            assert dm.is_lab_process(procs[-1].pid, conf)
    finally:
        for p in procs:
            p.kill()
            p.wait()
