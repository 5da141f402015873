"""A VM's path to RBD (kind qemu_rbd) against the real lab: an image exported by qemu-nbd in two of QEMU's cache modes,
read by fio's nbd engine; each result has its IOPS and its cache mode, the client's CPU counts its qemu-nbd's, and
nothing is left: no qemu-nbd, no socket directory, no image or pool, an empty ledger. From the two client hosts of a
multi-host lab (conftest's `clients_lab`) too: each client exports its own image and runs its own fio."""

import glob
import json
import shutil
from pathlib import Path

import pytest

from cephbench.core.results import RunDir

from labcli import run_cli, write_suite

NO_QEMU = pytest.mark.skipif(shutil.which("qemu-nbd") is None, reason="qemu-nbd is not installed (scripts/setup.sh)")

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


@NO_QEMU
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
        # the client's CPU per op is fio's and its qemu-nbd's (read at the export's start and stop, by its PID)
        (client,) = [c for c in r.evidence.cpu if c.who == "client"]
        assert client.cpu_s > 0 and client.ops, client
        assert "the client's CPU counts its 1 qemu-nbd export(s)' " in " ".join(r.evidence.notes), r.evidence.notes
    run_id = run.meta()["run_ids"][0]
    assert not _processes_naming(f"cephbench-{run_id}-nbd"), "a qemu-nbd of the run still runs"
    assert not glob.glob(f"/tmp/cephbench-{run_id}-*"), "a socket directory of the run is left"
    assert not [p for p in lab_cluster.pool_names() if p.startswith(f"cephbench-{run_id}")]
    assert json.loads((out / "resources.json").read_text()) == []


@NO_QEMU
def test_qemu_nbd_on_two_client_hosts_each_its_own_image_and_nothing_left(clients_lab, tmp_path):
    import os

    import yaml
    from test_clients_fio import our_pools, work_dirs
    env = {**os.environ, **clients_lab.env()}
    suite = {"name": "vm-clients", "clients": "lab", "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 8}},
             "workloads": [{"name": "vm", "type": "qemu_rbd", "pool": "rep2", "image_size": "16MiB",
                            "rw": ["randwrite", "randread"], "block_size": "4KiB", "iodepth": 4, "cache": "none",
                            "duration": "2s", "clients": "all"}]}
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, yaml.safe_dump(suite))), "--out", str(out)], env)
    assert res.returncode == 0, res.stderr + res.stdout
    run = RunDir.open(out)
    results = run.results()[0]
    assert [r.test.id for r in results] == ["001-vm-randwrite-4KiB-qd4", "002-vm-randread-4KiB-qd4"]
    for r in results:
        assert r.status == "ok", (r.test.id, r.error)
        m = r.measurement
        assert m.tool == "fio nbd (qemu-nbd)" and m.extra["client"] == "qemu-nbd" and m.extra["cache"] == "none"
        # each client an instance, on an image of its own exported by a qemu-nbd there
        assert [i.host for i in m.instances] == ["c1", "c2"] and all(i.ops_total > 0 for i in m.instances)
        assert m.extra["images"] == 2 and [i.extra["images"] for i in m.instances] == [1, 1]
        exports = [c for c in r.commands if "qemu-nbd" in c and "--socket=" in c]
        assert [c.split(":", 1)[0] for c in exports] == ["on c1", "on c2"], r.commands
        assert all("-c1-img0" in c for c in exports[:1]) and all("-c2-img0" in c for c in exports[1:]), exports
        assert all("key=" not in c for c in exports)
        # the clients' CPU per op: both fios' (their wrappers' rusage) and both qemu-nbds' (over ssh, by the PID
        # each wrote)
        (client,) = [c for c in r.evidence.cpu if c.who == "client"]
        assert client.host == "c1, c2" and client.cpu_s > 0, client
        # counted, or said not to be (an export over ssh not read at both ends: seen once in two runs, 22:30 UTC
        # 2026-12-06, before its first reading was tried again while its pid file was not there yet)
        said = " ".join(r.evidence.notes)
        assert ("the client's CPU counts its 2 qemu-nbd export(s)' " in said
                or "its qemu-nbd exports' CPU was not read" in said), r.evidence.notes
    run_id = run.meta()["run_ids"][0]
    assert not _processes_naming(f"cephbench-{run_id}-nbd"), "a qemu-nbd of the run still runs"
    assert work_dirs(clients_lab, run_id) == {"c1": [], "c2": []}
    assert our_pools(clients_lab) == []
    assert json.loads((out / "resources.json").read_text()) == []
