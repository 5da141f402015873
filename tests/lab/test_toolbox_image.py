"""cephbench as a toolbox image (issue 38): `lab image --build reef` makes localhost/cephbench:reef from Reef's root
with no registry, and a container of it, given only the cluster's conf and key in /etc/ceph and the host's network
(as `cephadm shell` or a Rook toolbox pod runs), benchmarks a Reef lab: its run.json names Reef, and every OSD's
counters are read without an admin socket or ssh (`ceph tell`). The run directory comes back through the toolbox's
working directory, as docs/toolbox.md mounts it.

Skipped, with the reason, where podman cannot run a container (not installed; crun alone on a cgroup v1 host). The
first build takes 1-2 minutes (97 s, 850 MiB for Reef on the 2-core VM); an image made from the same root and
sources is kept and reused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from cephbench.core.results import RunDir
from cephbench.lab import Lab, image, podman

from labcli import run_cli

NEEDS_ROOTS = True      # last in its session (conftest): `make roots` builds Reef's root meanwhile

SUITE = """
name: toolbox
pools:
  rep: {type: replicated, size: 1, pg_num: 8}
workloads:
  - name: rados
    type: rados_bench
    pool: rep
    modes: [write, seq]
    object_size: [64KiB]
    concurrency: 4
    duration: 2s
"""


def _image_or_skip() -> image.Image:
    if podman.exe() is None:
        pytest.skip("podman is not installed (scripts/setup.sh installs podman and runc for the lab)")
    made = run_cli(["lab", "image", "--build", "reef"], timeout=1800)
    if made.returncode == 2 and image.NO_RUN in made.stderr:
        pytest.skip(made.stderr.strip().splitlines()[-1])
    assert made.returncode == 0, made.stderr[-3000:]
    img = image.inspect(image.tag("reef"))
    assert img is not None and img.label("python") and img.label("ceph_version").startswith("18.")
    return img


def test_the_toolbox_image_runs_a_suite_against_a_reef_lab_with_conf_and_key_only(tmp_path):
    img = _image_or_skip()
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-toolbox-"))
    lab_dir = d / "lab"
    name = f"cephbench-test-toolbox-{os.getpid()}"
    exe = podman.exe()
    assert exe is not None
    try:
        up = run_cli(["lab", "up", "--dir", lab_dir, "--release", "reef", "--osds", "1", "--no-rgw",
                      "--osd-size", "3GiB"])
        assert up.returncode == 0, up.stderr[-3000:]
        lb = Lab(lab_dir)
        # /etc/ceph as an operator fills it for a toolbox: the minimal conf the cluster gives, and the admin key
        etc = tmp_path / "etc-ceph"
        etc.mkdir()
        conf = subprocess.run(["ceph", "config", "generate-minimal-conf"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, **lb.env()})
        assert conf.returncode == 0 and "mon_host" in conf.stdout, conf.stderr
        (etc / "ceph.conf").write_text(conf.stdout)
        shutil.copy(lb.env()["CEPH_KEYRING"], etc / "ceph.client.admin.keyring")
        work = tmp_path / "work"
        work.mkdir()
        (work / "toolbox.yaml").write_text(SUITE)
        res = subprocess.run(
            [*podman.argv(exe), "run", "--rm", "--name", name, "--net", "host", "-v", f"{etc}:/etc/ceph:ro",
             "-v", f"{work}:{image.WORKDIR}", img.ref, "cephbench", "run", "toolbox.yaml", "--out", "run"],
            capture_output=True, text=True, timeout=900, env=podman.conf_env(tmp_path))
        assert res.returncode == 0, res.stderr[-3000:] + res.stdout[-3000:]
        print(res.stdout[-2000:])
        out = work / "run"
        meta = json.loads((out / "run.json").read_text())
        # the cluster's release as `ceph versions` gives it: no lab.json is in sight of the toolbox
        assert meta["release"] == "reef" and "lab_root" not in meta, {k: meta.get(k) for k in ("release", "lab_root")}
        assert meta["ceph_release"]["version"].startswith("18.") and meta["ceph_release"]["others"] == {}
        assert meta["target"]["conf"] == "/etc/ceph/ceph.conf", meta["target"]
        results, _ = RunDir(out).results()
        assert [r.status for r in results] == ["ok", "ok"], [r.error for r in results]
        for r in results:
            assert r.evidence is not None and r.evidence.osds, r.evidence
            assert not [n for n in r.evidence.notes if "not read" in n], r.evidence.notes
    finally:
        subprocess.run([*podman.argv(exe), "rm", "--force", "--ignore", name], capture_output=True, timeout=120,
                       env=podman.conf_env(tmp_path))
        down = run_cli(["lab", "down", "--dir", lab_dir])
        shutil.rmtree(d, ignore_errors=True)
    assert down.returncode == 0, down.stderr
    left = subprocess.run([exe, "ps", "--all", "--quiet", "--filter", f"name={name}"], capture_output=True,
                          text=True, timeout=60)
    assert left.stdout.strip() == "", "the toolbox's container was left"
