"""A lab's `ceph versions` as a run records it: `lab up` returns before RGW reaches it through the mgr's service map,
so the run reads it again until it names every kind of daemon the lab runs (Lab.whole_versions). The versions are
a real one-host lab's (Pacific 16.2.15), as a run recorded them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cephbench.lab.lab import Lab, LabInfo

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "report" / "ceph16.2.15_quick_onehost.run.json"
WHOLE = json.loads(FIXTURE.read_text())["cluster"]["versions"]


def _before_rgw() -> dict:
    """The same cluster a moment after `lab up`: RGW not in the mgr's service map yet."""
    v = copy.deepcopy(WHOLE)
    del v["rgw"]
    (version,) = v["overall"]
    v["overall"][version] -= 1
    return v


def _lab(tmp_path: Path, rgw: bool) -> Lab:
    tmp_path.mkdir(exist_ok=True)
    lab = Lab(tmp_path)
    lab._write_info(LabInfo(dir=str(tmp_path), fsid="f", osds=3, osd_size_bytes=10 * 1024**3, rgw=rgw,
                            ports={"mon_v2": 1, "mon_v1": 2, "rgw": 3}, created_unix=0.0))
    return lab


def test_a_run_reads_the_versions_again_until_the_labs_rgw_is_in_them(tmp_path):
    reads = iter([_before_rgw(), _before_rgw(), copy.deepcopy(WHOLE)])
    got = _lab(tmp_path, rgw=True).whole_versions(lambda: next(reads), _before_rgw())
    assert got == WHOLE and next(reads, None) is None


def test_a_lab_without_rgw_or_a_versions_that_could_not_be_read_is_taken_as_it_is(tmp_path):
    def never() -> dict:
        raise AssertionError("read again")
    assert _lab(tmp_path, rgw=False).whole_versions(never, _before_rgw()) == _before_rgw()
    failed = {"error": "lab: 'versions' failed: timed out"}
    assert _lab(tmp_path / "b", rgw=True).whole_versions(never, failed) == failed


def test_an_rgw_that_never_registers_ends_the_wait_after_its_patience(tmp_path):
    got = _lab(tmp_path, rgw=True).whole_versions(_before_rgw, _before_rgw(), patience_s=0.3)
    assert "rgw" not in got and got["osd"] == WHOLE["osd"]
