"""OSD hosts reached over ssh: their page cache is dropped before every read, or the run is refused first.

The lab's OSDs run on this machine; `settings.ssh.hosts` maps their host name to
127.0.0.1, where a real SSH server (tests/lab/sshd.py) runs what it is sent, so
the same code path as on a multi-host cluster is taken.
"""

import json
import time

import yaml

from cephbench.core.results import RunDir

from labcli import cli_here, run_cli, write_suite
from sshd import SshServer


def suite(ssh: dict) -> str:
    return yaml.safe_dump({
        "name": "remote",
        "settings": {"ssh": ssh},
        "pools": {"rep2": {"type": "replicated", "size": 2, "pg_num": 8}},
        "workloads": [{"type": "rados_bench", "pool": "rep2", "modes": ["write", "rand"], "object_size": "64KiB",
                       "concurrency": 4, "duration": "3s"}],
    })


def osd_hostname(cluster) -> str:
    return cluster.ceph_json("osd", "metadata")[0]["hostname"]


def test_read_phase_drops_the_osd_hosts_cache_over_ssh(lab_cluster, cephbench_env, tmp_path):
    host = osd_hostname(lab_cluster)
    with SshServer(tmp_path) as sshd:
        path = write_suite(tmp_path, suite(sshd.ssh_settings(hosts={host: "127.0.0.1"})))
        dry = cli_here(["run", path, "--dry-run"], cephbench_env)
        assert dry.returncode == 0, dry.stderr
        assert "ssh " in dry.stdout and "drop_caches" in dry.stdout and f"-p {sshd.port}" in dry.stdout
        n_dry = len(sshd.commands)           # the preflight's check only: a dry run drops nothing
        assert n_dry == 1 and "sudo -n true" in sshd.commands[0]

        out = tmp_path / "run"
        res = run_cli(["run", path, "--out", out], cephbench_env)
        assert res.returncode == 0, res.stderr
        results, _ = RunDir(out).results()
        read = next(r for r in results if r.test.params["phase"] == "rand")
        assert f"page cache dropped over ssh on OSD host(s) {host}" in read.notes, read.notes
        ran = sshd.commands[n_dry:]
        assert [c for c in ran if "/proc/sys/vm/drop_caches" in c and "sync" in c], ran
        # the OSD host was watched over ssh while each test ran, next to this host (now only the client); the 3 s
        # write gives it several readings
        write = next(r for r in results if r.test.params["phase"] == "write")
        roles = {h.role: h for h in write.hosts}
        assert set(roles) == {"client", "OSD host"}, write.hosts
        osd = roles["OSD host"]
        assert osd.host == host and osd.cpus >= 1 and 0 < osd.cpu_busy_mean <= 1 and osd.cpu_busy_series
        for r in results:
            assert (out / "raw" / r.test.id / f"host-{host}-watch.txt").is_file()   # the stream, kept
        watches = [c for c in ran if "/proc/stat" in c and "while" in c]
        # one watch per tool run: each result's, and a seq's top-up write (not recorded) when the write was short
        top_ups = sum(1 for r in results for n in r.notes if n.startswith("objects topped up before the seq"))
        assert len(watches) == len(results) + top_ups
        time.sleep(1)
        assert sshd.finished == len(sshd.commands), "a watch loop outlived its test"
        # the key's path is in the resolved suite (a path, not a secret); no key material is
        key = (tmp_path / "id_ed25519").read_text()
        body = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
        assert key.split("\n")[1] not in body


def test_unreachable_osd_host_refuses_before_anything_is_created(lab_cluster, cephbench_env, tmp_path):
    host = osd_hostname(lab_cluster)
    with SshServer(tmp_path) as sshd:
        wrong = sshd.ssh_settings(hosts={host: "127.0.0.1"})
        wrong["identity_file"] = str(tmp_path / "other_key")
        (tmp_path / "other_key").write_text("not a key\n")
        (tmp_path / "other_key").chmod(0o600)
        out = tmp_path / "run"
        res = cli_here(["run", write_suite(tmp_path, suite(wrong)), "--out", out], cephbench_env)
        assert res.returncode == 2, res.stderr
        line = res.stderr.strip()
        assert "\n" not in line and "settings.ssh" in line and host in line and "drop_caches: false" in line
        assert not out.exists()
        assert not [p for p in lab_cluster.pool_names() if p.startswith("cephbench-")]
        # the way out the message offers: no cache drops, no ssh, the run goes on
        cold = json.loads(json.dumps(wrong))
        text = suite(cold).replace("settings:\n", "settings:\n  drop_caches: false\n")
        res = cli_here(["run", write_suite(tmp_path, text, "nodrop.yaml"), "--dry-run"], cephbench_env)
        assert res.returncode == 0 and "ssh " not in res.stdout, res.stdout + res.stderr
