"""The 2018 homelab's EC finding, in the direction this lab finds it (issue 17, item 6; suites/seed-homelab-2018.yaml):
1 MiB writes into an erasure-coded 2+1 pool are faster than into a replicated size 3 pool.

On the shared multi-host lab (3 hosts of one OSD, public links of 200 Mbit/s, no cluster network), written from this
machine's unshaped address on the lab's bridge, the links bind: each host's link carries, per byte written, a third
of the client's data plus what the primaries forward, 2/3 of a byte for replica 3 (two more copies) and 1/3 for
EC 2+1 (two 1/2-byte chunks, one kept): 1 byte in per host against 2/3, so EC 2+1 can write 1.5x as fast. Sanders
found EC 2+1 1.8x faster on his drives (83.4 against 46.7 MB/s); the suite's run on 4 throttled drives x1.6-2.4.
The cheapest check of that direction: one `cephbench run` of a 5 s 1 MiB write into each pool, 37-50 s with the lab's
start. Measured (2026-11-23, 2 shared cores): replica 3 15.3 and 15.9 MiB/s, EC 2+1 31.5 and 29.7 (x2.06, x1.87):
more than the links' x1.5, replica 3 reaching less of its links (two copies out of each primary's link, each write
waiting for the slowest of three). The bound is loose, x1.15: a short write on 2 shared cores is noisy. The
figures are printed.
"""

from __future__ import annotations

from pathlib import Path

from cephbench.lab import Lab

from test_ground_truth import run_suite

GROUND_TRUTH = True    # measures rates: runs alone, with no other load on the CPUs
MULTI_HOST = True

MiB = 2**20
SUITE = """name: seed-homelab-ec
settings: {drop_caches: false}
pools:
  rep3: {type: replicated, size: 3, pg_num: 16}
  ec21: {type: erasure, k: 2, m: 1, pg_num: 16}
workloads:
  - {type: rados_bench, pool: [rep3, ec21], modes: [write], object_size: 1MiB, concurrency: 16, duration: 5s}
"""


def test_ec21_writes_1mib_faster_than_replica_3_when_the_links_bind(multihost_lab: Lab, tmp_path: Path):
    results, output = run_suite(multihost_lab, tmp_path, SUITE)      # this machine's, the lab's own target
    assert [r["status"] for r in results] == ["ok", "ok"], output[-3000:]
    rate = {r["test"]["params"]["pool"]: r["measurement"]["bytes_per_s"] / MiB for r in results}
    print(f"\n1 MiB writes, 5 s: replica 3 {rate['rep3']:.1f} MiB/s, EC 2+1 {rate['ec21']:.1f} MiB/s "
          f"(x{rate['ec21'] / rate['rep3']:.2f})")
    assert rate["ec21"] > 1.15 * rate["rep3"], rate
