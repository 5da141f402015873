"""A run with lab shapes: each result is analysed with the cluster facts of the shape it ran on, not with those of
the lab the run found. The runner hands the analysis those facts as it learns them (run.json records the same
facts, as `lab_shapes[variant].cluster`, for the report; a resumed run takes its first part's from there)."""

from types import SimpleNamespace

from test_analysis import LAB_MD, MIB, disk, net, result

from cephbench.analysis import RunAnalyzer, RunFacts, facts_from_run
from cephbench.run.launch import record_part
from cephbench.suite.shape_plan import LabBuild
from cephbench.analysis.model import Pool, ceiling
from cephbench.report.gap import Facts
from cephbench.core.results import Measurement, RunDir


# slow disks and a fast link: the disks bind, so the ceiling counts the OSDs
BASELINES = [disk("write-4MiB", 200e6, 100e6), disk("read-4MiB", 300e6, 150e6), net(1600e6, 1)]


def md(osds: int) -> list[dict]:
    """The one-host lab with `osds` OSDs (osd_metadata as `ceph osd metadata` gives it)."""
    return [{**LAB_MD[0], "id": i, "front_addr": f"[v2:127.0.0.1:68{i}0/1]", "back_addr": f"[v2:127.0.0.1:68{i}2/1]"}
            for i in range(osds)]


def shaped_meta() -> dict:
    """run.json of a run that found a 3-OSD lab, then ran variant `two` on 2 OSDs and `six` on 6."""
    shape = lambda n: {"build": {"osds": n, "osd_size_bytes": 10 * 1024**3, "rgw": False, "multi": None},  # noqa
                       "topology": None, "cluster": {"osd_metadata": md(n)}}
    return {"cephbench_version": "test", "suite_name": "shapes", "run_ids": ["abc123"],
            "hosts": {"client": {"hostname": "vm", "cpu_count": 2}},
            "cluster": {"osd_metadata": md(3)}, "lab_shapes": {"two": shape(2), "six": shape(6)}}


def write(variant: str, idx: int):
    r = result("rados_bench", {"phase": "write", "object_size": 4 * MIB,
                               "pool_profile": {"type": "replicated", "size": 1}},
               Measurement(tool="rados bench", op="write", duration_s=10, bytes_per_s=100 * MIB,
                           op_size_bytes=4 * MIB), idx)
    return r.model_copy(update={"test": r.test.model_copy(update={"variant": variant})})


def expected(osds: int) -> float:
    f = facts_from_run({"osd_metadata": md(osds)}, BASELINES, "vm", 2)
    return ceiling(f, "write", 4 * MIB, Pool(size=1)).bytes_per_s


def test_each_shape_gets_the_ceiling_of_its_own_osds(tmp_path):
    assert expected(2) < expected(3) < expected(6)      # the disks bind: the OSD count is what the ceiling counts
    rd = RunDir.create(tmp_path / "run", shaped_meta())
    an = RunAnalyzer.for_run(RunFacts.recorded(rd.meta()), rd)
    for b in BASELINES:
        an.attach(b)
    two, six = an.attach(write("two", 10)), an.attach(write("six", 11))
    assert two.analysis.ceiling_bytes_per_s == expected(2)
    assert six.analysis.ceiling_bytes_per_s == expected(6)


def test_a_variant_without_recorded_facts_and_baselines_use_the_runs_cluster(tmp_path):
    meta = shaped_meta()
    del meta["lab_shapes"]["six"]["cluster"]            # a run.json written before shapes recorded their facts
    rd = RunDir.create(tmp_path / "run", meta)
    an = RunAnalyzer.for_run(RunFacts.recorded(rd.meta()), rd)
    for b in BASELINES:
        an.attach(b)
    assert an.attach(write("six", 11)).analysis.ceiling_bytes_per_s == expected(3)


def test_the_reports_gap_charts_use_the_results_shape():
    facts = Facts(shaped_meta(), BASELINES)
    assert (facts.of(write("two", 10)).osds, facts.of(write("six", 11)).osds) == (2, 6)
    assert facts.of(BASELINES[0]).osds == 3


def test_the_analysis_is_handed_each_shapes_facts_and_reads_no_run_json(tmp_path):
    """Issue 26 item 3: run.json is written, not used as a bus. Here it holds no cluster facts at all, and the
    baselines are the run's earlier results (results.jsonl, its data): each shape's writes still get the ceiling of
    their own OSDs, from the facts the run learnt."""
    rd = RunDir.create(tmp_path / "run", {"cephbench_version": "test", "suite_name": "shapes", "run_ids": ["abc"]})
    for b in BASELINES:
        rd.append(b)
    facts = RunFacts(cluster={"osd_metadata": md(3)}, client={"hostname": "vm", "cpu_count": 2})
    facts = facts.on_part({"osd_metadata": md(2)}, ["two"], baselines=False)
    facts = facts.on_part({"osd_metadata": md(6)}, ["six"], baselines=False)
    an = RunAnalyzer.for_run(facts, rd)
    assert len(an.seen) == len(BASELINES)
    two, six = an.attach(write("two", 10)), an.attach(write("six", 11))
    assert two.analysis.ceiling_bytes_per_s == expected(2)
    assert six.analysis.ceiling_bytes_per_s == expected(6)


def test_a_lab_build_records_its_facts_in_run_json_and_hands_the_same_to_the_analysis(tmp_path):
    """What run/launch.py records for a lab build's part (run.json's `lab_shapes`, and `cluster` when the part runs
    baselines) is what the part's analysis is given."""
    rd = RunDir.create(tmp_path / "run", shaped_meta())
    build = LabBuild(None, 6, 10 * 1024**3, False)
    keeper = SimpleNamespace(want=lambda name: build)
    six = write("six", 11).test
    facts = record_part(rd, keeper, [six], None, {"osd_metadata": md(6)}, RunFacts.recorded(rd.meta()))
    meta = rd.meta()
    assert meta["lab_shapes"]["six"] == {"build": build.to_json(), "topology": None, "cluster": {"osd_metadata": md(6)}}
    assert meta["lab_shapes"]["two"]["cluster"] == {"osd_metadata": md(2)}     # an earlier build's, kept
    assert meta["cluster"] == {"osd_metadata": md(3)}                          # no baselines in this part
    assert facts.shapes == {"two": {"osd_metadata": md(2)}, "six": {"osd_metadata": md(6)}}
    assert facts.cluster == {"osd_metadata": md(3)}
    with_baselines = record_part(rd, keeper, [BASELINES[0].test, six], None, {"osd_metadata": md(6)}, facts)
    assert rd.meta()["cluster"] == with_baselines.cluster == {"osd_metadata": md(6)}
