"""The quick suite's OSD bench on an untouched lab accuses no drive, run after run (issue 11, item 3).

The lab's three OSDs keep their BlueStore files on one shared disk, so one bench per OSD is noisy enough that
`make demo` once flagged a healthy osd.0. Five independent copies of the quick suite's `osd_bench` entry run in
one `cephbench run` (67 s on the 2-CPU dev VM; 160 s while six other sessions loaded it): none may flag an OSD.
"""

import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from cephbench.results import RunDir

from labcli import run_cli, write_suite

QUICK = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
RUNS = 5


def quick_osd_bench() -> dict:
    (w,) = [w for w in yaml.safe_load(QUICK.read_text())["workloads"] if w["type"] == "osd_bench"]
    return w


def test_quick_suite_osd_bench_flags_no_osd_on_an_untouched_lab(lab_cluster, cephbench_env, tmp_path):
    w = quick_osd_bench()
    assert w.get("repeat", 3) == 3
    suite = {"name": "osd-bench-5x", "workloads": [{**w, "name": f"osd{i}"} for i in range(1, RUNS + 1)]}
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, yaml.safe_dump(suite))), "--out", str(out)], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    results, bad = RunDir.open(out).results()
    assert not bad and len(results) == RUNS and all(r.status == "ok" for r in results), [r.error for r in results]
    osds = [f"osd.{i}" for i in lab_cluster.osd_ids()]
    figures = []
    for r in results:
        m = r.measurement
        figures.append({k: round(v["bytes_per_s"] / 2**20) for k, v in m.extra["per_osd"].items()})
        assert m.extra["slow_osds"] == [], (r.test.id, r.notes, figures)
        assert not any("is slow" in n for n in r.notes), r.notes
        # every OSD benched 3 times, interleaved round-robin, each round starting one OSD further on
        order = [re.search(r" tell (osd\.\d+) bench ", c).group(1) for c in r.commands]
        assert order == [osds[(rnd + i) % len(osds)] for rnd in range(3) for i in range(len(osds))], order
        assert m.extra["repeat"] == 3 and sorted(m.extra["per_osd"]) == sorted(osds)
        for v in m.extra["per_osd"].values():
            assert v["repeats"] == len(v["bytes_per_s_repeats"]) == 3
            assert v["bytes_per_s_min"] <= v["bytes_per_s"] <= v["bytes_per_s_max"]
        assert len(r.raw) == 3 * len(osds) and all((out / p).is_file() for p in r.raw)
    # the report's OSD table shows the spread and the repeat count
    md = (out / "report.md").read_text()
    assert "spread MiB/s (min–max)" in md and "benched 3 times, round-robin" in md


BLKIO = Path("/sys/fs/cgroup/blkio")


def whole_disk(path: Path) -> str:
    """major:minor of the disk holding `path` (blkio throttles whole disks, not partitions)."""
    st = os.stat(path)
    sysdev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not sysdev.exists():
        pytest.skip(f"{path} is not on a block device (its filesystem is {os.major(st.st_dev)}:{os.minor(st.st_dev)})")
    return ((sysdev / ".." / "dev") if (sysdev / "partition").exists() else (sysdev / "dev")).read_text().strip()


@contextmanager
def write_throttled(pid: int, disk: str, bytes_per_s: int):
    """The process in a blkio cgroup (v1) of its own whose writes to `disk` are held to `bytes_per_s`."""
    if not (BLKIO / "cgroup.procs").exists() or os.geteuid() != 0:
        pytest.skip("needs root and the cgroup v1 blkio controller at /sys/fs/cgroup/blkio")
    before = next(line.split(":", 2)[2].strip() for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()
                  if line.split(":")[1] == "blkio")
    cg = BLKIO / f"cephbench-test-throttle-{pid}"
    cg.mkdir()
    try:
        (cg / "blkio.throttle.write_bps_device").write_text(f"{disk} {bytes_per_s}\n")
        (cg / "cgroup.procs").write_text(str(pid))
        yield
    finally:
        (BLKIO / before.lstrip("/") / "cgroup.procs").write_text(str(pid))
        cg.rmdir()


def test_an_osd_throttled_to_50MiBps_is_flagged(lab, lab_cluster, cephbench_env, tmp_path):
    """osd.2's writes held to 50 MiB/s by the kernel: the quick suite's OSD bench names it (36-88 s)."""
    osd = max(lab_cluster.osd_ids())
    pid = int((Path(lab.dir) / "run" / f"osd.{osd}.pid").read_text())
    disk = whole_disk(Path(lab.dir) / "osd" / str(osd) / "block")
    suite = {"name": "osd-bench-throttled", "workloads": [quick_osd_bench()]}
    out = tmp_path / "run"
    with write_throttled(pid, disk, 50 * 2**20):
        res = run_cli(["run", str(write_suite(tmp_path, yaml.safe_dump(suite))), "--out", str(out)], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    (r,) = RunDir.open(out).results()[0]
    per = {k: [round(b / 2**20) for b in v["bytes_per_s_repeats"]] for k, v in r.measurement.extra["per_osd"].items()}
    assert r.measurement.extra["slow_osds"] == [f"osd.{osd}"], per
    assert max(per[f"osd.{osd}"]) <= 55, per
    (note,) = [n for n in r.notes if " is slow" in n]
    assert note.startswith(f"osd.{osd} is slow: ") and "Mann-Whitney U" in note
    assert f"osd.{osd}" in res.stdout.split("Verdict")[1]
