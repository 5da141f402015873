"""Every kind of test, one module each, as fio's engines are: config, plan, runner, clients, analysis and report
read kinds through this registry and never name one.

A kind module (kinds/<name>.py) holds:
- KIND: its descriptor (kind.py: level, report table, phase field, direction of each phase, estimate figures, and
  its parameters by role: its load, its op size, its ids', tables' and charts' parameters, which the core reads
  through load_of, op_size_of, ... below and never by name: tests/unit/test_kind_names.py);
- MODEL: its suite schema model (a pydantic model on a base of schema.py), None for a kind no suite names (the
  baselines, which the suite's `baseline:` section makes), and then params_model(): the model of its tests'
  parameters (schema.KindParams; a kind with a MODEL has it made from that, schema.test_params_model), which each
  of its Tests carries (core/planned.py Params, through PARAMS_OF below);
- needs(params): what its tool needs on a client host, for a kind whose model accepts `clients:`;
- in KIND.resources, what its driver makes that the core does not make for every kind (kind.py ResourceType: its
  ledger name, proof of ownership, remover and order), each declared once in a kind's module and read by the
  ledger, the run's removal and a killed run's cleanup through RESOURCE_TYPES below;
- DRIVER: its module under drivers/, whose hooks are run_group(ctx, group, todo) and, if its tests need a check
  against the cluster before anything is created, preflight(cluster, tests, settings); drivers/registry.py loads
  them (drivers import this package, so this package names its drivers rather than importing them).

Adding a kind: its module here, its driver, and its name in PLUGINS below. tests/unit/test_kinds.py fails when a
registered kind lacks any of them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Mapping

from . import (disk_baseline, fio_rados, fio_rbd, net_baseline, osd_bench, qemu_rbd, rados_bench, rados_load_gen,
               rbd_bench, rgw)
from ..core import resources as ledger
from ..core.planned import PARAMS_OF
from ..core.units import format_size
from .kind import DIRECTION_ORDER, LEVEL_ORDER, Direction, Kind, Layout, Level, Needs, ResourceType
from .schema import test_params_model

__all__ = ["DIRECTION_ORDER", "LEVEL_ORDER", "Direction", "Kind", "Layout", "Level", "Needs", "KINDS", "PLUGINS",
           "ResourceType", "RESOURCE_TYPES", "LEDGER_KINDS", "resource_type",
           "WORKLOAD_KINDS", "WORKLOAD_MODELS", "DISK_BASELINE", "NET_BASELINE", "client_needs", "direction_of",
           "kinds_where", "level_of", "ops_unit", "LOAD_PARAMS", "SIZE_PARAMS", "load_of", "concurrency_of",
           "op_size_of", "object_size_of", "in_flight_per_process", "LOAD_NAMES", "LEAD_LOADS", "shown_of"]

# the registry, one name per kind, in the order the suite schema lists its types and preflight checks them
PLUGINS: tuple[ModuleType, ...] = (rados_bench, osd_bench, fio_rados, rados_load_gen, rbd_bench, fio_rbd, qemu_rbd,
                                   rgw, disk_baseline, net_baseline)

# in report order: by level, then as registered (the terminal's tables follow it)
KINDS: dict[str, Kind] = {p.KIND.name: p.KIND
                          for p in sorted(PLUGINS, key=lambda p: LEVEL_ORDER.index(p.KIND.level))}
PLUGIN_OF: Mapping[str, ModuleType] = {p.KIND.name: p for p in PLUGINS}

WORKLOAD_KINDS: tuple[str, ...] = tuple(k for k in KINDS if KINDS[k].level != "Baselines")
WORKLOAD_MODELS: tuple[Any, ...] = tuple(p.MODEL for p in PLUGINS if p.MODEL is not None)

# each kind's model of one test's parameters, which every Test made from here on carries (core/planned.py Params):
# made when first needed: from its suite model (schema.test_params_model), or by its module's params_model where no
# suite names it (the baselines)
PARAMS_OF.update({p.KIND.name: p.params_model if p.MODEL is None else (lambda p=p: test_params_model(p.MODEL))
                  for p in PLUGINS})

# what the kinds make, by ledger name: each kind's declaration (KIND.resources), one per name however many kinds
# make it (the RBD kinds' images: kinds/rbd_images.py)
RESOURCE_TYPES: dict[str, ResourceType] = {r.name: r for p in PLUGINS for r in p.KIND.resources}
# every kind of entry a run's ledger takes: the core's own (core/resources.py KINDS) and the kinds'
LEDGER_KINDS: frozenset[str] = frozenset({*ledger.KINDS, *RESOURCE_TYPES})


def resource_type(name: str) -> ResourceType | None:
    """The declaration of a ledger kind some kind makes; None for the core's own (a pool, a process) or none."""
    return RESOURCE_TYPES.get(name)


# the baselines are not suite workloads: the model reads their figures by name
DISK_BASELINE, NET_BASELINE = disk_baseline.KIND.name, net_baseline.KIND.name


def client_needs(kind: str, params: Mapping[str, Any]) -> Needs:
    """What a test of `kind` needs on a client host (nothing, no key, for a kind that never runs on one)."""
    plugin = PLUGIN_OF.get(kind)
    hook = getattr(plugin, "needs", None)
    return hook(params) if hook is not None else Needs(key=False)


def direction_of(kind: str, phase: str | None, op: str | None = None) -> Direction | None:
    """What a test does to the cluster's data: from its phase, else from the op its tool reported."""
    k = KINDS.get(kind)
    if k is None:
        return None
    return k.direction(phase) or k.direction(op)


def ops_unit(kind: str) -> str | None:
    """What a kind's operations per second are called: "IOPS" (block I/O: fio, rbd bench, osd bench, the disk
    baseline), "objects/s" (rados bench), "req/s" (RGW's S3 and Swift requests); None when its tool counts no
    operations (iperf3), "ops/s" for a kind this table does not know. Terminal, report.md and report.html all
    name the column and the figure with it."""
    k = KINDS.get(kind)
    if k is None:
        return "ops/s"
    return k.ops_name if k.ops_counted else None


def level_of(kind: str) -> Level | None:
    k = KINDS.get(kind)
    return k.level if k else None


def kinds_where(**flags: bool) -> frozenset[str]:
    """Kinds whose descriptor fields equal the given values, e.g. kinds_where(modelled=True)."""
    return frozenset(k.name for k in KINDS.values() if all(getattr(k, f) == v for f, v in flags.items()))


# ---- a test's parameters by their role, as its kind declares them (kind.py) ----------------------------------------
# A kind the registry does not know (a run directory of an older cephbench) is read as any registered kind would be,
# in registration order: its parameters still have the names one of them gives them.

def _declaring(kind: str) -> list[Kind]:
    k = KINDS.get(kind)
    return [k] if k is not None else [p.KIND for p in PLUGINS]


def _ordered(names: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


# the parameters that set how much load a test puts on the cluster: their product is the operations in flight (a
# curve's load), and a search doubles one of them; instances (processes) and clients (hosts) are every kind's
LOAD_PARAMS: tuple[str, ...] = _ordered([*(n for p in PLUGINS for n in p.KIND.load_params), "instances", "clients"])
# how a curve names each (t=16, qd=32, jobs=2); and the loads it names even at one (a load of one per process goes
# without saying, but not the one a kind's load is)
LOAD_NAMES: Mapping[str, str] = {**{n: t for p in PLUGINS for n, t in p.KIND.load_params.items()},
                                 "instances": "instances", "clients": "clients"}
LEAD_LOADS: frozenset[str] = frozenset({*(p.KIND.load_param for p in PLUGINS if p.KIND.load_param), "clients"})
# the parameters that are sizes in bytes, whichever kind's
SIZE_PARAMS: tuple[str, ...] = _ordered(n for p in PLUGINS for n in p.KIND.size_params)


def _first(params: Mapping[str, Any], names: Any) -> Any:
    return next((params[n] for n in names if n is not None and params.get(n) is not None), None)


def load_of(kind: str, params: Mapping[str, Any]) -> Any:
    """A test's load (its kind's first load parameter: concurrency, iodepth, io_threads); None: it has none."""
    return _first(params, (k.load_param for k in _declaring(kind)))


def concurrency_of(kind: str, params: Mapping[str, Any]) -> Any:
    """What a test runs at once: its load, else the streams of a kind that has none (kind.parallel_param: the
    network baseline's iperf3 streams, whichever kind's test names them, as the export always read them); None:
    neither."""
    load = load_of(kind, params)
    return load if load is not None else _first(params, (k.parallel_param for k in KINDS.values()))


def op_size_of(kind: str, params: Mapping[str, Any]) -> Any:
    """The size of one of a test's operations, as its parameters give it; None: not one size."""
    return _first(params, (k.op_size_param for k in _declaring(kind)))


def object_size_of(kind: str, params: Mapping[str, Any]) -> Any:
    """The size of the objects a test writes (kind.object_size_param); None: not one size."""
    return _first(params, (k.object_size_param for k in _declaring(kind)))


def in_flight_per_process(kind: str, params: Mapping[str, Any]) -> int | None:
    """Operations one process of a test keeps in flight: the product of its kind's load parameters (iodepth ×
    numjobs); None when its load is not given."""
    for k in _declaring(kind):
        lead = params.get(k.load_param) if k.load_param else None
        if lead:
            n = int(lead)
            for extra in list(k.load_params)[1:]:
                n *= int(params.get(extra) or 1)
            return n
    return None


def shown_of(kind: str, params: Mapping[str, Any]) -> list[str]:
    """The parameters a table's params column shows (kind.shown_params), each as the table writes it: sizes as
    sizes, the load as "t=16" or "qd=32"."""
    declaring = _declaring(kind)
    out = []
    for key in _ordered(n for k in declaring for n in k.shown_params):
        if key in params:
            v = params[key]
            tag = next((k.load_tag for k in declaring if k.load_param == key and k.load_tag), None)
            out.append(format_size(v) if any(key in k.size_params for k in declaring) else
                       f"{tag}={v}" if tag else str(v))
    return out
