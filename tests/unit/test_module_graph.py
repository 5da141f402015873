"""The modules of cephbench import in one direction: no module imports, even inside a function, a module that
imports it back (issue 11: drivers/rbd_bench.py and drivers/rbd_images.py used to), nor a module of a higher layer
than its own (the layer order of docs/architecture.md, issue 26); no package spans two layers, and no package imports
one that imports it back (issue 37)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def module_files() -> dict[str, Path]:
    out = {}
    for p in SRC.joinpath("cephbench").rglob("*.py"):
        parts = p.relative_to(SRC).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every cephbench module that `name` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for a in node.names:      # `from . import x` names a module; `from .m import f` names m
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
    return {m for m in found if m in modules and m != name}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}      # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_module_imports_one_that_imports_it_back():
    modules = module_files()
    graph = {m: imports_of(m, p, modules) for m, p in modules.items()}
    assert "cephbench.drivers.rbd_bench_tool" in graph["cephbench.drivers.rbd_images"]     # the reader sees imports
    assert cycle(graph) is None, " -> ".join(cycle(graph) or [])


# ---- layers -----------------------------------------------------------------------------------------------------
# The layer order of docs/architecture.md, lowest first: a module imports only modules of its own layer or of a
# lower one. A name is one module; `x.*` is package x and everything in it; the most exact name places a module.

LAYERS: list[tuple[str, list[str]]] = [
    ("core", ["__init__", "core.*", "kinds.*"]),
    ("hosts", ["hosts.*"]),
    ("lab", ["lab.*"]),
    ("suite", ["suite.*"]),
    ("cluster", ["cluster.*"]),
    ("evidence", ["evidence.*"]),
    ("drivers", ["drivers.*"]),             # drivers.pools: only drivers create pools, through RunContext's ledger
    ("analysis", ["analysis.*"]),
    ("run", ["run.*"]),
    ("rundirs", ["rundirs.*", "report.*"]),   # finished run directories and everything a person reads
    ("cli", ["cli.*"]),
    ("entry", ["entry"]),
]

# The packages whose modules are not all in one layer, each with why. Every other package is wholly in one layer,
# so its place in the tree says its place in the order; an entry whose package became whole fails the test.
MIXED_PACKAGES: dict[str, str] = {
}

# Imports that run against the order today, each with why it stays for now. An entry that no longer occurs fails
# the test, so the list only shrinks.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}

# "The report reads only run directories": report/ imports only core types, the analysis and itself.
REPORT_MAY_IMPORT = {"core", "analysis"}


def _short(module: str) -> str:
    return "__init__" if module == "cephbench" else module.removeprefix("cephbench.")


def layer_of(module: str, layers: list[tuple[str, list[str]]] = LAYERS) -> tuple[int, str] | None:
    """The (index, name) of the layer that places `module` most exactly, or None."""
    best: tuple[int, int, str] | None = None       # (how exact, index, name)
    for i, (name, patterns) in enumerate(layers):
        for p in patterns:
            if p.endswith(".*"):
                pkg = p[:-2]
                exact = len(pkg) if module == pkg or module.startswith(pkg + ".") else -1
            else:
                exact = len(p) + 1000 if module == p else -1
            if exact >= 0 and (best is None or exact > best[0]):
                best = (exact, i, name)
    return (best[1], best[2]) if best else None


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[tuple[str, str]]:
    """Every import of a module of a higher layer than the importer's, as short names."""
    found = []
    for m, deps in graph.items():
        lm = layer_of(_short(m), layers)
        for d in deps:
            ld = layer_of(_short(d), layers)
            if lm is not None and ld is not None and ld[0] > lm[0]:
                found.append((_short(m), _short(d)))
    return sorted(found)


def _graph() -> dict[str, set[str]]:
    modules = module_files()
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def test_every_module_has_a_layer():
    unplaced = sorted(_short(m) for m in module_files() if layer_of(_short(m)) is None)
    assert not unplaced, f"place these in a layer of LAYERS and docs/architecture.md: {unplaced}"


def test_no_module_imports_a_higher_layer():
    found = upward_imports(_graph())
    against = [f"{m} -> {d}" for m, d in found if (m, d) not in ALLOWED_UPWARD]
    assert not against, ("imports against the layer order (docs/architecture.md); move the code down, or the "
                         f"import up: {against}")
    stale = [k for k in ALLOWED_UPWARD if k not in found]
    assert not stale, f"no longer upward: remove them from ALLOWED_UPWARD: {stale}"


def layers_of_packages(modules: list[str], layers=LAYERS) -> dict[str, set[str]]:
    """Each top-level package (short name) and the layers of the modules in it, its __init__ too."""
    packages = {m for m in modules if any(o.startswith(m + ".") for o in modules)}
    found: dict[str, set[str]] = {}
    for m in modules:
        top = m.split(".")[0]
        if top in packages:
            found.setdefault(top, set()).add(layer_of(m, layers)[1])
    return found


def test_a_package_is_wholly_in_one_layer_unless_listed():
    shorts = [_short(m) for m in module_files()]
    mixed = {p: sorted(ls) for p, ls in layers_of_packages(shorts).items() if len(ls) > 1}
    unlisted = {p: ls for p, ls in mixed.items() if p not in MIXED_PACKAGES}
    assert not unlisted, ("a package spans layers: move the modules so that it is one layer, or list it in "
                          f"MIXED_PACKAGES with why: {unlisted}")
    whole = [p for p in MIXED_PACKAGES if p not in mixed]
    assert not whole, f"wholly in one layer now: remove them from MIXED_PACKAGES: {whole}"


def test_the_package_check_sees_a_package_across_layers():
    layers = [("core", ["core.*"]), ("run", ["run.*"]), ("launch", ["run.launch"]), ("entry", ["entry"])]
    found = layers_of_packages(["core", "core.errors", "run", "run.runner", "run.launch", "entry"], layers)
    assert found == {"core": {"core"}, "run": {"run", "launch"}}


# ---- packages ---------------------------------------------------------------------------------------------------
# Issue 37: no cycle between packages either. The layers alone would allow one between two packages of one layer
# (core/ and kinds/, rundirs/ and report/), and a listed mixed package would hide one.

def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each top-level package (short name; a top-level module stands for itself) and the others it imports."""
    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        top = _short(m).split(".")[0]
        out.setdefault(top, set()).update(d for d in (_short(x).split(".")[0] for x in deps) if d != top)
    return out


def test_no_package_imports_one_that_imports_it_back():
    graph = package_graph(_graph())
    assert {"core", "kinds", "hosts", "cluster", "drivers"} <= set(graph) and "core" in graph["kinds"]
    found = cycle(graph)
    assert found is None, ("packages that import each other (move the type or function to the layer that uses it): "
                           + " -> ".join(found or []))


def test_the_package_check_sees_a_cycle_through_two_modules():
    graph = {"cephbench.hosts.remote": {"cephbench.cluster.ceph"}, "cephbench.cluster.ceph": {"cephbench.hosts.local"},
             "cephbench.hosts.local": set(), "cephbench.entry": {"cephbench.hosts.local"}}
    assert cycle(package_graph(graph)) == ["cluster", "hosts", "cluster"]


def test_the_layer_check_sees_an_upward_import():
    graph = {"cephbench.core.results": {"cephbench.core.errors", "cephbench.run.runner"},
             "cephbench.run.runner": {"cephbench.core.results"},
             "cephbench.drivers.fio": {"cephbench.core.figures", "cephbench.drivers"}}
    assert upward_imports(graph) == [("core.results", "run.runner")]
    assert layer_of("core.figures")[1] == "core" and layer_of("drivers.fio")[1] == "drivers"
    assert layer_of("__init__")[1] == "core" and layer_of("lab")[1] == "lab"
    assert layer_of("hosts.local")[1] == "hosts" and layer_of("entry")[1] == "entry"
    assert layer_of("a.b", [("low", ["a.*"]), ("high", ["a.b"])]) == (1, "high")      # the most exact name


def test_the_report_reads_only_run_directories():
    outside = sorted(f"{_short(m)} -> {_short(d)}" for m, deps in _graph().items()
                     if _short(m).startswith("report.") for d in deps
                     if not _short(d).startswith("report.") and layer_of(_short(d))[1] not in REPORT_MAY_IMPORT)
    assert not outside, outside
