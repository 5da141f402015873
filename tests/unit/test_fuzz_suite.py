"""The suite YAML and the run directory's results.jsonl, fuzzed: bad input is a UserError in one line, never a
traceback; a torn last line of results.jsonl is reported, never raised.

Suites: arbitrary data, and the real suites/*.yaml mutated with arbitrary nested values under the real keys
(every key the schema knows), keys removed, non-string keys; as YAML text: arbitrary bytes, the real files with
lines dropped, cut, repeated (duplicated keys) and YAML oddities inserted (tags, anchors, non-string keys).

Inputs the fuzzing found that once gave a traceback (ONCE_CRASHED) are kept as regression tests.
"""

from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from fuzz_inputs import REPO, descend, mutated_text, parses_or_refuses
from runfactory import fixture_measurement, write_run
from cephbench.suite import config
from cephbench.suite.config import Suite, load_suite, parse_suite
from cephbench.core.errors import UserError
from cephbench.core.results import Result, RunDir

SUITE_FILES = sorted((REPO / "suites").glob("*.yaml"))
SUITE_TEXTS = [p.read_text() for p in SUITE_FILES]
SUITE_DOCS = [yaml.safe_load(t) for t in SUITE_TEXTS]
# every key the schema knows, so that mutations reach past "unknown key" into each field's own checks
KEYS = sorted({name for v in vars(config).values() if isinstance(v, type) and issubclass(v, config.BaseModel)
               and v.__module__ == config.__name__ for name in v.model_fields})

# ---- inputs the fuzzing found that once gave a traceback: now each is one line --------------------------------

ONCE_CRASHED = {
    "complex key": ("name: x\n? [a, b]\n: 1\nworkloads: [{type: rados_bench}]\n", "a key must be a plain value"),
    "deep nesting": ("name: x\nworkloads: " + "[" * 1000 + "]" * 1000 + "\n", "nested too deeply"),
    "long int": ("name: x\nworkloads:\n  - type: rados_bench\n    concurrency: " + "9" * 5000 + "\n",
                 "cannot be read"),
    "identity_file too long": ("name: x\nsettings: {ssh: {identity_file: " + "a" * 5000 + "}}\n"
                               "workloads: [{type: rados_bench}]\n", "cannot be used as a key file"),
    "identity_file of an unknown user": ("name: x\nsettings: {ssh: {identity_file: ~nosuchuser/key}}\n"
                                         "workloads: [{type: rados_bench}]\n", "cannot be used as a key file"),
}


@pytest.mark.parametrize("name", sorted(ONCE_CRASHED))
def test_inputs_that_once_crashed_are_one_line(tmp_path, name):
    text, what = ONCE_CRASHED[name]
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as e:
        load_suite(path)
    assert what in e.value.one_line() and "\n" not in e.value.one_line()


# ---- suites as data --------------------------------------------------------------------------------------

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
    st.sampled_from(["4KiB", "4.5", "0", "-1", "30s", "0.5s", "1000000h", ".inf", "1e400", "4MB", "write",
                     "replicated", "erasure", "rados_bench", "lab-osds", "s3", "mixed", "100000000", "4,16"]),
    st.just(4.5), st.just(10**30), st.just(-(10**30)))
KEYS_ANY = st.one_of(st.sampled_from(KEYS), st.text(max_size=6), st.integers(), st.none(), st.booleans(), st.floats())


def _containers(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS_ANY, inner, max_size=3))


def values() -> st.SearchStrategy[object]:
    """Arbitrary nested YAML-like data with the schema's keys (and non-string keys) in its mappings."""
    return st.recursive(SCALARS, _containers, max_leaves=10)


def _parts(node: object) -> list[object]:
    """Every value in a suite, nested ones included."""
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        out.append(n)
        todo += list(n.values()) if isinstance(n, dict) else n if isinstance(n, list) else []
    return out


# values of the real suites, put where they do not belong: well-formed, so they reach the models' own checks
BORROWED = st.sampled_from([p for doc in SUITE_DOCS for p in _parts(doc)])


@st.composite
def suite_data(draw: st.DrawFn) -> object:
    """A real suite with one to four changes: a value replaced, a key removed, a key added."""
    doc = copy.deepcopy(draw(st.sampled_from(SUITE_DOCS)))
    for _ in range(draw(st.integers(1, 3))):
        path = descend(draw, doc, min_depth=1)      # arbitrary data in place of the whole suite: see values()
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        what = draw(st.sampled_from(["replace", "replace", "remove", "add"]))
        if what == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        elif what == "add" and isinstance(parent, dict):
            parent[draw(KEYS_ANY)] = copy.deepcopy(draw(st.one_of(values(), BORROWED)))
        else:
            parent[path[-1]] = copy.deepcopy(draw(st.one_of(values(), BORROWED)))
    return doc


def suite_or_refusal(data: object) -> None:
    suite = parses_or_refuses(parse_suite, data, "suite.yaml", allowed=(UserError,))
    assert suite is None or isinstance(suite, Suite)


@given(st.one_of(values(), suite_data()))
@example({"name": "x", "workloads": [{"type": "rados_bench", "duration": {None: 5}}]})
@example({None: 1, "name": "x", "workloads": [{"type": "rados_bench", 1.5: 2}]})
def test_parse_suite_arbitrary_data(data):
    suite_or_refusal(data)


# ---- suites as bytes ---------------------------------------------------------------------------------------

ODD_YAML = [
    "name: again", "workloads: []", "  type: rados_bench", "  - type: osd_bench", "1: x", "~: x", "true: x",
    ".nan: x", "x: !!binary aGVsbG8=", "x: !!set {a, b}", "x: !!timestamp 2001-12-14", "x: !!float .inf",
    "x: !!python/object/apply:os.system [true]", "x: &a [1, 2]", "y: *a", "<<: {name: y}", "x: *nope",
    "    duration: .inf", "    duration: .nan", "    object_size: 0", "    object_size: 4.5",
    "    concurrency: 100000000", "\t- tab", "%YAML 1.1", "---", "...", "x: 'unterminated", "x: {a: 1, a: 2}",
]


@st.composite
def odd_yaml(draw: st.DrawFn) -> str:
    """A real suite with a line of YAML oddity inserted: a duplicated key, a tag, an alias, a directive..."""
    lines = draw(st.sampled_from(SUITE_TEXTS)).splitlines(keepends=True)
    i = draw(st.integers(0, len(lines)))
    lines.insert(i, draw(st.sampled_from(ODD_YAML)) + "\n")
    return "".join(lines)


def _dump(data: object) -> str:
    try:
        return yaml.safe_dump(data)
    except ValueError:      # an int too long for str(): nothing YAML could hold either
        return ""


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz-suite")


@given(data=st.one_of(st.binary(), mutated_text(SUITE_TEXTS).map(str.encode), odd_yaml().map(str.encode),
                      suite_data().map(_dump).map(str.encode)))
@example(data=b"name: x\nworkloads: [{type: rados_bench}]\n\xff\xfe")
@example(data=b"name: x\x00\n")
def test_load_suite_arbitrary_bytes(suite_dir, data):
    path = suite_dir / "suite.yaml"
    path.write_bytes(data)
    suite = parses_or_refuses(load_suite, path, allowed=(UserError,))
    assert suite is None or isinstance(suite, Suite)


# ---- results.jsonl with a torn last line -------------------------------------------------------------------

@pytest.fixture(scope="module")
def run_lines(tmp_path_factory) -> bytes:
    """A real results.jsonl: three results of a fixture measurement, the last with a note in UTF-8 (µ)."""
    m = fixture_measurement()
    path = write_run(tmp_path_factory.mktemp("fuzz-run") / "run", [("rados_bench", {"phase": "write"}, [m, m])])
    rd = RunDir.open(path)
    last = rd.results()[0][-1]
    rd.append(last.model_copy(update={"notes": ["latency 5 µs"]}))
    return rd.results_jsonl.read_bytes()


@pytest.fixture(scope="module")
def torn_run(tmp_path_factory) -> RunDir:
    return RunDir.open(write_run(tmp_path_factory.mktemp("torn") / "run", []))


@given(cut=st.integers(min_value=0, max_value=10**9))
def test_results_with_a_torn_last_line(run_lines, torn_run, cut):
    """kill -9 mid-write: the file ends in the middle of a line (or of a UTF-8 character)."""
    cut %= len(run_lines) + 1
    rd = torn_run
    rd.results_jsonl.write_bytes(run_lines[:cut])
    complete = run_lines[:cut].count(b"\n")
    torn = run_lines[:cut].rsplit(b"\n", 1)[-1] if cut else b""
    results, bad = rd.results()
    assert all(isinstance(r, Result) for r in results)
    if torn.strip():
        # the torn line is reported (or, cut just before its newline, read whole), never raised
        assert len(results) + len(bad) == complete + 1
        assert len(results) >= complete
    else:
        assert (len(results), bad) == (complete, [])
