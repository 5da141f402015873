"""The verdict's rules and their order are stated once, in analysis/rules.py (EVIDENCE_RULES, then CEILING_RULES),
and docs/model.md's table "The rules, in order" shows that order: this fails when the two differ, and prints the
table the registry makes (each rule's name, what it reads, and its docstring)."""

from __future__ import annotations

import inspect
from pathlib import Path

from cephbench.analysis import rules

DOC = Path(__file__).resolve().parents[2] / "docs" / "model.md"
HEADING = "### The rules, in order"


def registry_rows() -> list[tuple[str, str, str]]:
    """(rule, what it reads, what it answers) for every rule, in the registry's order."""
    return [(r.__name__, reads, " ".join(inspect.getdoc(r).split()))
            for reads, tuple_ in (("evidence", rules.EVIDENCE_RULES), ("ceiling", rules.CEILING_RULES))
            for r in tuple_]


def registry_table() -> str:
    lines = ["| # | rule | reads | when → names |", "|---|---|---|---|"]
    lines += [f"| {i} | `{name}` | {reads} | {doc} |" for i, (name, reads, doc) in enumerate(registry_rows(), 1)]
    return "\n".join(lines)


def doc_table(doc: Path = DOC) -> str:
    """The first table after the heading, as it stands in the doc."""
    text = doc.read_text()
    assert HEADING in text, f"docs/model.md has no heading {HEADING!r}"
    after = text.split(HEADING, 1)[1].splitlines()
    start = next(i for i, ln in enumerate(after) if ln.startswith("|"))
    end = next((i for i in range(start, len(after)) if not after[i].startswith("|")), len(after))
    return "\n".join(after[start:end])


def test_the_docs_table_is_the_registrys_order():
    assert doc_table() == registry_table(), ("docs/model.md's rule table differs from analysis/rules.py's order; "
                                             f"the registry's table:\n{registry_table()}")


def test_every_rule_is_registered_once_and_the_last_of_each_always_answers():
    names = [name for name, _, _ in registry_rows()]
    assert len(names) == len(set(names))
    for module in (rules.rules_evidence, rules.rules_ceiling):
        public = {n for n, f in inspect.getmembers(module, inspect.isfunction)
                  if f.__module__ == module.__name__ and list(inspect.signature(f).parameters) == ["f"]
                  and not n.startswith("_")}
        assert public <= set(names), f"rules of {module.__name__} not in the registry: {sorted(public - set(names))}"
    # the last rule of each tuple is the fallback: it answers whatever the facts (no Optional in its return)
    assert "None" not in str(inspect.signature(rules.EVIDENCE_RULES[-1]).return_annotation)
    assert "None" not in str(inspect.signature(rules.CEILING_RULES[-1]).return_annotation)


def test_a_doc_whose_table_has_two_rules_swapped_is_told_apart(tmp_path):
    rows = registry_table().splitlines()
    swapped = "\n".join(rows[:2] + [rows[3], rows[2]] + rows[4:])
    doc = tmp_path / "model.md"
    doc.write_text(DOC.read_text().replace(registry_table(), swapped))
    assert doc_table(doc) == swapped != registry_table()
