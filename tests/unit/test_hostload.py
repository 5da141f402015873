"""Host CPU watched during a test (/proc/stat), and how the model uses it to name the CPU as the bottleneck."""

from pathlib import Path

import pytest

from cephbench.analysis.model import Ceiling, Term
from cephbench.analysis.rules import judge
from cephbench.evidence.hostload import WATCH_SH, CpuSampler, load_from_stream, parse_cpuacct, parse_proc_stat

FIX = Path(__file__).parent.parent / "fixtures" / "proc-stat"


def test_parse_real_proc_stat():
    a = parse_proc_stat((FIX / "debian12-2cpu-a.txt").read_text())
    # cpu  938869 330 454899 983024 39644 0 68425 2524 ...: busy excludes idle and iowait
    assert a.total == 938869 + 330 + 454899 + 983024 + 39644 + 0 + 68425 + 2524
    assert a.busy == a.total - 983024 - 39644 and a.iowait == 39644


def test_sampler_between_two_real_readings_sees_one_spinning_cpu_of_two():
    texts = iter([(FIX / "debian12-2cpu-a.txt").read_text(), (FIX / "debian12-2cpu-b.txt").read_text()])
    load = CpuSampler(read=lambda: next(texts), host="vm", cpus=2).summary()
    assert load.host == "vm" and load.cpus == 2
    assert 0.45 <= load.cpu_busy_mean <= 0.97        # one CPU spun, the other ran this machine's own load
    assert load.iowait_mean < 0.05 and load.cpu_busy_series == []   # no tick between the two readings


def test_sampler_series_and_missing_proc():
    reads = iter(["cpu  100 0 0 900 0 0 0 0\n", "cpu  190 0 0 910 0 0 0 0\n", "cpu  200 0 0 1000 0 0 0 0\n"])
    s = CpuSampler(read=lambda: next(reads), host="h", cpus=1)
    s.sample()
    load = s.summary()
    assert load.cpu_busy_series == [0.9] and load.cpu_busy_max == 0.9 and load.cpu_busy_mean == 0.5

    # four seconds at 90 % then a wind-down second at 5 %: the median is the steady state, the mean is not
    ticks = [0, 90, 180, 270, 360, 365]
    reads = iter([f"cpu  {b} 0 0 {100 * i - b} 0 0 0 0\n" for i, b in enumerate(ticks)] + ["cpu  365 0 0 135 0 0 0 0\n"])
    s = CpuSampler(read=lambda: next(reads), host="h", cpus=1)
    for _ in range(5):
        s.sample()
    load = s.summary()
    assert load.cpu_busy_series == [0.9, 0.9, 0.9, 0.9, 0.05]
    assert load.cpu_busy_median == 0.9 and load.cpu_busy_mean == 0.73

    def gone() -> str:
        raise FileNotFoundError("/proc/stat")
    assert CpuSampler(read=gone).summary() is None
    with pytest.raises(ValueError):
        parse_proc_stat("intr 1 2 3\n")


def small_op_ceiling() -> Ceiling:
    return Ceiling(op="write", op_size=4096, terms=[Term("disks", 100 * 2**20, "3 disks x 100 MiB/s / 3 replicas")],
                   bottleneck="disks")


@pytest.mark.parametrize("busy, bottleneck, phrase", [
    (None, "CPU", "inferred, not measured"),
    (0.97, "CPU", "were 97% busy in a typical second of the test (measured)"),
    (0.30, "unknown", "were only 30% busy: per-op latency"),
])
def test_small_ops_far_below_the_ceiling_name_the_cpu_only_with_evidence(busy, bottleneck, phrase):
    v = judge(small_op_ceiling(), 5 * 2**20, "write 4KiB", cpus=2, cpu_busy=busy, cpu_host="vm (where the client ran)")
    assert v.bottleneck == bottleneck and phrase in v.reason, v.reason


def test_busy_cpus_win_over_the_byte_ceiling_for_large_ops_too():
    c = Ceiling(op="write", op_size=4 * 2**20, terms=[Term("disks", 300 * 2**20, "3 disks x 100 MiB/s")],
                bottleneck="disks")
    assert judge(c, 150 * 2**20, "write 4MiB", cpus=2, cpu_busy=0.95).bottleneck == "CPU"
    assert judge(c, 150 * 2**20, "write 4MiB", cpus=2, cpu_busy=0.40).bottleneck == "disks"
    assert judge(c, 290 * 2**20, "write 4MiB", cpus=2, cpu_busy=0.95).bottleneck == "disks"   # at the ceiling


def test_stream_from_a_watched_host():
    # what WATCH_SH printed over ssh (captured on the dev VM), cut off mid-line when the watch was stopped
    text = ("2\n"
            "cpu  979846 330 472063 1050309 42251 0 71180 2578 0 0\n"
            "cpu  979942 330 472078 1050398 42252 0 71180 2578 0 0\n"
            "cpu  980044 330 472088 1050486 42252 0 71181 2578 0 0\n"
            "cpu  980138 330 472094 1050585 42252 0 71181 2578 0 0\n"
            "cpu  980238 330 472")
    load = load_from_stream(text, "osd-node-1", "OSD host")
    assert load.cpus == 2 and load.role == "OSD host" and len(load.cpu_busy_series) == 3
    assert load.cpu_busy_series[0] == round((96 + 15) / (96 + 15 + 89 + 1), 4)   # user+system over all, iowait idle
    assert load_from_stream("2\ncpu  1 0 0 1 0 0 0 0\n", "h", "OSD host") is None   # one reading: no figure
    assert load_from_stream("ssh: connect to host h port 22: Connection refused\n", "h", "OSD host") is None


def test_a_host_that_is_a_cpuacct_cgroup_reports_its_own_cpu_time():
    """A real WATCH_SH stream with CEPHBENCH_CPUACCT set: a cgroup holding one spinning shell on a 2-CPU machine."""
    text = (FIX.parent / "cpuacct" / "debian12-2cpu-watch-stream-one-spinner.txt").read_text()
    load = load_from_stream(text, "h1", "OSD host")
    assert load.source == "cpuacct" and load.cpus == 2 and load.iowait_mean is None
    assert 0.47 <= load.cpu_busy_mean <= 0.51 and len(load.cpu_busy_series) == 4     # one CPU of two
    assert all(0.47 <= b <= 0.51 for b in load.cpu_busy_series)
    assert load_from_stream("2\n" + (FIX / "debian12-2cpu-a.txt").read_text().splitlines()[0] + "\n" +
                            (FIX / "debian12-2cpu-b.txt").read_text().splitlines()[0] + "\n", "h", "r").source == \
        "proc-stat"


def test_cpuacct_readings_are_checked_and_capped():
    with pytest.raises(ValueError):
        parse_cpuacct("cpuacct 12 ", 2)
    # usage read a moment after the clock can pass wall time x CPUs: never more than all of them
    load = load_from_stream("1\ncpuacct 0 0\ncpuacct 1000000000 1000500000\ncpuacct 2000000000 2000000000\n", "h", "r")
    assert load.cpu_busy_series == [1.0, 0.9995] and load.cpu_busy_mean == 1.0


def test_the_watch_script_reads_the_cgroup_named_in_the_session():
    assert "$CEPHBENCH_CPUACCT/cpuacct.usage" in WATCH_SH and "head -n 1 /proc/stat" in WATCH_SH


def test_an_orphaned_watch_ends_by_itself(tmp_path):
    """A watch whose parent died (its cephbench killed with SIGKILL, its ssh session gone) ends within a round or
    two, where it used to read /proc every second until `cephbench cleanup` stopped it."""
    import os
    import subprocess
    import time
    out = tmp_path / "watch.out"
    # the parent starts the watch (its input given, so only orphanhood can end it) and dies half a second later
    started = subprocess.run(["sh", "-c", 'sh -c "$0" watch "" "" "" "" 1 < /dev/null > "$1" 2>&1 & echo $!; sleep 0.5',
                              WATCH_SH, str(out)], capture_output=True, text=True, timeout=30, check=True)
    pid = int(started.stdout)
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}"), "the orphaned watch is still running"
    assert out.read_text().count("\nt ") >= 1        # it had been watching


def test_a_watch_whose_input_pipe_ends_without_stop_exits_and_one_on_dev_null_runs_on(tmp_path):
    """The pipe that holds a watch ends without "stop" when its cephbench dies: the watch exits at once. A watch
    whose input is /dev/null (a remote shell that gives none) is not held by it, and runs on."""
    import subprocess
    import time
    argv = ["sh", "-c", WATCH_SH, "watch", "", "", "", "", "1"]
    piped = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=(tmp_path / "a").open("w"))
    nulled = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=(tmp_path / "b").open("w"))
    try:
        time.sleep(1.5)
        piped.stdin.close()                 # as a SIGKILLed cephbench's end of the pipe closes
        assert piped.wait(timeout=5) == 0
        assert nulled.poll() is None
    finally:
        for p in (piped, nulled):
            p.kill()
            p.wait()
