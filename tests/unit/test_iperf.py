"""iperf3 -J parser (fixtures: iperf 3.12 on loopback), command builders, patterns, hosts and ports."""

import json
import socket

import pytest

from conftest import FIXTURES
from cephbench.drivers import ParseError
from cephbench.config import SshSettings
from cephbench.drivers.iperf import (NetHost, aggregate, check_port, client_argv, make_tests, parse_iperf_json,
                                     patterns, resolve_hosts, server_argv)
from cephbench.errors import UserError

IPERF = FIXTURES / "iperf3"


def read(name: str) -> str:
    return (IPERF / name).read_text()


def test_one_stream():
    m = parse_iperf_json(read("iperf3.12_loopback_1stream.json"))
    data = json.loads(read("iperf3.12_loopback_1stream.json"))["end"]
    assert m.extra["bits_per_s"] == data["sum_received"]["bits_per_second"]
    assert m.bytes_per_s == pytest.approx(m.extra["bits_per_s"] / 8)
    assert m.extra["retransmits"] == data["sum_sent"]["retransmits"]
    assert m.extra["stream_count"] == 1 and m.timeseries


def test_parallel_streams_keep_per_stream_figures():
    m = parse_iperf_json(read("iperf3.12_loopback_2streams.json"))
    assert m.extra["stream_count"] == 2
    per = [s["bits_per_s"] for s in m.extra["streams"]]
    assert sum(per) == pytest.approx(m.extra["bits_per_s"], rel=0.01)


def test_error_json_is_a_parse_error_with_iperfs_words():
    with pytest.raises(ParseError, match="unable to connect to server: Connection refused"):
        parse_iperf_json(read("iperf3.12_error_connection_refused.json"))


@pytest.mark.parametrize("text", ["", "iperf3: error - unable to connect", "{ nope"])
def test_garbage_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_iperf_json(text)


def test_one_to_many_sums_receivers():
    a = parse_iperf_json(read("iperf3.12_loopback_1stream.json"))
    b = parse_iperf_json(read("iperf3.12_loopback_2streams.json"))
    m = aggregate([a, b], ["n2", "n3"])
    assert m.extra["bits_per_s"] == a.extra["bits_per_s"] + b.extra["bits_per_s"]
    assert m.extra["per_receiver_bits_per_s"] == {"n2": a.extra["bits_per_s"], "n3": b.extra["bits_per_s"]}


def test_builders():
    assert client_argv("10.0.0.2", 5300, 10, 4) == ["iperf3", "-c", "10.0.0.2", "-p", "5300", "-t", "10", "-P", "4",
                                                   "-J", "--connect-timeout", "3000"]
    assert server_argv(5300, 90)[:3] == ["timeout", "90", "iperf3"] and "--one-off" in server_argv(5300, 90)
    remote = NetHost("n2", "10.0.0.2", False)
    assert remote.wrap(["iperf3", "-s"])[0] == "ssh" and remote.wrap(["x"])[-2:] == ["n2", "x"]
    assert NetHost("localhost", "127.0.0.1", True).wrap(["x"]) == ["x"]
    assert server_argv(5300, 90, "198.18.0.2")[-2:] == ["-B", "198.18.0.2"]
    assert client_argv("198.18.0.2", 5300, 10, 1, "198.18.0.1")[-2:] == ["-B", "198.18.0.1"]


def test_patterns_pairs_and_one_to_many():
    ps = patterns(["a", "b", "c"], 4)
    pairs = [p for p in ps if p["pattern"] == "pair"]
    assert len(pairs) == 6 * 2                               # 6 ordered pairs x {1, 4} streams
    fan = [p for p in ps if p["pattern"] == "one-to-many"]
    assert [(p["sender"], p["receivers"]) for p in fan] == [("a", ["b", "c"]), ("b", ["a", "c"]), ("c", ["a", "b"])]
    assert patterns(["solo"], 1) == [{"pattern": "pair", "sender": "solo", "receivers": ["solo"], "streams": 1}]
    ids = [t.id for t in make_tests(["solo"], 4, 3.0, None)]
    assert ids == ["001-baseline-net-solo-to-solo-P1", "002-baseline-net-solo-to-solo-P4"]


def test_hosts_named_in_settings_ssh_are_reached_there_with_the_suites_key(tmp_path):
    key = tmp_path / "id"
    key.write_text("k")
    ssh = SshSettings(user="root", port=2222, identity_file=key, hosts={"h1": "198.18.0.1", "h2": "198.18.0.2"})
    h1, h2 = resolve_hosts(["h1", "h2"], check_ssh=False, ssh=ssh)      # no DNS: the lab's names resolve nowhere
    assert (h2.address, h2.local, h2.bind) == ("198.18.0.2", False, True)
    argv = h2.wrap(["iperf3", "-s"])
    assert argv[argv.index("-p") + 1] == "2222" and argv[argv.index("-i") + 1] == str(key)
    assert argv[-2:] == ["root@198.18.0.2", "iperf3 -s"]
    with pytest.raises(UserError, match="given twice"):
        resolve_hosts(["h1", "h1"], check_ssh=False, ssh=ssh)


def test_hosts_that_do_not_resolve_are_user_errors():
    with pytest.raises(UserError, match="does not resolve"):
        resolve_hosts(["no-such-host.invalid"], check_ssh=False)
    assert resolve_hosts(["localhost"])[0].local


def test_a_taken_port_is_a_user_error():
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        with pytest.raises(UserError, match="is taken"):
            check_port(s.getsockname()[1])
    with pytest.raises(UserError, match="not a TCP port"):
        check_port(70000)

