"""ssh command lines for OSD hosts and iperf3 peers."""

from cephbench.config import SshSettings
from cephbench.remote import DROP_CACHES_SH, HostRef, drop_caches_argv, ssh_argv


def test_ssh_argv_carries_the_suite_settings_and_quotes_the_remote_command():
    s = SshSettings(user="ceph", port=2222, options=["ProxyJump=bastion"])
    argv = ssh_argv("10.0.0.11", ["sh", "-c", "sync; echo 3"], s)
    assert argv[0] == "ssh" and "BatchMode=yes" in argv and argv[argv.index("-p") + 1] == "2222"
    assert argv[argv.index("ProxyJump=bastion") - 1] == "-o"
    assert argv[-2:] == ["ceph@10.0.0.11", "sh -c 'sync; echo 3'"]   # one word: the remote shell splits it back
    assert drop_caches_argv(HostRef("here", None), s) == ["sh", "-c", DROP_CACHES_SH]   # this machine: no ssh
    assert drop_caches_argv(HostRef("node1", "node1"), s)[-2] == "ceph@node1"
