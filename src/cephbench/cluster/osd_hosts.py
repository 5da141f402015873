"""The hosts that carry the cluster's OSDs, as cephbench reaches them: the cluster names them, the suite's ssh
settings say how (hosts/remote.py's host_ref)."""

from __future__ import annotations

from ..core.settings import SshSettings
from ..hosts.remote import HostRef, host_ref
from .ceph import Cluster


def osd_hosts(cluster: Cluster, ssh: SshSettings) -> list[HostRef]:
    """The hosts that carry OSDs, each reached as `host_ref` says."""
    names = sorted({str(m.get("hostname")) for m in cluster.ceph_json("osd", "metadata") if m.get("hostname")})
    return [host_ref(n, ssh) for n in names]
