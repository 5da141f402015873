"""One run's variants side by side (issue 17): each test under every variant against the same test under the first
variant, as the Argonaut-vs-Bobtail study drew its "% change" charts, with compare's statistics.

A test under two variants is the same test when its kind and every parameter are equal (its match key with the
variant left out); its repeats are the samples, the change is between the medians, its significance compare's
Mann-Whitney U with the same n rule (analysis/compare.py, core/stats.py). Each test is judged on its headline
figure: bandwidth, or operations per second where a test moves no bytes (an RGW stat). Tests are grouped by level,
operation and op size; the summary gives, per level, operation and variant, the median change over the tests.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from ..kinds import LEVEL_ORDER, direction_of, level_of, object_size_of, op_size_of
from ..core.results import Measurement, Result, Test
from ..core import stats
from .compare import METRICS, Metric, MetricDelta, Samples, match_key, metric_deltas, test_label

BANDWIDTH, OPS = METRICS[0], METRICS[1]


def base_key(test: Test) -> str:
    """The match key of a test as if it ran under no variant: equal for one test under every variant."""
    return match_key(test.model_copy(update={"variant": None}))


def base_label(test: Test) -> str:
    """A test's id without plan index, repeat and variant: `rados-write-4KiB-t16`."""
    label = test_label(test)
    suffix = f"-{test.variant}" if test.variant else ""
    return label[:-len(suffix)] if suffix and label.endswith(suffix) else label


def op_size(test: Test, m: Measurement | None = None) -> int | None:
    # an imported rados bench result names its op size apart when it is not its objects' (rundirs/importer.py)
    # and the op's size before the objects': an RBD kind's objects are its image's (4 MiB), and a 4 KiB and a
    # 64 KiB randread of one image were one group, named 4 MiB
    for v in (test.params.get("op_size"), op_size_of(test.kind, test.params), object_size_of(test.kind, test.params)):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v)
    return int(m.op_size_bytes) if m is not None and m.op_size_bytes else None


def operation(test: Test, m: Measurement | None = None) -> str:
    phase = test.params.phase
    return str(phase) if phase is not None else (m.op if m is not None else "-")


def headline(first: Samples) -> Metric:
    """Bandwidth, or operations per second for a metadata operation (it moves no data) and for a test whose
    reference repeats have no bandwidth."""
    r = first.results[0]
    m = r.measurement
    if direction_of(r.test.kind, r.test.params.phase, m.op if m else None) == "metadata":
        return OPS
    bw = first.values(BANDWIDTH)
    return BANDWIDTH if bw and len(bw) == len(first.results) and min(bw) > 0 else OPS


@dataclass(frozen=True)
class Change:
    """One test under one variant against the same test under the first variant (A: the first, B: this one)."""
    variant: str
    delta: MetricDelta


@dataclass(frozen=True)
class VariantTest:
    key: str
    label: str
    test: Test                          # under the first variant
    level: str
    op: str
    size: int | None
    metric: Metric                      # what the changes are of
    samples: dict[str, Samples]         # variant -> its ok repeats (variants without any left out)
    changes: tuple[Change, ...]         # every other variant with repeats, in the run's order

    def change(self, variant: str) -> Change | None:
        return next((c for c in self.changes if c.variant == variant), None)


@dataclass(frozen=True)
class Group:
    """The tests of one level, operation and op size (Bobtail: one chart per transfer size, reads and writes)."""
    level: str
    op: str
    size: int | None
    tests: tuple[VariantTest, ...]


@dataclass(frozen=True)
class Summary:
    """Per level, operation and variant: the median % change over the level's tests, how many, how many of the
    changes were significant (better and worse) and how many had too few repeats to be."""
    level: str
    op: str
    variant: str
    median_pct: float
    n: int
    better: int
    worse: int
    too_few: int

    @property
    def significant(self) -> int:
        return self.better + self.worse


@dataclass(frozen=True)
class VariantsView:
    variants: tuple[str, ...]           # in the run's order; the first is the reference
    groups: tuple[Group, ...]
    no_reference: tuple[str, ...]       # tests with repeats under other variants but none under the first
    # variant -> the Ceph release its results ran on, for variants whose lab shape named one (release against release)
    releases: tuple[tuple[str, str], ...] = ()

    @property
    def first(self) -> str:
        return self.variants[0]

    @property
    def others(self) -> tuple[str, ...]:
        return self.variants[1:]

    def tests(self) -> list[VariantTest]:
        return [t for g in self.groups for t in g.tests]

    def levels(self) -> list[str]:
        return list(dict.fromkeys(g.level for g in self.groups))

    def too_few(self) -> int:
        """Changes whose repeats are too few for the test to ever be significant."""
        return sum(1 for t in self.tests() for c in t.changes if c.delta.sig.p is None)

    def changes(self) -> int:
        return sum(len(t.changes) for t in self.tests())

    def summary(self) -> list[Summary]:
        out = []
        for level in self.levels():
            for op in dict.fromkeys(g.op for g in self.groups if g.level == level):
                tests = [t for g in self.groups if g.level == level and g.op == op for t in g.tests]
                for v in self.others:
                    deltas = [c.delta for t in tests if (c := t.change(v)) and c.delta.delta_pct is not None]
                    if not deltas:
                        continue
                    sig = [d for d in deltas if d.sig.significant]
                    out.append(Summary(level, op, v, statistics.median(d.delta_pct or 0.0 for d in deltas),
                                       len(deltas), sum(1 for d in sig if (d.worse_pct or 0) < 0),
                                       sum(1 for d in sig if (d.worse_pct or 0) > 0),
                                       sum(1 for d in deltas if d.sig.p is None)))
        return out


def variant_order(results: Sequence[Result]) -> list[str]:
    """The variants in the order the plan first ran them: the suite's order (the first block runs A B C …)."""
    seen: dict[str, None] = {}
    for r in sorted(results, key=lambda r: r.test.index):
        if r.test.variant is not None:
            seen.setdefault(r.test.variant, None)
    return list(seen)


def view(results: Sequence[Result], alpha: float = stats.ALPHA) -> VariantsView | None:
    """Every test of a run with variants against its first variant; None for a run with fewer than two."""
    order = variant_order(results)
    if len(order) < 2:
        return None
    grouped: dict[str, dict[str, list[Result]]] = {}
    for r in sorted(results, key=lambda r: r.test.index):
        if r.test.variant is not None and r.status == "ok" and r.measurement is not None:
            grouped.setdefault(base_key(r.test), {}).setdefault(r.test.variant, []).append(r)
    tests: list[VariantTest] = []
    no_reference: list[str] = []
    for key, by_variant in grouped.items():
        samples = {v: Samples(base_label(rs[0].test), rs[0].test, tuple(rs)) for v in order
                   if (rs := by_variant.get(v))}
        first = samples.get(order[0])
        if first is None:
            no_reference.append(base_label(next(iter(samples.values())).test))
            continue
        metric = headline(first)
        changes = []
        for v in order[1:]:
            if v in samples:
                d = metric_deltas(first, samples[v], alpha, (metric,))
                if d:
                    changes.append(Change(v, d[0]))
        level, op, size = group_of(first.test, first.results[0].measurement)
        tests.append(VariantTest(key, first.label, first.test, level, op, size, metric, samples, tuple(changes)))
    releases = {r.test.variant: r.variant.release for r in results
                if r.test.variant is not None and r.variant is not None and r.variant.release}
    return VariantsView(tuple(order), _groups(tests), tuple(no_reference),
                        tuple((v, releases[v]) for v in order if v in releases))


GroupKey = tuple[str, str, int | None]      # level, operation, op size
T = TypeVar("T")


def group_of(test: Test, m: Measurement | None = None) -> GroupKey:
    return (level_of(test.kind) or "Other", operation(test, m), op_size(test, m))


def grouped(items: Sequence[T], key: Callable[[T], GroupKey]) -> list[tuple[GroupKey, list[T]]]:
    """Items by level (the report's order), then op size, then operation in the order they first come (the plan's:
    a write before its reads); items keep their order within a group."""
    levels = [*LEVEL_ORDER, "Other"]
    op_rank: dict[str, int] = {}
    keyed: dict[GroupKey, list[T]] = {}
    for item in items:
        k = key(item)
        op_rank.setdefault(k[1], len(op_rank))
        keyed.setdefault(k, []).append(item)
    order = sorted(keyed, key=lambda k: (levels.index(k[0]) if k[0] in levels else len(levels),
                                         k[2] if k[2] is not None else -1, op_rank[k[1]]))
    return [(k, keyed[k]) for k in order]


def _groups(tests: Sequence[VariantTest]) -> tuple[Group, ...]:
    return tuple(Group(level, op, size, tuple(ts))
                 for (level, op, size), ts in grouped(tests, lambda t: (t.level, t.op, t.size)))
