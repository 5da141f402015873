"""Release against release (issue 27 item 4): a suite whose variants' lab shapes name a release runs its tests on
each release's lab (a rebuild with `lab up --release`), each result records the release it ran on, the variants
view compares them, and the lab is put back on the release it had when the run found it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from cephbench.lab import Lab
from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

NEEDS_ROOTS = True      # last in its session (conftest): `make roots` builds Reef's root meanwhile

# The lab as the test starts it is the pacific variant's shape: the run rebuilds it once for Reef, once to put it back
SUITE = """
name: tiny-releases
pools:
  rep: {type: replicated, size: 1, pg_num: 8}
variants:
  - {name: pacific, lab: {osds: 1, osd_size: 3GiB, rgw: false, release: pacific}}
  - {name: reef, lab: {osds: 1, osd_size: 3GiB, rgw: false, release: reef}}
workloads:
  - name: rados
    type: rados_bench
    pool: rep
    modes: [write]
    object_size: [64KiB]
    concurrency: 4
    duration: 2s
    repeat: 1
"""


def test_variants_of_two_releases_run_on_each_and_the_lab_comes_back_on_its_own(tmp_path):
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-relvar-"))
    lab_dir = d / "lab"
    lb = Lab(lab_dir)
    try:
        up = run_cli(["lab", "up", "--dir", lab_dir, "--osds", "1", "--osd-size", "3GiB", "--no-rgw"])
        assert up.returncode == 0, up.stderr[-3000:]
        found = lb.info()
        assert found is not None and found.release == "pacific" and found.root is None
        out = tmp_path / "run"
        res = run_cli(["run", write_suite(tmp_path, SUITE), "--lab-dir", lab_dir, "--out", out], timeout=1800)
        assert res.returncode == 0, res.stderr[-3000:] + res.stdout[-3000:]
        results, _ = RunDir(out).results()
        assert [r.status for r in results] == ["ok", "ok"], [r.error for r in results]
        # each result records the release it ran on, and the cluster it measured was of that release
        assert {r.test.variant: r.variant.release for r in results if r.variant} == {"pacific": "pacific",
                                                                                      "reef": "reef"}
        shapes = RunDir(out).meta()["lab_shapes"]
        assert "ceph version 18." in next(iter(shapes["reef"]["cluster"]["versions"]["overall"]))
        assert "ceph version 16." in next(iter(shapes["pacific"]["cluster"]["versions"]["overall"]))
        # the variants view: Reef's % change against Pacific, and which release each variant ran on
        words = " ".join(res.stdout.split())       # the terminal's lines wrapped anywhere
        assert "Variants: % change against pacific" in words, res.stdout[-3000:]
        assert "Ceph release of each variant's lab: pacific: pacific, reef: reef" in words, res.stdout[-3000:]
        # put back as found: Pacific from the host's packages, the same shape
        back = lb.info()
        assert lb.is_running() and back is not None and back.release == "pacific" and back.root is None
        assert back.osds == 1 and back.created_unix > found.created_unix
    finally:
        down = run_cli(["lab", "down", "--dir", lab_dir])
        shutil.rmtree(d, ignore_errors=True)
    assert down.returncode == 0, down.stderr
