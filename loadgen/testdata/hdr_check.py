#!/usr/bin/env python3
"""Check that Python's hdrh reads cephbench-loadgen histograms and merges
them exactly as Go does.

    python3 -m venv /tmp/lgvenv && /tmp/lgvenv/bin/pip install hdrhistogram
    /tmp/lgvenv/bin/python loadgen/testdata/hdr_check.py [result.json ...]

Without arguments it checks testdata/hdr_fixture.json (two histograms
encoded by Go and the percentiles of their merge computed by Go, written by
TestHDRFixtureForPython). With result files it also decodes every hdr_*
field of each and checks their counts against "ops".
"""
import json
import os
import sys

from hdrh.histogram import HdrHistogram

LOWEST_NS, HIGHEST_NS, SIG_FIGS = 1000, 3600 * 10**9, 3


def check_fixture(path):
    fx = json.load(open(path))
    a = HdrHistogram.decode(fx["A"])
    b = HdrHistogram.decode(fx["B"])
    merged = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIG_FIGS)
    merged.add(a)
    merged.add(b)
    assert merged.get_total_count() == fx["TotalCount"], (merged.get_total_count(), fx["TotalCount"])
    bad = []
    for pct, want in fx["Percentiles"].items():
        got = merged.get_value_at_percentile(float(pct))
        if got != want:
            bad.append(f"p{pct}: python {got} != go {want}")
    # Merging by decoding one and adding the other must give the same.
    a.add(b)
    for pct, want in fx["Percentiles"].items():
        if a.get_value_at_percentile(float(pct)) != want:
            bad.append(f"p{pct} (decode+add): python {a.get_value_at_percentile(float(pct))} != go {want}")
    if bad:
        sys.exit("MISMATCH: " + "; ".join(bad))
    print(f"ok: {path}: {len(fx['Percentiles'])} percentiles of the merge equal Go's")


def check_result(path):
    doc = json.load(open(path))
    for name, op in list(doc["operations"].items()) + [("total", doc["total"])]:
        h = HdrHistogram.decode(op["hdr_lat"])
        assert h.get_total_count() == op["ops"], (name, h.get_total_count(), op["ops"])
        if op["ops"]:
            assert h.get_value_at_percentile(99) == op["lat_ns"]["p99"], (name, h.get_value_at_percentile(99), op["lat_ns"])
    print(f"ok: {path}: histograms decode and agree with lat_ns")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    check_fixture(os.path.join(here, "hdr_fixture.json"))
    for p in sys.argv[1:]:
        check_result(p)
