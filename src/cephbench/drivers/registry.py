"""Each kind's hooks, loaded from the driver module its kind module names (kinds/: DRIVER), and the removers its
resources' declarations name (kinds/kind.py ResourceType.remover). Nothing here names a kind: adding one is its
kind module, its driver, and one name in kinds.PLUGINS.

A driver module is imported when its kind is first asked for: a run imports the drivers of the kinds its suite
has, not all ten (RGW's alone brings in the lab's modules)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from importlib import import_module
from types import ModuleType
from typing import Callable

from ..cluster.ceph import Cluster
from ..core.settings import Settings
from ..kinds import PLUGIN_OF, PLUGINS, ResourceType
from ..core.resources import Resource
from ..core.results import Test
from .base import DriverContext, GroupDriver

Preflight = Callable[[Cluster, list[Test], Settings], None]


def driver_module(plugin: ModuleType) -> ModuleType:
    return import_module(f"{__package__}.{plugin.DRIVER}")


@cache
def _module_of(kind: str) -> ModuleType:
    return driver_module(PLUGIN_OF[kind])


class _Hooks(Mapping[str, Callable]):
    """kind -> one hook of its driver, for the kinds whose driver has it; a lookup or a membership test imports
    that kind's driver. Iterating (the registry's order) imports every driver: callers that know their kinds look
    them up."""

    def __init__(self, hook: str) -> None:
        self._hook = hook

    def __getitem__(self, kind: str) -> Callable:
        found = getattr(_module_of(kind), self._hook, None) if kind in PLUGIN_OF else None
        if found is None:
            raise KeyError(kind)
        return found

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, str) and kind in PLUGIN_OF and hasattr(_module_of(kind), self._hook)

    def __iter__(self) -> Iterator[str]:
        return (p.KIND.name for p in PLUGINS if p.KIND.name in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


# kind -> the driver that runs a group of its tests
DRIVERS: Mapping[str, GroupDriver] = _Hooks("run_group")

# kind -> a check of its tests against the cluster, run by the runner's preflight before anything is created; it
# raises UserError (exit 2) for what the user must change
PREFLIGHT: Mapping[str, Preflight] = _Hooks("preflight")


def remover_of(declared: ResourceType) -> Callable[[DriverContext, Resource], None]:
    """The function a kind's resource declaration names as its remover ("<module under drivers/>:<function>")."""
    module, _, function = declared.remover.partition(":")
    return getattr(import_module(f"{__package__}.{module}"), function)
