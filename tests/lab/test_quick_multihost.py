"""The quick suite's network baseline (`hosts: osd-hosts`) is right on both labs (issue 14, "Verified by").

On the multi-host lab (conftest.multihost_lab: hosts h1..h3 of one OSD, every public link shaped to R, no
cluster network) cephbench runs from this machine, whose address on the lab's bridge is unshaped: a client with
a fat link. `osd-hosts` then names this machine and h1..h3, a 4 MiB read comes from the three hosts at once, and
what this client can receive is three links (the many-to-one test), not one pair. The verdict must name the
network for large reads, at or below 100 % of that ceiling. (On the one-host lab the same keyword is the
loopback pair it always was: test_baseline.py.)

The suite is quick.yaml trimmed to keep `make test` within its budget: its network baseline with 1 stream and 1 s
per test (the same hosts and patterns), no disk baseline, and its 4 MiB rados entry as it is.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import MH_RATE, MH_RATE_BITS
from test_ground_truth import TCP_SHARE, by_kind, cpu_busy, run_suite

GROUND_TRUTH = True    # measures rates and verdicts against known bottlenecks: runs alone, with no other load on the CPUs

QUICK = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
MIB = 2**20


def trimmed_quick(network: dict, disks: dict | None, workloads: bool = True) -> str:
    q = yaml.safe_load(QUICK.read_text())
    assert q["baseline"]["network"]["hosts"] == "osd-hosts"
    baseline = {"network": {**q["baseline"]["network"], **network}}
    if disks is not None:
        baseline["disks"] = {**q["baseline"]["disks"], **disks}
    large = [w for w in q["workloads"] if w["type"] == "rados_bench" and w["object_size"] == "4MiB"]
    assert len(large) == 1
    suite = {"name": "quick-trimmed", "baseline": baseline, "pools": q["pools"],
             "workloads": large if workloads else [{"type": "osd_bench", "total": "4MiB", "block_size": "4MiB"}]}
    return yaml.safe_dump(suite, sort_keys=False)


def describe(r: dict) -> str:
    p = r["test"]["params"]
    senders = p.get("senders") or [p.get("sender")]
    return f"{p['pattern']:<12} {', '.join(senders)} -> {', '.join(p['receivers'])} P{p['streams']}"


def test_quick_suite_names_the_network_for_large_reads_from_an_unshaped_client(multihost_lab, tmp_path):
    # the disk baseline is left out: the network terms are under test, and it costs 16 s here
    text = trimmed_quick({"streams": 1, "duration": "1s"}, None)
    results, output = run_suite(multihost_lab, tmp_path, text)
    r = MH_RATE_BITS / 8 * TCP_SHARE          # what TCP carries of one shaped link
    net = [x for x in by_kind(results, "net_baseline")]
    assert net and all(x["status"] == "ok" for x in net), output
    hosts = net[0]["test"]["params"]["hosts"]
    print(f"\nnetwork baseline between {', '.join(hosts)} (links of {MH_RATE}: {r / MIB:.1f} MiB/s of TCP each):")
    for x in net:
        print(f"  {describe(x)}: {x['measurement']['bytes_per_s'] / MIB:6.1f} MiB/s")
    assert sorted(hosts[1:]) == ["h1", "h2", "h3"], hosts          # this machine first, then every OSD host
    assert all(x["test"]["params"]["part_of"] == net[0]["test"]["params"]["part_of"] for x in net)
    assert not any(x["measurement"]["extra"]["loopback"] for x in net)
    (fan_in,) = [x for x in net if x["test"]["params"]["pattern"] == "many-to-one"]
    assert fan_in["test"]["params"]["receivers"] == [hosts[0]]
    assert fan_in["measurement"]["bytes_per_s"] >= 0.85 * 3 * r, fan_in["measurement"]   # three links, not one
    pairs = [x["measurement"]["bytes_per_s"] for x in net if x["test"]["params"]["pattern"] == "pair"]
    assert all(abs(b - r) <= 0.10 * r for b in pairs), pairs

    reads = [x for x in by_kind(results, "rados_bench") if x["test"]["params"].get("phase") in ("seq", "rand")]
    assert len(reads) == 2 and all(x["status"] == "ok" for x in reads), output
    for x in reads + by_kind(results, "rados_bench", phase="write"):
        a = x["analysis"]
        print(f"{x['test']['params']['phase']} 4 MiB: {x['measurement']['bytes_per_s'] / MIB:.1f} MiB/s, CPU busy "
              f"{cpu_busy(x):.0%}; {a['reason']}")
    for x in reads:
        a = x["analysis"]
        assert a["ceiling_bytes_per_s"] >= 0.85 * 3 * r, a           # the three hosts' links, not one pair's
        assert "network" in a["bottleneck"] and a["efficiency"] <= 1.0, a
        assert cpu_busy(x) < 0.8, "the CPUs, not the links, would be the limit"
    (write,) = by_kind(results, "rados_bench", phase="write")
    # no cluster network: each host's public link carries the client's data and two replicas' worth
    assert abs(write["analysis"]["ceiling_bytes_per_s"] - 3 * r / 3) <= 0.10 * r, write["analysis"]
