"""OSD perf-counter deltas from real `perf dump` output of Ceph 16.2.15 (tests/fixtures/perf_dump/)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cephbench.evidence.counters import deltas

FIX = Path(__file__).parent.parent / "fixtures" / "perf_dump"


def _dump(name: str) -> dict:
    return json.loads((FIX / name).read_text())


def _pair(osd: int, suffix: str = "") -> tuple[dict, dict]:
    return (_dump(f"ceph16.2.15_osd{osd}_before_rados_write_4K{suffix}.json"),
            _dump(f"ceph16.2.15_osd{osd}_after_rados_write_4K{suffix}.json"))


def _bench_writes() -> int:
    for line in (FIX / "ceph16.2.15_rados_write_4K_between.txt").read_text().splitlines():
        if line.startswith("Total writes made:"):
            return int(line.split(":")[1])
    raise AssertionError("no 'Total writes made' in the rados bench output")


def test_write_ops_over_the_three_osds_match_what_rados_bench_wrote():
    counters = [deltas(*_pair(i), osd=i, host="lab") for i in range(3)]
    writes = _bench_writes()
    primary = sum(c.op_w for c in counters)
    # one op outside the bench (the pool's creation) may fall between the two dumps
    assert writes <= primary <= writes + 2
    # a size-3 pool: each write is applied on two replicas besides its primary
    assert sum(c.subop_w for c in counters) == pytest.approx(2 * primary, abs=4)
    assert all(c.missing == [] for c in counters)
    assert counters[0].host == "lab" and counters[2].osd == 2


def test_latencies_are_the_mean_of_the_deltas_in_seconds():
    before, after = _pair(0)
    c = deltas(before, after, osd=0)
    a, b = before["osd"]["op_w_latency"], after["osd"]["op_w_latency"]
    assert c.op_w_latency_s == pytest.approx((b["sum"] - a["sum"]) / (b["avgcount"] - a["avgcount"]))
    a, b = before["bluestore"]["kv_sync_lat"], after["bluestore"]["kv_sync_lat"]
    assert c.kv_sync_latency_s == pytest.approx((b["sum"] - a["sum"]) / (b["avgcount"] - a["avgcount"]))
    # the OSD's own write latency lies under the client's mean (rados bench: 10.2 ms) and above BlueStore's commit
    assert c.commit_latency_s < c.op_w_process_latency_s <= c.op_w_latency_s < 0.0102
    assert c.op_in_bytes == pytest.approx(c.op_w * 4096, rel=0.01)
    assert c.bluefs_db_used_bytes == after["bluefs"]["db_used_bytes"] and c.bluefs_slow_used_bytes == 0


FIXTURES = FIX.parent


def _fixture(path: str) -> dict:
    return json.loads((FIXTURES / path).read_text())


def _tell_pair(version: str, osd: int = 0) -> tuple[dict, dict]:
    return (_fixture(f"perf_dump/ceph{version}_osd{osd}_tell_before_rados_write_4K.json"),
            _fixture(f"perf_dump/ceph{version}_osd{osd}_tell_after_rados_write_4K.json"))


def _writes(text: str) -> int:
    """`Total writes made` of a rados bench text output, or `total_writes_made` of its JSON (Reef: a string)."""
    for line in text.splitlines():
        if line.startswith("Total writes made:"):
            return int(line.split(":")[1])
        if line.startswith("{"):
            return int(json.loads(line)["total_writes_made"])
    raise AssertionError("no writes in the rados bench output")


@pytest.mark.parametrize("version, osds, bench", [
    ("16.2.15", (0, 1), "perf_dump/ceph16.2.15_tell_rados_write_4K_between.txt"),
    ("18.2.7", (0,), "rados_bench/ceph18.2.7_json_write_4K_between.txt"),
])
def test_pacific_and_reef_names_give_the_whole_breakdown_through_their_schemas(version, osds, bench):
    """Real `ceph tell osd.N perf dump` around a 4 KiB rados bench write into a size-1 pool, and the OSD's own
    `perf schema`: Pacific's commit_lat and Reef's txc_commit_lat (and the rest) are found and every part of the
    latency breakdown is known."""
    from cephbench.analysis.breakdown import breakdown
    schema = _fixture(f"perf_schema/ceph{version}_osd0_tell.json")
    counters = [deltas(*_tell_pair(version, n), osd=n, schema=schema, source="ceph tell") for n in osds]
    writes = _writes((FIXTURES / bench).read_text())
    assert writes <= sum(c.op_w for c in counters) <= writes + 2
    for c in counters:
        assert c.missing == [] and c.source == "ceph tell"
        assert c.commit_latency_s and c.submit_latency_s and c.throttle_latency_s is not None
        assert 0 < c.kv_sync_latency_s < c.commit_latency_s < c.op_w_process_latency_s <= c.op_w_latency_s
        # without the schema, the names alone read the same
        assert deltas(*_tell_pair(version, c.osd), osd=c.osd, source="ceph tell") == c
    b = breakdown(max(c.op_w_latency_s for c in counters) * 1.2, counters, "write")
    assert None not in (b.network_s, b.queue_s, b.commit_s, b.kv_sync_s, b.device_wait_s, b.other_s)


def test_the_schema_finds_a_counter_renamed_again_by_its_nick():
    """A release that renames txc_commit_lat once more (a name no table lists) is still read, by its nick c_l."""
    before, after = _tell_pair("18.2.7")
    schema = _fixture("perf_schema/ceph18.2.7_osd0_tell.json")
    rename = lambda doc: {**doc, "bluestore": {("commit_lat_v2" if k == "txc_commit_lat" else k): v  # noqa: E731
                                               for k, v in doc["bluestore"].items()}}
    renamed = deltas(rename(before), rename(after), osd=0, schema=rename(schema))
    assert renamed.commit_latency_s == deltas(before, after, osd=0, schema=schema).commit_latency_s
    assert renamed.missing == []


def test_reefs_labelled_counter_dump_and_schema_read_as_its_perf_dump():
    """Reef's `counter dump`/`counter schema` (sections of [{labels, counters}]) give the same deltas as its
    `perf dump`: the counters the breakdown reads are unlabelled; the labelled messenger workers stay apart."""
    from cephbench.evidence.counters import flat
    cd_before = _fixture("counter_dump/ceph18.2.7_osd0_tell_before_rados_write_4K.json")
    cd_after = _fixture("counter_dump/ceph18.2.7_osd0_tell_after_rados_write_4K.json")
    schema = _fixture("counter_schema/ceph18.2.7_osd0_tell.json")
    c = deltas(cd_before, cd_after, osd=0, schema=schema)
    assert c.missing == [] and c.op_w > 4000 and c.commit_latency_s > 0
    assert "AsyncMessenger::Worker{id=0}" in flat(cd_after)
    # taken a moment apart from the perf dumps: the same counters, a few background ops more or less
    p = deltas(*_tell_pair("18.2.7"), osd=0)
    assert c.op_w == pytest.approx(p.op_w, abs=5)
    assert c.commit_latency_s == pytest.approx(p.commit_latency_s, rel=0.1)


def test_a_missing_counter_is_named_and_the_rest_still_read():
    before, _ = _pair(0)
    after = _dump("ceph16.2.15_osd0_after_rados_write_4K_missing_kv_flush_lat_subop_w_latency.json")
    c = deltas(before, after, osd=0)
    assert c.kv_flush_latency_s is None and c.subop_w_latency_s is None
    assert c.missing == ["osd.subop_w_latency", "bluestore.kv_flush_lat"]
    assert c.commit_latency_s is not None and c.op_w == deltas(*_pair(0), osd=0).op_w


def test_no_ops_in_between_gives_no_latency_and_is_not_missing():
    before, _ = _pair(0)
    c = deltas(before, before, osd=0)
    assert c.op_w == 0 and c.op_w_latency_s is None and c.missing == []


def test_an_osd_that_restarted_between_dumps_reads_as_missing_not_negative():
    before, after = _pair(0)
    c = deltas(after, before, osd=0)     # counters went backwards
    assert c.op_w is None and c.op_w_latency_s is None
    assert "osd.op_w" in c.missing and "osd.op_w_latency" in c.missing


def test_an_empty_or_strange_document_is_all_missing_not_a_traceback():
    c = deltas({}, {"osd": "x", "bluestore": {"commit_lat": 3}}, osd=5)
    assert c.osd == 5 and c.op_w is None and c.commit_latency_s is None
    assert len(c.missing) == 18


def _script_output(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def test_the_admin_socket_scripts_output_reads_per_osd_with_paths_and_config():
    """What evidence/asok.py's SCRIPT prints: the real dumps of the fixtures as its lines, one OSD unreachable."""
    from cephbench.evidence.asok import parse_lines
    config = (Path(__file__).parent.parent / "fixtures" / "config_show" /
              "ceph16.2.15_osd0_asok_config_show.json").read_text()
    text = _script_output([
        "sock.0 /var/run/ceph/ceph-osd.0.asok",
        "osd.0 " + json.dumps(_dump("ceph16.2.15_osd0_before_rados_write_4K.json")),
        "cfg.0 " + json.dumps(json.loads(config)),
        "osd.1 !/var/run/ceph/ceph-osd.1.asok: [Errno 2] No such file or directory",
        "osd.2 {not json",
        "ControlSocket /tmp/x already exists, disabling multiplexing",
    ])
    paths: dict[int, str] = {}
    dumps, errors, configs, _, _ = parse_lines(text, paths)
    assert set(dumps) == {0} and "osd" in dumps[0] and "bluestore" in dumps[0]
    assert errors == {1: "/var/run/ceph/ceph-osd.1.asok: [Errno 2] No such file or directory",
                      2: "its admin socket's answer is not a JSON object"}
    assert paths == {0: "/var/run/ceph/ceph-osd.0.asok"}
    assert configs[0]["osd_op_queue"] == "wpq"


def test_an_osd_whose_socket_cannot_be_read_is_a_note_and_the_others_still_count():
    from cephbench.evidence.counters import osd_evidence
    before = ({0: _dump("ceph16.2.15_osd0_before_rados_write_4K.json"),
               2: _dump("ceph16.2.15_osd2_before_rados_write_4K.json")}, {1: "connection refused"})
    after = ({0: _dump("ceph16.2.15_osd0_after_rados_write_4K.json"),
              2: _dump("ceph16.2.15_osd2_after_rados_write_4K.json")}, {1: "connection refused"})
    ev = osd_evidence(before, after, {0: "h1", 1: "h2", 2: "h3"})
    assert [o.osd for o in ev.osds] == [0, 2] and ev.osds[0].host == "h1" and ev.osds[0].op_w > 0
    assert ev.notes == ["osd.1 on h2: counters not read (connection refused)"]


def _fake_osd_socket(path: Path, answers: dict[str, bytes]):
    """A unix socket speaking the admin socket's protocol: a JSON command ended by NUL, answered by a 4-byte
    big-endian length and the document (the fixtures' real ones)."""
    import socket
    import struct
    import threading
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\0"):
                    data += conn.recv(4096)
                body = answers[json.loads(data[:-1])["prefix"]]
                conn.sendall(struct.pack(">I", len(body)) + body)
    threading.Thread(target=serve, daemon=True).start()
    return srv


def test_this_machines_osds_are_read_in_process_as_the_script_reads_them(tmp_path):
    """The local OSDs are asked by SCRIPT's own `read` inside cephbench (no process per reading); the script run
    as a process prints exactly the same lines, so both go through one parser."""
    import subprocess
    import sys
    from cephbench.evidence.asok import SCRIPT, local_reader, parse_lines
    dump = _dump("ceph16.2.15_osd0_before_rados_write_4K.json")
    config = json.loads((Path(__file__).parent.parent / "fixtures" / "config_show" /
                         "ceph16.2.15_osd0_asok_config_show.json").read_text())
    sock = tmp_path / "osd.0.asok"
    schema = _fixture("perf_schema/ceph16.2.15_osd0_tell.json")
    srv = _fake_osd_socket(sock, {"perf dump": json.dumps(dump).encode(), "config show": json.dumps(config).encode(),
                                  "perf schema": json.dumps(schema).encode()})
    try:
        # each OSD's paths to try, in order (sockpaths.candidates): osd.2's first is not there, its second answers
        words = [f"0={json.dumps([str(sock)])}", f"1={json.dumps([str(tmp_path / 'gone.asok')])}",
                 f"2={json.dumps([str(tmp_path / 'gone.asok'), str(tmp_path / 'run'), str(sock)])}"]
        (tmp_path / "run").mkdir()
        lines: list[str] = []
        local_reader()("perf+config+schema", words, lines.append)
        printed = subprocess.run([sys.executable, "-c", SCRIPT, "perf+config+schema", *words], capture_output=True,
                                 text=True, timeout=30).stdout
    finally:
        srv.close()
    # the same lines but each process's CPU reading (cpu.N): the fake OSD is this process, read twice; its PID is
    # the socket's peer
    assert [ln for ln in lines if not ln.startswith("cpu.")] == \
        [ln for ln in printed.splitlines() if not ln.startswith("cpu.")]
    assert [ln.split()[2] for ln in lines if ln.startswith("cpu.0 ")] == [str(os.getpid())]
    paths: dict[int, str] = {}
    dumps, errors, configs, schemas, stats = parse_lines(printed, paths)
    assert stats[0].split()[1] == str(os.getpid())
    assert dumps == {0: dump, 2: dump} and configs == {0: config, 2: config} and set(errors) == {1}
    assert schemas == {0: schema, 2: schema}
    assert "gone.asok" in errors[1] and paths == {0: str(sock), 2: str(sock)}


def test_the_lab_and_the_ssh_script_speak_the_admin_socket_through_one_client(tmp_path):
    """Issue 26: the protocol is written once (hosts/asokproto.py); the script shipped over ssh is built from
    that file's text, and the lab's asok_command reads the same fake socket through it."""
    from cephbench.hosts import asokproto
    from cephbench.evidence.asok import SCRIPT
    from cephbench.lab.asok import AsokError, asok_command
    assert SCRIPT.startswith(Path(asokproto.__file__).read_text())
    assert SCRIPT.count("socket.socket(") == 1
    dump = _dump("ceph16.2.15_osd0_before_rados_write_4K.json")
    sock = tmp_path / "osd.0.asok"
    srv = _fake_osd_socket(sock, {"perf dump": json.dumps(dump).encode()})
    try:
        assert asok_command(sock, "perf dump") == dump
    finally:
        srv.close()
    with pytest.raises(AsokError, match="gone.asok"):
        asok_command(tmp_path / "gone.asok", "perf dump", timeout_s=1)


def test_osds_whose_sockets_are_out_of_reach_are_read_through_ceph_tell_from_then_on(tmp_path):
    """osd.0 answers on its socket; osd.1's socket is gone, so `ceph tell` (here: the real answers of Pacific's
    OSDs, replayed) gives its counters, settings and schema, and the next reading asks it through `ceph tell` at once,
    without its settings again. osd.2 answers neither way: one note with both reasons."""
    from cephbench.suite.config import SshSettings
    from cephbench.evidence.osdread import OsdReader
    from cephbench.hosts.local import LocalHost
    from cephbench.hosts.remote import this_host
    answers = {"perf dump": _fixture("perf_dump/ceph16.2.15_osd1_tell_before_rados_write_4K.json"),
               "config show": _fixture("config_show/ceph16.2.15_osd0_tell_config_show.json"),
               "perf schema": _fixture("perf_schema/ceph16.2.15_osd0_tell.json")}
    told: list[tuple[int, str]] = []

    def tell(osd: int, prefix: str, timeout_s: float):
        told.append((osd, prefix))
        if osd == 2:
            raise OSError("osd down (ENXIO)")
        return answers[prefix]

    sock = tmp_path / "osd.0.asok"
    on_socket = {**answers, "perf dump": _dump("ceph16.2.15_osd0_before_rados_write_4K.json")}
    srv = _fake_osd_socket(sock, {prefix: json.dumps(doc).encode() for prefix, doc in on_socket.items()})
    try:
        reader = OsdReader(LocalHost(), SshSettings(), None, tell, 5.0,
                           paths={0: str(sock), 1: str(tmp_path / "gone.asok"), 2: str(tmp_path / "gone2.asok")})
        first = reader.read({this_host(): [0, 1, 2]})
        assert first.sources == {0: "admin socket", 1: "ceph tell"} and set(first.dumps) == {0, 1}
        assert "gone2.asok" in first.errors[2] and "osd down" in first.errors[2]
        assert set(reader.config) == {0, 1} and set(reader.schema) == {0, 1}
        assert sorted(told) == [(1, "config show"), (1, "perf dump"), (1, "perf schema"), (2, "perf dump")]
        told.clear()
        again = reader.read({this_host(): [0, 1, 2]})
        assert again.sources == first.sources and sorted(told) == [(1, "perf dump"), (2, "perf dump")]
    finally:
        srv.close()


def test_the_reader_finds_a_socket_the_cluster_config_names_and_says_so(tmp_path):
    """Issue 28 item 4: the socket is not where the host's ceph.conf says but under the run_dir the cluster's config
    gives the OSD (its real `config get` answer's shape); it is read there, asked once, and its counters' source
    says where it was found. An OSD whose config cannot be read keeps the other places."""
    from cephbench.suite.config import SshSettings
    from cephbench.evidence.osdread import OsdReader
    from cephbench.hosts.local import LocalHost
    from cephbench.hosts.remote import this_host
    from cephbench.evidence.sockpaths import options_set
    dump = _dump("ceph16.2.15_osd0_before_rados_write_4K.json")
    sock = tmp_path / "ceph-osd.0.asok"
    srv = _fake_osd_socket(sock, {"perf dump": json.dumps(dump).encode(), "config show": b"{}",
                                  "perf schema": b"{}"})
    asked: list[int] = []

    def osd_config(n: int):
        asked.append(n)
        if n == 1:
            raise OSError("access denied")
        return options_set({"run_dir": {"value": str(tmp_path), "section": "osd.0", "mask": {}}})

    conf = tmp_path / "ceph.conf"
    conf.write_text(f"[global]\nadmin socket = {tmp_path}/elsewhere/$cluster-$name.asok\n")
    try:
        reader = OsdReader(LocalHost(), SshSettings(), str(conf), None, 5.0, fsid="f", osd_config=osd_config)
        first = reader.read({this_host(): [0, 1]})
        assert first.sources == {0: "admin socket, cluster config"} and set(first.dumps) == {0}
        assert "elsewhere/ceph-osd.1.asok" in first.errors[1] and "/var/run/ceph/f/ceph-osd.1.asok" in first.errors[1]
        again = reader.read({this_host(): [0]})
        assert again.sources == first.sources and reader.paths[0] == str(sock) and sorted(asked) == [0, 1]
    finally:
        srv.close()
