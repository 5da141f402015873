"""Each kind's hooks, loaded from the driver module its kind module names (kinds/: DRIVER), and the removers its
resources' declarations name (kinds/kind.py ResourceType.remover). Nothing here names a kind: adding one is its
kind module, its driver, and one name in kinds.PLUGINS."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import Callable

from ..cluster.ceph import Cluster
from ..core.settings import Settings
from ..kinds import PLUGINS, ResourceType
from ..core.resources import Resource
from ..core.results import Test
from .base import DriverContext, GroupDriver


def driver_module(plugin: ModuleType) -> ModuleType:
    return import_module(f"{__package__}.{plugin.DRIVER}")


_MODULES = {p.KIND.name: driver_module(p) for p in PLUGINS}

# kind -> the driver that runs a group of its tests
DRIVERS: dict[str, GroupDriver] = {k: m.run_group for k, m in _MODULES.items()}

# kind -> a check of its tests against the cluster, run by the runner's preflight before anything is created; it
# raises UserError (exit 2) for what the user must change
PREFLIGHT: dict[str, Callable[[Cluster, list[Test], Settings], None]] = {
    k: m.preflight for k, m in _MODULES.items() if hasattr(m, "preflight")}


def remover_of(declared: ResourceType) -> Callable[[DriverContext, Resource], None]:
    """The function a kind's resource declaration names as its remover ("<module under drivers/>:<function>")."""
    module, _, function = declared.remover.partition(":")
    return getattr(import_module(f"{__package__}.{module}"), function)
