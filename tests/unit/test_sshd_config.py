"""The one sshd configuration (lab/sshd.py): a multi-host lab's host and the fan-out benchmark's many-address
sshd are written by the same function (issue 26 item 5). The lab's file is pinned byte for byte; sshd itself
checks (`sshd -t`) what the function writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cephbench.hosts.local import LocalHost
from cephbench.lab.sshd import SSHD, SshFiles, make_keys, render_config

LAB_HOST = """\
ListenAddress 10.99.0.11
Port 22
HostKey /lab/ssh/ssh_host_ed25519_key
AuthorizedKeysFile /lab/ssh/authorized_keys
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
MaxStartups 100:30:200
MaxSessions 100
LogLevel ERROR
Subsystem sftp internal-sftp
"""


def test_a_lab_hosts_sshd_config_is_unchanged():
    assert render_config(SshFiles(Path("/lab/ssh")), "10.99.0.11") == LAB_HOST


@pytest.mark.skipif(shutil.which(SSHD) is None and not Path(SSHD).exists(), reason="no sshd (openssh-server)")
@pytest.mark.parametrize("addresses, kw", [(("10.99.0.11",), {}),
                                           (tuple(f"127.0.0.{i}" for i in range(1, 17)),
                                            {"port": 2222, "sessions": 200})])
def test_sshd_accepts_what_it_is_given(tmp_path, addresses, kw):
    files = SshFiles(tmp_path / "ssh")
    make_keys(files, LocalHost())
    cfg = tmp_path / "sshd_config"
    cfg.write_text(render_config(files, *addresses, **kw))
    res = subprocess.run([SSHD, "-t", "-f", str(cfg)], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
