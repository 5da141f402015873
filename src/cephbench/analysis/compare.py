"""Comparing runs: tests matched by what they ran (kind + params), repeats as samples, per-metric deltas.

The first run is the reference (A); every later run (B, C, ...) is compared with it. Two tests match when
`Test.match_key()` is equal (driver and every parameter, never the id), or, with `match_on`/`ignore`, when the
chosen parameters are. The repeats of one configuration (`repeat: N`) are the samples of that test: the delta is
between their means, its significance a Mann-Whitney U test on them (analysis/stats.py), and the summary per
metric is the geometric mean of the B/A ratios over the matched tests, as in the Argonaut-vs-Bobtail study.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..errors import UserError
from ..results import CorruptLine, Measurement, Result, RunDir, Test
from . import stats


@dataclass(frozen=True)
class Metric:
    name: str
    label: str                  # with its display unit
    higher_is_better: bool
    get: Callable[[Measurement], float | None]


METRICS: tuple[Metric, ...] = (
    Metric("bytes_per_s", "MiB/s", True, lambda m: m.bytes_per_s),
    Metric("ops_per_s", "IOPS", True, lambda m: m.ops_per_s),
    Metric("lat_mean_ns", "mean lat ms", False, lambda m: m.latency.mean_ns),
    Metric("lat_p99_ns", "p99 lat ms", False, lambda m: m.latency.percentiles_ns.get("99")),
)
METRIC_NAMES = tuple(m.name for m in METRICS)


def metric_values(m: Measurement) -> dict[str, float]:
    """The key figures of a measurement that compare and history use (absent ones left out)."""
    out: dict[str, float] = {}
    for metric in METRICS:
        v = metric.get(m)
        if v is not None and v == v:     # not NaN
            out[metric.name] = float(v)
    return out


def test_label(test: Test) -> str:
    """A test's id without its plan index and repeat number: the same for every repeat of a configuration."""
    return re.sub(r"-r\d+$", "", re.sub(r"^\d+-", "", test.id))


def match_key(test: Test, match_on: Sequence[str] = (), ignore: Sequence[str] = ()) -> str:
    """Test.match_key(), or the same over only the `match_on` parameters / without the `ignore`d ones."""
    if not match_on and not ignore:
        return test.match_key()
    if match_on:
        params = {k: test.params.get(k) for k in match_on}
    else:
        params = {k: v for k, v in test.params.items() if k not in ignore}
    return json.dumps({"kind": test.kind, "params": params}, sort_keys=True, default=str)


@dataclass
class LoadedRun:
    path: Path
    meta: dict
    results: list[Result]
    corrupt: list[CorruptLine]

    @property
    def name(self) -> str:
        return self.path.name or str(self.path)


def load_run(path: Path) -> LoadedRun:
    """A run directory with its readable results; refuses what is not a run or is of a newer schema."""
    rd = RunDir.open(Path(path))
    results, corrupt = rd.results()
    return LoadedRun(Path(path), rd.meta(), results, corrupt)


@dataclass(frozen=True)
class Samples:
    """The ok results of one configuration in one run."""
    label: str
    test: Test
    results: tuple[Result, ...]

    def values(self, metric: Metric) -> list[float]:
        out = []
        for r in self.results:
            v = metric.get(r.measurement) if r.measurement else None
            if v is not None and v == v:
                out.append(float(v))
        return out


def samples_by_key(results: Iterable[Result], match_on: Sequence[str] = (),
                   ignore: Sequence[str] = ()) -> dict[str, Samples]:
    """Ok results with a measurement grouped by match key, in plan order."""
    grouped: dict[str, list[Result]] = {}
    for r in results:
        if r.status == "ok" and r.measurement is not None:
            grouped.setdefault(match_key(r.test, match_on, ignore), []).append(r)
    return {k: Samples(test_label(rs[0].test), rs[0].test, tuple(rs)) for k, rs in grouped.items()}


def check_grouping(run: LoadedRun, match_on: Sequence[str], ignore: Sequence[str]) -> None:
    """UserError when --match-on/--ignore would pool different configurations of one run as repeats of one test."""
    if not match_on and not ignore:
        return
    seen: dict[str, Test] = {}
    for r in run.results:
        if r.status != "ok" or r.measurement is None:
            continue
        t = seen.setdefault(match_key(r.test, match_on, ignore), r.test)
        if t.match_key() != r.test.match_key():
            apart = sorted(k for k in set(t.params) | set(r.test.params) if t.params.get(k) != r.test.params.get(k))
            option = "--match-on" if match_on else "--ignore"
            raise UserError(f"{option} makes {test_label(t)} and {test_label(r.test)} of {run.path} one test "
                            f"(they differ in {', '.join(apart)})",
                            f"keep {', '.join(apart)} in the match" if match_on
                            else f"do not ignore {', '.join(k for k in apart if k in ignore)}", where=option)


@dataclass(frozen=True)
class MetricDelta:
    metric: Metric
    a: tuple[float, ...]
    b: tuple[float, ...]
    sig: stats.Significance

    @property
    def mean_a(self) -> float:
        return stats.mean(self.a)

    @property
    def mean_b(self) -> float:
        return stats.mean(self.b)

    @property
    def ratio(self) -> float | None:
        return self.mean_b / self.mean_a if self.mean_a > 0 else None

    @property
    def delta_pct(self) -> float | None:
        r = self.ratio
        return None if r is None else (r - 1.0) * 100.0

    @property
    def worse_pct(self) -> float | None:
        """How much worse B is than A in percent (negative: better): lower bandwidth/IOPS, higher latency."""
        d = self.delta_pct
        if d is None:
            return None
        return -d if self.metric.higher_is_better else d


@dataclass(frozen=True)
class TestDelta:
    key: str
    label: str
    test: Test
    metrics: tuple[MetricDelta, ...]


@dataclass
class PairComparison:
    a: LoadedRun
    b: LoadedRun
    tests: list[TestDelta]
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)   # parameters that keep tests of A and B apart, most first

    def geomean(self) -> dict[str, float]:
        """Per metric, the geometric mean of B/A over the matched tests that have it."""
        out: dict[str, float] = {}
        for metric in METRICS:
            ratios = [md.ratio for t in self.tests for md in t.metrics if md.metric is metric and md.ratio]
            g = stats.geomean(ratios)
            if g is not None:
                out[metric.name] = g
        return out

    def too_few(self) -> int:
        """How many matched tests have too few repeats for the test to ever be significant."""
        return sum(1 for t in self.tests if t.metrics and t.metrics[0].sig.p is None)


def compare_pair(a: LoadedRun, b: LoadedRun, match_on: Sequence[str] = (), ignore: Sequence[str] = (),
                 alpha: float = stats.ALPHA) -> PairComparison:
    sa, sb = samples_by_key(a.results, match_on, ignore), samples_by_key(b.results, match_on, ignore)
    tests: list[TestDelta] = []
    for key, s_a in sa.items():
        s_b = sb.get(key)
        if s_b is None:
            continue
        deltas = []
        for metric in METRICS:
            va, vb = s_a.values(metric), s_b.values(metric)
            if va and vb:
                deltas.append(MetricDelta(metric, tuple(va), tuple(vb), stats.mann_whitney(va, vb, alpha)))
        if deltas:
            tests.append(TestDelta(key, s_a.label, s_a.test, tuple(deltas)))
    matched = {t.key for t in tests}
    rest_a = [s for k, s in sa.items() if k not in matched]
    rest_b = [s for k, s in sb.items() if k not in matched]
    return PairComparison(a, b, tests, only_a=[s.label for s in rest_a], only_b=[s.label for s in rest_b],
                          differs=near_misses(rest_a, rest_b, match_on, ignore))


def near_misses(rest_a: Sequence[Samples], rest_b: Sequence[Samples], match_on: Sequence[str] = (),
                ignore: Sequence[str] = ()) -> list[str]:
    """The parameters that keep unmatched tests apart: for each test only in A, the closest test of its kind only
    in B, when one or two parameters differ (a changed duration, a label); most frequent first."""
    counts: Counter[str] = Counter()
    for s_a in rest_a:
        diffs = []
        for s_b in rest_b:
            if s_b.test.kind != s_a.test.kind:
                continue
            pa, pb = s_a.test.params, s_b.test.params
            keys = (set(match_on) if match_on else set(pa) | set(pb)) - set(ignore)
            diffs.append(sorted(k for k in keys if pa.get(k) != pb.get(k)))
        best = min(diffs, key=len, default=None)
        if best and len(best) <= 2:
            counts.update(best)
    return [k for k, _ in counts.most_common()]


def compare_runs(runs: Sequence[LoadedRun], match_on: Sequence[str] = (), ignore: Sequence[str] = (),
                 alpha: float = stats.ALPHA) -> list[PairComparison]:
    """The first run against each of the others. UserError when a pair has no test in common."""
    if len(runs) < 2:
        raise UserError("give at least two run directories to compare")
    for run in runs:
        check_grouping(run, match_on, ignore)
    pairs = []
    for b in runs[1:]:
        pair = compare_pair(runs[0], b, match_on, ignore, alpha)
        if not pair.tests:
            hint = ("tests match on kind and every parameter; choose the parameters with --match-on "
                    "(e.g. --match-on phase,object_size,concurrency) or leave some out with --ignore")
            if pair.differs:
                hint = (f"their tests differ in {', '.join(pair.differs)}; to compare them anyway: "
                        + " ".join(f"--ignore {k}" for k in pair.differs))
            raise UserError(f"{runs[0].path} and {b.path} have no tests in common "
                            f"({len(pair.only_a)} and {len(pair.only_b)} tests with results)", hint)
        pairs.append(pair)
    return pairs


@dataclass(frozen=True)
class Regression:
    pair: PairComparison
    test: TestDelta
    delta: MetricDelta

    def text(self) -> str:
        d = self.delta
        return (f"{self.pair.b.name}: {self.test.label} {d.metric.label} {d.delta_pct:+.1f}% against "
                f"{self.pair.a.name} ({d.sig.text()})")


def regressions(pairs: Sequence[PairComparison], pct: float) -> list[Regression]:
    """Significant changes for the worse by more than `pct` percent."""
    out = []
    for pair in pairs:
        for t in pair.tests:
            for d in t.metrics:
                if d.sig.significant and d.worse_pct is not None and d.worse_pct > pct:
                    out.append(Regression(pair, t, d))
    return out
