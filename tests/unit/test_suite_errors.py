"""Every bad suite of a table gets its own one line: what is wrong, at its YAML path, and how to fix it — the
valid choices listed, a near miss answered with "did you mean", every problem of the suite named, no library
wording (issue 18, point 2). The expected lines are whole: a change of wording is a change of this table."""

import pytest

from clirun import cephbench
from cephbench.kinds import PLUGINS
from cephbench.kinds.schema import WorkloadModel, _descriptors

# every kind a suite may name, in the registry's order: the list a bad type is answered with (derived, so that a
# kind added is its own module and its registry line, not a line here too)
TYPES = ", ".join(p.KIND.name for p in PLUGINS if p.MODEL is not None)
# ... and those that run in rounds, in the schema's order
ROUNDS = ", ".join(k.name for k in _descriptors(WorkloadModel) if k.steady_phases)


CASES = [
    ('name: t\nworkloads:\n  - {type: rados-bench}\n',
     f"workloads[0]: unknown type 'rados-bench' (did you mean 'rados_bench'?); the types are {TYPES}"),
    ('name: t\nworkloads:\n  - {type: rados_bench, concurency: 4}\n',
     "workloads[0].concurency: unknown key (did you mean 'concurrency'?); the keys here are clients, concurrency, duration, instances, modes, name, object_size, pool, repeat, steady_state, type, variants"),
    ('name: t\nworkloads:\n  - {type: rados_bench, concurrency: "4,16"}\n',
     "workloads[0].concurrency: '4,16' is text, not a number; for a sweep write a YAML list: [4, 16]"),
    ('name: t\npools:\n  ec: {type: erasure, k: 0, m: -1}\nworkloads:\n  - {type: rados_bench, pool: ec}\n',
     'pools.ec.k: must be greater than zero, got 0; pools.ec.m: must be greater than zero, got -1'),
    ('name: t\nworkloads:\n  - {type: rados_bench, duration: -2s}\n',
     "workloads[0].duration: '-2s' is negative: a duration must be positive, e.g. 2s"),
    ('name: t\nworkloads:\n  - {type: rados_bench, modes: [write, sequential]}\n',
     "workloads[0].modes[1]: 'sequential' is not one of write, seq, rand"),
    ('name: t\nsettings: {drop_cache: false}\nworkloads:\n  - {type: rados_bench}\n',
     "settings.drop_cache: unknown key (did you mean 'drop_caches'?); the keys here are cold_reads, drop_caches, interleave_builds, max_in_flight, max_instances, max_raw_used, osd_counters, other_load, prometheus, set_noscrub, ssh, variant_restarts, watch_osd_hosts"),
    ('name: t\npools:\n  rep: {type: replicated, sise: 3}\nworkloads:\n  - {type: rados_bench, pool: rep}\n',
     "pools.rep.sise: unknown key (did you mean 'size'?); the keys here are allow_ec_overwrites, failure_domain, k, m, min_size, pg_num, plugin, size, type"),
    ('name: t\nworkloads:\n  - {type: rados_bench, instances: many}\n',
     "workloads[0].instances: must be a whole number, got 'many'"),
    ('nme: t\nworkloads:\n  - {type: rados_bench}\n',
     "name: required key is missing; nme: unknown key (did you mean 'name'?); the keys here are baseline, clients, description, name, pools, settings, target, variants, workloads"),
    ('name: t\nworkloads:\n  - {concurrency: 4}\n',
     f"workloads[0]: needs a 'type' key: one of {TYPES}"),
    ('name: t\nworkloads:\n  - {type: rados_bench, object_size: -4KiB}\n',
     "workloads[0].object_size: '-4KiB' is negative: a size must be positive, e.g. 4KiB"),
    ('name: t\nworkloads:\n  - {type: rados_bench, object_size: 4 MB}\n',
     "workloads[0].object_size: '4 MB' is ambiguous: MB means 10^6 bytes to some tools and 2^20 to others (rados bench); write 4MiB"),
    ('name: t\nworkloads:\n  - {type: rados_bench, object_size: 4KB}\n',
     "workloads[0].object_size: '4KB' is ambiguous: KB means 10^3 bytes to some tools and 2^10 to others (rados bench); write 4KiB"),
    ('name: t\nworkloads:\n  - {type: rados_bench, duration: 10 minutes}\n',
     "workloads[0].duration: '10 minutes' is not a duration; use e.g. 30s, 2m or 500ms"),
    ('name: t\nworkloads:\n  - {type: rados_bench, pool: nosuch}\n',
     "workloads[0].pool: profile 'nosuch' is not defined in pools (defined: default)"),
    ('name: t\nworkloads:\n  - {type: fio_rbd, rw: randomwrite}\n',
     "workloads[0].rw: 'randomwrite' is not one of read, write, randread, randwrite, randrw (did you mean 'randwrite'?)"),
    ('name: t\nworkloads:\n  - {type: fio_rbd, client: krbdx}\n',
     "workloads[0].client: 'krbdx' is not one of librbd, krbd (did you mean 'krbd'?)"),
    ('name: t\nworkloads:\n  - {type: rgw, protocol: s4}\n',
     "workloads[0].protocol: 's4' is not one of s3, swift"),
    ('name: t\nworkloads:\n  - {type: rgw, op: [putt]}\n',
     "workloads[0].op[0]: 'putt' is not one of put, get, stat, list, delete, mixed (did you mean 'put'?)"),
    ('name: t\nworkloads:\n  - {type: osd_bench, total: 0}\n',
     'workloads[0].total: 0 must be greater than zero'),
    ('name: t\nworkloads:\n  - {type: osd_bench, repeat: 0}\n',
     'workloads[0].repeat: must be greater than zero, got 0'),
    ('name: t\nworkloads: []\n',
     'workloads: needs at least 1 item'),
    ('name: t\n',
     'workloads: required key is missing'),
    ('name: t\nworkloads:\n  - rados_bench\n',
     "workloads[0]: must be a mapping (key: value), got 'rados_bench'"),
    ('name: t\nworkloads:\n  - {type: rados_bench, concurrency: true}\n',
     'workloads[0].concurrency: must be a whole number, got True'),
    ('name: t\nsettings: {max_raw_used: 2}\nworkloads:\n  - {type: rados_bench}\n',
     'settings.max_raw_used: must be at most 0.95, got 2'),
    ('name: t\nsettings: {ssh: {port: 70000}}\nworkloads:\n  - {type: rados_bench}\n',
     'settings.ssh.port: must be at most 65535, got 70000'),
    ('name: t\nworkloads:\n  - {type: rados_bench, duration: 1s, steady_state: {max: 30s, window: 3, max_range: 1.0}}\n',
     'workloads[0].steady_state.max_range: must be less than 1.0, got 1.0'),
    ('name: t\nsettings: {ssh: {hosts: [node1]}}\nworkloads:\n  - {type: rados_bench}\n',
     "settings.ssh.hosts: must be a mapping (key: value), got ['node1']"),
    ('name: t\nbaseline: {network: {hosts: osd_hosts}}\nworkloads:\n  - {type: rados_bench}\n',
     "baseline.network.hosts: give a list of host names, or osd-hosts (this host and every host with an OSD), not 'osd_hosts'"),
    ('name: t\nbaseline: {disks: {size: -1GiB}}\nworkloads:\n  - {type: rados_bench}\n',
     "baseline.disks.paths: required key is missing; baseline.disks.size: '-1GiB' is negative: a size must be positive, e.g. 1GiB"),
    ('name: t\nbaseline: {disks: {patern: [dd]}}\nworkloads:\n  - {type: rados_bench}\n',
     "baseline.disks.paths: required key is missing; baseline.disks.patern: unknown key (did you mean 'patterns'?); the keys here are allow_raw_device, hosts, paths, patterns, runtime, size"),
    ('name: t\npools:\n  rep: {type: replicated, size: 0}\nworkloads:\n  - {type: rados_bench, pool: rep}\n',
     'pools.rep.size: must be greater than zero, got 0'),
    ('name: t\npools:\n  rep: {type: mirrored}\nworkloads:\n  - {type: rados_bench, pool: rep}\n',
     "pools.rep: unknown type 'mirrored'; the types are replicated, erasure"),
    ('name: t\npools:\n  p: {existing: bench, size: 2, pg_num: 8}\nworkloads:\n  - {type: rados_bench, pool: p}\n',
     "pools.p: an existing pool is used as it is, and size, pg_num would change it; remove them, or remove existing "
     "to have cephbench create a pool of its own"),
    ('name: t\npools:\n  p: {existing: bench, type: replicated}\nworkloads:\n  - {type: rados_bench, pool: p}\n',
     "pools.p: an existing pool is used as it is, and type would change it; remove it, or remove existing to have "
     "cephbench create a pool of its own"),
    ('name: t\npools:\n  p: {existing: a/b}\nworkloads:\n  - {type: rados_bench, pool: p}\n',
     "pools.p.existing: 'a/b' is not a pool name (no spaces, '/' or '@'); give it as 'ceph osd pool ls' lists it"),
    ('name: t\npools:\n  p: {existing: bench}\nworkloads:\n  - {type: rbd_bench, pool: p}\n',
     "workloads[0].pool: 'p' names an existing pool, and only rados_bench workloads write in one so far; give this "
     "workload a pool cephbench creates"),
    ('name: t\nclients: [a, a]\nworkloads:\n  - {type: rados_bench, clients: 1}\n',
     "clients[1]: host 'a' is listed twice (first as clients[0]); list each client host once"),
    ('name: t\nclients: [a, b]\nworkloads:\n  - {type: rados_bench, clients: 5}\n',
     'workloads[0].clients: 5 clients, and the suite lists 2; give at most 2, or all'),
    ('name: t\nworkloads:\n  - {type: rados_bench, clients: 2}\n',
     'workloads[0].clients: the suite lists no client hosts; add clients: [host, ...] (or clients: lab) at the top of the suite'),
    ('name: t\nworkloads:\n  - {type: rados_bench, repeat: -1}\n',
     'workloads[0].repeat: must be greater than zero, got -1'),
    ('name: t\nvariants: [{name: a}, {name: a}]\nworkloads:\n  - {type: rados_bench}\n',
     "variants[1].name: variant 'a' is given twice (first as variants[0]); give each variant its own name"),
    ('name: t\nvariants: [{name: a, lab: {hosts: 3, public_net: 1gbps}}]\nworkloads:\n  - {type: rados_bench}\n',
     "variants[0].lab.public_net: rate '1gbps' is in bytes per second, not bits (a link's rate is in bits: write 1gbit)"),
    ('name: t\nvariants: [{name: a, option: []}]\nworkloads:\n  - {type: rados_bench}\n',
     "variants[0].option: unknown key (did you mean 'options'?); the keys here are lab, name, options, sweep"),
    ('name: t\nvariants: {sweep: {who: osd, name: osd_max_backfills, values: [1, 1]}}\nworkloads:\n  - {type: rados_bench}\n',
     'variants[0].sweep.values[1]: 1 is given twice (first as values[0]); give each value once'),
    ('name: t\nworkloads:\n  - {type: osd_bench, steady_state: {max: 60s}}\n',
     f'workloads[0].steady_state: osd_bench does not run in rounds; only {ROUNDS} do (remove steady_state here, or give the phase a longer duration)'),
    ('name: t\nworkloads:\n  - {type: fio_rbd, duration: 10s, steady_state: {max: 30s, window: 4}}\n',
     "workloads[0].steady_state: max 30s holds fewer than the window's 4 rounds of 10s (each round is one duration); give max at least 40s"),
    ('name: t\nworkloads:\n  - {type: rbd_bench, io_total: 1MiB, steady_state: {max: 30s}}\n',
     "workloads[0].steady_state: a phase runs in rounds of its duration; give duration (a length in bytes or operations is not rounds of time)"),
    ('name: t\nworkloads:\n  - {type: rados_bench, duration: 10s, steady_state: {max: 30s}}\n',
     "workloads[0].steady_state: max 30s holds fewer than the window's 5 rounds of 10s (each round is one duration); give max at least 50s"),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_a_bad_suite_gets_one_line_naming_the_path_and_the_fix(tmp_path, text, expected):
    suite = tmp_path / "suite.yaml"
    suite.write_text(text)
    res = cephbench("validate", suite)
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert lines == [f"cephbench: {suite}: {expected}"]
    for library_wording in ("Input should", "List should", "validation error", "Traceback"):
        assert library_wording not in res.stderr


def test_the_table_is_long_enough_to_mean_something():
    assert len(CASES) >= 30
