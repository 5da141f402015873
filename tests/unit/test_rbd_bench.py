"""rbd bench: command builder, parser (fixtures: rbd bench of Ceph 16.2.15), RBD suite schema and guards."""

import subprocess

import pytest

from conftest import FIXTURES
from cephbench.suite.config import parse_suite
from cephbench.core.errors import ParseError
from cephbench.core.merge import merge_instances
from cephbench.drivers.rbd_bench_tool import RbdBenchCommand, op_name, parse
from cephbench.drivers.rbd_images import Images, read_guard_warnings
from cephbench.core.errors import UserError
from cephbench.suite.plan import expand

RBD = FIXTURES / "rbd_bench"
MIB = 1024 * 1024


def read(name: str) -> str:
    return (RBD / f"ceph16.2.15_{name}.txt").read_text()


# ---- parser --------------------------------------------------------------------------

def test_parse_io_total_run_uses_ops_per_sec_not_the_rounded_bytes():
    m = parse(read("write_rand_4K"))      # "ops: 10240   ops/sec: 2203.1   bytes/sec: 8.6 MiB/s"
    assert m.tool == "rbd bench" and m.op == "randwrite"
    assert m.ops_total == 10240 and m.ops_per_s == pytest.approx(2203.1)
    assert m.op_size_bytes == 4096
    assert m.bytes_per_s == pytest.approx(2203.1 * 4096)
    assert m.bytes_total == 10240 * 4096
    assert m.duration_s == pytest.approx(10240 / 2203.1)
    assert [s.t_s for s in m.timeseries] == [1, 2, 3, 4]
    assert m.timeseries[0].ops_per_s == pytest.approx(3157.09)
    assert m.timeseries[0].bytes_per_s == pytest.approx(3157.09 * 4096)
    assert m.extra["io_threads"] == 16 and m.extra["io_pattern"] == "random"


def test_parse_sequential_4m_and_read():
    w = parse(read("write_seq_4M_prefill"))
    assert w.op == "write" and w.op_size_bytes == 4 * MIB and w.ops_total == 64
    r = parse(read("read_seq_4M"))
    assert r.op == "read" and r.ops_total == 256 and r.bytes_per_s == pytest.approx(193.939 * 4 * MIB)


def test_parse_readwrite_keeps_the_read_and_write_sides():
    m = parse(read("readwrite70_rand_4K"))
    assert m.op == "randrw"
    assert m.extra["rw_mix_read"] == 70
    assert m.extra["read_ops_per_s"] == pytest.approx(1924.36)
    assert m.extra["write_ops_per_s"] == pytest.approx(822.425)
    assert m.extra["read_ops_total"] == 7174
    assert m.ops_per_s == pytest.approx(2746.78)


def test_parse_run_stopped_by_sigint_still_has_its_summary():
    m = parse(read("write_rand_4K_sigint"))     # a "received signal: Interrupt" log line in the middle
    assert m.ops_total == 2914 and m.ops_per_s == pytest.approx(834.479)
    assert len(m.timeseries) == 2


def test_parse_without_summary_falls_back_to_the_per_second_lines():
    m = parse(read("read_rand_4K_nosummary"))   # "2  1856  941.65": 1856 ops in 2 whole seconds
    assert m.ops_total == 1856 and m.ops_per_s == pytest.approx(928.0)
    assert "per-second" in m.extra["summary"]


def test_parse_refuses_a_run_that_did_no_io_and_foreign_text():
    with pytest.raises(ParseError, match="no I/O"):
        parse(read("readwrite_empty"))           # "ops: 0   ops/sec: -nan"
    with pytest.raises(ParseError, match="not rbd bench output"):
        parse("rbd: error opening image x: (2) No such file or directory\n")
    with pytest.raises(ParseError, match="no rbd bench summary"):
        parse(read("write_rand_4K").split("  SEC")[0])


def test_aggregate_over_images_sums_rates():
    a, b = parse(read("write_rand_4K")), parse(read("readwrite70_rand_4K"))
    m = merge_instances([a, a], latency="mean-max")
    assert m.ops_total == 2 * a.ops_total
    assert len(m.instances) == 2
    assert m.op_size_bytes == 4096
    assert b.op == "randrw"


def test_op_names_match_fio():
    assert op_name("write", "seq") == "write"
    assert op_name("read", "rand") == "randread"
    assert op_name("readwrite", "random") == "randrw"


# ---- command ---------------------------------------------------------------------------

def test_argv_io_total_and_duration():
    c = RbdBenchCommand(spec="p/i", io_type="readwrite", io_size=4096, io_threads=8, io_pattern="rand",
                        rw_mix_read=70, io_total=16 * MIB)
    argv = c.argv(["--conf", "c"])
    assert argv[:4] == ["rbd", "--conf", "c", "bench"]
    assert argv[-3:] == ["--io-total", f"{16 * MIB}B", "p/i"]
    assert "--rw-mix-read" in argv and argv[argv.index("--io-size") + 1] == "4096B"
    d = RbdBenchCommand(spec="p/i", io_type="write", io_size=4096, io_threads=8, duration_s=10).argv([])
    assert d[:2] == ["sh", "-c"] and d[3:5] == ["sh", "10"] and d[5] == "rbd" and "--rw-mix-read" not in d


# A program in rbd bench's place, to time the wrapper: it opens "the image" for OPEN_S, prints the header, counts
# until SIGINT (caught, as rbd bench does: register_async_signal_handler_oneshot), then prints a summary naming how
# long after its header the signal came and every SIGINT it got.
OPEN_S = 1.5
BENCH = f"""
import signal, sys, time
sys.argv[1:2] == ["fail"] and sys.exit(3)
got = []
signal.signal(signal.SIGINT, lambda *_: got.append(time.monotonic()))
time.sleep({OPEN_S})
start = time.monotonic()
print("bench  type write io_size 4096 io_threads 1 bytes 1 pattern random", flush=True)
while not got:
    time.sleep(0.02)
time.sleep(0.3)
print(f"elapsed: {{got[0] - start:.2f}}   sigints: {{len(got)}}", flush=True)
"""


def _bench(duration_s: float, *args: str) -> subprocess.Popen:
    import sys
    argv = RbdBenchCommand(spec="p/i", io_type="write", io_size=4096, io_threads=1, duration_s=duration_s).argv([])
    return subprocess.Popen([*argv[:5], sys.executable, "-c", BENCH, *args], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)


def _group_gone(pgid: int) -> bool:
    """No process of the group runs (an exited one not yet reaped by init is gone)."""
    import os
    states = [_state(d) for d in os.listdir("/proc") if d.isdigit()]
    return all(s is None or s[1] != pgid or s[0] == "Z" for s in states)


def _state(pid: str) -> tuple[str, int] | None:
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[2])
    except (OSError, IndexError, ValueError):
        return None


def test_a_duration_counts_from_the_header_not_from_the_start():
    p = _bench(1.0)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 0
    lines = out.splitlines()
    assert lines[0].startswith("bench  type write")
    elapsed, sigints = float(lines[-1].split()[1]), int(lines[-1].split()[3])
    # the whole second after the header, though opening took 1.5 s; one SIGINT, not two
    assert 1.0 <= elapsed < 1.0 + OPEN_S and sigints == 1
    assert _group_gone(p.pid)        # no timer, no sleep left behind


def test_a_stop_sent_to_the_group_reaches_the_bench_once_and_its_summary_is_passed_on():
    import os
    import signal
    import time
    p = _bench(30.0)
    time.sleep(OPEN_S + 0.5)
    os.killpg(p.pid, signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 0 and out.splitlines()[-1].split()[2:] == ["sigints:", "1"]
    assert _group_gone(p.pid)


def test_a_bench_that_fails_before_its_header_fails_with_its_own_status():
    p = _bench(1.0, "fail")
    out, _ = p.communicate(timeout=30)
    assert (p.returncode, out) == (3, "")

def test_argv_refuses_bad_combinations():
    with pytest.raises(ValueError):
        RbdBenchCommand(spec="p/i", io_type="trim", io_size=1, io_threads=1, io_total=1).argv([])
    with pytest.raises(ValueError):
        RbdBenchCommand(spec="p/i", io_type="read", io_size=1, io_threads=1).argv([])


# ---- schema and guards -------------------------------------------------------------------

def rbd_suite(workload, pools=None):
    return {"name": "t", "pools": pools or {"rep": {"type": "replicated"}, "ec": {"type": "erasure", "k": 2, "m": 1}},
            "workloads": [{"pool": "rep", **workload}]}


@pytest.mark.parametrize("workload, pools, where, what", [
    ({"type": "fio_rbd", "iodepth": 0}, None, "workloads[0].iodepth", "greater than zero"),
    ({"type": "fio_rbd", "rw": ["randwrite", "trim"]}, None, "workloads[0].rw[1]", "'trim'"),
    ({"type": "rbd_bench", "io_type": "discard"}, None, "workloads[0].io_type", "'discard'"),
    ({"type": "fio_rbd", "pool": "ec"}, {"ec": {"type": "erasure", "k": 2, "m": 1, "allow_ec_overwrites": False}},
     "workloads[0].pool", "needs allow_ec_overwrites"),
    ({"type": "fio_rbd", "metadata_pool": "ec"}, None, "workloads[0].metadata_pool", "needs a replicated pool"),
    ({"type": "fio_rbd", "metadata_pool": "nope"}, None, "workloads[0].metadata_pool", "not defined"),
    ({"type": "fio_rbd", "prefill": False}, None, "workloads[0]", "not prefilled"),
    ({"type": "rbd_bench", "prefill": False, "io_type": ["write", "read"]}, None, "workloads[0]", "not prefilled"),
    ({"type": "rbd_bench", "io_total": "1MiB", "duration": "5s"}, None, "workloads[0]", "not both"),
    ({"type": "fio_rbd", "image_size": 0}, None, "workloads[0].image_size", "greater than zero"),
    ({"type": "fio_rbd", "rwmixread": 101}, None, "workloads[0].rwmixread", "100"),
])
def test_bad_rbd_suites_are_one_line_with_the_path(workload, pools, where, what):
    with pytest.raises(UserError) as e:
        parse_suite(rbd_suite(workload, pools), "s.yaml")
    line = e.value.one_line()
    assert line.startswith(f"s.yaml: {where}:"), line
    assert what in line and "\n" not in line


def test_unprefilled_reads_only_when_asked_and_then_flagged():
    s = parse_suite(rbd_suite({"type": "fio_rbd", "prefill": False, "read_unprefilled": True}), "s.yaml")
    tests = {t.params["phase"]: t for t in expand(s).tests}
    images = Images(pool="p", data_pool=None, names=["i"], size_bytes=MIB, pools=["p"], prefilled=False)
    assert "NOT PREFILLED" in read_guard_warnings(tests["randread"], images)[0]     # a warning: not in the verdict
    assert read_guard_warnings(tests["randwrite"], images) == []
    images.prefilled = True
    assert read_guard_warnings(tests["randread"], images) == []
    # write-only without prefill needs no opt-in
    parse_suite(rbd_suite({"type": "fio_rbd", "prefill": False, "rw": "randwrite"}), "s.yaml")


def test_rbd_plan_groups_phases_and_resolves_both_pools():
    s = parse_suite(rbd_suite({"type": "fio_rbd", "pool": ["rep", "ec"], "metadata_pool": "rep",
                               "rw": ["randwrite", "randread"], "iodepth": [1, 32]}), "s.yaml")
    tests = expand(s).tests
    assert len(tests) == 8 and len({t.group for t in tests}) == 4
    ec = [t for t in tests if t.params["pool"] == "ec"][0]
    assert ec.params["pool_profile"]["type"] == "erasure"
    assert ec.params["metadata_profile"]["type"] == "replicated"
    assert [t.params["phase"] for t in tests if t.group == ec.group] == ["randwrite", "randread"]
    assert "qd32" in tests[-1].id


def test_krbd_unavailable_says_why_in_one_line(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from cephbench.drivers import rbd_images
    from cephbench.hosts.local import CommandResult

    monkeypatch.setattr(rbd_images, "SYS_BUS_RBD", tmp_path / "no-bus")
    no_modprobe = SimpleNamespace(which=lambda p: None)
    ctx = SimpleNamespace(host=no_modprobe, dry_run=False, planned=[])
    assert rbd_images.krbd_unavailable(ctx).startswith("krbd skipped: the rbd kernel module is not loaded")
    failing = SimpleNamespace(which=lambda p: "/sbin/modprobe", run=lambda argv, timeout_s: CommandResult(
        list(argv), 1, "", "modprobe: FATAL: Module rbd not found in directory /lib/modules/6.1.0\n", 0.1))
    msg = rbd_images.krbd_unavailable(SimpleNamespace(host=failing, dry_run=False, planned=[]))
    assert msg == ("krbd skipped: the rbd kernel module is not available on this host (modprobe rbd: "
                   "modprobe: FATAL: Module rbd not found in directory /lib/modules/6.1.0)")
    dry = SimpleNamespace(host=failing, dry_run=True, planned=[])
    assert rbd_images.krbd_unavailable(dry) is None and dry.planned == ["modprobe rbd"]
    monkeypatch.setattr(rbd_images, "SYS_BUS_RBD", tmp_path)      # the module is loaded
    assert rbd_images.krbd_unavailable(ctx) is None


def test_wait_unwatched_polls_until_the_stale_watch_is_gone(monkeypatch):
    from types import SimpleNamespace

    from cephbench.drivers import rbd_images
    from cephbench.hosts.local import CommandResult

    answers = ['{"watchers":[{"address":"127.0.0.1:0/1","client":5360,"cookie":1}]}'] * 3 + ['{"watchers":[]}']
    calls = []

    def run(argv, timeout_s):
        calls.append(argv)
        return CommandResult(list(argv), 0, answers[min(len(calls) - 1, len(answers) - 1)], "", 0.01)

    clock = iter(range(0, 1000, 2))
    monkeypatch.setattr(rbd_images.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(rbd_images.time, "sleep", lambda s: None)
    ctx = SimpleNamespace(dry_run=False, host=SimpleNamespace(run=run),
                          target=SimpleNamespace(client_args=lambda: ["--conf", "c"]))
    images = Images(pool="p", data_pool=None, names=["i"], size_bytes=MIB, pools=["p"])
    notes = rbd_images.wait_unwatched(ctx, images)
    assert len(calls) == 4 and calls[0][-4:] == ["status", "--format", "json", "p/i"]
    assert notes and "waited" in notes[0]
    answers[:] = ['{"watchers":[{"client":1}]}']          # never goes away: give up with a note
    calls.clear()
    notes = rbd_images.wait_unwatched(ctx, images)
    assert "still watched" in notes[0]


def test_live_figures_from_the_last_second_of_each_image(tmp_path):
    from cephbench.drivers.rbd_bench_tool import live_figures
    text = (FIXTURES / "rbd_bench" / "ceph16.2.15_write_rand_4K.txt").read_text()
    running = tmp_path / "img0.txt"
    running.write_text(text.split("elapsed:")[0])            # still running: header and four per-second lines
    bw, ops = live_figures([running, running, tmp_path / "not-yet.txt"])
    assert ops == 2 * 2459.7 and bw == 2 * 2459.7 * 4096      # "4  9872  2459.7  9.6 MiB/s", io_size 4096
    assert live_figures([tmp_path / "not-yet.txt"]) == (None, None)


def test_two_clients_merge_without_a_rados_bench_latency_note():
    """rbd bench reports no latency: the merge of its clients says nothing about rados bench's mean and max."""
    from cephbench.core.merge import merge_instances
    a = parse((RBD / "ceph16.2.15_write_rand_4K.txt").read_text())
    parts = [a.model_copy(update={"host": h, "start_unix_s": 1e9, "end_unix_s": 1e9 + a.duration_s})
             for h in ("c1", "c2")]
    m = merge_instances(parts, latency="mean-max")
    assert [i.host for i in m.instances] == ["c1", "c2"] and m.extra["clients"]["hosts"] == 2
    assert m.latency.mean_ns is None
    assert not any("rados bench" in n for n in m.extra["clients"]["notes"]), m.extra["clients"]["notes"]
