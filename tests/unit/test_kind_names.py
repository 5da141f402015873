"""Issue 37: a kind owns its names. Outside its own modules nothing names a kind, one of its tool's parameters or
one of its resources: the core (the plan, the search, the analysis, the report, the export) reads a test's
parameters by their role, through the kind's descriptor (kinds/kind.py: load_params, op_size_param,
object_size_param, size_params, id_params, shown_params, swept_charts, table_params; kinds/__init__.py: load_of,
op_size_of, ...).

What is scanned: every module of src/cephbench, its string constants (whole: `params["iodepth"]`, `"rados_bench"`;
a sentence that mentions a name in a message or a docstring is not a use of it), its attribute names (`w.iodepth`)
and its keyword arguments' (`f(iodepth=4)`); a function's own argument is a local name, not a use. A constant that
holds a name (kinds/rbd_images.py's RBD_IMAGE) counts where it is written, not where used.

A kind no suite workload names (the baselines: MODEL None) declares its tests' own parameters on its descriptor
(kind.own_params: iperf3's sender, senders, receivers and streams; the disk baseline's runtime_s and
allow_raw_device), which count as its tool's parameters too.

What counts as a kind's name: its registered name, except `rgw`, which is also the RGW daemon's name the lab, the
evidence and the analysis use for the daemon. What counts as a tool parameter: a field a kind's suite model declares
itself (not one a base in kinds/schema.py gives every kind of that base: name, repeat, clients; RBD's images,
image_size, prefill, which are the RBD level's, read by its shared image driver), and object_size (RBD_TOOL), less
the words that are also the core's own vocabulary (GENERIC); test_the_scanned_names_are_the_tools_own prints the
set. What counts as a kind's resource: the ledger name of a resource type its descriptor declares (kind.resources:
rbd-image, rgw-user, disk-file, ...; pools, ec profiles, processes and work directories are the core's,
core/resources.py KINDS).

Who may name them: the kind's modules (kinds/<kind>.py, drivers/<its DRIVER>.py or drivers/<its DRIVER>/,
report/<kind>.py where its report has tables of its own, and the helpers of KIND_HELPERS), and the foreign formats, whose own vocabulary these are (FOREIGN: rundirs/importer.py
reads raw tool output, rundirs/cbt*.py CBT's YAML).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from cephbench import kinds
from cephbench.core.resources import KINDS as CORE_LEDGER_KINDS
from cephbench.kinds import schema

SRC = Path(__file__).resolve().parents[2] / "src" / "cephbench"

# words that name a kind's parameter and also something of the core's own, in every kind or in no kind at all
GENERIC = {
    "duration",     # every kind's test length (the plan turns it into duration_s)
    "instances",    # processes of one test: every client kind's, and Measurement.instances
    "op",           # Measurement.op: the operation a tool reported
    "ops",          # a phase length in operations; also a tool's counts everywhere
    "objects",      # objects written: the RADOS word
    "rate",         # a rate of anything
    "total",        # a total of anything
    "client",       # a host's role (client host), everywhere
    "pool",         # the pool a test's objects go to: every cluster kind's, and Ceph's word
}

# a base's field that is a tool's parameter all the same: rados bench's -O, RGW's and fio's object sizes, which
# the RBD kinds' base gives their images too
RBD_TOOL = {"object_size"}

# the kind names that are words of the core too
GENERIC_KINDS = {"rgw"}

# modules that are more than one kind's, or one kind's beside its kind module and its DRIVER, and the kinds they serve
KIND_HELPERS: dict[str, str] = {
    "kinds/rbd_images.py": "the RBD kinds' images and krbd mappings, declared once: rbd_bench, fio_rbd, qemu_rbd",
    "drivers/rados_namespace.py": "the run's namespace in an existing pool: rados_bench (its existing_pools)",
    "drivers/fio.py": "fio's job files and parser: fio_rados, fio_rbd, qemu_rbd and the disk baseline",
    "drivers/fio_run.py": "fio's runs on RBD images: fio_rbd and qemu_rbd",
    "drivers/rbd_bench_tool.py": "rbd bench's command and parser: rbd_bench",
    "drivers/rbd_images.py": "the images of the RBD kinds' base (kinds/schema.py RbdWorkload): rbd_bench, fio_rbd, "
                             "qemu_rbd",
    "report/baseline.py": "the baselines' tables (disk_baseline, net_baseline): they read the keys their drivers "
                          "write in measurement.extra",
}

# names that are a module's own for good, each with why; checked as NOT_YET is (an entry must still occur)
ITS_OWN: dict[tuple[str, str], str] = {
    ("kinds/schema.py", "object_size"): "RbdWorkload declares it: the object size of the RBD kinds' images",
    ("rundirs/export.py", "concurrency"): "a column and a label of the export (docs/exports.md), which its readers "
                                          "parse: the test's load, whatever its kind calls it",
    ("rundirs/export.py", "object_size"): "a label of the export (docs/exports.md), its objects' size",
}

# the foreign formats: their input's vocabulary is the tools' own
FOREIGN = ("rundirs/importer.py", "rundirs/cbt.py")

# Where the core still names a kind, a tool parameter or a kind's resource, each (file, name) with why it is left.
# This table only shrinks: an entry that no longer occurs fails the test, as does a name in a file that is not here.
# Empty: a kind's resources are declared by the kind (kinds/kind.py ResourceType), and the ledger, the run's removal
# and a killed run's cleanup read that declaration (tests/unit/test_resource_types.py).
NOT_YET: dict[tuple[str, str], str] = {}


def tool_parameters() -> set[str]:
    bases = set()
    for base in (schema.WorkloadModel, schema.ClientWorkload, schema.RbdWorkload):
        bases |= set(base.model_fields)
    own = {f for p in kinds.PLUGINS if p.MODEL is not None for f in p.MODEL.model_fields}
    # a kind no suite workload names (the baselines) declares its tests' own parameters on its descriptor
    declared = {n for p in kinds.PLUGINS for n in p.KIND.own_params}
    return (own - bases - {"type"} - GENERIC) | RBD_TOOL | declared


def kind_names() -> set[str]:
    return set(kinds.KINDS) - GENERIC_KINDS


def resource_names() -> set[str]:
    """The ledger names of the resource types the kinds declare (kind.resources: rbd-image, rgw-user, ...)."""
    return {r.name for k in kinds.KINDS.values() for r in k.resources}


def own_modules() -> set[str]:
    """Every kind's own modules, relative to src/cephbench: its kind module, its driver (module or package), and
    the driver helpers of KIND_HELPERS; and the foreign formats."""
    out = {*KIND_HELPERS, *FOREIGN}
    for p in kinds.PLUGINS:
        name = p.__name__.rsplit(".", 1)[-1]
        out.add(f"kinds/{name}.py")
        if (SRC / "report" / f"{name}.py").is_file():       # its own tables and charts (report/osd_bench.py)
            out.add(f"report/{name}.py")
        driver = SRC / "drivers" / p.DRIVER
        out |= ({str(f.relative_to(SRC)) for f in driver.rglob("*.py")} if driver.is_dir()
                else {f"drivers/{p.DRIVER}.py"})
    return out


def names_used(path: Path, names: set[str]) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.Attribute) and node.attr in names:
            out.append((node.lineno, node.attr))
        elif isinstance(node, ast.keyword) and node.arg in names:
            out.append((node.value.lineno, node.arg))
    return out


def found() -> dict[tuple[str, str], list[int]]:
    names = tool_parameters() | kind_names() | resource_names()
    own = own_modules()
    hits: dict[tuple[str, str], list[int]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        rel = str(path.relative_to(SRC))
        if rel in own:
            continue
        for line, name in names_used(path, names):
            hits[(rel, name)].append(line)
    return hits


def test_nothing_outside_a_kind_names_it_or_its_tools_parameters():
    hits = found()
    new = sorted(f"src/cephbench/{f}:{line}: {name}" for (f, name), lines in hits.items()
                 if (f, name) not in NOT_YET and (f, name) not in ITS_OWN for line in lines)
    assert not new, ("a kind's name or its tool's parameter outside its modules; read it through its descriptor "
                     "(kinds/kind.py, kinds/__init__.py: load_of, op_size_of, ...):\n" + "\n".join(new))
    gone = sorted(f"{f}: {name}" for f, name in [*NOT_YET, *ITS_OWN] if (f, name) not in hits)
    assert not gone, "no longer named there: remove from NOT_YET or ITS_OWN:\n" + "\n".join(gone)


def test_the_scanned_names_are_the_tools_own():
    params = tool_parameters()
    # the ones the issue names, and none of the generic words
    assert {"concurrency", "iodepth", "io_threads", "numjobs", "block_size", "io_size", "object_size"} <= params
    # and the baselines' own (iperf3's streams and routes, the disk baseline's fio runtime)
    assert {"streams", "sender", "senders", "receivers", "runtime_s", "allow_raw_device"} <= params
    assert not params & GENERIC
    assert {"rados_bench", "osd_bench", "fio_rbd", "disk_baseline"} <= kind_names()
    assert {"rbd-image", "rgw-user", "disk-file"} <= resource_names()
    print(sorted(params))


def test_the_scan_sees_a_constant_and_an_attribute(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('"""iodepth in a sentence is no use of it."""\nx = p["iodepth"] + w.numjobs + len("numjobs x")\n'
                 'def g(block_size):\n    return h(io_size=block_size)\n')
    assert sorted(names_used(f, {"iodepth", "numjobs", "block_size", "io_size"})) == [
        (2, "iodepth"), (2, "numjobs"), (4, "io_size")]


def test_every_module_named_as_a_kinds_exists():
    missing = sorted(m for m in own_modules() if not (SRC / m).is_file())
    assert not missing, missing


def test_a_kinds_roles_name_its_own_fields():
    """What a kind declares by role is a field of its model (or, for a kind no suite names, nothing), and the load a
    search doubles is its load."""
    for p in kinds.PLUGINS:
        k = p.KIND
        assert k.search_param in (None, k.load_param), k.name
        declared = {*k.load_params, k.op_size_param, k.object_size_param, *k.size_params, *k.id_params,
                    *k.shown_params, *k.swept_charts, *k.table_params} - {None}
        fields = set(p.MODEL.model_fields) if p.MODEL is not None else set()
        assert declared <= fields, (k.name, sorted(declared - fields))
        # own_params are for a kind without a model (a model's fields are its own already); what it runs at once is
        # one of them
        assert not (k.own_params and p.MODEL is not None), k.name
        assert k.parallel_param in (None, *k.own_params), k.name
        assert not (k.parallel_param and k.load_params), k.name
        assert k.load_tag or not k.load_params, k.name
        # a kind's resources are its own: none is a kind of entry the core makes for every kind
        assert not {r.name for r in k.resources} & set(CORE_LEDGER_KINDS), (k.name, k.resources)
