"""--public-net / --cluster-net RATE[/DELAY]: tc's bit units, delays, and the bad input the issue lists."""

import pytest

from cephbench.core.errors import UserError
from cephbench.lab.rates import LinkShape, parse_delay, parse_link, parse_rate, tbf_burst_bytes, tc_delay, tc_rate


@pytest.mark.parametrize("text,bits", [
    ("1gbit", 10**9), ("100mbit", 10**8), ("10gbit", 10**10), ("500kbit", 500_000), ("2.5gbit", 2_500_000_000),
    ("100MBIT", 10**8), (" 1gbit ", 10**9), ("1mibit", 2**20), ("8000bit", 8000),
])
def test_rates_in_bits(text, bits):
    assert parse_rate(text) == bits


@pytest.mark.parametrize("text,seconds", [("0.2ms", 0.0002), ("1ms", 0.001), ("200us", 0.0002), ("0.5s", 0.5),
                                          ("0ms", 0.0)])
def test_delays(text, seconds):
    assert parse_delay(text) == pytest.approx(seconds)


def test_link_with_and_without_delay():
    assert parse_link("1gbit") == LinkShape(10**9, 0.0)
    assert parse_link("100mbit/0.2ms") == LinkShape(10**8, pytest.approx(0.0002))
    assert LinkShape.from_json(parse_link("1gbit/1ms").to_json()) == parse_link("1gbit/1ms")


def test_bytes_per_second_is_refused_naming_the_bit_unit():
    with pytest.raises(UserError) as e:
        parse_link("1gbps")
    line = e.value.one_line()
    assert line.startswith("--public-net:") and "bytes per second" in line and "write 1gbit" in line
    with pytest.raises(UserError) as e:
        parse_rate("100mbps", where="--cluster-net")
    assert "write 100mbit" in e.value.one_line()


@pytest.mark.parametrize("text,words", [
    ("fast", "not a number"), ("", "not a number"), ("100", "no unit"), ("1gb", "unknown unit"),
    ("-1gbit", "not a number"), ("0mbit", "outside"), ("1kbit", "outside"), ("1tbit", "outside"),
    ("1gbit/", "delay"), ("1gbit/0.2", "delay"), ("1gbit/fast", "delay"), ("1gbit/1ms/2ms", "more than one"),
    ("1gbit/20s", "more than 10"), ("/1ms", "not a number"),
])
def test_bad_input_is_one_line_with_where(text, words):
    with pytest.raises(UserError) as e:
        parse_link(text, where="--cluster-net")
    line = e.value.one_line()
    assert words in line and line.startswith("--cluster-net:") and "\n" not in line


def test_cluster_where_is_kept():
    with pytest.raises(UserError) as e:
        parse_link("1gbps", where="--cluster-net")
    assert e.value.where == "--cluster-net"


def test_tc_spellings():
    assert tc_rate(10**8) == "100000000bit"
    assert tc_delay(0.0002) == "200us" and tc_delay(1e-9) == "1us"
    assert tbf_burst_bytes(10**9) == 1_250_000
    assert tbf_burst_bytes(500_000) == 64 * 1024
