"""A run records its cluster's release from `ceph versions`, on any cluster (issue 38: a foreign Reef cluster's run.json
had no release and the export's release column was empty). The Pacific line is what Debian 12's ceph-osd 16.2.15 prints
(`ceph-osd --version`, as `ceph versions` counts it); the others are written in its form."""

import pytest

from cephbench.core.releases import cluster_release, release_of_version
from cephbench.report.sections import _release

PACIFIC = {"mon": {"ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)": 1},
           "overall": {"ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)": 6}}
REEF = {"overall": {"ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)": 6}}


@pytest.mark.parametrize("text,name", [
    ("ceph version 20.2.4 (12345) tentacle (stable)", "tentacle"), ("18.2.7+ds-1", "reef"), ("nothing", ""),
    ("ceph version 21.0.0-1 (x) umbrella (dev)", "ceph 21")])
def test_release_of_version(text, name):
    assert release_of_version(text) == name


def test_a_clusters_release_is_the_version_its_daemons_run():
    assert cluster_release(PACIFIC) == {"name": "pacific", "version": "16.2.15", "daemons": 6, "others": {}}
    assert cluster_release(REEF)["name"] == "reef"


def test_an_upgrade_in_progress_names_the_majority_and_the_others():
    mixed = {"overall": {**REEF["overall"],
                         "ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)": 2}}
    got = cluster_release(mixed)
    assert got == {"name": "reef", "version": "18.2.7", "daemons": 6, "others": {"16.2.15": 2}}
    assert _release({"release": "reef", "ceph_release": got}) == "reef 18.2.7 (6 daemons; 2 on 16.2.15)"


@pytest.mark.parametrize("bad", [None, {}, {"overall": []}, {"overall": {"garbage": 3}}, {"error": "EACCES"},
                                 {"overall": {"ceph version 18.2.7 (x) reef": "six"}}])
def test_an_answer_without_a_version_names_no_release(bad):
    assert cluster_release(bad) is None
    assert _release({}) == "-"
