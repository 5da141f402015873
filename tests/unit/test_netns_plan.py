"""The multi-host lab's network plan: names fit the kernel's 15 characters, labs side by side do not collide."""

import ipaddress
import json
from pathlib import Path

import pytest

from cephbench.core.errors import UserError
from cephbench.lab.netns import (CLUSTER_BASE, IFNAMSIZ, MAX_HOSTS, PUBLIC_BASE, Topology, create_commands,
                                 exec_argv, free_slot, lab_id_for, plan, slots_in_use)
from cephbench.lab.rates import LinkShape, parse_link

G = LinkShape(10**9)


def names(t: Topology) -> set[str]:
    return set(t.link_names()) | {h.netns for h in t.hosts}


def addresses(t: Topology) -> set[str]:
    return {k.address for h in t.hosts for k in h.links} | {n.gateway for n in t.networks if n.gateway}


def test_largest_lab_names_fit_ifnamsiz():
    t = plan("zzzzzz", 255, MAX_HOSTS, G, G)
    assert max(len(n) for n in t.link_names()) <= IFNAMSIZ
    assert len(set(t.link_names())) == len(t.link_names())
    assert len(addresses(t)) == 2 * MAX_HOSTS + 1


def test_addresses_in_rfc2544_range_one_24_per_network():
    t = plan("ab12cd", 7, 3, G, LinkShape(10**8))
    pub, clu = t.network("public"), t.network("cluster")
    assert pub.subnet == "198.18.7.0/24" and clu.subnet == "198.19.7.0/24" and pub.gateway == "198.18.7.254"
    assert [h.address() for h in t.hosts] == ["198.18.7.1", "198.18.7.2", "198.18.7.3"]
    assert [h.address("cluster") for h in t.hosts] == ["198.19.7.1", "198.19.7.2", "198.19.7.3"]
    bench = ipaddress.ip_network("198.18.0.0/15")
    assert all(ipaddress.ip_address(a) in bench for a in addresses(t))
    assert [h.netns for h in t.hosts] == ["cb-ab12cd-h1", "cb-ab12cd-h2", "cb-ab12cd-h3"]
    assert pub.bridge == "cbp-ab12cd" and clu.bridge == "cbc-ab12cd"


def test_two_labs_share_no_name_and_no_address():
    a = plan(lab_id_for(Path("/tmp/lab-a")), 0, 4, G, G)
    used = slots_in_use([a.network("public").gateway, "10.0.0.1", "127.0.0.1"])
    assert used == {0}
    b = plan(lab_id_for(Path("/tmp/lab-b")), free_slot(used), 4, G, G)
    assert a.lab_id != b.lab_id
    assert not names(a) & names(b)
    assert not addresses(a) & addresses(b)
    for kind in ("public", "cluster"):
        assert not ipaddress.ip_network(a.network(kind).subnet).overlaps(ipaddress.ip_network(b.network(kind).subnet))


def test_lab_id_is_stable_per_directory(tmp_path):
    assert lab_id_for(tmp_path / "lab") == lab_id_for(tmp_path / "x" / ".." / "lab")
    assert lab_id_for(tmp_path / "lab") != lab_id_for(tmp_path / "lab2")


def test_slots():
    assert free_slot(set()) == 0 and free_slot({0, 1, 3}) == 2
    assert slots_in_use(["198.18.200.254", "198.19.5.1", "198.17.255.254"]) == {200}
    with pytest.raises(UserError) as e:
        free_slot(set(range(256)))
    assert "lab down" in e.value.one_line()


def test_no_cluster_network_unless_asked():
    t = plan("a1", 0, 2, G)
    assert t.network("cluster") is None and all(len(h.links) == 1 for h in t.hosts)
    assert plan("a1", 0, 2, G, separate_cluster=True).network("cluster").shape is None


@pytest.mark.parametrize("hosts", [0, -1, MAX_HOSTS + 1])
def test_host_count_refused_on_hosts_flag(hosts):
    with pytest.raises(UserError) as e:
        plan("a1", 0, hosts, G)
    assert e.value.one_line().startswith("--hosts:")


@pytest.mark.parametrize("lab_id", ["", "ABC", "a-b", "abcdefg"])
def test_bad_lab_id_is_a_bug_not_user_input(lab_id):
    with pytest.raises(ValueError):
        plan(lab_id, 0, 1, G)


def test_json_round_trip():
    t = plan("ab12cd", 3, 2, LinkShape(10**8, 0.0002), G)
    assert Topology.from_json(json.loads(json.dumps(t.to_json()))) == t


def test_commands_shape_both_ends_and_delay_is_split_over_four_queues():
    t = plan("ab12cd", 0, 2, LinkShape(10**8, 0.0008))
    batches = [stdin for argv, stdin in create_commands(t) if argv[0] == "tc"]
    root = [b for b in batches if "cb-ab12cd-h1p" in b]
    inner = [b for b in batches if "dev pub0" in b]
    assert len(root) == 1 and len(inner) == 2          # one root batch per host, the inner ones per namespace
    assert "tbf rate 100000000bit" in root[0] and "netem delay 200us" in root[0]
    assert all("tbf rate 100000000bit" in b and "netem delay 200us" in b for b in inner)
    unshaped = [argv for argv, _ in create_commands(plan("ab12cd", 0, 2, None)) if argv[0] == "tc"]
    assert unshaped == []


def test_exec_argv():
    assert exec_argv("cb-ab12cd-h1", ["iperf3", "-s", 5201]) == ["nsenter", "--net=/run/netns/cb-ab12cd-h1", "--",
                                                                  "iperf3", "-s", "5201"]


def test_client_hosts_follow_the_osd_hosts_on_the_public_network_only():
    topo = plan("ab12cd", 3, 2, None, separate_cluster=True, clients=2)
    assert [h.name for h in topo.hosts] == ["h1", "h2", "c1", "c2"]
    assert topo.host("c1").address() == "198.18.3.3" and topo.host("c2").address() == "198.18.3.4"
    assert [k.network for k in topo.host("c1").links] == ["public"]
    assert topo.host("h2").address("cluster") == "198.19.3.2"
    assert all(len(n) <= 15 for n in topo.link_names())


def test_too_many_clients_is_refused_on_the_flag():
    with pytest.raises(UserError) as e:
        plan("ab12cd", 0, 3, None, clients=251)
    assert e.value.where == "--clients"


def test_bases_are_the_benchmarking_range():
    assert PUBLIC_BASE.supernet() == CLUSTER_BASE.supernet() == ipaddress.ip_network("198.18.0.0/15")


def test_shaping_probes_one_per_kind_naming_the_first_flag_that_needs_it():
    from cephbench.lab.netns import shaping_probes
    probes = shaping_probes({"--public-net": parse_link("1gbit"), "--cluster-net": parse_link("100mbit/0.2ms"),
                             "--client-net": parse_link("10mbit/1ms")})
    assert [(p.kind, p.flag) for p in probes] == [("tbf", "--public-net"), ("netem", "--cluster-net")]
    assert probes[1].argv()[:3] == ["unshare", "--net", "--"] and "netem" in probes[1].argv()
    assert "sch_netem" in probes[1].refusal().one_line() and probes[1].refusal().where == "--cluster-net"
    assert shaping_probes({"--public-net": None}) == []
