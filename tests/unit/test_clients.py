"""Client hosts of a suite: schema errors, which clients a test uses, the clock arithmetic, the check script's
findings and the remote-file ledger name."""

from __future__ import annotations

import pytest
import yaml

from cephbench.hosts.clients import (Client, ClockOffset, check_clock, check_script, clients_of, loadgen_name,
                               needs_by_client, offset_from, read_findings, remove_remote_file)
from cephbench.suite.clients import resolve_clients
from cephbench.suite.config import SshSettings, parse_suite
from cephbench.core.errors import OperationFailed, UserError
from cephbench.hosts.local import LocalHost
from cephbench.suite.plan import expand
from cephbench.cluster.recovery import how_to_remove
from cephbench.core.resources import remote_file_parts
from cephbench.hosts.remote import HostRef
from cephbench.core.resources import Resource

RADOS = {"type": "rados_bench", "modes": ["write"], "duration": "1s"}


def load(text: str):
    return parse_suite(yaml.safe_load(text), "s.yaml")


def refused(text: str) -> str:
    with pytest.raises(UserError) as e:
        load(text)
    return e.value.one_line()


@pytest.mark.parametrize("text, where, words", [
    ("name: t\nclients: [a, b]\nworkloads: [{type: rados_bench, clients: 5}]", "s.yaml: workloads[0].clients",
     ["5 clients", "lists 2", "at most 2"]),
    ("name: t\nclients: [a, b, a]\nworkloads: [{type: rados_bench}]", "s.yaml: clients[2]",
     ["'a' is listed twice", "clients[0]"]),
    ("name: t\nworkloads: [{type: rados_bench, clients: all}]", "s.yaml: workloads[0].clients",
     ["lists no client hosts", "clients: lab"]),
    ("name: t\nclients: [a]\nworkloads: [{type: rados_bench, clients: 0}]", "s.yaml: workloads[0].clients",
     ["greater than zero"]),
    ("name: t\nclients: a\nworkloads: [{type: rados_bench}]", "s.yaml: clients", ["list of client host names"]),
    ("name: t\nclients: []\nworkloads: [{type: rados_bench}]", "s.yaml: clients", ["list of client host names"]),
])
def test_schema_errors_name_the_path(text, where, words):
    line = refused(text)
    assert line.startswith(f"{where}: "), line
    for w in words:
        assert w in line, line


def test_a_suite_without_clients_plans_exactly_as_before():
    plan = expand(load("name: t\nworkloads: [{type: rados_bench}]"))
    assert all("clients" not in t.params for t in plan.tests)


def test_clients_sweep_and_which_clients_a_test_uses():
    suite = load("name: t\nclients: [a, b]\nworkloads: [{type: rados_bench, modes: [write], clients: [1, all]}]")
    plan = expand(suite)
    assert [t.params["clients"] for t in plan.tests] == [1, "all"]
    assert [t.id for t in plan.tests] == ["001-rados_bench-write-clients-1-4MiB-t16", "002-rados_bench-write-clients-all-4MiB-t16"]
    cl = resolve_clients(suite, suite.settings, None)
    assert [(c.name, c.where) for c in cl] == [("a", "clients[0]"), ("b", "clients[1]")]
    assert [c.name for c in clients_of(1, cl)] == ["a"] and len(clients_of("all", cl)) == 2
    assert clients_of(None, cl) == []
    needs = needs_by_client(plan.tests, cl)
    assert needs["a"].tools == ("rados",) and needs["a"].key and set(needs) == {"a", "b"}


def test_clients_lab_needs_a_lab_with_client_hosts():
    suite = load("name: t\nclients: lab\nworkloads: [{type: rados_bench, clients: 3}]")
    with pytest.raises(UserError, match="not a multi-host lab"):
        resolve_clients(suite, suite.settings, None)
    topo = {"hosts": [{"name": "h1", "role": "osd"}, {"name": "c1", "role": "client"},
                      {"name": "c2", "role": "client"}]}
    with pytest.raises(UserError) as e:
        resolve_clients(suite, suite.settings, topo)
    assert e.value.where == "workloads[0].clients" and "the lab has 2 client hosts" in e.value.one_line()
    with pytest.raises(UserError, match="has no client hosts"):
        resolve_clients(suite, suite.settings, {"hosts": [{"name": "h1", "role": "osd"}]})


def test_offset_comes_from_the_shortest_round_trip():
    # (sent, remote, received): the client is 5 s ahead; the slow round trips would each say otherwise
    samples = [(1_000, 5_000_090_000, 200_000), (300_000, 5_000_300_500, 301_000), (400_000, 5_000_900_000, 900_000)]
    assert offset_from(samples) == ClockOffset(5_000_000_000, 1_000)
    assert offset_from([(0, -2_000_000_000 + 50, 100)]) == ClockOffset(-2_000_000_000, 100)
    with pytest.raises(ValueError):
        offset_from([])


def test_more_than_a_second_off_is_refused_unless_forced():
    c = Client("c1", HostRef("c1", "10.0.0.5"), "clients[0]")
    assert check_clock(c, ClockOffset(999_000_000, 1_000_000), force=False) is None
    with pytest.raises(UserError) as e:
        check_clock(c, ClockOffset(-5_000_000_000, 1_000_000), force=False)
    line = e.value.one_line()
    assert "clients[0]" in line and "5.000 s behind" in line and "--force" in line
    assert "going on" in check_clock(c, ClockOffset(5_000_000_000, 1_000_000), force=True)


def test_findings_of_the_check_script():
    c = Client("c1", HostRef("c1", "10.0.0.5"), "clients[0]")
    assert read_findings(c, "cephbench-version fio fio-3.33\ncephbench-ok\n") == {"fio": "fio-3.33"}
    for text, words in [("cephbench-missing rados\n", ["rados is not installed on client c1 (10.0.0.5)"]),
                        ("cephbench-noengine rbd\n", ["no rbd engine", "librbd"]),
                        ("cephbench-nokey rados lspools: error connecting\n", ["cannot reach the cluster"]),
                        ("", ["did not finish"])]:
        with pytest.raises(UserError) as e:
            read_findings(c, text)
        for w in words:
            assert w in e.value.one_line() and e.value.where == "clients[0]"
    script = check_script(needs_by_client(expand(load(
        "name: t\nclients: [a]\nworkloads: [{type: fio_rbd, clients: 1}]")).tests,
        [Client("a", HostRef("a", "a"))])["a"], "bench")
    assert "--enghelp=rbd" in script and "--id bench" in script and script.endswith("echo cephbench-ok")


def test_remote_file_ledger_names():
    assert remote_file_parts("198.18.0.4:/root/.cache/x") == ("198.18.0.4", "/root/.cache/x")
    assert remote_file_parts("fe80::1:/root/x") == ("fe80::1", "/root/x")
    assert how_to_remove(Resource("remote-file", "10.0.0.5:/root/f")) == "ssh 10.0.0.5 rm -f /root/f"


def test_each_run_has_its_own_copy_of_loadgen_on_a_client():
    # issue 24: two runs shared ~/.cache/cephbench/bin/cephbench-loadgen-<sha>; the one that copied it removed it
    # under the other's tools (exit 127). The name carries the run id: two runs (or two machines sharing a home over
    # NFS) never share a copy.
    sha = "0123456789abcdef" * 4
    a, b = loadgen_name("a1b2c3", sha), loadgen_name("d4e5f6", sha)
    assert a == "cephbench-a1b2c3-loadgen-0123456789ab" and a != b


@pytest.mark.parametrize("path", ["/etc/passwd", "/root/.cache/cephbench/bin/notes.txt",
                                  "/root/.cache/cephbench/bin/cephbench-a1b2c3-loadgen-0123456789ab/x", ""])
def test_a_remote_file_removal_refuses_what_is_not_a_loadgen_copy(path):
    with pytest.raises(OperationFailed, match="not removed"):
        remove_remote_file(LocalHost(), SshSettings(), f"10.0.0.5:{path}")
