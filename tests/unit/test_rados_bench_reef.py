"""rados bench's `--format json` of Reef 18.2.7 (tests/fixtures/rados_bench/ceph18.2.7_*): every number a string, and
the overflowed `stddev_iops` of a run whose seconds were uneven."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cephbench.drivers.rados_bench import parse_json

TEXT = (Path(__file__).parent.parent / "fixtures" / "rados_bench" / "ceph18.2.7_json_write_4K_between.txt").read_text()


def test_reefs_json_of_strings_reads_as_numbers():
    doc = json.loads(TEXT[TEXT.index("{"):])
    assert doc["total_writes_made"] == "4583" and int(doc["stddev_iops"]) > 10**9      # the overflow, as printed
    m = parse_json(TEXT, "write", 3)
    assert m.ops_total == 4583 and m.ops_per_s == pytest.approx(4583 / 3.353297, rel=1e-3)
    assert m.bytes_per_s == pytest.approx(5.338728 * 2**20, rel=1e-3)
    assert m.latency.mean_ns == pytest.approx(5.503e6)
