"""docs/architecture.md stays true to `ls` of the package (issue 26 item 7): every module path it names exists, and
every package and every top-level module of src/cephbench is named in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "src" / "cephbench"
DOC = ROOT / "docs" / "architecture.md"

# `lab/`, `evidence/watch.py`, `tests/unit/test_kinds.py`: a path, in backticks
PATH_RE = re.compile(r"`((?:[\w.]+/)*(?:[\w.]+\.py|[\w.]+/))`")


def named_paths(text: str) -> set[str]:
    return set(PATH_RE.findall(text))


def _exists(path: str) -> bool:
    return (PKG / path).exists() or (ROOT / path).exists()


def test_the_path_reader_reads_paths_only():
    assert named_paths("`lab/`, `evidence/watch.py` and `kinds.ops_unit`, `x.py` `tests/unit/a.py`") == {
        "lab/", "evidence/watch.py", "x.py", "tests/unit/a.py"}


def test_every_module_the_page_names_exists():
    missing = sorted(p for p in named_paths(DOC.read_text()) if not _exists(p))
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"


def test_every_package_and_top_level_module_is_named():
    named = named_paths(DOC.read_text())
    packages = sorted(f"{p.parent.relative_to(PKG).as_posix()}/" for p in PKG.rglob("__init__.py") if p.parent != PKG)
    modules = sorted(p.name for p in PKG.glob("*.py") if p.name != "__init__.py")
    unnamed = [x for x in packages + modules if x not in named]
    assert not unnamed, f"docs/architecture.md does not name: {unnamed} (say where each concern lives)"


def _as_path(pattern: str) -> str:
    if pattern.endswith(".*"):
        return pattern[:-2].replace(".", "/") + "/"
    path = pattern.replace(".", "/")
    return f"{path}/__init__.py" if (PKG / path).is_dir() else f"{path}.py"


def test_the_layer_table_is_the_one_the_import_test_checks():
    from test_module_graph import LAYERS
    section = DOC.read_text().split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [r.split("|")[1:3] for r in section.splitlines() if r.startswith("| ") and not r.startswith("| layer")]
    doc = [(name.strip(), sorted(named_paths(mods))) for name, mods in rows]
    code = [(name, sorted(_as_path(p) for p in patterns if p != "__init__")) for name, patterns in LAYERS]
    assert doc == code
