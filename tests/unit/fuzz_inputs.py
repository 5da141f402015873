"""Hypothesis strategies and settings shared by the fuzz tests (test_fuzz_*.py).

Inputs are either arbitrary (text, bytes, JSON) or real tool output from tests/fixtures and loadgen/testdata,
mutated the ways real output goes wrong: lines dropped or repeated, cut at any byte, numbers replaced by huge,
negative, NaN, inf or non-numbers, keys removed, values of the wrong JSON type.

Profiles: "dev" (the default: random, a bounded number of examples), "ci" (loaded when CI=true: the same number,
derandomized so a CI run is reproducible) and "thorough" (CEPHBENCH_FUZZ_PROFILE=thorough: many more examples, for
a deliberate hunt). Outside CI a failing example is kept in .hypothesis/ (which hypothesis git-ignores itself) and
tried first on the next run.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from cephbench.core.errors import ParseError
from cephbench.core.errors import UserError

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TESTDATA = REPO / "loadgen" / "testdata"

# no deadline: this machine is shared, and a slow example is not a bug here (speed is measured in benchmarks/)
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=60, **_COMMON)
settings.register_profile("ci", max_examples=60, derandomize=True, database=None, **_COMMON)
settings.register_profile("thorough", max_examples=3000, **_COMMON)
settings.load_profile(os.environ.get("CEPHBENCH_FUZZ_PROFILE")
                      or ("ci" if os.environ.get("CI", "").lower() == "true" else "dev"))


def fixture_texts(pattern: str, root: Path = FIXTURES) -> list[str]:
    paths = sorted(p for p in root.glob(pattern) if p.is_file())
    assert paths, f"no fixtures match {pattern}"
    return [p.read_text(errors="replace") for p in paths]


def fixture_docs(pattern: str, root: Path = FIXTURES) -> list[Any]:
    out = []
    for text in fixture_texts(pattern, root):
        start = text.find("{")
        if start < 0:
            continue        # a tool's error message instead of its document
        out.append(json.JSONDecoder().raw_decode(text[start:])[0])
    return out


# ---- what a failure must look like --------------------------------------------------------------

def refused_clearly(exc: Exception) -> None:
    """A ParseError or UserError whose message is one non-empty line."""
    text = exc.one_line() if isinstance(exc, UserError) else str(exc)
    assert text.strip(), f"{type(exc).__name__} with an empty message"
    assert "\n" not in text, f"{type(exc).__name__} message of several lines: {text!r}"


def parses_or_refuses(fn: Callable[..., Any], *args: Any, allowed: tuple[type, ...] = (ParseError,)) -> Any:
    """fn(*args): its result, or None after checking that it refused with one of `allowed` in one clear line."""
    try:
        return fn(*args)
    except allowed as exc:
        refused_clearly(exc)
        return None


def finite_figures(obj: Any, where: str = "") -> None:
    """Every number in a parser's result is finite: NaN and inf are no measurement (and do not survive JSON)."""
    if hasattr(obj, "model_dump"):
        obj = obj.model_dump()
    if isinstance(obj, dict):
        for k, v in obj.items():
            finite_figures(v, f"{where}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            finite_figures(v, f"{where}[{i}]")
    elif isinstance(obj, float):
        assert math.isfinite(obj), f"{where} is {obj}"


# ---- arbitrary input -------------------------------------------------------------------------------

def any_text() -> st.SearchStrategy[str]:
    """Arbitrary text, and bytes as the tools' output is read (undecodable bytes replaced)."""
    return st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", errors="replace")))


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                         st.text(max_size=12))


def _json_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4))


def any_json() -> st.SearchStrategy[Any]:
    return st.recursive(JSON_SCALARS, _json_containers, max_leaves=12)


# ---- mutations of real output ------------------------------------------------------------------

# What a number in tool output is replaced with: too big for a float (or for int()), negative, not finite,
# not a number at all, numeric-looking text Python's own int()/float() might read differently, or a float that
# no date holds (a timestamp of 1e30 overflowed time_t, -1e12 is before the year 1).
ODD_NUMBERS = ["9" * 400, "9" * 5000, "1e400", "-1", "-0.5", "0", "0.0", "nan", "-nan", "NaN", "inf", "-inf",
               "Infinity", "1.2.3", ".", "1_000", "0x10", "", "abc", "²", "１２", "1e30", "-1e12", "1e20"]


def odd_number() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(ODD_NUMBERS), st.text(max_size=4),
                     st.integers(min_value=-10**20, max_value=10**20).map(str))


_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@st.composite
def mutated_text(draw: st.DrawFn, texts: list[str]) -> str:
    """A real output with one to four mutations."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 4))):
        lines = text.splitlines(keepends=True) or [""]
        what = draw(st.sampled_from(["drop", "repeat", "cut", "number", "number", "number", "insert", "swap"]))
        i = draw(st.integers(0, len(lines) - 1))
        if what == "drop":
            del lines[i]
        elif what == "repeat":
            lines.insert(i, lines[i])
        elif what == "swap" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif what == "insert":
            lines.insert(i, draw(st.text(max_size=40)) + "\n")
        elif what == "number":
            found = list(_NUMBER_RE.finditer(lines[i]))
            if found:
                m = draw(st.sampled_from(found))
                lines[i] = lines[i][:m.start()] + draw(odd_number()) + lines[i][m.end():]
        text = "".join(lines)
        if what == "cut":
            data = text.encode()
            text = data[:draw(st.integers(0, len(data)))].decode("utf-8", errors="replace")
    return text


_ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.just(10**400), st.just(-(10**30)), st.just(-1), st.just(0), st.just(-1.5),
    st.sampled_from([1e30, -1e12, 1e20]),
    st.sampled_from([math.nan, math.inf, -math.inf]), st.text(max_size=8), st.sampled_from(["12", "1e3", "nan"]),
    st.just([]), st.just({}), st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(-5, 5), max_size=2),
)


def descend(draw: st.DrawFn, doc: Any, min_depth: int = 0) -> tuple[Any, ...]:
    """A path into `doc`, at least `min_depth` deep where it can be, chosen level by level so that big arrays
    (histogram bins) do not drown the rest, and leaning towards nested values (where most fields are). Choices
    come from a Random that hypothesis seeds: its own draws favour the first key and the shallowest path, which
    would mutate the same few fields over and over."""
    rnd = draw(st.randoms(use_true_random=True))
    path: tuple[Any, ...] = ()
    node = doc
    depth = rnd.randint(min_depth, 8)
    while isinstance(node, (dict, list)) and node and len(path) < depth:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        nested = [k for k in keys if isinstance(node[k], (dict, list)) and node[k]]
        key = rnd.choice(nested if nested and rnd.random() < 0.75 else keys)    # most fields are deeper down
        path += (key,)
        node = node[key]
    return path


@st.composite
def mutated_doc(draw: st.DrawFn, docs: list[Any]) -> Any:
    """A real JSON document with one to four values replaced by odd ones, or removed."""
    doc = copy.deepcopy(draw(st.sampled_from(docs)))
    for _ in range(draw(st.integers(1, 4))):
        path = descend(draw, doc)
        if not path:
            return draw(st.one_of(_ODD_VALUES, any_json()))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(_ODD_VALUES)
    return doc


def dump(doc: Any) -> str:
    """JSON as a tool might write it; NaN/Infinity literals included (Python's json reads them)."""
    return json.dumps(doc, indent=1)


@st.composite
def mutated_json_text(draw: st.DrawFn, docs: list[Any], prefixes: list[str] = ("",)) -> str:
    """A mutated document as text, possibly after a note line (fio prints some) and possibly cut at any byte."""
    text = draw(st.sampled_from(list(prefixes))) + dump(draw(mutated_doc(docs)))
    if draw(st.integers(0, 3)) == 0:
        data = text.encode()
        text = data[:draw(st.integers(0, len(data)))].decode("utf-8", errors="replace")
    return text
