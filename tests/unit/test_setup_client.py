"""`make install` (scripts/setup.sh --client) asks for the client tools alone: none of the lab's daemons, monitoring
or browser (issue 38: an admin node could not be installed as a client)."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER_PACKAGES = {"ceph-mon", "ceph-mgr", "ceph-osd", "radosgw", "prometheus", "prometheus-node-exporter",
                   "prometheus-process-exporter", "chromium", "openssh-server", "mmdebstrap"}


def _packages(*args: str) -> list[str]:
    res = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "--print-packages", *args],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def test_a_client_install_installs_no_server_package_and_every_client_tool():
    client = set(_packages("--client"))
    assert not client & SERVER_PACKAGES, client & SERVER_PACKAGES
    assert {"ceph-common", "python3-rados", "fio", "iperf3", "openssh-client"} <= client


def test_the_lab_setup_installs_the_client_tools_and_the_servers():
    assert set(_packages()) >= SERVER_PACKAGES | set(_packages("--client"))


def test_an_unknown_option_is_one_line_and_exit_2():
    res = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "--server"], capture_output=True, text=True,
                         timeout=30)
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1 and "--client" in res.stderr, res.stderr


def test_make_install_runs_the_client_install():
    res = subprocess.run(["make", "-n", "install"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert "scripts/setup.sh --client" in res.stdout, res.stdout
