"""qemu_rbd's commands: qemu-nbd's (QEMU's `rbd:` name, its cache mode, paths and never a key) and fio's nbd jobs;
the tool check in one line when qemu-nbd is missing here or on a client."""

from pathlib import Path

import pytest
import yaml

from cephbench.cluster.ceph import Target
from cephbench.core.errors import UserError
from cephbench.core.results import Test
from cephbench.drivers import qemu_rbd
from cephbench.drivers.fio import fio_argv
from cephbench.hosts.clients import Client, read_findings
from cephbench.hosts.remote import HostRef
from cephbench.kinds import client_needs
from cephbench.suite.config import parse_suite
from cephbench.suite.plan import expand

SUITE = """
name: vm
pools:
  rep: {type: replicated, size: 2, pg_num: 8}
workloads:
  - {name: vm, type: qemu_rbd, pool: rep, image_size: 64MiB, rw: randread, iodepth: 4, numjobs: 2,
     cache: [none, writethrough], duration: 5s}
"""


def _tests() -> list[Test]:
    return expand(parse_suite(yaml.safe_load(SUITE), "vm.yaml")).tests


def test_the_cache_mode_is_a_sweep_named_in_test_ids():
    tests = _tests()
    assert [t.id for t in tests] == ["001-vm-randread-4KiB-qd4-cache-none", "002-vm-randread-4KiB-qd4-cache-writethrough"]
    assert [t.params["cache"] for t in tests] == ["none", "writethrough"]


def test_an_unknown_cache_mode_is_refused_at_its_key():
    with pytest.raises(UserError) as exc:
        parse_suite(yaml.safe_load(SUITE.replace("[none, writethrough]", "[none, write-back]")), "vm.yaml")
    assert "cache" in exc.value.one_line() and "\n" not in exc.value.one_line()


def test_qemu_nbd_names_the_conf_and_keyring_by_path_with_colons_escaped():
    target = Target(Path("/etc/ceph:lab/ceph.conf"), Path("/etc/ceph/ceph.client.bench.keyring"), "bench")
    argv = qemu_rbd.export_argv("cephbench-r1-g001/cephbench-r1-g001-img0", "/tmp/cephbench-r1-nbd-1-0/img0.sock",
                                "writeback", target, target.id)
    assert argv[:6] == ["qemu-nbd", "--persistent", "--shared=0", "--format=raw", "--cache=writeback",
                        "--socket=/tmp/cephbench-r1-nbd-1-0/img0.sock"]
    assert argv[-1] == ("rbd:cephbench-r1-g001/cephbench-r1-g001-img0:conf=/etc/ceph\\:lab/ceph.conf"
                        ":keyring=/etc/ceph/ceph.client.bench.keyring:id=bench")
    assert not any("key=" in a or "secret" in a for a in argv)


def test_on_a_client_qemu_nbd_reads_that_hosts_own_conf_and_writes_its_pid():
    argv = qemu_rbd.export_argv("p/i", "/tmp/cephbench-r1-nbd-1-0/img0.sock", "none", None, None,
                                pid_file="/tmp/cephbench-r1-nbd-1-0/img0.pid")
    assert argv[-2:] == ["--pid-file=/tmp/cephbench-r1-nbd-1-0/img0.pid", "rbd:p/i"]


def test_fio_reads_each_export_through_its_nbd_engine():
    test = _tests()[0]
    jobs = qemu_rbd.jobs_for(test, ["/tmp/s0.sock", "/tmp/s1.sock"])
    argv = fio_argv(jobs, {}, "/tmp/fio.json")
    assert argv.count("--ioengine=nbd") == 2
    assert "--uri=nbd+unix:///?socket=/tmp/s0.sock" in argv and "--uri=nbd+unix:///?socket=/tmp/s1.sock" in argv
    assert "--iodepth=4" in argv and "--numjobs=2" in argv and "--rw=randread" in argv


def test_a_client_without_qemu_nbd_is_refused_in_one_line():
    needs = client_needs("qemu_rbd", _tests()[0].params)
    assert "qemu-nbd" in needs.tools and needs.engines == ("nbd",)
    client = Client("c1", HostRef("c1", "10.0.0.5"))
    with pytest.raises(UserError) as exc:
        read_findings(client, "cephbench-missing qemu-nbd\n", needs)
    assert exc.value.one_line().startswith("clients: qemu-nbd is not installed on client c1")
    # the package that holds it, not a package named as the tool (there is no qemu-nbd package)
    assert "apt-get install qemu-utils qemu-block-extra" in exc.value.one_line()


class _NoQemu:
    def which(self, program: str) -> None:
        return None


class _Cluster:
    host = _NoQemu()

    def raw_capacity(self) -> tuple[int, int]:
        return 100 * 1024**3, 0


def test_this_machine_without_qemu_nbd_is_refused_in_one_line_before_anything_is_made():
    from cephbench.core.settings import Settings
    with pytest.raises(UserError) as exc:
        qemu_rbd.preflight(_Cluster(), _tests(), Settings())
    line = exc.value.one_line()
    assert line.startswith("workload vm: qemu-nbd is not installed on this machine")
    assert "qemu-utils qemu-block-extra" in line and "\n" not in line


def test_fios_parser_reads_its_nbd_engine_as_it_reads_librbd():
    """Real output of a qemu_rbd run (tests/fixtures/README.md): fio's nbd engine writes the json+ its rbd engine does."""
    from cephbench.drivers.fio import parse_fio_json, to_measurement
    text = (Path(__file__).parents[1] / "fixtures" / "fio" /
            "fio3.33_qemu7.2_ceph16.2.15_nbd_randread_4K_qd16.json").read_text()
    m = to_measurement(parse_fio_json(text), "randread", tool="fio nbd (qemu-nbd)")
    assert round(m.ops_per_s) == 2505 and m.op_size_bytes == 4096
    assert m.latency.percentiles_ns["50"] < m.latency.percentiles_ns["99"]
