"""A VM's path to RBD (kind qemu_rbd) against the real lab: an image exported by qemu-nbd in two of QEMU's cache modes,
read by fio's nbd engine; each result has its IOPS and its cache mode, and nothing is left: no qemu-nbd, no socket
directory, no image or pool, an empty ledger."""

import glob
import json
import shutil
from pathlib import Path

import pytest

from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

SUITE = """
name: vm-small
pools:
  rep2: {type: replicated, size: 2, pg_num: 8}
workloads:
  - name: vm
    type: qemu_rbd
    pool: rep2
    image_size: 16MiB
    rw: randread
    block_size: 4KiB
    iodepth: 8
    cache: [none, writeback]
    duration: 2s
"""


def _processes_naming(text: str) -> list[str]:
    """Command lines of live processes that contain `text` (a run's socket directories carry its id)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmd:
                found.append(cmd)
    return found


@pytest.mark.skipif(shutil.which("qemu-nbd") is None, reason="qemu-nbd is not installed (scripts/setup.sh)")
def test_qemu_nbd_cache_modes_measure_and_leave_nothing(lab_cluster, cephbench_env, tmp_path):
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, SUITE)), "--out", str(out)], cephbench_env)
    assert res.returncode == 0, res.stderr + res.stdout
    run = RunDir.open(out)
    results = {r.test.id: r for r in run.results()[0]}
    assert list(results) == ["001-vm-randread-4KiB-qd8-cache-none", "002-vm-randread-4KiB-qd8-cache-writeback"]
    for (tid, r), cache in zip(results.items(), ("none", "writeback")):
        assert r.status == "ok", r.error
        m = r.measurement
        assert m.ops_per_s > 0 and m.op_size_bytes == 4096 and m.timeseries, tid
        assert m.extra["cache"] == cache and m.extra["client"] == "qemu-nbd" and m.extra["prefilled"] is True
        # the export that ran, with its cache mode, and the conf and keyring by path only
        [export] = [c for c in r.commands if c.startswith("qemu-nbd ")]
        assert f"--cache={cache}" in export and ":conf=" in export and "key=" not in export, export
    run_id = run.meta()["run_ids"][0]
    assert not _processes_naming(f"cephbench-{run_id}-nbd"), "a qemu-nbd of the run still runs"
    assert not glob.glob(f"/tmp/cephbench-{run_id}-*"), "a socket directory of the run is left"
    assert not [p for p in lab_cluster.pool_names() if p.startswith(f"cephbench-{run_id}")]
    assert json.loads((out / "resources.json").read_text()) == []
