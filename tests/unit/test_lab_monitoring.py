"""The multi-host lab's monitoring stack as a plan (lab/monitoring.py): what Prometheus scrapes and how each
node-exporter is started, and how `lab down` knows their processes for the lab's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from cephbench.lab import daemons as dm
from cephbench.lab import monitoring as mon
from cephbench.lab.conf import LabPorts, render_conf

FIX = Path(__file__).parent.parent / "fixtures" / "prometheus"


def plan(d: Path) -> mon.MonitoringPlan:
    return mon.MonitoringPlan(d / "monitoring", 40123, {"h1": "198.18.0.1:9100", "h2": "198.18.0.2:9100"},
                              "198.18.0.1:9283", {"h1": {"pub0": 200e6}, "h2": {}}, {"h1": [0, 2], "h2": [1]},
                              d / "ceph.conf")


def test_prometheus_scrapes_each_node_exporter_under_its_host_name_and_the_mgr_every_second(tmp_path):
    cfg = json.loads(mon.prometheus_config(plan(tmp_path)))     # JSON is YAML
    assert cfg["global"]["scrape_interval"] == "1s"
    node, process, ceph = cfg["scrape_configs"]
    assert node["static_configs"] == [{"targets": ["198.18.0.1:9100"], "labels": {"instance": "h1"}},
                                      {"targets": ["198.18.0.2:9100"], "labels": {"instance": "h2"}}]
    assert process["static_configs"] == [{"targets": ["198.18.0.1:9256"], "labels": {"instance": "h1"}},
                                         {"targets": ["198.18.0.2:9256"], "labels": {"instance": "h2"}}]
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


def test_each_hosts_process_exporter_groups_its_own_osds_of_this_labs_conf(tmp_path):
    """The groups' regexes (RE2 in process-exporter; the same syntax here) against the lab's OSD command lines (as
    /proc/PID/cmdline reads them, NULs as spaces, the way process-exporter joins them): h1's config takes osd.0 and
    osd.2 of this lab, not osd.1, not osd.20, not another lab's osd.0, not a `ceph-osd --mkfs` of another conf."""
    p = plan(tmp_path)
    mon.write_files(p)
    doc = json.loads(p.process_config("h1").read_text())        # JSON is YAML
    (group,) = doc["process_names"]
    assert group["name"] == "osd.{{.Matches.id}}"
    conf = tmp_path / "ceph.conf"

    def takes(cmdline: str) -> str | None:
        found = [re.search(rx, cmdline) for rx in group["cmdline"]]
        return found[0].group("id") if all(found) else None
    assert takes(f"ceph-osd -i 2 --conf {conf} -f") == "2"
    assert takes(f"ceph-osd -i 0 --admin-socket /x/$cluster-$name.asok --conf {conf} -f") == "0"
    assert takes(f"ceph-osd -i 1 --conf {conf} -f") is None
    assert takes(f"ceph-osd -i 20 --conf {conf} -f") is None
    assert takes(f"ceph-osd -i 0 --conf {conf}.old -f") is None
    assert takes(f"ceph-osd -i 0 --conf /tmp/other-lab/ceph.conf -f") is None
    argv = mon.process_exporter_argv(p, "h2")
    assert f"-config.path={p.process_config('h2')}" in argv and "-web.listen-address=198.18.0.2:9256" in argv
    # `lab down` knows it for the lab's by its config under the monitoring directory
    assert str(p.dir) + "/" in " ".join(argv)


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


def test_the_mgr_module_collects_every_scrape_and_serves_the_osds_counters_from_reef_on():
    # no lab runs ceph-exporter (Debian packages none): from Reef on the module serves the OSDs' counters only with
    # exclude_perf_counters false (tests/lab/test_exporter_counters.py reads them so)
    assert mon.mgr_module_options("") == mon.mgr_module_options("pacific") == {
        "mgr/prometheus/scrape_interval": str(mon.SCRAPE_S)}
    for release in ("reef", "tentacle"):
        assert mon.mgr_module_options(release)["mgr/prometheus/exclude_perf_counters"] == "false"


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


def test_the_drives_limits_go_to_every_hosts_textfile_whole_and_a_lab_without_monitoring_gets_none(tmp_path):
    """A throttled drive is held before the block layer counts it busy: node-exporter shows no limit, so the lab
    publishes each drive's throttle beside the shaped speeds (what the ssh watch reads from the cgroup)."""
    from cephbench.lab.throttle import DriveLimit
    p = plan(tmp_path)
    mon.write_files(p)
    mon.publish_limits(p.dir, {"loop1": DriveLimit(8 << 20, None), "loop4": DriveLimit(None, 150)})
    for host in ("h1", "h2"):
        text = (p.textfile_dir(host) / "limits.prom").read_text().splitlines()
        assert text[2:] == ['cephbench_disk_limit{device="loop1",kind="read_bytes_per_s"} 8388608',
                            'cephbench_disk_limit{device="loop1",kind="write_bytes_per_s"} 8388608',
                            'cephbench_disk_limit{device="loop4",kind="read_iops"} 150',
                            'cephbench_disk_limit{device="loop4",kind="write_iops"} 150']
        assert sorted(f.name for f in p.textfile_dir(host).iterdir()) == ["limits.prom"] + (
            ["speed.prom"] if host == "h1" else [])
    mon.publish_limits(p.dir, {})          # cleared: the file stays, with no limit in it
    assert (p.textfile_dir("h1") / "limits.prom").read_text().count("cephbench_disk_limit{") == 0
    mon.publish_limits(tmp_path / "none", {"loop1": DriveLimit(1, 1)})
    assert not (tmp_path / "none").exists()


def test_a_drives_limit_is_published_under_its_devices_kernel_name(tmp_path):
    """/sys/dev/block/MAJ:MIN names the device as /proc/diskstats does; plain files on one disk add their OSDs'
    limits up, and a device with one unthrottled drive is not limited."""
    from cephbench.lab.drives import Drive, LabDrives, device_limits
    from cephbench.lab.throttle import DriveLimit
    block = tmp_path / "block"
    (tmp_path / "devices" / "loop1").mkdir(parents=True)
    (tmp_path / "devices" / "vda").mkdir(parents=True)
    block.mkdir()
    for dev, name in (("7:1", "loop1"), ("254:0", "vda")):
        (block / dev).symlink_to(tmp_path / "devices" / name)

    def drive(osd, dev, limit, role="data"):
        return Drive(osd, role, f"/x/osd.{osd}.img", 1 << 30, f"/cg/osd.{osd}", dev=dev, limit=limit)

    rec = LabDrives("lab", [drive(0, "7:1", DriveLimit(8 << 20, 100)), drive(1, "254:0", DriveLimit(1 << 20, None)),
                            drive(2, "254:0", DriveLimit(2 << 20, 50)), drive(3, "7:9", DriveLimit(1, 1))], [])
    assert device_limits(rec, block) == {"loop1": DriveLimit(8 << 20, 100), "vda": DriveLimit(3 << 20, None)}
    rec.drives.append(drive(4, "254:0", None))
    assert device_limits(rec, block) == {"loop1": DriveLimit(8 << 20, 100)}


def test_cadvisor_is_scraped_when_built_and_its_command_line_is_the_labs(tmp_path):
    p = plan(tmp_path)
    assert [j["job_name"] for j in json.loads(mon.prometheus_config(p))["scrape_configs"]] == ["node", "process", "ceph"]
    p = mon.MonitoringPlan(**{**p.__dict__, "cadvisor": "127.0.0.1:40124"})
    job = json.loads(mon.prometheus_config(p))["scrape_configs"][-1]
    assert job == {"job_name": "cadvisor", "static_configs": [{"targets": ["127.0.0.1:40124"]}]}
    argv = mon.cadvisor_argv(p, "/x/cadvisor")
    # raw cgroups, each group's stats every second, and a path under the monitoring directory (lab down's mark)
    assert "--docker_only=false" in argv and "--allow_dynamic_housekeeping=false" in argv
    assert f"-lab-dir={tmp_path / 'monitoring' / 'cadvisor'}" in argv
    assert mon.cadvisor_binary(lambda name: None) in (None, str(mon.CADVISOR_REPO_BIN))
    assert mon.cadvisor_binary(lambda name: f"/usr/bin/{name}") in ("/usr/bin/cadvisor", str(mon.CADVISOR_REPO_BIN))
