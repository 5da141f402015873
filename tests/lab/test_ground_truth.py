"""Ground truth: clusters whose bottleneck is known, and what cephbench measures and concludes on them.

The shared multi-host lab (conftest.multihost_lab): 3 hosts of one OSD, a client host c1, every public link shaped
to R = 200 Mbit/s both ways and no cluster network, replica 3. Why R is 200 Mbit/s: 25 MB/s is a few percent of
what 2 cores move through Ceph here (a loopback lab writes 4 MiB objects at 80-100 MiB/s while its CPUs are
saturated), so the links, not the CPUs, bind; each test prints the CPU share it saw as evidence.

- (Reads from client hosts bound by their own links: test_clients_ground_truth.py, on the lab of many clients.)
- Writes from a client faster than any one host's link (this machine's own address on the lab's bridge):
  without a cluster network, each host's public link carries client data and replicas (X in per host for X
  written); with a cluster network at the same R, replicas go there (2X/3 per host), so the write is faster.
  That is Han's private-network result.
- One OSD's drive throttled: OSD bench flags exactly that OSD, a 4 MiB replicated write is slower, and the
  verdict names it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cephbench.lab import Lab, netns
from cephbench.lab.multihost import MultiHostSpec
from cephbench.lab.rates import parse_link

from conftest import MH_RATE, MH_RATE_BITS

GROUND_TRUTH = True    # measures rates and verdicts against known bottlenecks: runs alone, with no other load on the CPUs

CLI = [sys.executable, "-m", "cephbench.entry"]
R_BYTES = MH_RATE_BITS / 8
# what TCP carries of a tbf-shaped link: tbf counts whole Ethernet frames, 1448 payload bytes of each 1514
TCP_SHARE = 1448 / 1514


def run_suite(lab: Lab, tmp_path: Path, text: str, host: str | None = None) -> tuple[list[dict], str]:
    """`cephbench run` of a suite against the lab, from a lab host's namespace (None: this machine's own); its
    results and its output."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    suite = tmp_path / "suite.yaml"
    suite.write_text(text)
    out = tmp_path / f"run-{host or 'root'}"
    argv = [*CLI, "run", str(suite), "--out", str(out)]
    if host is not None:
        argv = netns.exec_argv(next(h["netns"] for h in lab.info().topology["hosts"] if h["name"] == host), argv)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CEPH_")}, **lab.env()}
    res = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    return results, res.stdout + res.stderr


def by_kind(results: list[dict], kind: str, **params) -> list[dict]:
    return [r for r in results if r["test"]["kind"] == kind
            and all(r["test"]["params"].get(k) == v for k, v in params.items())]


def cpu_busy(result: dict) -> float:
    return max((h["cpu_busy_median"] for h in result.get("hosts") or []), default=0.0)


WRITE_SUITE = """
name: gt-write
pools:
  rep: {type: replicated, size: 3, pg_num: 32}
workloads:
  - {type: rados_bench, pool: rep, modes: [write], object_size: 4MiB, concurrency: 16, duration: 8s}
"""
# one op at a time: whatever the links, each op's latency sets the rate (issue 16's latency case)
ONE_AT_A_TIME = {"type": "rados_bench", "pool": "rep", "modes": ["write"], "object_size": "4KiB", "concurrency": 1,
                 "duration": "3s"}


def _write(lab: Lab, tmp_path: Path, suite: str = WRITE_SUITE, size: int = 4 * 2**20
           ) -> tuple[dict, list[dict], str]:
    """The write's result (4 MiB objects unless told), every result of the run, and what the run printed."""
    results, output = run_suite(lab, tmp_path, suite)
    w = by_kind(results, "rados_bench", object_size=size, phase="write")
    assert len(w) == 1 and w[0]["status"] == "ok", output
    return w[0], results, output


def _write_rate(lab: Lab, tmp_path: Path) -> tuple[float, float]:
    w, _, _ = _write(lab, tmp_path)
    return w["measurement"]["bytes_per_s"], cpu_busy(w)


QUICK = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
MIB = 2**20


def trimmed_quick(network: dict, disks: dict | None, workloads: bool = True, extra: tuple[dict, ...] = ()) -> str:
    q = yaml.safe_load(QUICK.read_text())
    assert q["baseline"]["network"]["hosts"] == "osd-hosts"
    baseline = {"network": {**q["baseline"]["network"], **network}}
    if disks is not None:
        baseline["disks"] = {**q["baseline"]["disks"], **disks}
    large = [w for w in q["workloads"] if w["type"] == "rados_bench" and w["object_size"] == "4MiB"]
    assert len(large) == 1
    suite = {"name": "quick-trimmed", "baseline": baseline, "pools": q["pools"],
             "workloads": (large if workloads else [{"type": "osd_bench", "total": "4MiB", "block_size": "4MiB"}])
             + list(extra)}
    return yaml.safe_dump(suite, sort_keys=False)


def describe(r: dict) -> str:
    p = r["test"]["params"]
    senders = p.get("senders") or [p.get("sender")]
    return f"{p['pattern']:<12} {', '.join(senders)} -> {', '.join(p['receivers'])} P{p['streams']}"


@pytest.fixture(scope="module")
def shared_public_run(multihost_lab, tmp_path_factory) -> tuple[dict, list[dict], str]:
    """The shared lab untouched (public network only, no throttle), one run of the quick suite's network baseline
    (1 stream, 1 s; the disk baseline is left out: the network terms are under test, and it costs 16 s here) and
    its 4 MiB write, seq and rand, plus a write of one op at a time: what the others compare with."""
    text = trimmed_quick({"streams": 1, "duration": "1s"}, None, extra=(ONE_AT_A_TIME,))
    return _write(multihost_lab, tmp_path_factory.mktemp("shared-write"), text)


@pytest.fixture(scope="module")
def shared_public_write(shared_public_run) -> tuple[float, float]:
    w = shared_public_run[0]
    return w["measurement"]["bytes_per_s"], cpu_busy(w)


def test_the_verdict_names_the_shaped_public_link_from_its_own_counters(shared_public_run):
    """Issue 16: the bottleneck from evidence. Every host's public link is shaped and there is no cluster network:
    the write fills the OSD hosts' links (each receives what is written once), and the evidence says which."""
    w = shared_public_run[0]
    a = w["analysis"]
    assert a["bottleneck"].startswith("public network (h"), why(w)
    (line,) = [ln for ln in a["evidence"] if ln.startswith("link h") and "lab shaping" in ln][:1]
    assert "of 200 Mbit/s" in line, a["evidence"]
    ev = w["evidence"]
    assert {d["host"] for d in ev["devices"]} == {"h1", "h2", "h3"}
    assert {(lk["host"], lk["network"]) for lk in ev["links"]} >= {("h1", "public"), ("h2", "public"), ("h3", "public")}
    assert ev["settings"]["osd.0"]["osd_op_queue"] in ("wpq", "mclock_scheduler"), ev["settings"]
    assert ev.get("other_load") is None, ev


def test_one_op_in_flight_is_named_latency_with_its_breakdown(shared_public_run):
    results = shared_public_run[1]
    (one,) = by_kind(results, "rados_bench", concurrency=1)
    a = one["analysis"]
    assert a["bottleneck"] == "latency (1 op in flight)", a
    b = a["breakdown"]
    parts = [b[k] for k in ("network_s", "queue_s", "replica_s", "commit_s", "other_s") if b.get(k) is not None]
    assert len(parts) >= 4 and abs(sum(parts) - b["client_s"]) < 0.05 * b["client_s"], b
    assert any(ln.startswith("Little's law: 1 op in flight") for ln in a["evidence"]), a["evidence"]


# Han's private network, measured where the links bind. 1 MiB objects and 128 PGs: the write spreads over enough
# objects and primaries that each host's share of primaries (which sets its links' load) is near a third.
NET_SUITE = """
name: gt-clusternet
pools:
  rep: {type: replicated, size: 3, pg_num: 128}
workloads:
  - {type: rados_bench, pool: rep, modes: [write], object_size: 1MiB, concurrency: 16, duration: 12s}
"""


def why(w: dict) -> str:
    """A failed verdict assertion's message: the bottleneck and each line of its evidence, in full."""
    a = w["analysis"]
    return "\n".join([f"bottleneck {a['bottleneck']!r}", *a.get("evidence", [])])


def primary_shares(w: dict) -> list[float]:
    """Each OSD's share of the client bytes written (its op_in_bytes: what it received as the primary)."""
    ins = [o["op_in_bytes"] or 0.0 for o in w["evidence"]["osds"]]
    assert len(ins) == 3 and sum(ins) > 0, w["evidence"]["osds"]
    return [x / sum(ins) for x in ins]


def link_ceiling(shares: list[float], cluster_network: bool) -> float:
    """The write rate the hosts' links allow, in units of one link's rate R, replica 3 on 3 hosts (each host holds
    every PG). A host that is primary for a share p of what is written receives p X from the client and sends 2 p X
    as replicas; it receives (1 - p) X as replicas from the others. Without a cluster network all of it crosses its
    public link (in: p X + (1 - p) X = X); with one, only the client's part does."""
    if cluster_network:
        return min(min(1 / p, 1 / (1 - p), 1 / (2 * p)) for p in shares)
    return min(min(1.0, 1 / (2 * p)) for p in shares)


def test_a_cluster_network_speeds_up_writes(multihost_lab, tmp_path):
    """Issue 23. Both runs must be bound by the links, and their evidence must say which link: the public one
    when it carries client data and replicas, the cluster one when replicas have a network of their own. Only then
    does the ratio follow from the links' arithmetic: x1.5 with primaries spread evenly (each host's cluster link
    carries 2/3 of what is written each way, its public link 1/3), less when one host is primary for more; the
    bound is computed from the primaries' measured shares (OSD counters). Even 128 PGs can leave one host primary
    for 44 % of the writes (x1.13 then): the cluster-network run is repeated on a new pool (a new placement) until
    the arithmetic allows x1.2, three times at most. Noise, measured on this 2-core VM (4 runs, CPUs 90-100 % busy
    with other work): each run reached 82-97 % of its links' ceiling (tbf counts frames, Ceph's own messages share
    the links), and the measured ratio was 0.97-1.12 of the arithmetic's, so it must reach 80 % of it."""
    shared_w, _, _ = _write(multihost_lab, tmp_path / "shared", NET_SUITE, size=MIB)
    d = tmp_path / "clusternet"
    lb = Lab(d / "lab")
    lb.up(osd_size_bytes=4 * 1024**3, rgw=False,
          multi=MultiHostSpec(hosts=3, public=parse_link(MH_RATE), cluster=parse_link(MH_RATE)))
    try:
        # two multi-host labs side by side: names, subnets and namespaces of their own
        mine, other = lb.info().topology, multihost_lab.info().topology
        assert mine["lab_id"] != other["lab_id"]
        assert {n["subnet"] for n in mine["networks"]}.isdisjoint(n["subnet"] for n in other["networks"])
        assert {h["netns"] for h in mine["hosts"]}.isdisjoint(h["netns"] for h in other["hosts"])
        r = R_BYTES * TCP_SHARE
        ceil_shared = link_ceiling(primary_shares(shared_w), False) * r
        for attempt in range(3):        # a new pool places its primaries anew
            sep_w, _, _ = _write(lb, tmp_path / f"separate-{attempt}", NET_SUITE, size=MIB)
            ceil_sep = link_ceiling(primary_shares(sep_w), True) * r
            if ceil_sep / ceil_shared >= 1.2:
                break
    finally:
        lb.down()
    # first, the links bind both runs, each the one the arithmetic expects
    assert shared_w["analysis"]["bottleneck"].startswith("public network (h"), why(shared_w)
    assert sep_w["analysis"]["bottleneck"].startswith("cluster network (h"), why(sep_w)
    shared, separate = (w["measurement"]["bytes_per_s"] for w in (shared_w, sep_w))
    expected = ceil_sep / ceil_shared
    print(f"\n1 MiB writes, replica 3, links of {MH_RATE}: {shared / MIB:.1f} MiB/s sharing the public network "
          f"(links allow {ceil_shared / MIB:.1f}, CPU {cpu_busy(shared_w):.0%}), {separate / MIB:.1f} MiB/s with a "
          f"cluster network (links allow {ceil_sep / MIB:.1f}, CPU {cpu_busy(sep_w):.0%}): x{separate / shared:.2f}, "
          f"the links' arithmetic x{expected:.2f}")
    assert shared <= 1.05 * ceil_shared and separate <= 1.05 * ceil_sep
    assert expected >= 1.2, "the primaries were too uneven for the cluster network to show"
    assert separate / shared >= 0.8 * expected


THROTTLED_OSD = 1
THROTTLE = "8MiB/s"
# the same write as the untouched lab's (the two are compared), then OSD bench
OSD_SUITE = WRITE_SUITE.replace("name: gt-write", "name: gt-osd") + \
    "  - {type: osd_bench, total: 16MiB, block_size: 4MiB, repeat: 3}\n"


def test_a_throttled_drive_is_flagged_and_slows_replicated_writes(multihost_lab, shared_public_write, tmp_path):
    env = {**os.environ}
    lab_dir = str(multihost_lab.dir)
    res = subprocess.run([*CLI, "lab", "throttle", "--dir", lab_dir, f"osd.{THROTTLED_OSD}={THROTTLE}"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    try:
        results, output = run_suite(multihost_lab, tmp_path / "after", OSD_SUITE)
    finally:
        res = subprocess.run([*CLI, "lab", "throttle", "--dir", lab_dir, "--clear", f"osd.{THROTTLED_OSD}"],
                             capture_output=True, text=True, timeout=60, env=env)
        assert res.returncode == 0, res.stderr
    osd = by_kind(results, "osd_bench")
    assert len(osd) == 1 and osd[0]["status"] == "ok", output
    assert osd[0]["measurement"]["extra"]["slow_osds"] == [f"osd.{THROTTLED_OSD}"], osd[0]["measurement"]["extra"]
    (note,) = [n for n in osd[0]["notes"] if " is slow" in n]
    assert note.startswith(f"osd.{THROTTLED_OSD} is slow: ") and "Mann-Whitney U" in note
    w_before = shared_public_write[0]
    w_after = by_kind(results, "rados_bench")[0]["measurement"]["bytes_per_s"]
    print(f"\n4 MiB writes: {w_before / 2**20:.1f} MiB/s, then {w_after / 2**20:.1f} MiB/s with osd.{THROTTLED_OSD} "
          f"at {THROTTLE}")
    assert w_after < 0.7 * w_before
    verdict = output[output.index("Verdict"):]
    assert f"osd.{THROTTLED_OSD}" in verdict and "disk" in verdict, verdict
    # the write's own verdict comes from the drive's throttle, read on its host, not from the OSD bench
    a = by_kind(results, "rados_bench")[0]["analysis"]
    assert a["bottleneck"].startswith(f"disk h{THROTTLED_OSD + 1}:loop"), a
    assert any(f"osd.{THROTTLED_OSD}" in ln and "cgroup throttle" in ln for ln in a["evidence"]), a["evidence"]


def test_quick_suite_names_the_network_for_large_reads_from_an_unshaped_client(shared_public_run):
    """Issue 14's "Verified by": the quick suite's network baseline (`hosts: osd-hosts`) is right on the lab."""
    _, results, output = shared_public_run
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
    for x in reads + by_kind(results, "rados_bench", phase="write", object_size=4 * MIB):
        a = x["analysis"]
        print(f"{x['test']['params']['phase']} 4 MiB: {x['measurement']['bytes_per_s'] / MIB:.1f} MiB/s, CPU busy "
              f"{cpu_busy(x):.0%}; {a['reason']}")
    for x in reads:
        a = x["analysis"]
        assert a["ceiling_bytes_per_s"] >= 0.85 * 3 * r, a           # the three hosts' links, not one pair's
        assert "network" in a["bottleneck"] and a["efficiency"] <= 1.0, a
        assert cpu_busy(x) < 0.8, "the CPUs, not the links, would be the limit"
    (write,) = by_kind(results, "rados_bench", phase="write", object_size=4 * MIB)
    # no cluster network: each host's public link carries the client's data and two replicas' worth
    assert abs(write["analysis"]["ceiling_bytes_per_s"] - 3 * r / 3) <= 0.10 * r, write["analysis"]
