"""Compare says what the repeats show (issue 36 item 6): with 3 repeats a side every row is `~` (a Mann-Whitney U
of 3 against 3 cannot reach α = 0.05), and compare used to hide that every repeat of one run sat above every repeat of
the other. Now each row carries the test's p, the smallest p its repeats can give (min p: the test's power), and
the repeats' order ("all 3 B > all 3 A"), and a line under the table calls out the separations the test cannot
call significant, whatever the terminal's width. On the two real runs of tests/fixtures/report/ceph16.2.15_repeated_*
(3 repeats each: rep2's 64 KiB writes 24.3-28.1 MiB/s in the first, 30.0-38.8 in the second) and on other repeat
counts."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from scipy.stats import mannwhitneyu

from clirun import cephbench
from runfactory import copy_fixture_run
from cephbench.core import stats
from cephbench.analysis.compare import compare_runs, load_run
from cephbench.report import compare_render

FIX = Path(__file__).parent.parent / "fixtures" / "report" / "ceph16.2.15_repeated"
MIB = 1024 * 1024


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    return [copy_fixture_run(f"{FIX}_{name}", tmp_path / name) for name in ("first", "second")]


def mib_s(run: Path, pool: str) -> list[float]:
    """The repeats' MiB/s of one pool profile, from results.jsonl itself."""
    rs = [json.loads(ln) for ln in (run / "results.jsonl").read_text().splitlines()]
    return [r["measurement"]["bytes_per_s"] / MIB for r in rs if f"-{pool}-" in r["test"]["id"]]


def cells(stdout: str) -> dict[tuple[str, str], list[str]]:
    """(test, metric) -> the row's cells of the plain terminal table (2 spaces between columns)."""
    out, test = {}, ""
    for ln in stdout.splitlines():
        if not re.match(r"^(rados-\S+)?\s+\S", ln) or "  " not in ln.strip():
            continue
        c = re.split(r"\s{2,}", ln.strip())
        if ln.startswith("rados-"):
            test = c[0]
            c = c[1:]
        out[(test, c[0])] = c
    return out


def test_each_row_has_its_p_its_floor_and_the_repeats_order(runs):
    first, second = mib_s(runs[0], "rep2"), mib_s(runs[1], "rep2")
    assert max(first) < min(second)                       # the fixture: every repeat of B above every one of A
    res = cephbench("compare", *runs)
    assert res.returncode == 0, res.stderr
    rows = cells(res.stdout)
    # test, metric, A median, A min–max, B median, B min–max, Δ%, sig, min p, n A/B, repeats
    rep2 = rows[("rados-write-rep2-64KiB-t4", "MiB/s")]
    assert rep2[6:] == ["~ p=0.1", "0.1", "3/3", "all 3 B > all 3 A"], rep2
    assert rows[("rados-write-rep2-64KiB-t4", "mean lat ms")][-1] == "all 3 B < all 3 A"
    assert rows[("rados-write-rep2-64KiB-t4", "objects/s")][-1] == "all 3 B > all 3 A"   # rados bench's unit
    rep3 = rows[("rados-write-rep3-64KiB-t4", "MiB/s")]
    p = mannwhitneyu(mib_s(runs[0], "rep3"), mib_s(runs[1], "rep3"), alternative="two-sided").pvalue
    assert rep3[6] == f"~ p={p:.2g}" and rep3[-1] == "overlap", rep3
    # said under the table: the separation, and that 3 and 3 repeats cannot go below p = 0.1
    line = next(ln for ln in res.stdout.splitlines() if "yet the test cannot call it significant" in ln)
    assert "rados-write-rep2-64KiB-t4: MiB/s, objects/s all 3 B > all 3 A, mean lat ms all 3 B < all 3 A" in line
    assert "3 and 3 repeats: 0.1" in line and "rep3" not in line
    # rados bench's operations are objects: every line names them so (kinds.ops_unit), the summary too
    assert "objects/s ×0.988" in res.stdout and "IOPS" not in res.stdout


@pytest.mark.parametrize("width", [80, 120])
def test_a_narrow_terminal_leaves_whole_columns_out_and_still_calls_the_separation_out(runs, width):
    pairs = compare_runs([load_run(r) for r in runs])
    buf = io.StringIO()
    compare_render.print_text(Console(file=buf, width=width, force_terminal=True, color_system=None), pairs)
    text = buf.getvalue()
    table = text.split("geometric mean")[0].splitlines()
    left = [ln for ln in table if ln.startswith(f"left out to fit {width} columns: ")]
    rows = [ln for ln in table if ln not in left]                  # the one line naming them may wrap
    assert all(len(ln) <= width for ln in rows), [ln for ln in rows if len(ln) > width]
    assert len(left) == 1 and "A min–max" in left[0], table         # the spreads go first (docs/report.md)
    header = table[1]
    for kept in ("test", "metric", "A median", "B median", "Δ%", "sig"):
        assert kept in header, header
    for name in re.split(r", ", left[0].split(": ", 1)[1].split(" (")[0]):
        assert name not in header                                    # what it names is what it left out
    for ln in table[3:-1]:                                           # no value cut or wrapped: whole cells
        assert not re.search(r"\d–$|^\s*[.\d]", ln), ln
    assert "rados-write-rep2-64KiB-t4: MiB/s, objects/s all 3 B > all 3 A" in text


@pytest.mark.parametrize("n, m", [(1, 1), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (5, 3), (6, 6)])
def test_min_p_is_what_complete_separation_gives_for_any_repeat_counts(n, m):
    """The floor compare prints is scipy's exact p of complete separation, for every repeat count."""
    a, b = [10.0 + i for i in range(n)], [1.0 + i for i in range(m)]
    sig = stats.mann_whitney(a, b)
    exact = mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue
    assert sig.floor == pytest.approx(exact) == pytest.approx(stats.min_p(n, m))
    assert sig.significant == (exact < stats.ALPHA)
    if min(n, m) >= 2:
        assert sig.order == "below" and sig.separation() == f"all {m} B < all {n} A"
        assert sig.p_value == pytest.approx(exact)
        assert sig.shown() == (f"p={exact:.3g}" if sig.significant else f"~ p={exact:.2g}")
    else:
        assert sig.order is None and sig.separation() == "-"
    mixed = stats.mann_whitney(a + b, b + a) if n + m > 2 else sig
    assert mixed.order is None
