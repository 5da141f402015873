"""rbd bench from the two client hosts of a multi-host lab: one rbd bench per client on an image of its own,
started together, each client kept as an instance with its host and its times; nothing is left after the run.

Runs on conftest's `clients_lab` (CEPHBENCH_TEST_CLIENTS_LAB=DIR reuses one).
"""

from __future__ import annotations

import json
import os

import yaml

from cephbench.core.results import RunDir

from labcli import run_cli, write_suite
from test_clients_fio import our_pools, work_dirs

BENCH = {"type": "rbd_bench", "pool": "rep2", "io_type": ["write"], "io_size": "4KiB", "io_threads": 4,
         "io_pattern": "rand", "image_size": "32MiB", "prefill": False, "duration": "2s", "clients": "all"}


def test_rbd_bench_from_two_clients(clients_lab, tmp_path):
    suite = yaml.safe_dump({"name": "clients-rbd-bench", "clients": "lab",
                            "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 8}}, "workloads": [BENCH]})
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, suite)), "--out", str(out)], {**os.environ, **clients_lab.env()})
    assert res.returncode == 0, res.stderr + res.stdout
    (r,) = RunDir.open(out).results()[0]
    assert r.status == "ok", r.error
    m = r.measurement
    assert m.tool == "rbd bench"
    # the load came from c1 and c2, each on its own image, not from this machine
    assert [i.host for i in m.instances] == ["c1", "c2"]
    for i in m.instances:
        assert i.start_unix_s and i.end_unix_s and i.end_unix_s - i.start_unix_s > 1.5
        assert i.ops_total > 0
    assert len({i.extra["image"] for i in m.instances}) == 2
    assert m.extra["clients"]["hosts"] == 2 and m.extra["images"] == 2
    assert m.ops_total == sum(i.ops_total for i in m.instances)
    assert all(c in r.commands[k] for k, c in enumerate(("on c1: ", "on c2: ")))
    run_id = json.loads((out / "run.json").read_text())["run_ids"][0]
    assert our_pools(clients_lab) == []
    assert work_dirs(clients_lab, run_id) == {"c1": [], "c2": []}
    assert json.loads((out / "resources.json").read_text()) == []
