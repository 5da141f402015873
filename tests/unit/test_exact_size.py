"""The exact binary size (`4KiB`, `1536KiB`, `1000B`): a size in the largest binary unit that divides it, written
once (issue 26 item 5). Pinned here, byte for byte, as the analysis's labels and the lab's flags print it."""

from __future__ import annotations

from cephbench.analysis.verdict import _short
from cephbench.lab.throttle import DriveLimit, DriveRef, ThrottleSpec
from cephbench.core.units import exact_size, parse_size

EXACT = [(1, "1B"), (512, "512B"), (1000, "1000B"), (4096, "4KiB"), (1536 * 1024, "1536KiB"),
         (4 * 2**20, "4MiB"), (3 * 2**20 + 2**19, "3584KiB"), (2**30, "1GiB"), (3 * 2**30, "3GiB"),
         (2**40, "1024GiB"), (2**30 + 4096, "1048580KiB")]


def test_labels_name_a_size_exactly_in_its_largest_dividing_unit():
    for n, text in EXACT:
        assert exact_size(n) == text
        assert parse_size(text) == n
        assert _short(n) == text
    assert _short(0) == _short(None) == ""


def test_a_lab_flag_gives_bare_bytes_when_no_unit_divides():
    for n, text in EXACT:
        assert exact_size(n, byte_unit="") == (text[:-1] if text.endswith("B") and not text.endswith("iB") else text)
    limit = ThrottleSpec(DriveRef(1), DriveLimit(bytes_per_s=8 * 2**20, iops=200))
    assert limit.text() == "osd.1=8MiB/s,200iops"
    assert ThrottleSpec(DriveRef(2, "db"), DriveLimit(bytes_per_s=1000)).text() == "osd.2.db=1000/s"
