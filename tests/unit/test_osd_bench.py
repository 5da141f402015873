from pathlib import Path

import pytest

from cephbench.drivers import ParseError
from cephbench.drivers import osd_bench

FIX = Path(__file__).parent.parent / "fixtures" / "osd_bench"


def test_parse_compact_and_pretty_json():
    m = osd_bench.parse((FIX / "ceph16.2.15_osd0_1GiB_4MiB.json").read_text())
    assert m.bytes_total == 1073741824 and m.op_size_bytes == 4194304
    assert m.bytes_per_s == pytest.approx(1289779105.8174632)
    assert m.ops_total == 256
    pretty = osd_bench.parse((FIX / "ceph16.2.15_osd2_plain.txt").read_text())
    assert pretty.ops_per_s == pytest.approx(344.23758413159834)


def test_error_output_is_a_parse_error_and_yields_the_limit():
    text = (FIX / "ceph16.2.15_osd1_100MiB_4KiB_err.json").read_text()
    with pytest.raises(ParseError):
        osd_bench.parse(text)
    assert osd_bench.limit_from_error(text) == 12288000


def test_slow_drive_is_flagged_20_percent_below_median():
    flags = osd_bench.flag_slow({"osd.0": 100.0, "osd.1": 105.0, "osd.2": 79.0, "osd.3": 81.0}, 0.2)
    # median 90.5: 79 is 12.7% below, 81 is 10.5% below: neither is slow at 20%
    assert flags["slow"] == []
    flags = osd_bench.flag_slow({"osd.0": 154.0, "osd.1": 150.0, "osd.2": 93.0}, 0.2)
    assert flags["slow"] == ["osd.2"] and flags["median_bytes_per_s"] == 150.0


def test_argv():
    assert osd_bench.argv(["--conf", "c"], 3, 1024, 4096)[-6:] == ["osd.3", "bench", "1024", "4096", "-f", "json"]
