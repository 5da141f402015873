"""The rgw kind on client hosts: a client's document out of the stream `at` brings back (real output of loadgen
under `at` on a lab client, tests/fixtures/loadgen/..._at_c1.txt), each client's buckets, its measured window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.core.errors import ParseError
from cephbench.drivers.rgw import driver
from cephbench.drivers.rgw.parse import parse, split_document
from cephbench.hosts.fanout import TimedResult, split_markers
from cephbench.hosts.local import CommandResult

STREAM = Path(__file__).resolve().parents[1] / "fixtures" / "loadgen" / "loadgen0.1_rgw16.2.15_s3_get_4K_t4_at_c1.txt"


def tool_output() -> str:
    return split_markers(STREAM.read_text())[0]


def test_the_document_comes_out_of_a_client_s_stream_whole():
    doc, rest = split_document(tool_output())
    assert doc is not None
    m = parse(doc)
    assert m.op == "get" and m.ops_total and m.ops_total > 1000 and m.latency.percentiles_ns["99"] > 0
    assert json.loads(doc)["params"]["output"] == "-"
    # loadgen's messages stay outside, in order; nothing of the document among them
    assert rest.splitlines() == ["cephbench-loadgen: prefill: writing 32 objects over 1 bucket(s)",
                                 *[ln for ln in rest.splitlines() if "progress t=" in ln]]
    assert len(rest.splitlines()) == 4 and "{" not in rest and "hdr_lat" not in rest


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.93])
def test_a_message_landing_inside_the_document_even_mid_line_is_set_aside(cut):
    """ssh carries stdout and stderr apart: a stderr line may reach the file between two pieces of the document."""
    text = tool_output()
    doc, _ = split_document(text)
    at = text.index(doc) + int(len(doc) * cut)
    line = "cephbench-loadgen: cleanup incomplete: 1 object(s) and bucket(s) [] left (x)\n"
    got, rest = split_document(text[:at] + line + text[at:])
    assert got == doc
    assert rest.endswith(line)


def test_no_document_leaves_everything_as_messages():
    text = "cephbench-loadgen: cannot connect to http://198.18.1.3:9: connection refused (--endpoint): is RGW running?\n"
    assert split_document(text) == (None, text)
    doc, _ = split_document(tool_output()[:5000])      # cut off: the JSON's last line never came
    assert doc is None
    with pytest.raises(ParseError):
        parse(split_document(tool_output()[:-3] + "}\n")[0] or "")


def test_client_tags_are_bucket_name_parts_unique_and_short():
    assert driver.client_tags(["c1", "c2"]) == ["c1", "c2"]
    assert driver.client_tags(["Node-1.Example", "node-2"]) == ["node-1-example", "node-2"]
    # two names that spell the same, or one too long for a bucket name: numbered instead
    assert driver.client_tags(["a.b", "a_b"]) == ["c0", "c1"]
    assert driver.client_tags(["client-" + "x" * 20, "c2"]) == ["c0", "c1"]


def test_commands_on_a_client_use_its_copy_and_stdout(tmp_path):
    cmd = driver.LoadgenCommand(binary="/home/u/.cache/cephbench/bin/cephbench-loadgen-abc", protocol="s3",
                                endpoint="http://198.18.1.3:7480", workload="put", object_size=4096, concurrency=4,
                                bucket_prefix="cephbench-r-g001-put-c1-i0-", output=None, duration_s=2)
    argv = cmd.argv()
    assert argv[0].endswith("cephbench-loadgen-abc")
    assert argv[argv.index("--output") + 1] == "-"
    assert not [a for a in argv if "KEY" in a.upper()]


def test_the_measured_window_is_the_document_s_on_this_machine_s_clock():
    m = parse(split_document(tool_output())[0] or "")
    start_ns = m.extra["start_unix_ns"]
    res = CommandResult(["x"], 0, "", "", 4.0)
    t = TimedResult(res, "c1", start_ns / 1e9 - 0.5, start_ns / 1e9 + m.duration_s + 0.2, 0.1)
    # c1's clock is 2 s ahead of this machine's
    start, end = driver.measured_window(m, t, 2_000_000_000)
    assert start == pytest.approx(start_ns / 1e9 - 2.0)
    assert end == pytest.approx(start + m.duration_s)
    # a document without its start: the process's own times
    m.extra.pop("start_unix_ns")
    assert driver.measured_window(m, t, 2_000_000_000) == (t.start_unix_s, t.end_unix_s)
