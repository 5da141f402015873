"""The quick suite's OSD bench on an untouched lab accuses no drive, run after run (issue 11, item 3).

The lab's three OSDs keep their BlueStore files on one shared disk, so one bench per OSD is noisy enough that
`make demo` once flagged a healthy osd.0. The bench reads that they share it from `ceph osd metadata`, and an OSD
below its mates on one drive is no slow drive (CI once flagged osd.0 at 245 MiB/s against 403 and 341, p = 0.048). Three independent copies of the quick suite's `osd_bench` entry run in
one `cephbench run` (24 s on the idle 2-CPU dev VM): none may flag an OSD. That a slowed drive is flagged is
checked on real throttled drives in test_ground_truth.py (`cephbench lab throttle` on the multi-host lab).
"""

import re
from pathlib import Path

import yaml

from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

# judges OSDs by their measured rates: runs alone (CI once flagged an untouched OSD, p = 0.024, while two one-host
# labs and the multi-host lab shared the CPUs)
GROUND_TRUTH = True

QUICK = Path(__file__).resolve().parents[2] / "suites" / "quick.yaml"
RUNS = 3


def quick_osd_bench() -> dict:
    (w,) = [w for w in yaml.safe_load(QUICK.read_text())["workloads"] if w["type"] == "osd_bench"]
    return w


def test_quick_suite_osd_bench_flags_no_osd_on_an_untouched_lab(lab_cluster, cephbench_env, tmp_path):
    w = quick_osd_bench()
    assert w.get("repeat", 3) == 3
    suite = {"name": "osd-bench-3x", "workloads": [{**w, "name": f"osd{i}"} for i in range(1, RUNS + 1)]}
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
        # each OSD known to share the machine's disk with the other two, as `ceph osd metadata` says
        for k, v in m.extra["per_osd"].items():
            assert sorted(v["shares_device"]["with"]) == sorted(set(osds) - {k}), (k, v)
        assert all("not flagged as a slow drive" in n and "the gap is the OSD's" in n
                   for n in r.notes if n.startswith("osd.") and "slow drive" in n)
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
