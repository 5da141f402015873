"""The cluster's own limits refuse a suite before anything is created, naming the limit and the YAML path."""

import pytest

from cephbench.suite.config import parse_suite
from cephbench.core.errors import UserError
from cephbench.cluster.limits import Limits, check
from cephbench.suite.plan import expand

LAB = Limits(osd_max_object_size=128 * 1024**2, max_pg_per_osd=250, osds_in=3, pg_copies=195)


def refused(data):
    suite = parse_suite(data, "s.yaml")
    with pytest.raises(UserError) as e:
        check(suite, expand(suite).tests, LAB)
    return e.value.one_line()


def test_objects_larger_than_osd_max_object_size():
    line = refused({"name": "t", "workloads": [{"type": "osd_bench"},
                                               {"type": "rados_bench", "object_size": ["4MiB", "10TiB"]}]})
    assert line.startswith("workloads[1].object_size: 10TiB objects are larger than the OSDs accept "
                           "(osd_max_object_size 128MiB)")
    line = refused({"name": "t", "workloads": [{"type": "fio_rados", "block_size": "256MiB"}]})
    assert "workloads[0].block_size" in line and "osd_max_object_size" in line


def test_pg_num_past_the_monitors_limit():
    line = refused({"name": "t", "pools": {"big": {"type": "replicated", "pg_num": 60000}},
                    "workloads": [{"type": "rados_bench", "pool": "big"}]})
    assert line.startswith("pools.big.pg_num: pg_num 60,000 × 3 copies with the 195 PG copies already there is more "
                           "than the monitors allow (mon_max_pg_per_osd 250 × 3 OSDs in = 750)")


def test_what_fits_passes_and_unknown_limits_check_nothing():
    suite = parse_suite({"name": "t", "workloads": [{"type": "rados_bench", "object_size": "4MiB"}]}, "s.yaml")
    check(suite, expand(suite).tests, LAB)
    huge = parse_suite({"name": "t", "pools": {"p": {"type": "replicated", "pg_num": 60000}},
                        "workloads": [{"type": "rados_bench", "pool": "p", "object_size": "1GiB"}]}, "s.yaml")
    check(huge, expand(huge).tests, Limits(None, None, 3, 0))


def test_a_kind_names_the_fields_that_size_its_objects():
    """rados load-gen's objects are up to max_object_size: above osd_max_object_size its first write fails at the
    OSD (EFBIG) after the pool was made; its kind names the field (object_size_params), so it is refused here."""
    line = refused({"name": "t", "workloads": [{"type": "rados_load_gen", "max_object_size": "5GiB"}]})
    assert line.startswith("workloads[0].max_object_size: 5GiB objects are larger than the OSDs accept")
    suite = parse_suite({"name": "t", "workloads": [{"type": "rados_load_gen", "max_object_size": "128MiB"}]},
                        "s.yaml")
    check(suite, expand(suite).tests, LAB)
