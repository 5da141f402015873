"""The live progress lines (rundirs/progress.py): operations named per kind, p99 where the tool gives percentiles, a
warning marked, and every line whole when the output is a file or a pipe."""

import io
import time

from rich.console import Console

from conftest import FIXTURES
from cephbench.drivers import rados_bench as rb
from cephbench.drivers.rgw.parse import parse as parse_loadgen
from cephbench.rundirs.progress import ConsoleEvents
from cephbench.core.results import Result, Test

LONG_ID = "014-rgw-put-4KiB-t16-object_size4MiB-concurrency64-pool_profile_ec42-variant_rgw_thread_pool_512-r3"


def a_test(test_id: str, kind: str, phase: str) -> Test:
    return Test(id=test_id, index=1, workload="w", kind=kind, group="g1", params={"phase": phase})


def events(width: int = 40) -> tuple[ConsoleEvents, io.StringIO]:
    buf = io.StringIO()
    tests = [Test(id=f"00{i}-t", index=i, workload="w", kind="rados_bench", group="g1", params={},
                  est_duration_s=5.0) for i in (1, 2)]
    return ConsoleEvents(Console(file=buf, width=width, color_system=None), tests), buf


def test_finished_lines_name_the_kinds_operations_and_stay_whole_off_a_terminal():
    ev, buf = events()
    put = parse_loadgen((FIXTURES / "loadgen" / "loadgen0.1_rgw16.2.15_s3_put_4K_t8.json").read_text())
    rgw = a_test(LONG_ID, "rgw", "put")
    with ev:
        ev.test_started(rgw)
        ev.test_finished(Result(test=rgw, status="ok", started_unix=time.time(), duration_s=3, measurement=put))
        seq = a_test("002-rados-seq-4MiB-t16", "rados_bench", "seq")
        ev.test_started(seq)
        m = rb.parse((FIXTURES / "rados_bench" / "ceph16.2.15_seq_4M.txt").read_text(), "seq")
        ev.test_finished(Result(test=seq, status="ok", started_unix=time.time(), duration_s=2, measurement=m,
                                warnings=["seq ran out of objects"]))
    lines = buf.getvalue().splitlines()
    assert lines[0] == f"[1/2] {LONG_ID} ..."                  # 40 columns wide, never wrapped
    assert lines[1] == f"  ok     {LONG_ID}  0.6 MiB/s, 142 req/s, p99 150 ms"
    assert lines[3] == "  ok !   002-rados-seq-4MiB-t16  635.6 MiB/s, 159 objects/s"     # no percentiles: no p99


def test_the_live_line_names_the_operations_of_the_running_test():
    ev, _ = events()
    ev.current, ev.current_started = a_test("004-rgw-get-4KiB-t16", "rgw", "get"), time.monotonic()
    ev.live(ev.current, 4.5 * 2**20, 1190.0)
    line = ev._render()
    assert line.plain.endswith("4.5 MiB/s  1,190 req/s") and line.no_wrap
    ev.current = a_test("012-rbd-randread-4KiB-qd16", "fio_rbd", "randread")
    ev.live(ev.current, None, 2787.0)
    assert ev._render().plain.endswith("  2,787 IOPS")


def test_the_eta_drops_the_steps_a_search_skipped():
    # a search that stopped early yields its later steps as skipped results that never started: their estimate was
    # still counted as time to come
    ev, _ = events()
    first, second = (Test(id=f"00{i}-t", index=i, workload="w", kind="rados_bench", group="g1", params={},
                          est_duration_s=5.0) for i in (1, 2))
    assert ev.remaining_s() == 10.0
    ev.test_started(first)
    ev.test_finished(Result(test=first, status="ok", started_unix=time.time(), duration_s=5.0))
    assert ev.remaining_s() == 5.0
    ev.test_finished(Result(test=second, status="skipped", started_unix=time.time(), duration_s=0.0,
                            error="past the knee"))
    assert ev.remaining_s() == 0.0
