"""Comparing runs: tests matched by what they ran (kind + params), repeats as samples, per-metric deltas.

The first run is the reference (A); every later run (B, C, ...) is compared with it. Two tests match when
`Test.match_key()` is equal (driver and every parameter, never the id), or, with `match_on`/`ignore`, when the
chosen parameters are. The repeats of one configuration (`repeat: N`) are the samples of that test: each side is
shown as its median, min-max and n, the delta is between the medians (the statistic a rank test is about, and
one slow repeat does not move it), its significance a Mann-Whitney U test on the samples (core/stats.py),
and the summary per metric is the geometric mean of the B/A ratios over the matched tests, as in the
Argonaut-vs-Bobtail study. A way to match more tests is only offered once it has been tried (`Suggestion`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..core.errors import UserError
from ..core.identity import release as release_of, result_release
from ..kinds import level_of, ops_unit
from ..core.results import OSDS_CPU, CorruptLine, Measurement, Result, RunDir, Test, osds_cpu
from ..core import stats


@dataclass(frozen=True)
class Metric:
    name: str
    label: str                  # with its display unit
    higher_is_better: bool
    get: Callable[[Measurement], float | None]
    of_result: Callable[[Result], float | None] | None = None    # a figure of the result's evidence instead

    def value(self, r: Result) -> float | None:
        if self.of_result is not None:
            return self.of_result(r)
        return self.get(r.measurement) if r.measurement else None


METRICS: tuple[Metric, ...] = (
    Metric("bytes_per_s", "MiB/s", True, lambda m: m.bytes_per_s),
    Metric("ops_per_s", "ops/s", True, lambda m: m.ops_per_s),     # per test, its kind's name (metric_label)
    Metric("lat_mean_ns", "mean lat ms", False, lambda m: m.latency.mean_ns),
    Metric("lat_p99_ns", "p99 lat ms", False, lambda m: m.latency.percentiles_ns.get("99")),
)
METRIC_NAMES = tuple(m.name for m in METRICS)


def _cpu(who: str, name: str) -> Callable[[Result], float | None]:
    """A CPU-per-op figure of the result's evidence: the client's, or all OSDs' together (results.osds_cpu)."""
    def get(r: Result) -> float | None:
        cpu = r.evidence.cpu if r.evidence else []
        c = osds_cpu(cpu) if who == OSDS_CPU else next((c for c in cpu if c.who == who), None)
        return getattr(c, name) if c is not None else None
    return get


# CPU per operation (evidence/proccpu.py): compared, but not in history's catalog (METRIC_NAMES are its columns)
CPU_METRICS: tuple[Metric, ...] = (
    Metric("osd_cpu_ms_per_op", "OSDs CPU-ms/op", False, lambda m: None, _cpu(OSDS_CPU, "cpu_ms_per_op")),
    Metric("osd_cpu_s_per_gib", "OSDs CPU-s/GiB", False, lambda m: None, _cpu(OSDS_CPU, "cpu_s_per_gib")),
    Metric("client_cpu_ms_per_op", "client CPU-ms/op", False, lambda m: None, _cpu("client", "cpu_ms_per_op")),
)
COMPARED = METRICS + CPU_METRICS


def metric_label(metric: Metric, kind: str) -> str:
    """A metric as a test of `kind` names it: operations per second as IOPS (fio, rbd), objects/s (rados bench),
    req/s (RGW) (kinds.ops_unit); the others as they are."""
    return (ops_unit(kind) or metric.label) if metric.name == "ops_per_s" else metric.label


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


def match_key(test: Test, match_on: Sequence[str] = (), ignore: Sequence[str] = (), release: str | None = None) -> str:
    """Test.match_key(), or the same over only the `match_on` parameters, less the `ignore`d ones; with the run's
    release (core/identity.py) unless `ignore` names it."""
    if release is not None and RELEASE not in ignore:
        return json.dumps({"key": json.loads(match_key(test, match_on, ignore)), RELEASE: release}, sort_keys=True)
    if not match_on and not ignore:
        return test.match_key()
    if match_on:
        params = {k: test.params.get(k) for k in match_on if k not in ignore}
    else:
        params = {k: v for k, v in test.params.items() if k not in ignore}
    key: dict[str, object] = {"kind": test.kind, "params": params}
    if test.variant is not None:        # never a parameter to leave out: two variants are two configurations
        key["variant"] = test.variant
    return json.dumps(key, sort_keys=True, default=str)


RELEASE = "release"     # the one part of the identity --ignore may leave out: a run has one, so it pools nothing


def is_baseline(test: Test) -> bool:
    return level_of(test.kind) == "Baselines"


@dataclass
class LoadedRun:
    path: Path
    meta: dict
    results: list[Result]
    corrupt: list[CorruptLine]

    @property
    def name(self) -> str:
        return self.path.name or str(self.path)

    @property
    def release(self) -> str | None:
        return release_of(self.meta)

    def variants(self) -> list[str]:
        """The variants its tests ran under, in plan order (none for a run without variants)."""
        return list(dict.fromkeys(r.test.variant for r in self.results if r.test.variant is not None))

    def of_variant(self, variant: str) -> "LoadedRun":
        """Only the tests of `variant` (and those no variant ran under: its baselines), as if the run had had no
        variants (a run without variants as it is), so that they match a plain run's tests. UserError when the run
        has variants but not this one."""
        names = self.variants()
        if not names:
            return self
        if variant not in names:
            raise UserError(f"{self.path} has no variant {variant!r}", f"its variants are {', '.join(names)}",
                            where="--variant")
        kept = [r.model_copy(update={"test": r.test.model_copy(update={"variant": None})})
                for r in self.results if r.test.variant in (None, variant)]
        return LoadedRun(self.path, self.meta, kept, self.corrupt)


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
            v = metric.value(r)
            if v is not None and v == v:
                out.append(float(v))
        return out


def samples_by_key(results: Iterable[Result], match_on: Sequence[str] = (),
                   ignore: Sequence[str] = (), release: str | None = None) -> dict[str, Samples]:
    """Ok results with a measurement grouped by match key (with the release each ran on: `release`, the run's, or
    its variant's lab shape's), in plan order."""
    grouped: dict[str, list[Result]] = {}
    for r in results:
        if r.status == "ok" and r.measurement is not None:
            grouped.setdefault(match_key(r.test, match_on, ignore, result_release(r, release)), []).append(r)
    return {k: Samples(test_label(rs[0].test), rs[0].test, tuple(rs)) for k, rs in grouped.items()}


def pooled(run: LoadedRun, match_on: Sequence[str], ignore: Sequence[str]) -> tuple[Test, Test, list[str]] | None:
    """Two different configurations of one run that `match_on`/`ignore` would make one test, and the parameters
    they differ in; None when the choice keeps every configuration of the run apart."""
    if not match_on and not ignore:
        return None
    seen: dict[str, Test] = {}
    for r in run.results:
        if r.status != "ok" or r.measurement is None:
            continue
        t = seen.setdefault(match_key(r.test, match_on, ignore), r.test)
        if t.match_key() != r.test.match_key():
            return t, r.test, sorted(k for k in set(t.params) | set(r.test.params)
                                     if t.params.get(k) != r.test.params.get(k))
    return None


def check_grouping(run: LoadedRun, match_on: Sequence[str], ignore: Sequence[str]) -> None:
    """UserError when --match-on/--ignore would pool different configurations of one run as repeats of one test."""
    found = pooled(run, match_on, ignore)
    if found is None:
        return
    t, other, apart = found
    ignored = [k for k in apart if k in ignore]
    left_out = [k for k in apart if match_on and k not in match_on]
    option = "--ignore" if ignored else "--match-on"
    fixes = ([f"keep {', '.join(left_out)} in the match"] if left_out else []) + (
        [f"do not ignore {', '.join(ignored)}"] if ignored else [])
    raise UserError(f"{option} makes {test_label(t)} and {test_label(other)} of {run.path} one test "
                    f"(they differ in {', '.join(apart)})", " and ".join(fixes), where=option)


@dataclass(frozen=True)
class Side:
    """One run's repeats of one test and metric, as compare shows them: median (stats.median, the verdict's), min-max,
    n."""
    median: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> "Side":
        return cls(stats.median(values), min(values), max(values), len(values))


@dataclass(frozen=True)
class MetricDelta:
    metric: Metric
    a: tuple[float, ...]
    b: tuple[float, ...]
    sig: stats.Significance

    @property
    def side_a(self) -> "Side":
        return Side.of(self.a)

    @property
    def side_b(self) -> "Side":
        return Side.of(self.b)

    @property
    def ratio(self) -> float | None:
        """B's median over A's."""
        a = self.side_a.median
        return self.side_b.median / a if a > 0 else None

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
    suggestion: "Suggestion | None" = None              # options that match more of them, tried on every run

    @property
    def cluster_tests(self) -> list[TestDelta]:
        """The matched tests of the cluster: what the summary is of."""
        return [t for t in self.tests if not is_baseline(t.test)]

    @property
    def baseline_tests(self) -> list[TestDelta]:
        """The matched baselines (disks, network): the hardware, listed apart, never summarised as the cluster."""
        return [t for t in self.tests if is_baseline(t.test)]

    def geomean(self, baselines: bool = False) -> dict[str, float]:
        """Per metric, the geometric mean of B/A over the matched cluster tests (or baselines) that have it."""
        out: dict[str, float] = {}
        tests = self.baseline_tests if baselines else self.cluster_tests
        for metric in COMPARED:
            ratios = [md.ratio for t in tests for md in t.metrics if md.metric is metric and md.ratio]
            g = stats.geomean(ratios)
            if g is not None:
                out[metric.name] = g
        return out

    def too_few(self) -> int:
        """How many matched tests have too few repeats for the test to ever be significant."""
        return sum(1 for t in self.tests if t.metrics and t.metrics[0].sig.p is None)


def metric_deltas(s_a: Samples, s_b: Samples, alpha: float = stats.ALPHA,
                  metrics: Sequence[Metric] = METRICS) -> tuple[MetricDelta, ...]:
    """B's repeats against A's, per metric both sides measured: the one rule compare and a run's variants share."""
    deltas = []
    for metric in metrics:
        va, vb = s_a.values(metric), s_b.values(metric)
        if va and vb:
            deltas.append(MetricDelta(metric, tuple(va), tuple(vb), stats.mann_whitney(va, vb, alpha)))
    return tuple(deltas)


def compare_pair(a: LoadedRun, b: LoadedRun, match_on: Sequence[str] = (), ignore: Sequence[str] = (),
                 alpha: float = stats.ALPHA) -> PairComparison:
    sa = samples_by_key(a.results, match_on, ignore, a.release)
    sb = samples_by_key(b.results, match_on, ignore, b.release)
    tests: list[TestDelta] = []
    for key, s_a in sa.items():
        s_b = sb.get(key)
        if s_b is None:
            continue
        deltas = metric_deltas(s_a, s_b, alpha, COMPARED)
        if deltas:
            tests.append(TestDelta(key, s_a.label, s_a.test, deltas))
    matched = {t.key for t in tests}
    rest_a = [s for k, s in sa.items() if k not in matched]
    rest_b = [s for k, s in sb.items() if k not in matched]
    releases = (a.release, b.release) if RELEASE not in ignore else (None, None)
    return PairComparison(a, b, tests, only_a=[s.label for s in rest_a], only_b=[s.label for s in rest_b],
                          differs=near_misses(rest_a, rest_b, match_on, ignore, releases))


def near_misses(rest_a: Sequence[Samples], rest_b: Sequence[Samples], match_on: Sequence[str] = (),
                ignore: Sequence[str] = (), releases: tuple[str | None, str | None] = (None, None)) -> list[str]:
    """The parameters that keep unmatched tests apart: for each test only in A, the closest test of its kind only
    in B, when one or two parameters differ (a changed duration, a label, the runs' releases); most frequent
    first."""
    counts: Counter[str] = Counter()
    for s_a in rest_a:
        diffs = []
        for s_b in rest_b:
            if s_b.test.kind != s_a.test.kind or s_b.test.variant != s_a.test.variant:
                continue
            pa = {**s_a.test.params, RELEASE: result_release(s_a.results[0], releases[0])}
            pb = {**s_b.test.params, RELEASE: result_release(s_b.results[0], releases[1])}
            keys = (set(match_on) | {RELEASE} if match_on else set(pa) | set(pb)) - set(ignore)
            diffs.append(sorted(k for k in keys if pa.get(k) != pb.get(k)))
        best = min(diffs, key=len, default=None)
        if best and len(best) <= 2:
            counts.update(best)
    return [k for k, _ in counts.most_common()]


@dataclass(frozen=True)
class Suggestion:
    """Options for `compare` that match more tests of a pair than the ones given, already tried: they pool no two
    configurations of any of the runs, and the pair has more tests in common with them."""
    runs: tuple[Path, ...]
    match_on: tuple[str, ...]
    ignore: tuple[str, ...]
    stops_matching: tuple[str, ...]     # the parameters it leaves out of the match ("variant": --variant)
    matched: int                        # tests in common with it
    variant: str | None = None          # --variant: the runs with variants compared through this one

    def options(self) -> list[str]:
        out = ["--match-on", ",".join(self.match_on)] if self.match_on else []
        for k in self.ignore:
            out += ["--ignore", k]
        return out + (["--variant", self.variant] if self.variant is not None else [])

    def argv(self) -> list[str]:
        """The whole command, as a list (the first word is the program): runs, then the matching options."""
        return ["cephbench", "compare", *(str(p) for p in self.runs), *self.options()]

    def command(self) -> str:
        return shlex.join(self.argv())

    def apart(self) -> str:
        """What keeps the tests apart, in words."""
        if self.variant is not None:
            return "variant (a run of variants against one without, or other variants)"
        return ", ".join(self.stops_matching)


def suggest(runs: Sequence[LoadedRun], pair: PairComparison, match_on: Sequence[str] = (),
            ignore: Sequence[str] = ()) -> Suggestion | None:
    """Leave the parameters that keep the pair's tests apart out of the match, as many as can be: a parameter that
    would make two configurations of one run one test stays (compare would refuse it). None when nothing helps."""
    candidates = list(pair.differs)
    while candidates:
        if match_on:
            new_match = [k for k in match_on if k not in candidates]
            if not new_match:               # "--match-on" with nothing left would mean every parameter again
                return None
            new_ignore = [*ignore, *([RELEASE] if RELEASE in candidates and RELEASE not in ignore else [])]
        else:
            new_match, new_ignore = [], [*ignore, *(k for k in candidates if k not in ignore)]
        blocked = next((found for run in runs if (found := pooled(run, new_match, new_ignore))), None)
        if blocked is not None:
            keep = [k for k in blocked[2] if k in candidates]
            if not keep:
                return None
            candidates = [k for k in candidates if k not in keep]
            continue
        trial = compare_pair(pair.a, pair.b, new_match, new_ignore)
        if len(trial.tests) <= len(pair.tests):
            return None
        return Suggestion(tuple(r.path for r in runs), tuple(new_match), tuple(new_ignore), tuple(candidates),
                          len(trial.tests))
    return None


def across_variants(runs: Sequence[LoadedRun], pair: PairComparison, match_on: Sequence[str] = (),
                    ignore: Sequence[str] = ()) -> Suggestion | None:
    """When no cluster test of a pair matched because its runs' variants differ (a plain run against a run of
    variants, or runs of differently named variants): the `--variant` that matches the most cluster tests, tried."""
    best: Suggestion | None = None
    for name in dict.fromkeys(v for run in (pair.a, pair.b) for v in run.variants()):
        try:
            chosen = [run.of_variant(name) for run in runs]
        except UserError:                   # another run lacks it: --variant would be refused
            continue
        trial = compare_pair(chosen[0], chosen[runs.index(pair.b)], match_on, ignore)
        found = len(trial.cluster_tests)
        if found > len(pair.cluster_tests) and (best is None or found > best.matched):
            best = Suggestion(tuple(r.path for r in runs), tuple(match_on), tuple(ignore), ("variant",), found, name)
    return best


def compare_runs(runs: Sequence[LoadedRun], match_on: Sequence[str] = (), ignore: Sequence[str] = (),
                 alpha: float = stats.ALPHA, variant: str | None = None) -> list[PairComparison]:
    """The first run against each of the others; with `variant`, each run of variants only through that one.
    UserError when a pair has no test in common."""
    if len(runs) < 2:
        raise UserError("give at least two run directories to compare")
    if variant is not None:
        runs = [run.of_variant(variant) for run in runs]
    for run in runs:
        check_grouping(run, match_on, ignore)
    pairs = []
    for b in runs[1:]:
        pair = compare_pair(runs[0], b, match_on, ignore, alpha)
        if not pair.cluster_tests and variant is None:
            pair.suggestion = across_variants(runs, pair, match_on, ignore)
        if pair.suggestion is None and pair.differs:
            pair.suggestion = suggest(runs, pair, match_on, ignore)
        if not pair.tests:
            hint = ("tests match on kind and every parameter; choose the parameters with --match-on KEYS or "
                    "leave some out with --ignore KEY (see 'cephbench compare --help')")
            if pair.suggestion:
                hint = (f"their tests differ in {pair.suggestion.apart()}; to compare them anyway: "
                        f"{pair.suggestion.command()}")
            elif pair.differs:
                hint = (f"their tests differ in {', '.join(pair.differs)}, and leaving that out of the match would "
                        f"make different tests of one run one test")
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
        return (f"{self.pair.b.name}: {self.test.label} {metric_label(d.metric, self.test.test.kind)} "
                f"{d.delta_pct:+.1f}% against "
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
