"""The OSD hosts' devices and links from Prometheus's answers (evidence/promanswer.py), on answers captured from the
multi-host lab's Prometheus 2.42 during one rados bench write (tests/fixtures/README.md), and the same test's ssh
watch of h1: the two sources agree, and the rules read both alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.analysis.utilization import device_finding, link_finding
from cephbench.suite.config import Settings
from cephbench.core.errors import ParseError
from cephbench.evidence import promanswer as pa
from cephbench.evidence.hoststream import loads, parse_stream, watch_targets
from cephbench.core.names import shown_url, split_url

FIX = Path(__file__).parent.parent / "fixtures" / "prometheus"
START, END = 1795657429.826, 1795657443.903      # the captured test's window (query_range start and end)


def answer(name: str) -> str:
    return (FIX / f"prom2.42_{name}.json").read_text()


def figures() -> pa.PromFigures:
    steps = [START + i for i in range(int(END - START) + 1)]
    fig = pa.PromFigures(start_unix_s=START, steps=steps, resolution_s={"h1": 1.0, "h2": 1.0, "h3": 1.0})
    fig.disk = {m: pa.parse_answer(answer(f"lab3_write_{m}")) for m in pa.DISK_RATES.values()}
    fig.net = {m: pa.parse_answer(answer(f"lab3_write_{m}")) for m in pa.NET_RATES.values()}
    fig.speed = pa.parse_answer(answer("lab3_write_node_network_speed_bytes"))
    fig.address_info = pa.parse_answer(answer("lab3_node_network_address_info"))
    return fig


def metadata() -> list:
    return json.loads((FIX / "ceph16.2.15_lab3_osd_metadata.json").read_text())


def test_a_matrix_answer_reads_as_series_with_their_labels():
    series = pa.parse_answer(answer("lab3_write_node_disk_written_bytes_total"))
    h1 = [s for s in series if s.labels == {"device": "loop0", "instance": "h1", "job": "node"}]
    assert len(h1) == 1 and len(h1[0].values) == 15
    assert h1[0].values[4] == (1795657433.826, 21069824.0)


def test_a_vector_answer_an_empty_one_and_an_error():
    info = pa.parse_answer(answer("lab3_node_network_address_info"))
    assert {(s.labels["instance"], s.labels["address"], s.labels["device"]) for s in info
            if s.labels["scope"] == "global"} == {("h1", "198.18.0.1", "pub0"), ("h2", "198.18.0.2", "pub0"),
                                               ("h3", "198.18.0.3", "pub0")}
    assert pa.parse_answer(answer("empty_result")) == []
    with pytest.raises(ParseError, match="bad_data: 1:37: parse error: missing unit character in duration"):
        pa.parse_answer(answer("error_bad_query"))
    for bad in ("", "[]", '{"status": "success"}', "<html>", '{"status":"success","data":{"resultType":"matrix",'
                '"result":[{"metric":{},"values":[["x","1"]]}]}}'):
        with pytest.raises(ParseError):
            pa.parse_answer(bad)


def test_targets_give_each_instance_its_scrape_interval():
    assert pa.scrape_intervals(answer("lab3_targets")) == {"h1": 1.0, "h2": 1.0, "h3": 1.0, "198.18.0.1:9283": 1.0}
    assert pa.parse_duration_s("1m30s") == 90 and pa.parse_duration_s("500ms") == 0.5
    assert pa.parse_duration_s("15") is None and pa.parse_duration_s("") is None


def test_an_instance_names_its_host_alone_or_with_a_port_or_domain():
    hosts = ["h1", "node1"]
    assert pa.instance_host("h1", hosts) == "h1" and pa.instance_host("node1:9100", hosts) == "node1"
    assert pa.instance_host("node1.example.com:9100", hosts) == "node1"
    assert pa.instance_host("h10", hosts) is None and pa.instance_host("node12:9100", hosts) is None


def test_devices_and_links_of_each_osd_host_come_with_their_source_and_resolution():
    fig, targets = figures(), watch_targets(metadata())
    for host, device in (("h1", "loop0"), ("h2", "loop1"), ("h3", "loop2")):
        devs, notes = pa.device_loads(host, targets[host][0], fig)
        assert notes == [] and [d.device for d in devs] == [device]
        d = devs[0]
        assert d.source == "prometheus" and d.resolution_s == 1.0 and len(d.busy) == len(fig.steps)
        assert max(d.write_bytes_per_s) > 10e6 and all(0 <= b <= 1 for b in d.busy)
        links, notes = pa.link_loads(host, targets[host][1], {}, fig)
        assert notes == [] and [(k.iface, k.network, k.speed_bits_per_s) for k in links] == \
            [("pub0", "public", 200e6)]
        assert links[0].source == "prometheus" and max(links[0].tx_bytes_per_s) > 1e6


def test_prometheus_and_the_ssh_watch_agree_on_the_same_test_within_10_percent():
    """h1's device and link over the same test, from Prometheus and from its ssh watch: their busy seconds carry the
    same bytes, and the rules name the same share of the link."""
    fig, meta = figures(), metadata()
    devs_w, wanted = watch_targets(meta)["h1"]
    ssh_devs, ssh_links, _ = loads("h1", parse_stream((FIX / "ssh_watch_lab3_write_h1.txt").read_text()), devs_w,
                                   wanted)
    prom_devs, _ = pa.device_loads("h1", devs_w, fig)
    prom_links, _ = pa.link_loads("h1", wanted, {}, fig)
    written = sum(ssh_devs[0].write_bytes_per_s), sum(prom_devs[0].write_bytes_per_s)
    assert abs(written[1] - written[0]) / written[0] < 0.10, written
    sent = sum(ssh_links[0].tx_bytes_per_s), sum(prom_links[0].tx_bytes_per_s)
    assert abs(sent[1] - sent[0]) / sent[0] < 0.10, sent
    got = [link_finding(k, set()) for k in (ssh_links[0], prom_links[0])]
    assert got[0] is not None and got[1] is not None
    assert got[0].bottleneck == got[1].bottleneck == "public network (h1 pub0)"
    assert device_finding(prom_devs[0]) is not None


def test_a_host_without_series_is_a_note_and_its_interface_can_come_from_the_metadata():
    fig = figures()
    devs_w, wanted = watch_targets(metadata())["h1"]
    devs, notes = pa.device_loads("h9", devs_w, fig)
    assert devs == [] and notes == ["device h9:loop0 (data of osd.0): Prometheus has no node-exporter series of it"]
    fig.address_info = []
    links, notes = pa.link_loads("h1", wanted, {}, fig)
    assert links == [] and "does not say which interface holds it" in notes[0]
    links, notes = pa.link_loads("h1", wanted, {"198.18.0.1": "pub0"}, fig)
    assert notes == [] and links[0].iface == "pub0"


def test_a_url_with_credentials_is_written_without_them():
    assert split_url("http://u:p%40ss@prom:9090/") == ("http://prom:9090", "dTpwQHNz")
    assert shown_url("https://u:secret@prom.example:9090/x") == "https://***@prom.example:9090/x"
    assert shown_url("http://prom:9090") == "http://prom:9090"
    s = Settings(prometheus="http://u:secret@prom:9090")
    assert "secret" not in json.dumps(s.model_dump(mode="json")) and s.prometheus == "http://u:secret@prom:9090"
    with pytest.raises(ValueError) as exc:
        Settings(prometheus="prom:9090")
    assert "http://" in str(exc.value)


@pytest.mark.parametrize("url", ["ftp://u:s3cret@prom:9090", "http://u:s3cret@prom:99999", "u:s3cret@prom"])
def test_a_bad_url_is_one_line_that_does_not_repeat_its_credentials(url):
    from cephbench.suite.config import parse_suite
    from cephbench.core.errors import UserError
    with pytest.raises(UserError) as exc:
        parse_suite({"name": "x", "settings": {"prometheus": url}, "workloads": [{"name": "o", "type": "osd_bench"}]},
                    "suite.yaml")
    text = str(exc.value) + str(getattr(exc.value, "hint", "")) + str(getattr(exc.value, "where", ""))
    assert "settings.prometheus" in text and "s3cret" not in text and "\n" not in text


@pytest.fixture
def replayed_prometheus():
    """A local HTTP server answering as the lab's Prometheus answered (the captured answers, as they came): what
    read_hosts asks, and how it reads the answers, without a lab."""
    import re
    import threading
    import urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    asked: list[str] = []

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query).get("query", [""])[0]
            asked.append(self.headers.get("Authorization", "") + " " + url.path + " " + query)
            metric = re.search(r"node_\w+", query)
            at = float(urllib.parse.parse_qs(url.query).get("time", ["0"])[0])
            name = {"/api/v1/targets": "lab3_targets", "/api/v1/status/buildinfo": "buildinfo",
                    "/api/v1/query": "lab3_throttled_cephbench_disk_limit" if query.startswith(pa.LIMIT)
                    else f"lab3_osd1_throttled_toolbox_process_cpu_{'start' if at <= START else 'end'}"
                    if pa.PROCESS_CPU in query else "lab3_node_network_address_info"}.get(url.path) or \
                f"lab3_write_{metric.group(0) if metric else 'none'}"
            path = FIX / f"prom2.42_{name}.json"
            body = path.read_bytes() if path.exists() else b'{"status":"error","error":"no such fixture"}'
            self.send_response(200 if path.exists() else 400)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://user:pw@127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def test_read_hosts_asks_each_counter_over_the_window_and_notes_a_host_without_series(replayed_prometheus):
    from cephbench.evidence.prometheus import Prometheus, read_hosts
    url, asked = replayed_prometheus
    prom = Prometheus(url)
    prom.check()
    meta = metadata() + [{"id": 9, "hostname": "h9", "bluestore_bdev_devices": "sdz",
                          "front_addr": "[v2:10.9.9.9:6800/1,v1:10.9.9.9:6801/1]"}]
    devs, links, notes = read_hosts(prom, meta, ["h1", "h2", "h3", "h9"], START, END)
    assert sorted(d.host for d in devs) == ["h1", "h2", "h3"] and sorted(k.host for k in links) == ["h1", "h2", "h3"]
    assert all(f.source == "prometheus" and f.resolution_s == 1.0 for f in devs + links)
    assert notes == [f"h9: Prometheus at http://***@127.0.0.1:{url.rsplit(':', 1)[1]} has no node-exporter series "
                     "of this OSD host: its devices and links were not measured"]
    ranges = [a for a in asked if "/api/v1/query_range" in a]
    assert len(ranges) == len(pa.DISK_RATES) + len(pa.NET_RATES) + 1
    assert all(a.startswith("Basic dXNlcjpwdw== ") for a in asked)      # user:pw, in the header only
    # each host by its name, or by one of its addresses in `ceph osd metadata` (an operator's Prometheus labels a
    # target address:port unless relabelled)
    by_name = 'h1(:.*|\\\\..*)?|h2(:.*|\\\\..*)?|h3(:.*|\\\\..*)?|h9(:.*|\\\\..*)?|'
    by_address = '10\\\\.9\\\\.9\\\\.9(:.*)?|198\\\\.18\\\\.0\\\\.1(:.*)?|198\\\\.18\\\\.0\\\\.2(:.*)?|198\\\\.18\\\\.0\\\\.3(:.*)?'
    assert f'irate(node_disk_written_bytes_total{{instance=~"{by_name}{by_address}",device=~"loop0|loop1|loop2|sdz"}}' \
           '[4s])' in " ".join(ranges)
    # the drives' limits, one instant query for the same devices. The answer is another lab's, whose loop1 and loop2
    # were throttled, each published by every host (one kernel's devices): here h2's loop1 and h3's loop2
    assert [a.split(" ", 3)[3] for a in asked if "/api/v1/query " in a and pa.LIMIT in a] == \
        [f'cephbench_disk_limit{{instance=~"{by_name}{by_address}",device=~"loop0|loop1|loop2|sdz"}}']
    limited = {(d.host, d.device): (d.limit_write_bytes_per_s, d.limit_write_iops) for d in devs
               if d.limit_write_bytes_per_s or d.limit_write_iops}
    assert limited == {("h2", "loop1"): (4 * 2**20, 150), ("h3", "loop2"): (8 * 2**20, None)}, limited


def test_an_unreachable_prometheus_is_one_line_without_its_credentials():
    import socket
    from cephbench.core.errors import UserError
    from cephbench.evidence.prometheus import Prometheus
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]           # bound, not listening: refused
        with pytest.raises(UserError) as exc:
            Prometheus(f"http://u:s3cret@127.0.0.1:{port}", timeout_s=2).check()
    text = str(exc.value)
    assert "s3cret" not in text and "\n" not in text and f"http://***@127.0.0.1:{port}" in text
    assert exc.value.where == "settings.prometheus"


def test_a_host_ssh_does_not_reach_gets_its_devices_and_links_from_prometheus_and_a_note_for_its_cpu():
    """A toolbox run (no ssh) with settings.prometheus: each OSD host's watch fails as ssh does (the lab's words)
    and Prometheus gives its devices and links; its note must not say they were not measured, nor suggest the
    setting the run already has (the verdict benchmark's Prometheus runs said both)."""
    from cephbench.evidence.prometheus import in_place_of_watch
    from cephbench.evidence.watch import Watched, not_watched
    said = "ssh: Could not resolve hostname h1: Name or service not known\n"
    seen = Watched(notes=[not_watched("h1", said, parse_stream(said))])
    devs_w, wanted = watch_targets(metadata())["h1"]
    devs, _ = pa.device_loads("h1", devs_w, figures())
    links, _ = pa.link_loads("h1", wanted, {}, figures())
    in_place_of_watch(seen, ["h1"], devs, links, [])
    assert seen.devices == devs and seen.links == links
    assert len(seen.notes) == 1 and seen.notes[0].startswith("h1: not watched (ssh: Could not resolve hostname h1")
    assert "devices, links" not in seen.notes[0] and "settings.prometheus" not in seen.notes[0], seen.notes
    assert "its CPU is not measured" in seen.notes[0] and "settings.ssh" in seen.notes[0], seen.notes


def test_a_published_drive_limit_is_the_devices_limit_as_the_watch_reads_it_from_the_cgroup():
    """The lab's node-exporters publish each throttled drive (lab/monitoring.py): `lab up --hosts 3 --db-device 1GiB
    --osd-throttle osd.0.db=4MiB/s,150iops --osd-throttle osd.1=8MiB/s --monitoring`, h1:loop1 osd.0's DB device and
    h2:loop2 osd.1's data drive. Each host's node-exporter publishes the one kernel's drives: a host's own are
    those `ceph osd metadata` names (the reader asks for no other), and a host Prometheus does not know gets
    nothing."""
    series = pa.parse_answer((FIX / "prom2.42_lab3_throttled_cephbench_disk_limit.json").read_bytes(), pa.LIMIT)
    assert pa.device_limits("h1", "loop1", series) == {
        "limit_read_bytes_per_s": 4 * 2**20, "limit_write_bytes_per_s": 4 * 2**20,
        "limit_read_iops": 150, "limit_write_iops": 150}
    assert pa.device_limits("h2", "loop2", series) == {"limit_read_bytes_per_s": 8 * 2**20,
                                                       "limit_write_bytes_per_s": 8 * 2**20}
    assert pa.device_limits("h1", "loop0", series) == {} and pa.device_limits("h9", "loop1", series) == {}


def _process_cpu(which: str) -> list:
    return pa.parse_answer((FIX / f"prom2.42_lab3_osd1_throttled_toolbox_process_cpu_{which}.json").read_bytes())


def test_each_osds_cpu_is_its_process_exporter_groups_counter_at_the_end_less_at_the_start():
    """The lab's process-exporters (a group `osd.N` per OSD, lab/monitoring.py) read by Prometheus at the start of
    a toolbox run's 1 MiB write (osd.1's drive throttled) and one scrape after its end, 7 s later. The run recorded
    0.33, 0.33 and 0.34 CPU-s for osd.0, osd.1 and osd.2 (the two readings' 10 ms ticks, rounded)."""
    cpu, notes = pa.osd_cpu_seconds(_process_cpu("start"), _process_cpu("end"), {0: "h1", 1: "h2", 2: "h3"})
    assert notes == []
    assert cpu == pytest.approx({0: 0.33, 1: 0.33, 2: 0.33})


def test_another_hosts_osd_of_the_same_id_is_another_clusters_and_a_missing_one_is_one_note():
    start, end = _process_cpu("start"), _process_cpu("end")
    # the same answers, with osd.0's series under h9 (another cluster's osd.0 on another host)
    moved = [pa.Series({**s.labels, "instance": "h9:9256"}, s.values) if s.labels["groupname"] == "osd.0" else s
             for s in end]
    cpu, notes = pa.osd_cpu_seconds(start, moved, {0: "h1", 1: "h2", 2: "h3", 5: "h3"})
    assert set(cpu) == {1, 2}
    assert len(notes) == 1 and notes[0].startswith("the CPU of osd.0 on h1, osd.5 on h3: Prometheus has no "
                                                   "namedprocess_namegroup_cpu_seconds_total"), notes
    # an exporter restarted during the test: its counter went back, and what the OSD spent is unknown
    back = [pa.Series(s.labels, [(t, 0.01) for t, _ in s.values]) for s in end]
    cpu, notes = pa.osd_cpu_seconds(start, back, {1: "h2"})
    assert cpu == {} and notes == ["osd.1 on h2: CPU not told: its namedprocess_namegroup_cpu_seconds_total went "
                                   "back during the test"]


def test_read_osd_cpu_asks_for_the_groups_of_the_osds_it_lacks_at_both_ends(replayed_prometheus):
    from cephbench.evidence.prometheus import Prometheus, read_osd_cpu
    url, asked = replayed_prometheus
    cpu, notes = read_osd_cpu(Prometheus(url), {0: "h1", 1: "h2", 2: "h3"}, START, END)
    queries = [a.split(" ", 3)[3] for a in asked if "/api/v1/query " in a]
    assert queries == ['sum by (instance, groupname) (namedprocess_namegroup_cpu_seconds_total'
                       '{groupname=~"osd\\\\.(0|1|2)"})'] * 2, queries
    assert cpu == pytest.approx({0: 0.33, 1: 0.33, 2: 0.33}) and notes == []


def test_osd_cpu_read_before_the_scrape_after_the_end_says_it_may_be_short(replayed_prometheus):
    """A test that ended just now: the scrape after its end (every 1 s here) has not come, so the end's reading is
    the last scrape before it, which may miss the test's last second; the figures come with a note saying so."""
    import time
    from cephbench.evidence.prometheus import Prometheus, read_osd_cpu
    url, _ = replayed_prometheus
    cpu, notes = read_osd_cpu(Prometheus(url), {0: "h1", 1: "h2", 2: "h3"}, START, time.time())
    assert cpu and len(notes) == 1 and "had not come" in notes[0], notes
