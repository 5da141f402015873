"""Where an OSD's admin socket may be on its host, in the order the reader tries them (pure).

The host's own ceph.conf (what `ceph-conf` says there) is only one view, and under containers a wrong one: cephadm
mounts the host's /var/run/ceph/<fsid>/ as the container's /var/run/ceph, so the daemon's default
`$run_dir/$cluster-$name.asok` is /var/run/ceph/<fsid>/ceph-osd.N.asok on the host, which a host's minimal ceph.conf
does not name. The cluster's central config (`ceph config get osd.N`) is what the daemon itself read, so a path it
sets comes first. Each path is tried only where a socket exists, and the first that answers is kept for the run.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

HOST_CONF = ""      # the candidate that stands for "what the host's `ceph-conf` says", asked on the host
RUN_DIR = "/var/run/ceph"       # Ceph's default run_dir, and where cephadm keeps each cluster's directory
CLUSTER = "ceph"                # a cluster's name inside a container is always this one

# the layouts, as the evidence names them
CLUSTER_CONFIG = "cluster config"
HOST_CEPH_CONF = "host ceph.conf"
CEPHADM = "cephadm layout"
DEFAULT = "default path"

_META = re.compile(r"\$(\w+)|\$\{(\w+)\}")


def expand(template: str, osd: int, fsid: str | None, run_dir: str) -> str:
    """Ceph's metavariables of an OSD's option value; one this reader does not know ($host, $pid) stays as is, and
    such a path exists nowhere."""
    values = {"cluster": CLUSTER, "name": f"osd.{osd}", "id": str(osd), "type": "osd",
              **({"fsid": fsid} if fsid else {})}

    def one(m: re.Match[str]) -> str:
        return values.get(m.group(1) or m.group(2), m.group(0))
    # run_dir may itself name a metavariable ($fsid), so it is expanded with the others, once
    values["run_dir"] = _META.sub(one, run_dir)
    return _META.sub(one, template)


def cluster_socket(osd: int, fsid: str | None, config: Mapping[str, str]) -> str | None:
    """The admin socket the cluster's config gives osd.N (`config`: its options set there, by name), expanded with
    its run_dir from the same config; None when it sets neither."""
    template = config.get("admin_socket")
    if template is None and "run_dir" not in config:
        return None
    return expand(template or "$run_dir/$cluster-$name.asok", osd, fsid, config.get("run_dir") or RUN_DIR)


def candidates(osd: int, fsid: str | None, config: Mapping[str, str]) -> list[str]:
    """The paths to try for osd.N, in order, without repeats; HOST_CONF stands for the host's `ceph-conf`."""
    own = cluster_socket(osd, fsid, config)
    out = [p for p in (own, HOST_CONF, f"{RUN_DIR}/{fsid}/{CLUSTER}-osd.{osd}.asok" if fsid else None,
                       f"{RUN_DIR}/{CLUSTER}-osd.{osd}.asok") if p is not None and "$" not in p]
    return list(dict.fromkeys(out))


def layout(path: str, osd: int, fsid: str | None, config: Mapping[str, str]) -> str:
    """Which candidate a socket that answered at `path` was: the cluster's config's, else a place Ceph or cephadm
    puts it (whoever named it), else the host's ceph.conf's (the only one read on the host)."""
    for name, where in ((CLUSTER_CONFIG, cluster_socket(osd, fsid, config)),
                        (CEPHADM, f"{RUN_DIR}/{fsid}/{CLUSTER}-osd.{osd}.asok" if fsid else None),
                        (DEFAULT, f"{RUN_DIR}/{CLUSTER}-osd.{osd}.asok")):
        if where == path:
            return name
    return HOST_CEPH_CONF


def options_set(doc: Any) -> dict[str, str]:
    """`ceph config get osd.N -f json` -> the options the cluster's config sets for that OSD, by name (the monitor
    has already picked what applies to it: its section, its host's and class's masks)."""
    if not isinstance(doc, dict):
        return {}
    return {str(k): str(v["value"]) for k, v in doc.items() if isinstance(v, dict) and "value" in v}
