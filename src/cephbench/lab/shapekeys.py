"""How each value of a lab's shape is named where it was given: `lab up`'s flags, or a suite's `lab:` keys.

The parsers and checks of a shape (multihost.py and the modules it reads) take one of these tables and name every
flag or key they mention through it, so that a refusal speaks the words of its source: `--public-net` on the
command line, `public_net` (at its YAML path) in a suite.
"""

from __future__ import annotations

from typing import Mapping

Names = Mapping[str, str]

FLAGS: Names = {
    "hosts": "--hosts", "osds_per_host": "--osds-per-host", "clients": "--clients", "osds": "--osds",
    "osd_size": "--osd-size", "public_net": "--public-net", "cluster_net": "--cluster-net",
    "client_net": "--client-net", "osd_throttle": "--osd-throttle", "cpu_limit": "--cpu-limit",
    "host_load": "--host-load", "db_device": "--db-device", "objectstore": "--objectstore", "fs": "--fs",
    "rgw": "--no-rgw", "release": "--release"}
KEYS: Names = {key: key for key in FLAGS}
# the most hosts (OSD and client hosts together) a lab may have: .1 .. .253 of its networks (netns.py's address plan;
# .254 is cephbench's address on the public bridge)
MAX_HOSTS = 253
