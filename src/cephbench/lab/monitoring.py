"""The multi-host lab's monitoring stack, as cephadm deploys it beside a cluster: a node-exporter on every host (in
its network namespace, on its own address), the mgr's prometheus module, and one Prometheus server scraping them
every second, its data under the lab directory; and on every OSD host a process-exporter (ncabatoff's, Debian's
prometheus-process-exporter) that groups each OSD's process as `osd.N`, as docs/model.md shows an operator to
configure it: each OSD process's CPU time, which neither node-exporter nor Ceph's exporters have. Plans and files
here are pure; lab.py starts the processes.

Every process's command line names a file under the lab's monitoring directory: that is how `lab down` knows them
for the lab's own (daemons.is_lab_process), as the Ceph daemons are known by the lab's ceph.conf.

The lab's node-exporters differ from Debian's defaults in what a lab needs:
- loop devices are counted (Debian's default excludes them, and the lab's OSDs are loop devices);
- each interface's addresses are exported (`--collector.netdev.address-info`): what ties Ceph's addresses to an
  interface, since the lab's OSDs name none in `ceph osd metadata`;
- the speed of a link comes from the lab's shaping, through the textfile collector: a process entered into a
  namespace by nsenter sees the machine's /sys/class/net, not its host's (netclass is off for that reason);
- only the collectors a benchmark reads run, scraped every second on a machine the lab shares.

The OSDs' perf counters: cephadm runs a ceph-exporter on every host from Reef on (port 9926), and the evidence reads
it first (evidence/cephexporter.py). Debian packages none (Pacific 16.2.15 in bookworm, Reef 18.2.7 in trixie,
Tentacle 20.2.4 in sid: their ceph source builds no ceph-exporter), so no lab runs one, whatever its release (one
line says so, CEPH_EXPORTER_ABSENT): the mgr's prometheus module serves the counters instead, collected every
second (mgr/prometheus/scrape_interval, 15 s by default) and, from Reef on, with them put back
(mgr/prometheus/exclude_perf_counters, true by default since Reef hands them to ceph-exporter).

With cAdvisor built (`make cadvisor`: build/bin/cadvisor, from tools/cadvisor/), one cAdvisor on the machine serves
every cgroup's CPU counters (`--docker_only=false`: raw cgroups, cgroup v1), the `--cpu-limit` groups among them, as
Rook's kubelet serves a pod's: the container CPU series a toolbox run reads from Prometheus (evidence/cadvisor.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .daemons import MONITORING_DIR
from .throttle import DriveLimit

DIR = MONITORING_DIR
EXPORTER_PORT = 9100
MGR_PORT = 9283          # the mgr prometheus module's default
SCRAPE_S = 1
PROMETHEUS_BIN = "prometheus"
EXPORTER_BIN = "prometheus-node-exporter"
PROCESS_EXPORTER_BIN = "prometheus-process-exporter"
PROCESS_EXPORTER_PORT = 9256
BINARIES = (PROMETHEUS_BIN, EXPORTER_BIN, PROCESS_EXPORTER_BIN)
CADVISOR = "cadvisor"
# this checkout's build (make cadvisor), else one on PATH; optional: without it the stack has no container series
CADVISOR_REPO_BIN = Path(__file__).resolve().parents[3] / "build" / "bin" / CADVISOR
PROMETHEUS = "prometheus"
CEPH_EXPORTER_ABSENT = ("no ceph-exporter: Debian's ceph packages ship none (Reef and later run it on each host, "
                        "port 9926), so the OSDs' counters are the mgr's prometheus module's")
COLLECTORS = ("diskstats", "netdev", "textfile", "cpu", "meminfo", "loadavg", "uname")


def mgr_module_options(release: str) -> dict[str, str]:
    """The mgr prometheus module's options the lab sets (`config set mgr`): its collection every scrape, and the
    OSDs' perf counters it excludes from Reef on. `release`: the lab's ("" the host's own, Pacific here)."""
    out = {"mgr/prometheus/scrape_interval": str(SCRAPE_S)}
    if release not in ("", "pacific", "quincy"):
        out["mgr/prometheus/exclude_perf_counters"] = "false"
    return out


def exporter_name(host: str) -> str:
    return f"node-exporter.{host}"


def process_exporter_name(host: str) -> str:
    return f"process-exporter.{host}"


@dataclass(frozen=True)
class MonitoringPlan:
    dir: Path                            # <lab>/monitoring
    port: int                            # Prometheus's, on 127.0.0.1
    exporters: dict[str, str]            # host -> address:port of its node-exporter
    mgr: str                             # address:port of the mgr prometheus module
    speeds: dict[str, dict[str, float]]  # host -> interface -> shaped bits/s
    osds: dict[str, list[int]]           # OSD host -> the ids of its OSDs (its process-exporter's groups)
    conf: Path                           # the lab's ceph.conf, on every one of its daemons' command lines
    cadvisor: str | None = None          # address:port of the machine's cAdvisor (127.0.0.1), when it is built

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config(self) -> Path:
        return self.dir / "prometheus.yml"

    @property
    def data(self) -> Path:
        return self.dir / "prometheus-data"

    def textfile_dir(self, host: str) -> Path:
        return self.dir / "textfile" / host

    def process_config(self, host: str) -> Path:
        return self.dir / "process-exporter" / f"{host}.yml"

    def process_exporter(self, host: str) -> str:
        """address:port of an OSD host's process-exporter: its node-exporter's address."""
        return f"{self.exporters[host].rpartition(':')[0]}:{PROCESS_EXPORTER_PORT}"

    def record(self) -> dict[str, Any]:
        """What lab.json keeps (LabInfo.monitoring)."""
        return {"prometheus": self.url, "exporters": dict(self.exporters), "mgr": self.mgr,
                "scrape_interval_s": SCRAPE_S}


def prometheus_config(plan: MonitoringPlan) -> str:
    """prometheus.yml: the node-exporters labelled instance=<host name> as cephadm labels them (what `ceph osd
    metadata` calls the host), and the mgr module as job ceph. JSON is YAML."""
    nodes = [{"targets": [addr], "labels": {"instance": host}} for host, addr in sorted(plan.exporters.items())]
    procs = [{"targets": [plan.process_exporter(host)], "labels": {"instance": host}} for host in sorted(plan.osds)]
    doc = {"global": {"scrape_interval": f"{SCRAPE_S}s", "scrape_timeout": f"{SCRAPE_S}s",
                      "evaluation_interval": "15s"},
           "scrape_configs": [{"job_name": "node", "static_configs": nodes},
                              {"job_name": "process", "static_configs": procs},
                              {"job_name": "ceph", "honor_labels": True, "static_configs": [{"targets": [plan.mgr]}]}]}
    if plan.cadvisor:
        # the machine's: its instance names no lab host, and a series is an OSD's by its cgroup (the id label)
        doc["scrape_configs"].append({"job_name": "cadvisor", "static_configs": [{"targets": [plan.cadvisor]}]})
    return json.dumps(doc, indent=1) + "\n"


def speeds_textfile(speeds: dict[str, float]) -> str:
    """node_network_speed_bytes of the shaped links, in the text format the textfile collector reads."""
    lines = ["# HELP node_network_speed_bytes speed in bytes per second, as the lab shapes the link",
             "# TYPE node_network_speed_bytes gauge"]
    lines += [f'node_network_speed_bytes{{device="{iface}"}} {bits / 8:.0f}' for iface, bits in sorted(speeds.items())]
    return "\n".join(lines) + "\n"


LIMITS_FILE = "limits.prom"


def limits_textfile(limits: Mapping[str, DriveLimit]) -> str:
    """The drives' throttles (device name -> limit, set alike on reads and writes) as cephbench_disk_limit gauges,
    in the text format the textfile collector reads. A throttled device is held before the block layer counts it
    busy, so no node-exporter series shows its limit: the lab says what its drives are, as speed.prom says what its
    links are."""
    # here: the results' models are no cost of the modules that import this one (validate's reading of lab shapes)
    from ..core.results import DEVICE_LIMIT_FIELDS as LIMIT_FIELDS, DEVICE_LIMIT_METRIC as LIMIT
    lines = [f"# HELP {LIMIT} a cgroup throttle on the device, the most it may do (the lab's drive)",
             f"# TYPE {LIMIT} gauge"]
    for device, limit in sorted(limits.items()):
        for kind in LIMIT_FIELDS:
            value = limit.bytes_per_s if kind.endswith("bytes_per_s") else limit.iops
            if value:
                lines.append(f'{LIMIT}{{device="{device}",kind="{kind}"}} {value}')
    return "\n".join(lines) + "\n"


def publish_limits(monitoring_dir: Path, limits: Mapping[str, DriveLimit]) -> None:
    """limits.prom in every host's textfile directory that exists (a lab without monitoring has none): each host's
    node-exporter reads the one kernel's devices, and the evidence takes a host's own from `ceph osd metadata`.
    Replaced whole (a rename), so that a scrape never reads half a file."""
    text = limits_textfile(limits)
    for d in sorted(p for p in (monitoring_dir / "textfile").glob("*") if p.is_dir()):
        tmp = d / f".{LIMITS_FILE}.tmp"
        tmp.write_text(text)
        tmp.replace(d / LIMITS_FILE)


def exporter_argv(plan: MonitoringPlan, host: str) -> list[str]:
    return [EXPORTER_BIN, f"--web.listen-address={plan.exporters[host]}", "--collector.disable-defaults",
            *(f"--collector.{c}" for c in COLLECTORS), r"--collector.diskstats.device-exclude=^(ram|fd)\d+$",
            "--collector.netdev.address-info", f"--collector.textfile.directory={plan.textfile_dir(host)}"]


def process_config(osds: list[int], conf: Path) -> str:
    """An OSD host's process-exporter config: each of its OSDs' processes a group named `osd.N`, N from the command
    line (`-i N`, `--id N`, `-n osd.N`: the lab's, Rook's and cephadm's). The lab's also names its ceph.conf: /proc
    is the machine's, and another lab's osd.N runs beside (an operator's host runs one cluster's OSDs, and needs
    only the first regex, with `\\d+` for the ids). JSON is YAML."""
    ids = "|".join(str(n) for n in sorted(osds))
    doc = {"process_names": [{"name": "osd.{{.Matches.id}}",
                              "cmdline": [rf"^(\S*/)?ceph-osd .*(?:-i |--id[ =]|-n osd\.|--name[ =]osd\.)(?P<id>{ids})( |$)",
                                          rf" --conf {re.escape(str(conf))}( |$)"]}]}
    return json.dumps(doc, indent=1) + "\n"


def process_exporter_argv(plan: MonitoringPlan, host: str) -> list[str]:
    # per-thread series and smaps are not read, and cost a scrape a second on a shared machine
    return [PROCESS_EXPORTER_BIN, f"-config.path={plan.process_config(host)}",
            f"-web.listen-address={plan.process_exporter(host)}", "-threads=false", "-gather-smaps=false"]


def cadvisor_binary(which: Callable[[str], str | None]) -> str | None:
    """The cAdvisor the lab runs: this checkout's build, else one on PATH; None when neither is there."""
    return str(CADVISOR_REPO_BIN) if CADVISOR_REPO_BIN.is_file() else which(CADVISOR)


def cadvisor_argv(plan: MonitoringPlan, binary: str) -> list[str]:
    """Raw cgroups too (a lab's groups are no container runtime's), each group's stats every second, not stretched
    to a minute for an idle one (dynamic housekeeping); -lab-dir names the monitoring directory: lab down's mark."""
    assert plan.cadvisor
    return [binary, f"-listen={plan.cadvisor}", "--docker_only=false", "--housekeeping_interval=1s",
            "--allow_dynamic_housekeeping=false", f"-lab-dir={plan.dir / CADVISOR}"]


def prometheus_argv(plan: MonitoringPlan) -> list[str]:
    return [PROMETHEUS_BIN, f"--config.file={plan.config}", f"--storage.tsdb.path={plan.data}",
            f"--web.listen-address=127.0.0.1:{plan.port}", "--storage.tsdb.retention.time=30d",
            "--log.level=warn"]


def write_files(plan: MonitoringPlan) -> None:
    for host in plan.exporters:
        d = plan.textfile_dir(host)
        d.mkdir(parents=True, exist_ok=True)
        if plan.speeds.get(host):
            (d / "speed.prom").write_text(speeds_textfile(plan.speeds[host]))
    for host, osds in plan.osds.items():
        plan.process_config(host).parent.mkdir(parents=True, exist_ok=True)
        plan.process_config(host).write_text(process_config(osds, plan.conf))
    plan.data.mkdir(parents=True, exist_ok=True)
    plan.config.write_text(prometheus_config(plan))


def targets_state(answer: Any, want: int) -> tuple[bool, str]:
    """/api/v1/targets -> (every one of `want` targets scraped and up, what it says so far)."""
    active = answer.get("data", {}).get("activeTargets", []) if isinstance(answer, dict) else []
    up = sorted(str(t.get("labels", {}).get("instance", "?")) for t in active if t.get("health") == "up")
    errors = sorted(f"{t.get('labels', {}).get('instance', '?')}: {t['lastError']}" for t in active
                    if t.get("health") != "up" and t.get("lastError"))
    return len(up) >= want, f"{len(up)}/{want} targets up" + (f" ({', '.join(up)})" if up else "") + \
        "".join(f"; {e}" for e in errors)
