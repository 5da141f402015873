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


# ---- qemu-nbd's CPU is the client's -------------------------------------------------------------------------------

def _reading_ctx():
    from types import SimpleNamespace

    from cephbench.core.settings import Settings
    from cephbench.hosts.local import LocalHost
    return SimpleNamespace(host=LocalHost(), settings=Settings())


def test_an_exports_cpu_is_read_by_its_pid_here_and_from_its_pid_file_there(tmp_path):
    """A real process's /proc/PID/stat, read as qemu_rbd reads an export's: by its PID here, by the PID its pid file
    holds on a client host (here with no ssh: the same command)."""
    import subprocess
    import sys
    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                             "while time.process_time() - t < 0.3: pass\ntime.sleep(30)"])
    try:
        e = qemu_rbd.Export(HostRef("h", None), ["qemu-nbd"], "/tmp/s.sock", None, tmp_path / "log", proc=busy)
        e.first = qemu_rbd.cpu_reading(_reading_ctx(), e)
        assert e.first is not None and e.first.pid == busy.pid
        import time
        time.sleep(0.6)
        pid_file = tmp_path / "img0.pid"
        pid_file.write_text(f"{busy.pid}\n")
        there = qemu_rbd.Export(HostRef("h", None), ["qemu-nbd"], "/tmp/s.sock", str(pid_file), tmp_path / "log",
                                proc=busy)
        e.last = qemu_rbd.cpu_reading(_reading_ctx(), there)
        assert e.last is not None and e.last.start_ticks == e.first.start_ticks
        assert 0.0 <= e.cpu_s() < 5.0
        gone = qemu_rbd.Export(HostRef("h", None), ["qemu-nbd"], "/tmp/s.sock", str(tmp_path / "none.pid"),
                               tmp_path / "log", proc=busy)
        assert qemu_rbd.cpu_reading(_reading_ctx(), gone) is None      # no pid file: not read, no traceback
    finally:
        busy.kill()
        busy.wait()


def _outcome(cpu):
    from cephbench.core.results import Evidence
    from cephbench.drivers.base import Outcome
    from cephbench.evidence.rounds import Seen
    return Outcome(_tests()[0], 0.0, 5.0, seen=Seen(evidence=Evidence(cpu=cpu)))


def _export(first: int, last: int, start: int = 777):
    from cephbench.evidence.proccpu import ProcTimes
    e = qemu_rbd.Export(HostRef("h", None), ["qemu-nbd"], "/tmp/s.sock", None, Path("/nonexistent"))
    e.first, e.last = ProcTimes(41, 777, first, 100), ProcTimes(41, start, last, 100)
    return e


def test_the_clients_cpu_per_op_counts_its_qemu_nbd_exports():
    from cephbench.core.results import ProcessCpu
    from cephbench.evidence.proccpu import HERE
    osd = ProcessCpu.of("osd.0", 4.0, 1000, 4096000, HERE, "h")
    out = _outcome([osd, ProcessCpu.of("client", 1.0, 1000, 4096000, HERE, "h")])
    qemu_rbd.with_exports_cpu(out, qemu_rbd.Exports(exports=[_export(10, 60), _export(0, 100)]))
    client = out.seen.evidence.cpu[1]
    assert client.who == "client" and client.cpu_s == 2.5 and client.cpu_ms_per_op == 2.5
    assert client.ops == 1000 and client.source == HERE and out.seen.evidence.cpu[0] == osd
    assert out.seen.evidence.notes == ["the client's CPU counts its 2 qemu-nbd export(s)' 1.50 s beside fio's"]


def test_an_export_not_read_at_both_ends_leaves_the_client_fios_alone_and_says_so():
    from cephbench.core.results import ProcessCpu
    from cephbench.evidence.proccpu import HERE
    out = _outcome([ProcessCpu.of("client", 1.0, 1000, None, HERE, "h")])
    restarted = _export(10, 60, start=999)      # another process by the PID at the end
    qemu_rbd.with_exports_cpu(out, qemu_rbd.Exports(exports=[_export(0, 10), restarted]))
    assert out.seen.evidence.cpu[0].cpu_s == 1.0
    assert out.seen.evidence.notes == ["the client's CPU per op is fio's alone: its qemu-nbd exports' CPU was "
                                       "not read"]
