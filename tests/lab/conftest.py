"""One real lab cluster for the whole integration session.

CEPHBENCH_TEST_LAB=DIR reuses a lab that is already running there (and leaves it
running); otherwise a lab is started in a temporary directory and stopped at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from cephbench.cluster import Cluster, Target
from cephbench.lab import Lab


@pytest.fixture(scope="session")
def lab() -> Lab:
    if shutil.which("ceph-mon") is None:
        pytest.fail("Ceph is not installed: run scripts/setup.sh (make test does)")
    reuse = os.environ.get("CEPHBENCH_TEST_LAB")
    if reuse:
        lb = Lab(Path(reuse))
        if not lb.is_running():
            lb.up(osds=3, osd_size_bytes=6 * 1024**3)
        yield lb
        return
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-lab-"))
    lb = Lab(d / "lab")
    lb.up(osds=3, osd_size_bytes=6 * 1024**3)
    try:
        yield lb
    finally:
        lb.down()
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def lab_target(lab: Lab) -> Target:
    env = lab.env()
    return Target(Path(env["CEPH_CONF"]), Path(env["CEPH_KEYRING"]), None, is_lab=True)


@pytest.fixture(scope="session")
def lab_cluster(lab_target: Target) -> Cluster:
    return Cluster(lab_target)


@pytest.fixture
def cephbench_env(lab: Lab) -> dict[str, str]:
    """Environment for running the `cephbench` CLI against the lab as a subprocess."""
    return {**os.environ, **lab.env()}


# The shared multi-host lab: 3 hosts of one OSD each and a client host, public links shaped to MH_RATE with no
# cluster network (Han's first cluster). 200 Mbit/s (25 MB/s) is far below what 2 cores move, so the links, not
# the CPUs, limit large transfers (tests/lab/test_multihost.py checks the CPUs are not saturated).
MH_RATE = "200mbit"
MH_RATE_BITS = 200 * 10**6


@pytest.fixture(scope="session")
def multihost_lab() -> Lab:
    from cephbench.lab.multihost import MultiHostSpec
    from cephbench.lab.rates import parse_link
    if os.geteuid() != 0:
        pytest.fail("the multi-host lab needs root (network namespaces)")
    spec = MultiHostSpec(hosts=3, osds_per_host=1, clients=1, public=parse_link(MH_RATE))
    reuse = os.environ.get("CEPHBENCH_TEST_MH_LAB")
    if reuse:
        lb = Lab(Path(reuse))
        if not lb.is_running():
            lb.up(osd_size_bytes=4 * 1024**3, multi=spec)
        yield lb
        return
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-mhlab-"))
    lb = Lab(d / "lab")
    lb.up(osd_size_bytes=4 * 1024**3, multi=spec)
    try:
        yield lb
    finally:
        lb.down()
        shutil.rmtree(d, ignore_errors=True)


# The multi-host lab of many clients (issue 15): 3 hosts of one OSD, 2 client hosts whose links alone are shaped to
# CLIENT_RATE (the cluster side unshaped: what one client can read is its link), with RGW.
CLIENT_RATE = "200mbit"
CLIENT_RATE_BITS = 200 * 10**6


@pytest.fixture(scope="session")
def clients_lab() -> Lab:
    from cephbench.lab.multihost import MultiHostSpec
    from cephbench.lab.rates import parse_link
    if os.geteuid() != 0:
        pytest.fail("the multi-host lab needs root (network namespaces)")
    spec = MultiHostSpec(hosts=3, osds_per_host=1, clients=2, client=parse_link(CLIENT_RATE))
    reuse = os.environ.get("CEPHBENCH_TEST_CLIENTS_LAB")
    if reuse:
        lb = Lab(Path(reuse))
        if not lb.is_running():
            lb.up(osd_size_bytes=4 * 1024**3, multi=spec)
        yield lb
        return
    d = Path(tempfile.mkdtemp(prefix="cephbench-test-clients-"))
    lb = Lab(d / "lab")
    lb.up(osd_size_bytes=4 * 1024**3, multi=spec)
    try:
        yield lb
    finally:
        lb.down()
        shutil.rmtree(d, ignore_errors=True)
