"""The real lab clusters of the integration session: the one-host lab, the multi-host lab and the lab of many
clients, each started when a test first needs it and stopped as soon as no test left does (the tests are ordered
so that each lab's tests run together): idle labs beside a measuring one take CPU from it.

CEPHBENCH_TEST_LAB=DIR (and _MH_LAB, _CLIENTS_LAB) reuses a lab that is already running there (and leaves it
running); otherwise a lab is started in a temporary directory and stopped when done.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

import pytest

from cephbench.cluster.ceph import Cluster, Target
from cephbench.lab import Lab

from labcli import TINY, run_cli, write_suite


LABS = ("lab", "clients_lab", "multihost_lab")      # the session's labs, in the order their tests run
_STOP: dict[str, Callable[[], None]] = {}           # lab fixture -> how to stop it, while it runs
_CPU_KEY = pytest.StashKey[Path]()                   # the session's cpuacct group (CEPHBENCH_TEST_CPU=1)
_CPU_AT_KEY = pytest.StashKey[int | None]()          # ... its usage when a test's setup began
_RUNS_KEY = pytest.StashKey[set[int]]()              # the cephbench commands this process ran, as a test's call began
# a cephbench command a failed test leaves running gets SIGINT, as a user's Ctrl-C, and this long to clean up
LEFT_RUNNING_GRACE_S = 90


def _session_lab(name: str, reuse_env: str, prefix: str, up: Callable[[Lab], object]) -> Iterator[Lab]:
    reuse = os.environ.get(reuse_env)
    if reuse:
        lb = Lab(Path(reuse))
        if not lb.is_running():
            up(lb)
        yield lb
        return
    d = Path(tempfile.mkdtemp(prefix=prefix))
    lb = Lab(d / "lab")

    def stop() -> None:
        lb.down()
        shutil.rmtree(d, ignore_errors=True)
    _STOP[name] = stop
    try:
        up(lb)
        yield lb
    finally:
        if _STOP.pop(name, None) is not None:
            stop()


def _group(item: pytest.Item) -> int:
    """Tests of no shared lab first (they make and check their own), then each lab's tests together, and last the
    tests of labs on other releases (`NEEDS_ROOTS`): their roots are still being built when the session starts
    (`make roots`)."""
    if getattr(item.module, "NEEDS_ROOTS", False):
        return len(LABS) + 1
    used = [i for i, name in enumerate(LABS) if name in item.fixturenames]
    return 1 + used[0] if used else 0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--one-host-shard", default=None, metavar="K/N",
                     help="run only the K-th of N shares of the one-host tests (whole modules, balanced by cost)")
    parser.addoption("--truth-shard", default=None, metavar="K/N",
                     help="run only the K-th of N shares of the ground-truth tests (whole modules, balanced by cost)")


# Seconds each one-host module took in `make test-lab` (three shares beside the multi-host half, fresh-clone run SS,
# 2026-11-26: `scripts/module_costs.py` prints them from the shares' junit XML): what balances the shares of the
# one-host tests. A module not listed counts 15 s a test.
ONE_HOST_COST_S = {
    "test_production_defaults.py": 159, "test_run.py": 129, "test_lab_shape_signals.py": 128,
    "test_release_lab.py": 86, "test_baseline.py": 84, "test_concurrent_runs.py": 82, "test_variants.py": 73,
    "test_variants_steady.py": 67, "test_outages.py": 61, "test_signals.py": 60, "test_cluster_health.py": 56,
    "test_rgw.py": 46, "test_cleanup_safety.py": 98, "test_lab.py": 37, "test_rbd.py": 33, "test_other_load.py": 31,
    "test_report_browser.py": 27, "test_remote_baselines.py": 27, "test_release_variants.py": 26,
    "test_rados_seq.py": 26, "test_search.py": 25, "test_shape_facts.py": 21, "test_mclock_verdict.py": 17,
    "test_cluster_lost.py": 15, "test_remote_hosts.py": 14, "test_capacity.py": 14, "test_compare_history.py": 12,
    "test_rados_load_gen.py": 11, "test_connection.py": 9, "test_cpu_per_op.py": 9, "test_evidence_tell.py": 6,
    # measured alone (not in a share yet): its image's build (50-97 s, kept while the sources stay) and a Reef lab
    "test_toolbox_image.py": 104,
    # measured alone: a Reef lab of 2 OSDs and RGW in containers, a run from here and one from the toolbox image;
    # a start killed with SIGKILL and its down
    "test_container_lab.py": 120,
}


# Seconds each ground-truth module took in two shares at once (fresh-clone run V, its labs' start included), what
# balances its shares: they run at once, each on labs of its own (each lab host's CPU is its own cpuacct group, and
# the shares together keep the CPUs about half busy: `make test-lab` prints the phase's share).
# test_ground_truth_devices includes its knee search on throttled drives (23 s in V; 39-56 s alone on a busy VM).
GROUND_TRUTH_COST_S = {
    # fresh-clone run at 8e2c2a3 (2026-12-07), three shares at once
    "test_ground_truth.py": 237, "test_clients_ground_truth.py": 147, "test_seed_han.py": 161,
    "test_ground_truth_devices.py": 131, "test_seed_homelab.py": 34, "test_osd_bench.py": 85,
    "test_ground_truth_cpu.py": 76,
}


def _shard(items: list[pytest.Item], k: int, n: int, costs: dict[str, int]) -> set[str]:
    """The modules of the k-th share (1-based) of `items`: the costliest first, each to the share with the least so
    far."""
    tests: dict[str, int] = {}
    for it in items:
        tests[it.path.name] = tests.get(it.path.name, 0) + 1
    shares: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(n)]
    for name in sorted(tests, key=lambda m: (-costs.get(m, 15 * tests[m]), m)):
        i = min(range(n), key=lambda j: shares[j][0])
        shares[i] = (shares[i][0] + costs.get(name, 15 * tests[name]), shares[i][1] + [name])
    return set(shares[k - 1][1])


def _keep_share(config: pytest.Config, items: list[pytest.Item], option: str, wanted: Callable[[pytest.Item], bool],
                costs: dict[str, int]) -> None:
    """Keep only the items of the share that `option` (K/N) names, among those `wanted`."""
    shard = config.getoption(option)
    if not shard:
        return
    k, n = (int(x) for x in shard.split("/"))
    mine = _shard([it for it in items if wanted(it)], k, n, costs)
    keep = [it for it in items if wanted(it) and it.path.name in mine]
    config.hook.pytest_deselected(items=[it for it in items if it not in keep])
    items[:] = keep


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        # what makes namespaces, links, loop devices or cgroups (and checks the machine has none left) runs in the
        # multi-host half of `make test-lab`, beside the one-host half (which makes none of them)
        if getattr(item.module, "MULTI_HOST", False) or {"multihost_lab", "clients_lab"} & set(item.fixturenames):
            item.add_marker("multihost")
        if getattr(item.module, "GROUND_TRUTH", False):
            item.add_marker("groundtruth")
    _keep_share(config, items, "--one-host-shard", lambda it: it.get_closest_marker("multihost") is None,
                ONE_HOST_COST_S)
    _keep_share(config, items, "--truth-shard", lambda it: it.get_closest_marker("groundtruth") is not None,
                GROUND_TRUTH_COST_S)
    items.sort(key=_group)          # stable: each module's tests keep their order


# CEPHBENCH_TEST_CPU=1 (make test-lab's one-host shares): the session runs in a cpuacct group of its own, which its
# lab's daemons and every process of its tests inherit, and each test's CPU seconds go in the junit XML as the
# property `cpu_s` (scripts/module_costs.py sums them per module): on a CPU-bound phase, what a test costs the
# others. The group is removed at the session's end.
_CPU_GROUP = Path("/sys/fs/cgroup/cpuacct")


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("CEPHBENCH_TEST_CPU") != "1" or not _CPU_GROUP.is_dir():
        return
    group = _CPU_GROUP / f"pytest-cpu-{os.getpid()}"
    group.mkdir(exist_ok=True)
    (group / "cgroup.procs").write_text(str(os.getpid()))
    session.config.stash[_CPU_KEY] = group


def pytest_sessionfinish(session: pytest.Session) -> None:
    group = session.config.stash.get(_CPU_KEY, None)
    if group is None:
        return
    (_CPU_GROUP / "cgroup.procs").write_text(str(os.getpid()))
    for _ in range(300):            # a lab's daemons stopped at the last teardown may still be exiting (CI: > 5 s)
        try:
            group.rmdir()
            return
        except OSError as exc:
            why = exc
            time.sleep(0.1)
    print(f"cpu group {group} not removed: {why} (make test-lab removes it once every share has ended)")


def _cpu_ns(item: pytest.Item) -> int | None:
    group = item.config.stash.get(_CPU_KEY, None)
    return int((group / "cpuacct.usage").read_text()) if group else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_CPU_AT_KEY] = _cpu_ns(item)


def _cephbench_children() -> dict[int, str]:
    """The cephbench commands this test process started that have not been reaped: PID -> command line."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) != os.getpid():
                continue
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if "cephbench.cli" in cmd or "cephbench.entry" in cmd or "/bin/cephbench " in cmd:
            out[int(d.name)] = cmd
    return out


def _stop_left_running(pids: dict[int, str]) -> list[str]:
    """Stop the cephbench commands a failed test left running, each by its PID: SIGINT, as Ctrl-C (it removes what
    it made), then SIGKILL after LEFT_RUNNING_GRACE_S. A run a test's timeout gave up on (a hang) otherwise went on
    holding its marker and the scrub flags on the lab, and failed the tests after it."""
    said = []
    for pid, cmd in pids.items():
        os.kill(pid, signal.SIGINT)
        deadline, how = time.monotonic() + LEFT_RUNNING_GRACE_S, "ended after SIGINT"
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                how = f"killed: no end {LEFT_RUNNING_GRACE_S} s after SIGINT"
                break
            time.sleep(0.2)
        said.append(f"PID {pid} ({cmd.strip()[:200]}): {how}")
    return said


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    item.stash[_RUNS_KEY] = set(_cephbench_children())
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    # the teardown report is the last, and junit XML takes its properties
    if call.when == "teardown" and (now := _cpu_ns(item)) is not None and item.stash.get(_CPU_AT_KEY, None) is not None:
        item.user_properties.append(("cpu_s", f"{(now - item.stash[_CPU_AT_KEY]) / 1e9:.2f}"))
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.failed:
        before = item.stash.get(_RUNS_KEY, set())
        left = {pid: cmd for pid, cmd in _cephbench_children().items() if pid not in before}
        if left:
            report.sections.append(("cephbench left running by the failed test, stopped",
                                    "\n".join(_stop_left_running(left))))


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if not _STOP:
        return
    items = item.session.items
    remaining = items[items.index(item) + 1:]
    for name in list(_STOP):
        if not any(name in it.fixturenames for it in remaining):
            _STOP.pop(name)()


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    if shutil.which("ceph-mon") is None:
        pytest.fail("Ceph is not installed: run scripts/setup.sh (make test does)")
    yield from _session_lab("lab", "CEPHBENCH_TEST_LAB", "cephbench-test-lab-",
                            lambda lb: lb.up(osds=3, osd_size_bytes=6 * 1024**3))


@pytest.fixture(scope="session")
def lab_target(lab: Lab) -> Target:
    env = lab.env()
    return Target(Path(env["CEPH_CONF"]), Path(env["CEPH_KEYRING"]), None, is_lab=True)


@pytest.fixture(scope="session")
def lab_cluster(lab_target: Target) -> Cluster:
    return Cluster(lab_target)


@pytest.fixture(scope="session")
def mon_json(lab_target: Target) -> Iterator[Callable[..., Any]]:
    """`ceph PREFIX -f json` for any command the mon knows, over one librados connection of the test session:
    what a test reads of the cluster before and after a run, in milliseconds instead of a `ceph` process (~0.5 s
    of Python start-up on a loaded machine) each."""
    from cephbench.hosts.mon import import_rados
    client = import_rados().Rados(conffile=str(lab_target.conf), conf={"keyring": str(lab_target.keyring)})
    client.connect(timeout=30)

    def ask(prefix: str, **args: Any) -> Any:
        ret, out, status = client.mon_command(json.dumps({"prefix": prefix, "format": "json", **args}), b"",
                                              timeout=60)
        assert ret == 0, f"ceph {prefix}: {status} ({ret})"
        return json.loads(out) if out.strip() else None
    try:
        yield ask
    finally:
        client.shutdown()


@pytest.fixture
def cephbench_env(lab: Lab) -> dict[str, str]:
    """Environment for running the `cephbench` CLI against the lab as a subprocess."""
    return {**os.environ, **lab.env()}


class TinyRun(NamedTuple):
    out: Path                               # its run directory
    res: subprocess.CompletedProcess        # what `cephbench run` printed, and its exit code
    flags_before: set[str]                  # the OSD flags before the run
    flags_after: set[str]                   # ... and just after it
    pools_after: set[str]                   # the cephbench pools just after it


@pytest.fixture(scope="session")
def tiny_run(lab_cluster: Cluster, lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> TinyRun:
    """One `cephbench run` of labcli.TINY, for the tests that check what a plain run leaves (results, raw output,
    evidence, cleanup: test_run.py) and what its report shows (test_report_browser.py): one run, not one each."""
    tmp = tmp_path_factory.mktemp("tiny")
    flags = lab_cluster.osd_flags()
    res = run_cli(["run", str(write_suite(tmp, TINY)), "--out", str(tmp / "run")], {**os.environ, **lab.env()})
    pools = {p for p in lab_cluster.pool_names() if p.startswith("cephbench-")}
    return TinyRun(tmp / "run", res, flags, lab_cluster.osd_flags(), pools)


# The shared multi-host lab: 3 hosts of one OSD each and a client host, public links shaped to MH_RATE with no
# cluster network (Han's first cluster). 200 Mbit/s (25 MB/s) is far below what 2 cores move, so the links, not
# the CPUs, limit large transfers (tests/lab/test_multihost.py checks the CPUs are not saturated).
MH_RATE = "200mbit"
MH_RATE_BITS = 200 * 10**6


@pytest.fixture(scope="session")
def multihost_lab() -> Iterator[Lab]:
    from cephbench.lab.multihost import MultiHostSpec
    from cephbench.lab.rates import parse_link
    if os.geteuid() != 0:
        pytest.fail("the multi-host lab needs root (network namespaces)")
    spec = MultiHostSpec(hosts=3, osds_per_host=1, clients=1, public=parse_link(MH_RATE))
    yield from _session_lab("multihost_lab", "CEPHBENCH_TEST_MH_LAB", "cephbench-test-mhlab-",
                            lambda lb: lb.up(osd_size_bytes=4 * 1024**3, multi=spec))


# The multi-host lab of many clients (issue 15): 3 hosts of one OSD, 2 client hosts whose links alone are shaped to
# CLIENT_RATE (the cluster side unshaped: what one client can read is its link), with RGW.
CLIENT_RATE = "200mbit"
CLIENT_RATE_BITS = 200 * 10**6


@pytest.fixture(scope="session")
def clients_lab() -> Iterator[Lab]:
    from cephbench.lab.multihost import MultiHostSpec
    from cephbench.lab.rates import parse_link
    if os.geteuid() != 0:
        pytest.fail("the multi-host lab needs root (network namespaces)")
    spec = MultiHostSpec(hosts=3, osds_per_host=1, clients=2, client=parse_link(CLIENT_RATE))
    yield from _session_lab("clients_lab", "CEPHBENCH_TEST_CLIENTS_LAB", "cephbench-test-clients-",
                            lambda lb: lb.up(osd_size_bytes=4 * 1024**3, multi=spec))
