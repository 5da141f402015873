"""ssh command lines for OSD hosts and iperf3 peers."""

import socket

import pytest

from cephbench.suite.config import SshSettings
from cephbench.core.errors import UserError
from cephbench.hosts.local import CommandResult, LocalHost
from cephbench.hosts.remote import (DROP_CACHES_SH, HostRef, drop_caches_argv, host_ref, require_tools, ssh_argv,
                              unreachable)


def test_ssh_argv_carries_the_suite_settings_and_quotes_the_remote_command():
    s = SshSettings(user="ceph", port=2222, options=["ProxyJump=bastion"])
    argv = ssh_argv("10.0.0.11", ["sh", "-c", "sync; echo 3"], s)
    assert argv[0] == "ssh" and "BatchMode=yes" in argv and argv[argv.index("-p") + 1] == "2222"
    assert argv[argv.index("ProxyJump=bastion") - 1] == "-o"
    assert argv[-2:] == ["ceph@10.0.0.11", "sh -c 'sync; echo 3'"]   # one word: the remote shell splits it back
    assert drop_caches_argv(HostRef("here", None), s) == ["sh", "-c", DROP_CACHES_SH]   # this machine: no ssh
    assert drop_caches_argv(HostRef("node1", "node1"), s)[-2] == "ceph@node1"


def test_a_host_is_reached_where_settings_ssh_says_else_by_name_and_this_machine_without_ssh():
    s = SshSettings(hosts={"h1": "198.18.0.1"})
    assert host_ref("h1", s) == HostRef("h1", "198.18.0.1") and host_ref("h1", s).where == "h1 (198.18.0.1)"
    assert host_ref("node2", s) == HostRef("node2", "node2") and host_ref("node2", s).where == "node2"
    assert host_ref(socket.gethostname(), s).address is None and host_ref("localhost", s).address is None


def test_unreachable_is_ssh_failing_not_the_remote_command():
    ref = HostRef("n1", "10.0.0.1")
    down = CommandResult(["ssh"], 255, "", "ssh: connect to host 10.0.0.1 port 22: No route to host\n", 1.0)
    assert unreachable(ref, down) == "host n1 (10.0.0.1) cannot be reached over ssh: ssh: connect to host 10.0.0.1 " \
        "port 22: No route to host"
    assert unreachable(ref, CommandResult(["ssh"], 127, "", "", 0.1)) is None
    assert unreachable(HostRef("here", None), down) is None


def test_a_host_without_a_tool_is_refused_in_one_line_naming_the_key():
    with pytest.raises(UserError, match="no-such-tool-xyz is not installed on host here") as exc:
        require_tools(LocalHost(), [HostRef("here", None)], ["sh", "no-such-tool-xyz"], SshSettings(),
                      "baseline.network.hosts")
    assert exc.value.where == "baseline.network.hosts"
    require_tools(LocalHost(), [HostRef("here", None)], ["sh"], SshSettings(), "x")
