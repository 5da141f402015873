"""The multi-host lab's monitoring stack as a plan (lab/monitoring.py): what Prometheus scrapes and how each
node-exporter is started, and how `lab down` knows their processes for the lab's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cephbench.lab import daemons as dm
from cephbench.lab import monitoring as mon
from cephbench.lab.conf import LabPorts, render_conf

FIX = Path(__file__).parent.parent / "fixtures" / "prometheus"


def plan(d: Path) -> mon.MonitoringPlan:
    return mon.MonitoringPlan(d / "monitoring", 40123, {"h1": "198.18.0.1:9100", "h2": "198.18.0.2:9100"},
                              "198.18.0.1:9283", {"h1": {"pub0": 200e6}, "h2": {}})


def test_prometheus_scrapes_each_node_exporter_under_its_host_name_and_the_mgr_every_second(tmp_path):
    cfg = json.loads(mon.prometheus_config(plan(tmp_path)))     # JSON is YAML
    assert cfg["global"]["scrape_interval"] == "1s"
    node, ceph = cfg["scrape_configs"]
    assert node["static_configs"] == [{"targets": ["198.18.0.1:9100"], "labels": {"instance": "h1"}},
                                      {"targets": ["198.18.0.2:9100"], "labels": {"instance": "h2"}}]
    assert ceph["static_configs"] == [{"targets": ["198.18.0.1:9283"]}]
    assert plan(tmp_path).record()["prometheus"] == "http://127.0.0.1:40123"


def test_node_exporters_count_loop_devices_export_addresses_and_take_the_shaped_speed(tmp_path):
    p = plan(tmp_path)
    argv = mon.exporter_argv(p, "h1")
    assert "--web.listen-address=198.18.0.1:9100" in argv and "--collector.netdev.address-info" in argv
    assert r"--collector.diskstats.device-exclude=^(ram|fd)\d+$" in argv and "--collector.netclass" not in argv
    mon.write_files(p)
    assert (p.textfile_dir("h1") / "speed.prom").read_text().splitlines()[-1] == \
        'node_network_speed_bytes{device="pub0"} 25000000'
    assert not (p.textfile_dir("h2") / "speed.prom").exists() and p.data.is_dir()


def test_targets_are_waited_for_until_every_one_is_up():
    answer = json.loads((FIX / "prom2.42_lab3_targets.json").read_text())
    assert mon.targets_state(answer, 4)[0]
    down = json.loads(json.dumps(answer))
    down["data"]["activeTargets"][0].update(health="down", lastError="connection refused")
    ok, state = mon.targets_state(down, 4)
    assert not ok and state.startswith("3/4 targets up") and "connection refused" in state


def test_the_mgr_loads_prometheus_only_for_a_monitoring_lab(tmp_path):
    def lines(**kw):
        return render_conf(tmp_path, "fsid", LabPorts(1, 2, 3), 3, 4 << 30, **kw).splitlines()
    plain, monitored = lines(), lines(mgr_modules=("prometheus",))
    assert "mgr initial modules = iostat" in plain and "mgr initial modules = iostat prometheus" in monitored
    disabled = next(x for x in monitored if x.startswith("mgr disabled modules"))
    assert "prometheus" not in disabled.split(" = ")[1].split(",")
    assert "prometheus" in next(x for x in plain if x.startswith("mgr disabled modules"))


def test_a_process_naming_the_labs_monitoring_directory_is_the_labs(tmp_path):
    conf = tmp_path / "ceph.conf"
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                             f"--config.file={tmp_path / 'monitoring' / 'prometheus.yml'}"])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                              f"--config.file={tmp_path / 'monitoring-old' / 'prometheus.yml'}"])
    try:
        assert dm.is_lab_process(ours.pid, conf) and not dm.is_lab_process(other.pid, conf)
    finally:
        for p in (ours, other):
            p.kill()
            p.wait()
