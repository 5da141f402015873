"""Where an OSD's admin socket may be, in order (evidence/sockpaths.py): the cluster's config first, with its own
run_dir and Ceph's metavariables expanded; then the host's ceph.conf; then cephadm's /var/run/ceph/<fsid>/; then Ceph's
default. The cluster's config is its real `ceph config get osd.N -f json` answer."""

import json
from pathlib import Path

from cephbench.evidence.sockpaths import (CEPHADM, CLUSTER_CONFIG, DEFAULT, HOST_CEPH_CONF, HOST_CONF, candidates,
                                          expand, layout, options_set)

FIX = Path(__file__).parent.parent / "fixtures" / "config_get"
FSID = "e5a64fb6-974c-4fb0-a668-1802d700dda3"


def test_the_cluster_config_answer_gives_the_options_set_for_the_osd():
    got = options_set(json.loads((FIX / "ceph16.2.15_osd0_run_dir_admin_socket_host_mask.json").read_text()))
    assert got["run_dir"] == "/var/run/ceph/$fsid" and got["admin_socket"] == "$run_dir/$cluster-$name.asok"
    assert got["osd_max_backfills"] == "2" and got["osd_recovery_sleep"] == "0.100000"
    assert options_set({}) == {} and options_set(None) == {} and options_set({"x": "not an entry"}) == {}


def test_without_cluster_config_the_host_conf_comes_first_then_cephadm_then_the_default():
    assert candidates(3, FSID, {}) == [HOST_CONF, f"/var/run/ceph/{FSID}/ceph-osd.3.asok",
                                       "/var/run/ceph/ceph-osd.3.asok"]
    # no fsid known: no cephadm place to try
    assert candidates(3, None, {}) == [HOST_CONF, "/var/run/ceph/ceph-osd.3.asok"]


def test_the_cluster_configs_socket_comes_first_expanded_with_its_own_run_dir():
    cfg = options_set(json.loads((FIX / "ceph16.2.15_osd0_run_dir_admin_socket_host_mask.json").read_text()))
    got = candidates(0, FSID, cfg)
    assert got[0] == f"/var/run/ceph/{FSID}/ceph-osd.0.asok" and got[1] == HOST_CONF
    # the cephadm place is the same path here: tried once
    assert got == [f"/var/run/ceph/{FSID}/ceph-osd.0.asok", HOST_CONF, "/var/run/ceph/ceph-osd.0.asok"]
    assert layout(got[0], 0, FSID, cfg) == CLUSTER_CONFIG
    # run_dir alone: the default admin_socket under it
    assert candidates(7, FSID, {"run_dir": "/srv/ceph/run"})[0] == "/srv/ceph/run/ceph-osd.7.asok"
    # admin_socket alone: Ceph's default run_dir
    assert candidates(7, FSID, {"admin_socket": "$run_dir/$type.$id-${cluster}.sock"})[0] == \
        "/var/run/ceph/osd.7-ceph.sock"


def test_a_path_with_a_metavariable_it_cannot_know_is_not_tried():
    assert expand("/x/$host/$name.asok", 1, FSID, "/r") == "/x/$host/osd.1.asok"
    assert candidates(1, FSID, {"admin_socket": "/x/$host/$name.asok"})[0] == HOST_CONF
    # $fsid unknown: the cluster's path that names it is not tried
    assert candidates(1, None, {"run_dir": "/var/run/ceph/$fsid"}) == [HOST_CONF, "/var/run/ceph/ceph-osd.1.asok"]


def test_the_layout_names_where_the_socket_that_answered_was():
    assert layout(f"/var/run/ceph/{FSID}/ceph-osd.2.asok", 2, FSID, {}) == CEPHADM
    assert layout("/var/run/ceph/ceph-osd.2.asok", 2, FSID, {}) == DEFAULT
    assert layout("/tmp/lab/run/ceph-osd.2.asok", 2, FSID, {}) == HOST_CEPH_CONF
    assert layout("/srv/run/ceph-osd.2.asok", 2, FSID, {"run_dir": "/srv/run"}) == CLUSTER_CONFIG
