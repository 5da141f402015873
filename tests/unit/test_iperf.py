"""iperf3 -J parser (fixtures: iperf 3.12 on loopback), command builders, patterns, hosts and ports."""

import json
import socket

import pytest

from conftest import FIXTURES
from cephbench.core.errors import ParseError
from cephbench.suite.config import SshSettings
from cephbench.drivers.iperf import (NetHost, aggregate, check_port, client_argv, expand, osd_net_hosts,
                                     parse_iperf_json, resolve_hosts, server_argv)
from cephbench.kinds.net_baseline import flows, make_tests, patterns
from cephbench.core.errors import UserError
from cephbench.hosts.remote import is_local_address, source_address

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
                                                   "-J", "--get-server-output", "--connect-timeout", "3000"]
    assert server_argv(5300, 90)[-4:] == ["-i", "0.1", "-f", "k"]     # the receiver's intervals, exact to a Kbit/s
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


def test_each_client_sends_to_and_receives_from_every_osd_host_at_once():
    ps = patterns(["me", "h1", "h2"], 1, clients=["c1", "c2"])
    assert ps[:len(patterns(["me", "h1", "h2"], 1))] == patterns(["me", "h1", "h2"], 1)   # the OSD hosts' as before
    extra = ps[len(patterns(["me", "h1", "h2"], 1)):]
    assert extra == [
        {"pattern": "one-to-many", "sender": "c1", "receivers": ["h1", "h2"], "streams": 1},
        {"pattern": "many-to-one", "senders": ["h1", "h2"], "receivers": ["c1"], "streams": 1},
        {"pattern": "one-to-many", "sender": "c2", "receivers": ["h1", "h2"], "streams": 1},
        {"pattern": "many-to-one", "senders": ["h1", "h2"], "receivers": ["c2"], "streams": 1}]
    ids = [t.id for t in make_tests(["me", "h1", "h2"], 1, 1.0, None, part_of="004-net", clients=["c1"])][-2:]
    assert ids == ["004-net-c1-to-all", "004-net-all-to-c1"]


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



def test_many_to_one_goes_to_the_first_host_from_all_others_with_three_hosts_or_more():
    fan_in = [p for p in patterns(["c", "h1", "h2", "h3"], 4) if p["pattern"] == "many-to-one"]
    assert fan_in == [{"pattern": "many-to-one", "senders": ["h1", "h2", "h3"], "receivers": ["c"], "streams": 1}]
    assert flows(fan_in[0]) == [("h1", "c"), ("h2", "c"), ("h3", "c")]
    assert not [p for p in patterns(["c", "h1"], 4) if p["pattern"] == "many-to-one"]   # with two: a pair
    ids = [t.id for t in make_tests(["c", "h1", "h2"], 1, 3.0, None)]
    assert ids[-1] == f"{len(ids):03d}-baseline-net-all-to-c"


def test_many_to_one_sums_senders():
    a = parse_iperf_json(read("iperf3.12_loopback_1stream.json"))
    b = parse_iperf_json(read("iperf3.12_loopback_2streams.json"))
    m = aggregate([a, b], ["h1", "h2"], "per_sender_bits_per_s")
    assert m.bytes_per_s == (a.extra["bits_per_s"] + b.extra["bits_per_s"]) / 8
    assert m.extra["per_sender_bits_per_s"] == {"h1": a.extra["bits_per_s"], "h2": b.extra["bits_per_s"]}


FAN_IN_TCP_BYTES_PER_S = 200e6 / 8 * 1448 / 1514      # what TCP carries of the fixture's 200 Mbit/s tbf link


def fan_in_flows(where: str, receiver: str) -> tuple[list, list]:
    from cephbench.hosts.fanout import split_markers
    parts, spans = [], []
    for h in ("h1", "h2", "h3"):
        text, start_ns, end_ns, rc = split_markers(read(f"{where}/iperf3-client-{h}-to-{receiver}.json"))
        assert rc == 0 and start_ns and end_ns
        parts.append(parse_iperf_json(text))
        spans.append((start_ns / 1e9, end_ns / 1e9))
    return parts, spans


def test_a_receivers_intervals_are_read_from_its_report_and_add_up_to_what_iperf3_says_it_received():
    parts, _ = fan_in_flows("fan-in-server-intervals/to-c1", "c1")
    for p in parts:
        rows = p.extra["received_intervals"]
        assert rows[0][0] == 0 and all(a[1] == b[0] for a, b in zip(rows, rows[1:]))      # one after the other
        assert rows[-1][1] == pytest.approx(p.duration_s, abs=0.01)                       # to the summary's end
        bits = sum((b - a) * rate for a, b, rate in rows)
        assert bits == pytest.approx(p.bytes_total * 8, rel=0.03)
    assert "received_intervals" not in parse_iperf_json(read("iperf3.12_loopback_1stream.json")).extra


def test_flows_into_a_shared_link_are_summed_over_the_seconds_they_shared_it():
    parts, spans = fan_in_flows("fan-in-server-intervals/to-c1", "c1")        # c1's link (200 Mbit/s) the limit
    summed = aggregate(parts, ["h1", "h2", "h3"], "per_sender_bits_per_s")
    assert summed.bytes_per_s > 1.07 * FAN_IN_TCP_BYTES_PER_S            # the old figure: the flows' own rates
    m = aggregate(parts, ["h1", "h2", "h3"], "per_sender_bits_per_s", spans)
    assert m.extra["figure"] == "common window"
    assert abs(m.bytes_per_s / FAN_IN_TCP_BYTES_PER_S - 1) < 0.03
    assert m.duration_s == pytest.approx(m.extra["overlap_s"]) and m.extra["overlap_s"] < min(p.duration_s
                                                                                            for p in parts)
    assert m.extra["sum_of_flow_bits_per_s"] == summed.extra["bits_per_s"]
    assert m.bytes_total == sum(p.bytes_total for p in parts)
    assert m.extra["per_sender_bits_per_s"]["h1"] == parts[0].extra["bits_per_s"]


def test_flows_each_held_by_its_sender_are_summed_not_cut_by_the_seconds_one_ran_alone():
    # the lab's hosts shaped to 200 Mbit/s, this machine on the bridge unshaped: the senders are the limit (3R)
    parts, spans = fan_in_flows("fan-in-server-intervals/to-vm", "vm")
    m = aggregate(parts, ["h1", "h2", "h3"], "per_sender_bits_per_s", spans)
    assert m.extra["figure"] == "common window"
    assert m.bytes_per_s == pytest.approx(m.extra["sum_of_flow_bits_per_s"] / 8, rel=0.02)
    assert 0.9 * 3 * FAN_IN_TCP_BYTES_PER_S < m.bytes_per_s < 1.03 * 3 * FAN_IN_TCP_BYTES_PER_S


def test_without_receivers_intervals_a_fan_in_is_its_bytes_over_the_flows_whole_window():
    parts, spans = fan_in_flows("fan-in-3-to-1-200mbit", "c1")        # captured before servers reported intervals
    summed = aggregate(parts, ["h1", "h2", "h3"], "per_sender_bits_per_s")
    assert summed.bytes_per_s > 1.10 * FAN_IN_TCP_BYTES_PER_S            # the old figure: the link read 11 % fast
    m = aggregate(parts, ["h1", "h2", "h3"], "per_sender_bits_per_s", spans)
    assert m.extra["figure"] == "whole window"
    assert abs(m.bytes_per_s / FAN_IN_TCP_BYTES_PER_S - 1) < 0.03
    assert m.duration_s == pytest.approx(m.bytes_total / m.bytes_per_s)
    assert 0.08 < m.extra["start_spread_s"] < 0.1                   # h1's flow began late: its handshake queued
    assert m.extra["overlap_s"] < min(p.duration_s for p in parts) < m.duration_s
    # a client whose wrapper gave no times: the sum, as without any
    assert aggregate(parts, ["h1", "h2", "h3"], spans=[*spans[:2], None]).bytes_per_s == summed.bytes_per_s


def test_osd_hosts_is_one_test_until_the_run_names_the_hosts():
    (t,) = make_tests("osd-hosts", 4, 3.0, None, start_index=7)
    assert t.id == "007-baseline-net-osd-hosts" and t.params["hosts"] == "osd-hosts"
    assert t.est_duration_s == len(patterns(["c", "h1", "h2", "h3"], 4)) * 4.0
    parts = expand(t, ["c", "h1", "h2", "h3"])
    assert len(parts) == len(patterns(["c", "h1", "h2", "h3"], 4)) and len({p.id for p in parts}) == len(parts)
    assert all(p.params["part_of"] == t.id and p.index == 7 and p.group == t.group and
               p.params["hosts"] == ["c", "h1", "h2", "h3"] for p in parts)
    assert parts[0].id == "007-baseline-net-osd-hosts-c-to-h1-P1" and parts[-1].id.endswith("-all-to-c")
    # one host (the one-host lab): the loopback pair with 1 and 4 streams, as `hosts: [localhost]` gives
    assert [p.params["pattern"] for p in expand(t, ["vm"])] == ["pair", "pair"]


ME = socket.gethostname()


def osd_md(host: str, ip: str, i: int) -> dict:
    return {"id": i, "hostname": host, "front_addr": f"[v2:{ip}:6800/{i},v1:{ip}:6801/{i}]",
            "back_addr": f"[v2:{ip}:6802/{i},v1:{ip}:6803/{i}]"}


def test_osd_hosts_on_the_one_host_lab_are_this_machine_once_on_loopback():
    md = [osd_md(ME, "127.0.0.1", i) for i in range(3)]
    (h,) = osd_net_hosts(md, SshSettings())
    assert (h.name, h.address, h.local) == (ME, "127.0.0.1", True)


def test_osd_hosts_are_this_machine_at_its_address_towards_them_then_each_osd_host_at_its_public_address():
    md = [osd_md(f"h{i}", f"198.18.7.{i}", i) for i in (1, 2, 3)]
    ssh = SshSettings(user="root", hosts={"h1": "198.18.7.1", "h2": "198.18.7.2", "h3": "198.18.7.3"})
    me, *osd = osd_net_hosts(md, ssh)
    assert (me.name, me.local, me.bind) == (ME, True, True)
    assert me.address == source_address("198.18.7.1") and is_local_address(me.address)
    assert [(h.name, h.address, h.local, h.bind) for h in osd] == [(f"h{i}", f"198.18.7.{i}", False, True)
                                                                   for i in (1, 2, 3)]
    assert osd[0].wrap(["iperf3"])[-2:] == ["root@198.18.7.1", "iperf3"]
    with pytest.raises(UserError, match="names no OSD host"):
        osd_net_hosts([{"id": 0, "hostname": "h1"}], ssh)


def test_progress_totals_never_grow_and_the_eta_counts_the_tests_left():
    """The plan's osd-hosts test became 28 parts at run time: the total stayed the plan's (it grew 8 -> 42 before),
    the parts count as their plan test, and with tests left the ETA is theirs, never 0.0 s."""
    import io
    import re
    import time

    from rich.console import Console

    from cephbench.rundirs.progress import ConsoleEvents
    from cephbench.core.results import Result, Test
    (t,) = make_tests("osd-hosts", 1, 3.0, None)
    later = [Test(id=f"00{i}-rados-write", index=i, workload="w", kind="rados_bench", group=f"g{i}",
                  params={"phase": "write"}, est_duration_s=20.0) for i in (2, 3)]
    parts = expand(t, ["c", "h1", "h2", "h3", "h4"])
    assert sum(p.est_duration_s for p in parts) > t.est_duration_s       # more hosts than the plan guessed
    out = io.StringIO()
    ev = ConsoleEvents(Console(file=out, width=200), [t, *later])
    ev.started -= 1000                                                    # every part took longer than planned
    for p in parts:
        ev.test_started(p)
        ev.current_started -= 10
        ev.test_finished(Result(test=p, status="ok", started_unix=time.time(), duration_s=4.0))
    ev.test_started(later[0])
    counts = re.findall(r"\[(\d+)/(\d+)\]", out.getvalue())
    assert {total for _, total in counts} == {"3"} and max(int(i) for i, _ in counts) == 2
    assert counts[0] == ("1", "3") and counts[-2] == ("1", "3") and counts[-1] == ("2", "3")
    assert ev.remaining_s() >= 20.0                                       # the last test's 20 s at least


def test_osd_hosts_with_a_cluster_network_are_also_paired_over_it():
    md = [{**osd_md(f"h{i}", f"198.18.7.{i}", i), "back_addr": f"[v2:198.19.7.{i}:6802/{i},v1:198.19.7.{i}:6803/{i}]"}
          for i in (1, 2, 3)]
    ssh = SshSettings(user="root", hosts={f"h{i}": f"198.18.7.{i}" for i in (1, 2, 3)})
    me, *osd = osd_net_hosts(md, ssh)
    assert me.cluster_address is None and [h.cluster_address for h in osd] == [f"198.19.7.{i}" for i in (1, 2, 3)]
    ps = patterns([me.name, "h1", "h2", "h3"], 1, ["h1", "h2", "h3"])
    cluster = [p for p in ps if p.get("network") == "cluster"]
    assert [(p["sender"], p["receivers"]) for p in cluster] == [(a, [b]) for a in ("h1", "h2", "h3")
                                                                 for b in ("h1", "h2", "h3") if a != b]
    assert len(ps) == len(patterns([me.name, "h1", "h2", "h3"], 1)) + 6
    # the same public and cluster address: no cluster network, no cluster pairs
    (_, *same) = osd_net_hosts([osd_md(f"h{i}", f"198.18.7.{i}", i) for i in (1, 2, 3)], ssh)
    assert all(h.cluster_address is None for h in same)
