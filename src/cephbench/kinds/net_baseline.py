"""The network baseline: iperf3 between hosts (not a suite workload: the model reads its figures by name); hooks in
drivers/iperf.py."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Sequence

from ..core.planned import Test
from .kind import Kind
from .schema import KindParams

if TYPE_CHECKING:      # the results' models are not imported with the kinds (issue 39: validate needs neither)
    from ..core.results import Result

KIND = Kind("net_baseline", "Baselines", "Network baseline", "baseline", None, {"send": "write"},
            ceiling_source=True, cluster=False, test_overhead_s=1.5, ops_counted=False,
            # `pattern`, `hosts`, `network` and `port` are words of the core too (the disk baseline's patterns, the
            # lab's hosts and networks): not its own
            own_params=("sender", "senders", "receivers", "streams"), parallel_param="streams")
DRIVER = "iperf"
MODEL = None


def params_model() -> type[KindParams]:
    """The model of one test's parameters, made when a test of this kind is first made (core/planned.py PARAMS_OF:
    two models' classes cost every start that imports the kinds about 8 M instructions, issue 39)."""
    class NetBaselineParams(KindParams):
        """One test's parameters (make_tests): a pattern between named hosts (`osd-hosts`: one test standing for all
        of them until the run names them), its streams, length and iperf3 port."""
        descriptor: ClassVar[Kind] = KIND
        pattern: str | None = None
        network: str | None = None                  # "cluster": over the OSD hosts' cluster network
        sender: str | None = None
        senders: list[str] | None = None            # many-to-one
        receivers: list[str] | None = None
        streams: int | None = None
        hosts: list[str] | str | None = None
        port: int | None = None

    return NetBaselineParams

OSD_HOSTS = "osd-hosts"     # the hosts keyword: this machine and every OSD host
EST_OSD_HOSTS = 3           # OSD hosts the plan's duration assumes before the cluster names them


# ---- the plan of a network baseline ---------------------------------------------------------

def patterns(hosts: list[str], streams: int, cluster: Sequence[str] = (),
             clients: Sequence[str] = (), first_is_client: bool = True) -> list[dict[str, Any]]:
    """Ordered pairs with 1 and N streams, then one-to-many from every sender (needs 2+ hosts), then all others to
    the first host at once (many-to-one, needs 3+ hosts: with two it is a pair), then ordered pairs of the OSD
    hosts in `cluster` over their cluster network (one stream: what one replica stream meets), then for each of
    the suite's `clients`: it to every OSD host at once (what its writes can send) and every OSD host to it at
    once (what its reads can receive). The OSD hosts are `hosts[1:]`, or all of `hosts` when the first is no
    client (`first_is_client` False: no load comes from this machine, so nothing is sent to it)."""
    out: list[dict[str, Any]] = []
    pairs = [(a, b) for a in hosts for b in hosts if a != b] or [(hosts[0], hosts[0])]
    for a, b in pairs:
        for n in sorted({1, streams}):
            out.append({"pattern": "pair", "sender": a, "receivers": [b], "streams": n})
    if len(hosts) > 1:
        for a in hosts:
            out.append({"pattern": "one-to-many", "sender": a, "receivers": [h for h in hosts if h != a],
                        "streams": 1})
    if len(hosts) > 2 and first_is_client:
        out.append({"pattern": "many-to-one", "senders": hosts[1:], "receivers": [hosts[0]], "streams": 1})
    for a in cluster:
        for b in cluster:
            if a != b:
                out.append({"pattern": "pair", "network": "cluster", "sender": a, "receivers": [b], "streams": 1})
    osd_hosts = hosts[1:] if first_is_client else hosts
    for c in clients:
        out.append({"pattern": "one-to-many", "sender": c, "receivers": osd_hosts, "streams": 1})
        out.append({"pattern": "many-to-one", "senders": osd_hosts, "receivers": [c], "streams": 1})
    return out


def flows(p: dict[str, Any]) -> list[tuple[str, str]]:
    """(sender, receiver) of each iperf3 client of a pattern; they all run at once."""
    if p["pattern"] == "many-to-one":
        return [(s, p["receivers"][0]) for s in p["senders"]]
    return [(p["sender"], r) for r in p["receivers"]]


def _label(p: dict[str, Any]) -> str:
    if p["pattern"] == "pair" and p.get("network") == "cluster":
        return f"{p['sender']}-to-{p['receivers'][0]}-cluster"
    if p["pattern"] == "pair":
        return f"{p['sender']}-to-{p['receivers'][0]}-P{p['streams']}"
    if p["pattern"] == "many-to-one":
        return f"all-to-{p['receivers'][0]}"
    return f"{p['sender']}-to-all"


def route(params: Mapping[str, Any]) -> str | None:
    """"sender -> receivers" of a test of its own (whatever the kind a run directory names); None: not one."""
    if "sender" in params or "senders" in params:
        return f"{params.get('sender') or ', '.join(params['senders'])} -> {', '.join(params.get('receivers') or [])}"
    return None


def parts(hosts: list[str], params: dict[str, Any]) -> int:
    """How many tests (patterns) a baseline between `hosts` makes with a test's streams (the plan's estimate of
    `osd-hosts` once the run names them)."""
    return len(patterns(hosts, params["streams"]))


def section_tests(section: Any, start_index: int) -> list[Test]:
    """The tests of a suite's baseline.network section (suite/config.py NetBaselineConfig)."""
    return make_tests(section.hosts, section.streams, section.duration, section.port, start_index=start_index)


def make_tests(hosts: list[str] | str, streams: int, duration_s: float, port: int | None, start_index: int = 1,
               group: str = "b002", workload: str = "baseline-net", part_of: str | None = None,
               cluster: Sequence[str] = (), clients: Sequence[str] = (), first_is_client: bool = True
               ) -> list[Test]:
    """One test per pattern; for `osd-hosts`, one test standing for all of them until the run names the hosts
    (`expand`), its duration that of a client and EST_OSD_HOSTS OSD hosts."""
    if isinstance(hosts, str):
        guess = len(patterns([f"h{i}" for i in range(EST_OSD_HOSTS + 1)], streams))
        return [Test(id=f"{start_index:03d}-{workload}-{hosts}", index=start_index, workload=workload,
                     kind="net_baseline", group=group,
                     params={"pattern": hosts, "hosts": hosts, "streams": streams, "duration_s": duration_s,
                             "port": port},
                     est_duration_s=guess * (duration_s + 1))]
    out = []
    for n, p in enumerate(patterns(hosts, streams, cluster, clients, first_is_client)):
        index = start_index + (0 if part_of else n)
        out.append(Test(id=f"{start_index + n:03d}-{workload}-{_label(p)}" if not part_of else
                        f"{part_of}-{_label(p)}", index=index, workload=workload, kind="net_baseline",
                        group=group, params={**p, "hosts": hosts, "duration_s": duration_s, "port": port,
                                             **({"part_of": part_of} if part_of else {})},
                        est_duration_s=duration_s + 1))
    return out


# ---- what its results tell the model ---------------------------------------------------------

def network_figures(net: list["Result"], client: str | None) -> dict[str, Any]:
    """Client send (one-to-many when measured), client receive (many-to-one when measured: reads come from every
    OSD host at once), per-host rate (median over ordered pairs, each at its best stream count), the cluster
    network's per-host rate (median of its pairs, when measured), loopback or not: the figures the efficiency model
    reads (analysis/facts.py), from its tests' own parameters."""
    ok = [r for r in net if r.status == "ok" and r.measurement and r.measurement.bytes_per_s]
    if not ok:
        return {}
    pairs = [r for r in ok if r.test.params.get("pattern") == "pair" and r.test.params.get("network") != "cluster"]
    cluster_pairs = [r for r in ok if r.test.params.get("pattern") == "pair"
                     and r.test.params.get("network") == "cluster"]
    fan = [r for r in ok if r.test.params.get("pattern") == "one-to-many"]
    fan_in = [r for r in ok if r.test.params.get("pattern") == "many-to-one"]
    loop = all(r.measurement.extra.get("loopback") for r in ok)
    hosts = ok[0].test.params.get("hosts") or []
    named = {r.test.params.get("sender") for r in ok} | {h for r in ok for h in r.test.params.get("receivers") or []}
    # a client host of the suite is measured in patterns of its own (patterns above), never among `hosts`
    me = client if client in hosts or client in named else (hosts[0] if hosts else None)
    best = lambda rs: max((r.measurement.bytes_per_s for r in rs), default=None)  # noqa: E731
    tx = best([r for r in fan if r.test.params.get("sender") == me]) or \
        best([r for r in pairs if r.test.params.get("sender") == me])
    rx = best([r for r in fan_in if r.test.params.get("receivers") == [me]]) or \
        best([r for r in pairs if me in r.test.params.get("receivers", [])])
    best_pair: dict[tuple[str, str], float] = {}          # each ordered pair at its best stream count
    for r in pairs:
        key = (r.test.params.get("sender"), (r.test.params.get("receivers") or [""])[0])
        best_pair[key] = max(best_pair.get(key, 0.0), r.measurement.bytes_per_s)
    per_host = statistics.median(best_pair.values()) if best_pair else None
    cluster = statistics.median(r.measurement.bytes_per_s for r in cluster_pairs) if cluster_pairs else None
    return {"tx": tx, "rx": rx, "per_host": per_host, "cluster_per_host": cluster, "loopback": loop}
