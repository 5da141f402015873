"""CPU per operation (issue 29 item 4): each OSD process's CPU time and the client's over a test, over the ops they
served, recorded in the result's evidence and shown beside throughput."""

import os

from cephbench.core.results import RunDir

from labcli import TINY_RADOS, run_cli, write_suite


def test_a_tiny_rados_write_records_cpu_per_op_for_every_osd_and_the_client(lab, tmp_path):
    env = lab.env()
    suite = write_suite(tmp_path, TINY_RADOS.replace("modes: [write, rand]", "modes: [write]")
                        .replace("object_size: [64KiB, 1MiB]", "object_size: 64KiB"))
    res = run_cli(["run", suite, "--conf", env["CEPH_CONF"], "--keyring", env["CEPH_KEYRING"],
                   "--out", tmp_path / "run"], {**os.environ, **env})
    assert res.returncode == 0, res.stderr + res.stdout
    results, bad = RunDir.open(tmp_path / "run").results()
    assert not bad and len(results) == 1 and results[0].status == "ok", [r.error for r in results]
    ev = results[0].evidence
    assert ev is not None, results[0]
    by = {c.who: c for c in ev.cpu}
    assert set(by) == {f"osd.{n}" for n in range(lab.info().osds)} | {"client"}, (ev.cpu, ev.notes)
    for c in ev.cpu:
        assert c.cpu_ms_per_op and c.cpu_ms_per_op > 0 and c.cpu_s_per_gib and c.cpu_s_per_gib > 0, c
        assert c.source == "/proc/PID/stat here", c
    # each OSD's PID is the process that answered its admin socket: a ceph-osd of this lab
    for n in range(lab.info().osds):
        cmdline = (f"/proc/{by[f'osd.{n}'].pid}/cmdline")
        words = open(cmdline).read().split("\0")
        assert "ceph-osd" in words[0] and words[words.index("-i") + 1] == str(n), words
        assert str(lab.dir) in " ".join(words), words
    # the client's ops are those the OSDs served
    assert by["client"].ops == sum((o.op_r or 0) + (o.op_w or 0) for o in ev.osds)
    out = res.stdout
    assert "CPU per operation" in out and "client CPU-ms/op" in out and "still hold per process" in out, out
    md = (tmp_path / "run" / "report.md").read_text()
    assert "**CPU per operation**" in md and "osd.0 " in md, md
    assert "CPU per operation" in (tmp_path / "run" / "report.html").read_text()
