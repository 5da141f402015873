"""The fan-out for real: tools started together on two client hosts of a multi-host lab and on this machine, through
ssh with shared connections (remote.ssh_master); one client's tool killed mid-run; Ctrl-C. Nothing may be left: no
wrapper, no tool, no ssh master.

The lab is conftest's `clients_lab` (3 OSD hosts, clients c1 and c2).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cephbench.suite.config import SshSettings
from cephbench.drivers.rgw.binary import find_loadgen
from cephbench.hosts.fanout import Placement, failure, ready_line, run_started_together, tool_pid
from cephbench.hosts.local import LocalHost, Spawn
from cephbench.lab import Lab
from cephbench.hosts.remote import HostRef, ssh_argv, ssh_master

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def two_clients(clients_lab: Lab) -> Lab:
    return clients_lab


def lab_ssh(lab: Lab) -> SshSettings:
    s = lab.info().topology["ssh"]
    return SshSettings(user=s["user"], identity_file=Path(s["identity_file"]), options=s["options"],
                       hosts=s["hosts"])


def hosts_of(lab: Lab) -> list[HostRef]:
    ssh = lab_ssh(lab)
    assert {"c1", "c2"} <= set(ssh.hosts), ssh.hosts
    return [HostRef("c1", ssh.hosts["c1"]), HostRef("c2", ssh.hosts["c2"]), HostRef("here", None)]


def on(ref: HostRef, ssh: SshSettings, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(ssh_argv(ref.address, ["sh", "-c", command], ssh), capture_output=True, text=True,
                          timeout=30)


def alive_on(ref: HostRef, ssh: SshSettings, pids: list[int]) -> list[int]:
    """Those of `pids` that run on `ref` (asked over ssh; a zombie counts as gone)."""
    script = " ".join(f"{p}" for p in pids)
    res = on(ref, ssh, f'for p in {script}; do s=$(cut -d")" -f2 /proc/$p/stat 2>/dev/null | cut -c2); '
                       f'[ -n "$s" ] && [ "$s" != Z ] && echo $p; done; true')
    assert res.returncode == 0, res.stderr
    return [int(x) for x in res.stdout.split()]


def masters_of(ctl_prefix: str = "cephbench-ssh-") -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
    return [ln for ln in out if ctl_prefix in ln and "[mux]" in ln]


def test_started_together_on_two_clients_and_here(two_clients, tmp_path):
    refs = hosts_of(two_clients)
    at = find_loadgen()
    before = masters_of()
    with ssh_master(lab_ssh(two_clients)) as ssh:
        ctl = next(o for o in ssh.options if o.startswith("ControlPath=")).split("=", 1)[1].rsplit("/", 1)[0]
        for round_ in range(2):        # the second batch runs over the masters the first opened
            places = [Placement(Spawn(["sh", "-c", "date +%s%N; sleep 1"], tmp_path / f"{r.name}.{round_}"), r)
                      for r in refs]
            res = run_started_together(LocalHost(), places, ssh, {r.name: at for r in refs}, timeout_s=60)
            assert [r.host for r in res] == ["c1", "c2", "here"]
            assert failure(res) is None and all(r.result.ok for r in res), [r.result for r in res]
            starts = [r.start_unix_s for r in res]
            assert max(starts) - min(starts) < 0.05, starts
            # the tool's own clock agrees with the marker (same machine: no offset): never before it, and after it by
            # what starting `sh` and `date` takes; 0.36 s of that at load 18 (fresh-clone run at 23fbd27), while the
            # markers themselves stayed within 50 ms of each other
            for r in res:
                assert -0.05 < int(r.result.stdout.split()[0]) / 1e9 - r.start_unix_s < 1.0, r.result.stdout
                assert 0.9 < r.end_unix_s - r.start_unix_s < 3
                assert "@cephbench" not in r.result.stdout
        assert len(list(Path(ctl).iterdir())) == 2          # a master for c1 and one for c2
    assert not Path(ctl).exists()
    assert masters_of() == before


def _wrapper_pids(places: list[Placement]) -> list[int]:
    return [ready_line(p.spawn.output.read_text())[0] for p in places]


def test_killed_client_tool_fails_the_batch_and_stops_the_others(two_clients, tmp_path):
    refs = hosts_of(two_clients)[:2]
    at = find_loadgen()
    with ssh_master(lab_ssh(two_clients)) as ssh:
        places = [Placement(Spawn(["sleep", "30"], tmp_path / r.name), r) for r in refs]
        killed: list[int] = []

        def kill_c1() -> None:
            pid = tool_pid(places[0].spawn.output.read_text())
            if pid and not killed:
                assert on(refs[0], ssh, f"kill -KILL {pid}").returncode == 0
                killed.append(pid)

        t0 = time.monotonic()
        res = run_started_together(LocalHost(), places, ssh, {r.name: at for r in refs}, timeout_s=60,
                                   tick=kill_c1, tick_interval_s=0.5)
        assert killed and time.monotonic() - t0 < 15
        assert failure(res) == "c1: killed by SIGKILL"
        assert res[1].stopped and res[1].result.returncode == 130
        tools = [tool_pid(p.spawn.output.read_text()) for p in places]
        for ref, pids in zip(refs, ([*_wrapper_pids(places)[:1], tools[0]], [*_wrapper_pids(places)[1:], tools[1]])):
            assert alive_on(ref, ssh, pids) == []


CHILD = """
import sys
from pathlib import Path
from cephbench.suite.config import SshSettings
from cephbench.hosts.fanout import Placement, run_started_together
from cephbench.hosts.local import LocalHost, Spawn
from cephbench.hosts.remote import HostRef, ssh_master
out, at, ssh = Path(sys.argv[1]), sys.argv[2], SshSettings.model_validate_json(sys.argv[3])
refs = [HostRef("c1", ssh.hosts["c1"]), HostRef("c2", ssh.hosts["c2"]), HostRef("here", None)]
with ssh_master(ssh) as shared:
    (out / "ctl").write_text(next(o for o in shared.options if o.startswith("ControlPath=")))
    run_started_together(LocalHost(), [Placement(Spawn(["sh", "-c", "echo tool=$$; sleep 30"], out / r.name), r)
                                       for r in refs], shared, {r.name: at for r in refs}, timeout_s=60)
"""


def test_ctrl_c_leaves_nothing_on_any_host(two_clients, tmp_path):
    refs = hosts_of(two_clients)
    ssh = lab_ssh(two_clients)
    before = masters_of()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), find_loadgen(), ssh.model_dump_json()],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    outs = [tmp_path / r.name for r in refs]

    def tools() -> list[int | None]:
        return [tool_pid(p.read_text()) if p.exists() else None for p in outs]

    deadline = time.monotonic() + 30
    while None in tools() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert None not in tools(), [p.read_text() if p.exists() else None for p in outs]
    wrappers = [ready_line(p.read_text())[0] for p in outs]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    ctl = Path((tmp_path / "ctl").read_text().split("=", 1)[1]).parent
    assert not ctl.exists()
    assert masters_of() == before
    # the remote wrappers saw their stdin end and stopped their tools (SIGINT): give them a moment
    deadline = time.monotonic() + 10
    left = {}
    while time.monotonic() < deadline:
        left = {r.name: alive_on(r, ssh, [w, t]) if r.address else [p for p in (w, t) if Path(f"/proc/{p}").exists()
                                                                      and "Z" not in _state(p)]
                for r, w, t in zip(refs, wrappers, tools())}
        if not any(left.values()):
            break
        time.sleep(0.2)
    assert not any(left.values()), left


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"
