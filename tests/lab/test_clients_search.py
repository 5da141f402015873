"""A search of client hosts (`clients: auto`, issue 29 item 3) on the multi-host lab's two client hosts: rados bench's
write and rand each run from c1, then from c1 and c2 started together, in the group's one pool, each step a result
of its own labelled with its host count; and after the run nothing is left on the cluster or on either client. The
same of fio, rbd bench and RGW, each host on objects, images or buckets of its own.

Runs on conftest's `clients_lab` (CEPHBENCH_TEST_CLIENTS_LAB=DIR reuses one).
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import yaml

from cephbench.analysis.curves import curves
from cephbench.core.results import RunDir, Search, is_mon_silence
from cephbench.hosts.remote import HostRef

from labcli import run_cli, write_suite
from test_clients_fio import our_pools, work_dirs
from test_fanout import lab_ssh, on

SEARCH = {"type": "rados_bench", "pool": "rep2", "modes": ["write", "rand"], "object_size": "4KiB",
          "concurrency": 2, "duration": "2s", "clients": "auto"}


def run_ids_seen(lab, run_id: str) -> dict[str, list[str]]:
    """Processes on each client host whose command line names the run (its rados bench run names, its copy of
    cephbench-loadgen and the wrappers that start them), and that copy itself, asked over ssh."""
    ssh = lab_ssh(lab)
    # the bracket keeps the run id off this command's own line (and its ssh's): pgrep would find them
    pattern = f"cephbench-[{run_id[0]}]{run_id[1:]}"
    out = {}
    for c in ("c1", "c2"):
        res = on(HostRef(c, ssh.hosts[c]), ssh, f"pgrep -af '{pattern}'; ls -d ~/.cache/cephbench/bin/"
                                                f"{pattern}-* 2>/dev/null; true")
        assert res.returncode == 0, res.stderr
        out[c] = res.stdout.splitlines()
    return out


def run_search(lab, tmp_path, *workloads: dict) -> tuple:
    """The run of these workloads on the lab's client hosts, which must succeed: its directory and its results. No
    page-cache drops before the reads (3 OSD hosts over ssh, per read step): the tests are of the hosts a step runs
    on, not of cold reads."""
    suite = yaml.safe_dump({"name": "clients-search", "clients": "lab", "settings": {"drop_caches": False},
                            "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 8}},
                            "workloads": list(workloads)})
    out = tmp_path / "run"
    res = run_cli(["run", str(write_suite(tmp_path, suite)), "--out", str(out)], {**os.environ, **lab.env()})
    assert res.returncode == 0, res.stderr[-2000:] + res.stdout[-2000:]
    return out, RunDir.open(out).results()[0]


def test_clients_auto_runs_each_step_on_its_hosts_and_leaves_nothing(clients_lab, tmp_path):
    out, results = run_search(clients_lab, tmp_path, SEARCH)
    # the plan went to the lab's two client hosts (validate alone would plan the worst case, to 256)
    assert [(r.test.params["phase"], r.test.params["clients"]) for r in results] == \
        [("write", 1), ("write", 2), ("rand", 1), ("rand", 2)]
    assert [r.status for r in results] == ["ok"] * 4, [r.error for r in results]
    assert len({r.test.group for r in results}) == 1
    assert all(r.test.search == Search(param="clients", max=2) for r in results)
    assert [r.test.id.rsplit("-", 2)[-2:] for r in results] == [["clients", "1"], ["clients", "2"]] * 2
    for r in results:
        m = r.measurement
        hosts = ["c1", "c2"][:r.test.params["clients"]]
        parts = m.instances or [m]      # one host: its figures are the result's own
        assert [i.host for i in parts] == hosts, r.test.id                  # each step on its own hosts
        assert all(i.ops_total and i.end_unix_s - i.start_unix_s > 1.5 for i in parts), r.test.id
        # each host's rados bench read or wrote the objects of its own run name, and only the step's hosts were
        # watched
        # (a step whose seconds stalled ran again, its commands beside the first run's, and its note says so)
        ran = [c.split("--run-name ")[1].split()[0].rsplit("-", 2)[1] for c in r.commands]
        runs = len(ran) // len(hosts)
        assert runs >= 1 and ran == hosts * runs, r.commands
        assert runs == 1 or any(n.startswith("search step run again after a stall") for n in r.notes), r.notes
        others = [c for c in ("c1", "c2") if c not in hosts]
        if runs == 1:
            assert [p.rsplit("-", 2)[1] for p in r.raw] == hosts, r.raw
            watched = sorted(f.name for f in (out / "raw" / r.test.id).glob("host-c*-watch.txt"))
            assert watched == [f"host-{h}-watch.txt" for h in hosts], watched
        else:                   # a rerun's raw output is named apart (-round<n>): the step's hosts, and no other
            assert all(any(f"-{h}-" in p or p.endswith(f"-{h}") for p in r.raw) for h in hosts), r.raw
            assert not [p for p in r.raw for o in others if f"-{o}-" in p or p.endswith(f"-{o}")], r.raw
            watched = [f.name for f in (out / "raw" / r.test.id).rglob("host-c*watch*")]
            assert not [w for w in watched for o in others if f"host-{o}" in w], watched
        assert m.ops_total == sum(i.ops_total for i in parts)
    # both hosts' reads read what their own write made: the write's search reached both
    assert not any("the write's search wrote from" in n for r in results for n in r.notes)
    for phase in ("write", "rand"):
        first, last = (r for r in results if r.test.params["phase"] == phase)
        assert first.search_stop is None and last.search_stop is not None, (first.search_stop, last.search_stop)
        # two loads cannot bend (the knee rule needs three) and no latency bound was given: every host ran
        assert last.search_stop.text == "reached max 2 client hosts before the knee rule stopped it"
    # no step is warned (a warned figure is no point of a curve): CI once warned the 2-host rand "ran out of
    # objects" for the hosts' common window, 1.4 s of its 2 s, while each host read its whole 2 s
    assert [[w for w in r.warnings if not is_mon_silence(w)] for r in results] == [[]] * 4
    # one curve per phase, over the hosts: 2 in flight on each
    (write, rand) = sorted(curves(results), key=lambda c: c.title != "write 4KiB (rados_bench)")
    assert [p.load for p in write.points] == [2, 4] == [p.load for p in rand.points]
    assert [p.label for p in write.points] == ["t=2 clients=1", "t=2 clients=2"]

    run_id = json.loads((out / "run.json").read_text())["run_ids"][0]
    assert our_pools(clients_lab) == []
    assert json.loads((out / "resources.json").read_text()) == []
    assert work_dirs(clients_lab, run_id) == {"c1": [], "c2": []}
    assert run_ids_seen(clients_lab, run_id) == {"c1": [], "c2": []}
    print("\n" + "\n".join(f"{r.test.id}: {r.measurement.ops_per_s:.0f} objects/s, mean "
                           f"{r.measurement.latency.mean_ns / 1e6:.2f} ms on {r.test.params['clients']} hosts"
                           f"{' stop: ' + r.search_stop.text if r.search_stop else ''}" for r in results))


def test_fio_and_rbd_bench_clients_auto_run_each_step_on_its_hosts_objects_or_images_and_leave_nothing(
        clients_lab, tmp_path):
    """fio and rbd bench searching their client hosts, each step's tools on its own hosts. fio's rados engine: each
    host on objects of its own; a read step reads only hosts whose objects are all written (the write's steps are
    time-based: a host whose write did not cover them gets them written first, said in a note). librbd (fio) and rbd
    bench: the largest step's hosts' images made and prefilled once, each step on its hosts' own. Nothing is
    left."""
    searches = [{"type": "fio_rados", "pool": "rep2", "rw": ["write", "read"], "block_size": "64KiB",
                 "iodepth": 2, "duration": "2s", "clients": "auto"},
                {"type": "fio_rbd", "pool": "rep2", "rw": ["randwrite"], "block_size": "4KiB", "iodepth": 2,
                 "image_size": "16MiB", "duration": "2s", "clients": "auto"},
                {"type": "rbd_bench", "pool": "rep2", "io_type": ["write"], "io_size": "4KiB", "io_threads": 2,
                 "io_pattern": "rand", "image_size": "16MiB", "duration": "2s", "clients": "auto"},
                {"type": "rgw", "op": ["get"], "object_size": "4KiB", "objects": 32, "concurrency": 2,
                 "duration": "2s", "clients": "auto"}]
    out, results = run_search(clients_lab, tmp_path, *searches)
    assert [(r.test.kind, r.test.params["phase"], r.test.params["clients"]) for r in results] == \
        [("fio_rados", "write", 1), ("fio_rados", "write", 2), ("fio_rados", "read", 1), ("fio_rados", "read", 2),
         ("fio_rbd", "randwrite", 1), ("fio_rbd", "randwrite", 2), ("rbd_bench", "write", 1), ("rbd_bench", "write", 2),
         ("rgw", "get", 1), ("rgw", "get", 2)]
    assert [r.status for r in results] == ["ok"] * 10, [r.error for r in results]
    for r in results:
        m = r.measurement
        hosts = ["c1", "c2"][:r.test.params["clients"]]
        parts = m.instances or [m]
        assert [i.host for i in parts] == hosts, r.test.id
        assert all(i.ops_total and i.end_unix_s - i.start_unix_s > 1.5 for i in parts), r.test.id
        # a step whose seconds stalled ran again (its note says so), its raw output named apart (-round<n>, or a
        # round<n> directory): the step's hosts are those of every run's output, and no other host's
        rerun = any(n.startswith("search step run again after a stall") for n in r.notes)
        raw = out / "raw" / r.test.id
        if r.test.kind == "rgw":            # loadgen's document and log, one of each per host's instance
            names = [p.name for p in raw.glob("loadgen-get-*.log")]
        elif r.test.kind != "rbd_bench":    # fio's files come back into a directory per host
            # (not a round's directory, nor run<N>/: the evidence of another run of the step's tools, a read's
            # write of the objects it needs first among them, kept apart: docs/suites.md)
            names = [f"-{p.name}-" for p in raw.iterdir()
                     if p.is_dir() and not p.name.startswith("round") and not re.fullmatch(r"run[0-9]+", p.name)]
            assert rerun or len(names) == len([p for p in raw.iterdir()
                                               if p.is_dir() and not re.fullmatch(r"run[0-9]+", p.name)]), r.test.id
        else:                               # rbd bench's output, one file per host's image
            names = [p.name for p in raw.glob("rbd-bench-*.txt")]
        assert sorted({h for n in names for h in ("c1", "c2") if f"-{h}-" in n}) == hosts, (r.test.id, names)
        assert rerun or len(names) == len(hosts), (r.test.id, names)
        if r.test.kind not in ("fio_rados", "rgw"):     # the step's hosts' images, one each, prefilled once
            assert m.extra["images"] == len(hosts) and m.extra["prefilled"] is True, m.extra
    filled = [n for r in results for n in r.notes if "were written in full before this read" in n]
    # at most one fill a host: the second read step fills no host the first did
    assert not any(" of c1 " in n for n in filled[1:]), filled
    run_id = json.loads((out / "run.json").read_text())["run_ids"][0]
    assert our_pools(clients_lab) == []
    assert json.loads((out / "resources.json").read_text()) == []
    assert work_dirs(clients_lab, run_id) == {"c1": [], "c2": []}
    # RGW: each host's buckets of each step gone with the run's user (as radosgw-admin lists them)
    admin = ["radosgw-admin", "--conf", str(clients_lab.conf)]
    users = json.loads(subprocess.run([*admin, "user", "list"], capture_output=True, text=True, timeout=60).stdout)
    buckets = json.loads(subprocess.run([*admin, "bucket", "list"], capture_output=True, text=True, timeout=60).stdout)
    assert not [u for u in users if u.startswith("cephbench-") and u != "cephbench-lab"], users
    assert not [b for b in buckets if b.startswith("cephbench-")], buckets
    print("\n".join(f"{r.test.id}: {r.measurement.ops_per_s:.0f} ops/s on {r.test.params['clients']} hosts; "
                     + "; ".join(n for n in r.notes if "written in full" in n) for r in results))
