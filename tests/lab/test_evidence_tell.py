"""OSD counters and settings where the admin sockets are out of reach (issue 27 item 3): a cluster whose OSDs run in
containers or chroots, or on hosts without ssh, still gives every result its counters, through `ceph tell`."""

import os
from pathlib import Path

from cephbench.core.results import RunDir

from labcli import TINY_RADOS, run_cli, write_suite


def test_counters_come_through_ceph_tell_when_the_admin_sockets_are_out_of_reach(lab, tmp_path):
    """The lab's ceph.conf with its OSDs' admin sockets named where none is (as a container's socket is out of the
    host's reach): the run still reads every OSD's counters and settings, each marked as read by `ceph tell`, and
    no result says "counters not read"."""
    env = lab.env()
    conf = tmp_path / "ceph.conf"
    conf.write_text(Path(env["CEPH_CONF"]).read_text()
                    + f"\n[osd]\nadmin socket = {tmp_path}/no-such-dir/$cluster-$name.asok\n")
    suite = write_suite(tmp_path, TINY_RADOS.replace("modes: [write, rand]", "modes: [write]")
                        .replace("object_size: [64KiB, 1MiB]", "object_size: 64KiB"))
    res = run_cli(["run", suite, "--conf", conf, "--keyring", env["CEPH_KEYRING"], "--out", tmp_path / "run"],
                  {k: v for k, v in os.environ.items() if k not in ("CEPH_CONF", "CEPH_KEYRING")})
    assert res.returncode == 0, res.stderr + res.stdout
    results, bad = RunDir.open(tmp_path / "run").results()
    assert not bad and len(results) == 1 and results[0].status == "ok", [r.error for r in results]
    ev = results[0].evidence
    assert ev is not None and sorted(o.osd for o in ev.osds) == list(range(lab.info().osds)), ev
    assert not [n for n in ev.notes if "counters not read" in n], ev.notes
    assert {o.source for o in ev.osds} == {"ceph tell"}, [(o.osd, o.source) for o in ev.osds]
    assert sum(o.op_w or 0 for o in ev.osds) >= results[0].measurement.ops_total * 0.9
    assert all(o.commit_latency_s and o.missing == [] for o in ev.osds if o.op_w), ev.osds
    assert results[0].analysis.breakdown is not None and results[0].analysis.breakdown.commit_s
    # the settings too: every OSD's scheduler
    assert {f"osd.{o.osd}" for o in ev.osds} <= set(ev.settings), ev.settings
    assert all(s["osd_op_queue"] in ("wpq", "mclock_scheduler") for s in ev.settings.values()), ev.settings
