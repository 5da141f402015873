"""Starting one command on 32 ssh hosts together (fanout.run_started_together), and what ssh connection sharing
(remote.ssh_master) saves.

The 32 hosts are one OpenSSH sshd of this machine listening on 127.0.0.1 ... 127.0.0.32 (all of 127/8 is this
machine; sshds of 16 addresses each), with a throwaway host key and client key; each host runs `cephbench-loadgen at -- true` through a real
`ssh`, exactly as a client host would. Rounds alternate A (a new ssh connection per command) and B (one shared
connection per host, opened by a warm-up batch, as every test after a run's first finds it).

Figures (medians over the rounds):
- skew_ms: max - min of the 32 actual starts (the wrappers' start markers; one clock, so no offset error), over
  shared connections as a run has them (skew_ms_new: new connections). Goal <= 50. Here all 32 wrappers and their
  sshd sessions share this machine's cores at the instant, which real client hosts do not: an upper bound.
- ready_s: from the first spawn to the last ready line (ssh connect + login + the wrapper's start), A and B.
- controller_cpu_s: CPU of this process and its children (the 32 ssh clients) for one batch, A and B.
- merge_ms (`RESULT fanout_merge`): merging 32 clients' results (merge.merge_instances over the common window),
  for each latency kind, from real tool output (tests/fixtures) placed 10 ms apart: rados bench (mean and max),
  fio json+ (bins), cephbench-loadgen (HDR histograms); the median of 5.

CEPHBENCH_FANOUT_ROUNDS (5) and CEPHBENCH_FANOUT_HOSTS (32) override. With CEPHBENCH_BENCH_MH_LAB=DIR (a running
multi-host lab), also: 10 rounds of dropping the page cache on all its hosts over ssh, A against B
(`RESULT fanout_ssh_reuse`).
"""

from __future__ import annotations

import getpass
import os
import resource
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from common import median, result_line

from cephbench.suite.config import SshSettings
from cephbench.drivers.rgw.binary import find_loadgen
from cephbench.hosts.fanout import Placement, run_started_together
from cephbench.hosts.local import LocalHost, Spawn
from cephbench.lab.sshd import SSHD, SshFiles, ensure_privsep_dir, make_keys, render_config, write_known_hosts
from cephbench.hosts.remote import HostRef, drop_caches_argv, run_on_all, ssh_master

ROUNDS = int(os.environ.get("CEPHBENCH_FANOUT_ROUNDS", "5"))
HOSTS = int(os.environ.get("CEPHBENCH_FANOUT_HOSTS", "32"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


MAX_LISTEN = 16        # sshd's MAX_LISTEN_SOCKS: one sshd per 16 addresses


class Sshd:
    """sshd on `addresses` (one process per 16), started and stopped by this benchmark (its own processes)."""

    def __init__(self, work: Path, addresses: list[str]) -> None:
        self.files = SshFiles(work / "ssh")
        self.addresses = addresses
        self.port = _free_port()
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> "Sshd":
        make_keys(self.files, LocalHost())
        write_known_hosts(self.files, [f"[{a}]:{self.port}" for a in self.addresses])
        ensure_privsep_dir()
        log = open(self.files.dir / "sshd.log", "wb")
        try:
            for i in range(0, len(self.addresses), MAX_LISTEN):
                cfg = self.files.dir / f"sshd_config.{i}"
                cfg.write_text(render_config(self.files, *self.addresses[i:i + MAX_LISTEN], port=self.port,
                                             sessions=200))
                self.procs.append(subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stdin=subprocess.DEVNULL,
                                                   stdout=subprocess.DEVNULL, stderr=log))
        finally:
            log.close()
        deadline = time.monotonic() + 10
        waiting = list(self.addresses)
        while waiting and time.monotonic() < deadline:
            try:
                socket.create_connection((waiting[0], self.port), 1).close()
                waiting.pop(0)
            except OSError:
                time.sleep(0.05)
        if waiting:
            self.__exit__()
            raise RuntimeError(f"sshd did not start: {(self.files.dir / 'sshd.log').read_text()}")
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.wait()

    def settings(self) -> SshSettings:
        return SshSettings(user=getpass.getuser(), port=self.port, identity_file=self.files.identity,
                           options=[f"UserKnownHostsFile={self.files.known_hosts}", "StrictHostKeyChecking=yes"])


def _cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _batch(places: list[Placement], ssh: SshSettings, at_path: dict[str, str]) -> dict[str, float]:
    cpu0, t0 = _cpu_s(), time.monotonic()
    res = run_started_together(LocalHost(), places, ssh, at_path, timeout_s=120, lead_s=float(os.environ.get("CEPHBENCH_FANOUT_LEAD_S", "0.3")))
    cpu = _cpu_s() - cpu0
    bad = [r for r in res if not r.result.ok or r.start_unix_s is None]
    if bad:
        raise RuntimeError(f"{bad[0].host}: {bad[0].result.error_text()}")
    starts = [r.start_unix_s for r in res if r.start_unix_s is not None]
    late = sorted((r.start_unix_s or 0) - (r.go_unix_s or 0) for r in res)
    print(f"    late after the go instant: min {late[0] * 1e3:.1f} ms, median {late[len(late) // 2] * 1e3:.1f} ms, "
          f"max {late[-1] * 1e3:.1f} ms", flush=True)
    return {"skew_ms": (max(starts) - min(starts)) * 1e3, "ready_s": max(r.ready_s for r in res),
            "cpu_s": cpu, "wall_s": time.monotonic() - t0}


def fanout() -> None:
    addresses = [f"127.0.0.{i + 1}" for i in range(HOSTS)]
    at = find_loadgen()
    with tempfile.TemporaryDirectory(prefix="cephbench-bench-fanout-") as d, Sshd(Path(d), addresses) as sshd:
        refs = [HostRef(f"e{i}", a) for i, a in enumerate(addresses)]
        places = [Placement(Spawn(["true"], Path(d) / f"out-{r.name}.txt"), r) for r in refs]
        at_path = {r.name: at for r in refs}
        plain = sshd.settings()
        a: list[dict[str, float]] = []
        b: list[dict[str, float]] = []
        with ssh_master(plain) as shared:
            _batch(places, shared, at_path)           # opens the 32 masters
            for i in range(ROUNDS):
                for side in ("AB" if i % 2 == 0 else "BA"):
                    (a if side == "A" else b).append(_batch(places, plain if side == "A" else shared, at_path))
        left = [ln for ln in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
                if "cephbench-ssh-" in ln and "[mux]" in ln]
        if left:
            raise RuntimeError(f"ssh masters left after ssh_master: {left}")

    def med(xs: list[dict[str, float]], k: str) -> float:
        return median([x[k] for x in xs])

    print(f"{HOSTS} hosts, {ROUNDS} rounds each of A (an ssh connection per command) and B (shared connections)")
    for name, xs in (("A", a), ("B", b)):
        print(f"  {name}: skew {[round(x['skew_ms'], 1) for x in xs]} ms; all ready after "
              f"{[round(x['ready_s'], 2) for x in xs]} s; controller CPU {[round(x['cpu_s'], 2) for x in xs]} s")
    # a run shares connections (launch.start opens ssh_master), so B's skew is the headline
    result_line("fanout", hosts=HOSTS, skew_ms=med(b, "skew_ms"), skew_ms_max=max(x["skew_ms"] for x in b),
                skew_ms_new=med(a, "skew_ms"),
                ready_s_new=med(a, "ready_s"), ready_s_shared=med(b, "ready_s"),
                controller_cpu_s_new=med(a, "cpu_s"), controller_cpu_s_shared=med(b, "cpu_s"),
                batch_s_new=med(a, "wall_s"), batch_s_shared=med(b, "wall_s"))


def merge_times() -> None:
    """What merging 32 clients' results costs, per latency kind (the controller's work after a test)."""
    from cephbench.drivers import fio
    from cephbench.drivers import rados_bench as rb
    from cephbench.drivers.rgw import parse as loadgen
    from cephbench.core.merge import merge_instances
    fix = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
    kinds = {
        "rados_bench": (rb.parse((fix / "rados_bench" / "ceph16.2.15_write_4M.txt").read_text(), "write"),
                        "mean-max"),
        "fio": (fio.to_measurement(fio.parse_fio_json(
            (fix / "fio" / "fio3.33_ceph16.2.15_rbd_randread_4K_qd8_2images.json").read_text()), "randread",
            tool="fio rbd", keep_bins=True), "bins"),
        "loadgen": (loadgen.parse((fix / "loadgen" / "loadgen0.1_rgw16.2.15_s3_put_4K_t8.json").read_text()), "hdr"),
    }
    t0 = 1_700_000_000.0
    figures = {}
    for name, (m, latency) in kinds.items():
        parts = [m.model_copy(update={"host": f"c{i}", "start_unix_s": t0 + i * 0.01,
                                      "end_unix_s": t0 + i * 0.01 + m.duration_s}) for i in range(HOSTS)]
        times = []
        for _ in range(5):
            a = time.perf_counter()
            merge_instances(parts, latency=latency)
            times.append((time.perf_counter() - a) * 1e3)
        figures[f"{name}_ms"] = median(times)
    result_line("fanout_merge", hosts=HOSTS, **figures)


def ssh_reuse(lab_dir: Path) -> None:
    """10 rounds of dropping the page cache on every host of a multi-host lab: each round runs one ssh per host at
    once (remote.run_on_all, as before every read); A new connections, B shared ones."""
    from cephbench.lab import Lab
    topo = Lab(lab_dir).info().topology
    if not topo:
        raise RuntimeError(f"{lab_dir} is not a multi-host lab")
    lab_ssh = topo["ssh"]
    plain = SshSettings(user=lab_ssh["user"], identity_file=Path(lab_ssh["identity_file"]),
                        options=lab_ssh["options"], hosts=lab_ssh["hosts"])
    refs = [HostRef(n, a) for n, a in lab_ssh["hosts"].items()]
    host = LocalHost()

    def rounds(ssh: SshSettings, n: int) -> float:
        t0 = time.monotonic()
        for _ in range(n):
            why = [w for w in run_on_all(host, [drop_caches_argv(r, ssh) for r in refs]) if w]
            if why:
                raise RuntimeError(why[0])
        return time.monotonic() - t0

    a: list[float] = []
    b: list[float] = []
    with ssh_master(plain) as shared:
        rounds(shared, 1)                           # opens the masters
        for i in range(10):
            for side in ("AB" if i % 2 == 0 else "BA"):
                (a if side == "A" else b).append(rounds(plain if side == "A" else shared, 1))
    print(f"drop caches on {len(refs)} lab hosts, 10 rounds: new connections {sum(a):.2f} s, shared {sum(b):.2f} s")
    result_line("fanout_ssh_reuse", hosts=len(refs), rounds=10, new_s=sum(a), shared_s=sum(b),
                ratio=sum(b) / sum(a))


def main() -> None:
    if shutil.which(SSHD) is None:
        raise SystemExit(f"bench fanout: {SSHD} is not installed (openssh-server; scripts/setup.sh installs it)")
    mh = os.environ.get("CEPHBENCH_BENCH_MH_LAB")
    if mh:
        ssh_reuse(Path(mh))
    merge_times()
    fanout()


if __name__ == "__main__":
    main()
