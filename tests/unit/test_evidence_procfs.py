"""Device and link load from real /proc/diskstats and /proc/net/dev readings (Linux 6.18, tests/fixtures/procfs/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cephbench.evidence.procfs import (device_load, link_load, parse_diskstats, parse_link_speed,
                                       parse_net_dev)

FIX = Path(__file__).parent.parent / "fixtures" / "procfs"


def _reading(name: str, parse):
    stamp, _, text = (FIX / name).read_text().partition("\n")
    return int(stamp), parse(text)


def test_a_64MiB_direct_write_shows_on_the_disk_it_went_to():
    readings = [_reading(f"linux6.18_diskstats_{x}.txt", parse_diskstats) for x in "ab"]
    load = device_load("vm", "vda", readings, osds=[0], role="data")
    assert load is not None and len(load.busy) == 1 and load.osds == [0]
    dt = (readings[1][0] - readings[0][0]) / 1e9
    # dd wrote 64 MiB with O_DIRECT between the readings; the rest of the machine wrote a little more
    assert 64 * 2**20 <= load.write_bytes_per_s[0] * dt < 80 * 2**20
    assert 0 < load.busy[0] <= 1 and load.await_ms[0] is not None and load.await_ms[0] > 0


def test_diskstats_lines_are_read_for_every_device_and_garbage_is_skipped():
    _, stats = _reading("linux6.18_diskstats_a.txt", parse_diskstats)
    assert {"vda", "loop0", "zram0"} <= set(stats)
    assert parse_diskstats("garbage\n 254 0 vda 1 2\n") == {}


def test_a_file_backed_osd_has_no_device_in_diskstats():
    readings = [_reading(f"linux6.18_diskstats_{x}.txt", parse_diskstats) for x in "ab"]
    assert device_load("vm", "sdz", readings) is None


def test_link_bytes_per_second_from_net_dev():
    readings = [_reading(f"linux6.18_net_dev_{x}.txt", parse_net_dev) for x in "ab"]
    assert set(readings[0][1]) == {"lo", "ifb0", "ifb1", "eth0"}
    load = link_load("vm", "lo", readings, network="public", speed_bits_per_s=None, speed_source="sysfs")
    assert load is not None and load.speed_source is None
    a, b = readings[0][1]["lo"], readings[1][1]["lo"]
    dt = (readings[1][0] - readings[0][0]) / 1e9
    assert load.rx_bytes_per_s[0] == pytest.approx((b.rx_bytes - a.rx_bytes) / dt)
    assert load.tx_bytes_per_s[0] > 0        # loopback carries this machine's labs' traffic
    assert link_load("vm", "bond7", readings) is None


@pytest.mark.parametrize("text, bits", [("10000\n", 1e10), ("-1\n", None), ("", None),
                                        ("cat: /sys/class/net/lo/speed: Invalid argument", None)])
def test_link_speed_the_kernel_may_not_report(text, bits):
    # the dev VM's eth0 reads -1 and its lo an EINVAL: both "unknown", never 0 or a traceback
    assert parse_link_speed(text) == bits


def test_a_watch_stopped_mid_second_makes_no_short_second():
    """A real WATCH_SH stream (this VM, Linux 6.18: dd writing to vda, the watch told `stop` 2.55 s in): its last
    reading came 0.47 s after the one before. That interval's rate, counted as a second like the others, made a
    second that never was; it joins the interval before it, and every byte between the first and last reading is
    still counted."""
    from cephbench.evidence.hoststream import WantedAddress, WantedDevice, loads, parse_stream
    stream = parse_stream((FIX.parent / "hostwatch" / "linux6.18_watch_stopped_mid_second.txt").read_text())
    stamps = [t for t, _ in stream.disks]
    assert len(stamps) == 4 and (stamps[-1] - stamps[-2]) / 1e9 < 0.5 < (stamps[-2] - stamps[-3]) / 1e9
    [dev], [link], notes = loads("vm", stream, [WantedDevice("vda", (0,), "data")],
                                 [WantedAddress("127.0.0.1", "public")])
    assert notes == ["link vm lo: the kernel does not report its speed"]
    spans = [(stamps[1] - stamps[0]) / 1e9, (stamps[3] - stamps[1]) / 1e9]
    assert len(dev.write_bytes_per_s) == len(dev.busy) == len(link.rx_bytes_per_s) == 2
    first, last = stream.disks[0][1]["vda"], stream.disks[-1][1]["vda"]
    written = (last.write_sectors - first.write_sectors) * 512
    assert sum(r * s for r, s in zip(dev.write_bytes_per_s, spans)) == pytest.approx(written)
    first_net, last_net = stream.nets[0][1]["lo"], stream.nets[-1][1]["lo"]
    assert sum(r * s for r, s in zip(link.rx_bytes_per_s, spans)) == pytest.approx(last_net.rx_bytes - first_net.rx_bytes)
