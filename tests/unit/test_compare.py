"""compare: matching by parameters, repeats as samples, Mann-Whitney significance, rendering, CLI."""

from __future__ import annotations

import html
import json
import re
import shlex
import subprocess

import pytest

from clirun import cephbench

from cephbench.core import stats
from cephbench.analysis.compare import compare_runs, load_run, regressions
from cephbench.core.errors import UserError
from cephbench.report import compare_render
from runfactory import fixture_measurement, repeats, scaled, write_run

W4M = {"pool": "rep", "object_size": 4194304, "concurrency": 16, "phase": "write", "duration_s": 5.0}
R4K = {"pool": "rep", "object_size": 4096, "concurrency": 16, "phase": "rand", "duration_s": 5.0}


def cli(*args: str) -> subprocess.CompletedProcess:
    return cephbench(*args)


@pytest.fixture
def runs(tmp_path):
    """A: two configurations, 5 repeats each. B: the 4 MiB write 20% faster. C: A's configuration again."""
    w, r = fixture_measurement(), fixture_measurement("ceph16.2.15_rand_4K.txt", "rand")
    a = write_run(tmp_path / "A", [("rados_bench", W4M, repeats(w, 1.0)), ("rados_bench", R4K, repeats(r, 1.0))])
    b = write_run(tmp_path / "B", [("rados_bench", W4M, repeats(w, 1.2, offset=3)),
                                   ("rados_bench", R4K, repeats(r, 1.0, offset=2))])
    c = write_run(tmp_path / "C", [("rados_bench", W4M, repeats(w, 1.0, offset=1)),
                                   ("rados_bench", R4K, repeats(r, 1.0, offset=4))])
    return a, b, c


def test_smallest_p_and_repeats_needed():
    assert stats.min_p(3, 3) == pytest.approx(0.1)
    assert stats.min_p(4, 4) == pytest.approx(2 / 70)
    assert stats.repeats_needed(0.05) == 4
    assert stats.mann_whitney([1, 2, 3], [4, 5, 6]).p is None           # can never reach 0.05
    assert stats.mann_whitney([1, 2, 3, 4], [5, 6, 7, 8]).significant   # p = 0.029


def test_real_20_percent_change_is_significant_and_rerun_is_not(runs):
    a, b, c = (load_run(p) for p in runs)
    ab, ac = compare_runs([a, b, c])
    write = next(t for t in ab.tests if t.test.params["object_size"] == 4194304)
    bw = next(d for d in write.metrics if d.metric.name == "bytes_per_s")
    assert bw.delta_pct == pytest.approx(20.0, abs=1.0)
    assert bw.sig.significant and bw.sig.p < 0.05 and bw.sig.text().startswith("p=")
    lat = next(d for d in write.metrics if d.metric.name == "lat_mean_ns")
    assert lat.sig.significant and lat.worse_pct < 0          # latency went down: better
    rand = next(t for t in ab.tests if t.test.params["object_size"] == 4096)
    assert all(d.sig.text() == "~" for d in rand.metrics)     # same configuration: not significant
    assert all(d.sig.text() == "~" for t in ac.tests for d in t.metrics)
    g = ab.geomean()["bytes_per_s"]
    assert g == pytest.approx((1.2 * 1.0) ** 0.5, rel=0.02)   # 20% on one of two tests


def test_repeats_are_the_samples_matched_by_params_not_ids(runs):
    a, b, _ = (load_run(p) for p in runs)
    ab = compare_runs([a, b])[0]
    assert len(ab.tests) == 2
    assert all(d.sig.n_a == 5 and d.sig.n_b == 5 for t in ab.tests for d in t.metrics)
    assert {t.label for t in ab.tests} == {"rados_bench-rep-4194304-16-write-5.0", "rados_bench-rep-4096-16-rand-5.0"}


def test_fail_on_regression_only_for_significant_changes_past_pct(runs):
    a, b, _ = (load_run(p) for p in runs)
    ba = compare_runs([b, a])[0]                      # from B to A the write is 1/1.2: 16.7% slower
    found = regressions([ba], 10)
    assert found and {r.delta.metric.name for r in found} >= {"bytes_per_s", "ops_per_s", "lat_mean_ns"}
    assert regressions([ba], 25) == []
    assert regressions(compare_runs([a, b]), 10) == []   # B is faster


def test_too_few_repeats_say_how_many_are_needed(tmp_path):
    w = fixture_measurement()
    a = write_run(tmp_path / "A", [("rados_bench", W4M, repeats(w, 1.0, n=3))])
    b = write_run(tmp_path / "B", [("rados_bench", W4M, repeats(w, 2.0, n=3))])
    pair = compare_runs([load_run(a), load_run(b)])[0]
    d = pair.tests[0].metrics[0]
    assert d.sig.text() == "~" and d.sig.p is None and "needs ≥4 repeats per side" in d.sig.why()
    legend = compare_render.legend([pair])
    assert any("1 of 1 matched tests have too few repeats" in line and "4 per side are enough" in line
               and "repeat: 4" in line for line in legend)
    assert any("too few repeats to tell" in line for line in legend)


def test_enough_repeats_say_nothing_about_needing_more(tmp_path):
    """Issue 18: the footnote said "needs ≥4 repeats" when both sides had 4."""
    w = fixture_measurement()
    a = write_run(tmp_path / "A", [("rados_bench", W4M, repeats(w, 1.0, n=4))])
    b = write_run(tmp_path / "B", [("rados_bench", W4M, repeats(w, 2.0, n=4))])
    pair = compare_runs([load_run(a), load_run(b)])[0]
    text = "\n".join(compare_render.legend([pair]))
    assert "too few" not in text and "needs" not in text and "repeat:" not in text and "(n=" not in text


def test_each_side_shows_median_min_max_and_n(tmp_path):
    w = fixture_measurement()
    a = write_run(tmp_path / "A", [("rados_bench", W4M, repeats(w, 1.0, n=5)),
                                   ("rados_bench", R4K_W := {**W4M, "object_size": 4096}, repeats(w, 1.0, n=2))])
    b = write_run(tmp_path / "B", [("rados_bench", W4M, [*repeats(w, 1.0, n=4), scaled(w, 3.0)]),
                                   ("rados_bench", R4K_W, repeats(w, 1.0, n=1))])
    pair = compare_runs([load_run(a), load_run(b)])[0]
    bw = next(d for t in pair.tests if t.test.params["object_size"] == 4194304 for d in t.metrics
              if d.metric.name == "bytes_per_s")
    base = w.bytes_per_s
    assert bw.side_a.median == pytest.approx(base) and bw.side_a.n == 5
    assert (bw.side_a.low, bw.side_a.high) == (pytest.approx(base * 0.99), pytest.approx(base * 1.01))
    # one repeat 3x as fast moves B's mean by 40% but its median not at all: the change is between medians
    assert bw.side_b.high == pytest.approx(base * 3.0) and abs(bw.delta_pct) < 1.0
    text = compare_render.render_text(pairs := [pair])
    row = next(ln for ln in text.splitlines() if "4194304" in ln and "MiB/s" in ln)
    mib = base / 2**20
    assert f"{mib * 0.99:,.1f}–{mib * 1.01:,.1f}" in row and f"{mib * 3:,.1f}" in row and "5/5" in row
    small_row = next(ln for ln in text.splitlines() if "-4096-" in ln)
    assert "(n=2)" in small_row and "one run" in small_row and "2/1" in small_row, small_row
    assert any("fewer than 3 repeats is marked" in line for line in compare_render.legend(pairs))
    for rendered in (compare_render.render_markdown(pairs), compare_render.render_html(pairs)):
        assert "A min–max" in rendered and "B median" in rendered and "(n=2)" in rendered and "one run" in rendered


def test_renderings_escape_run_strings(tmp_path):
    w = fixture_measurement()
    evil = {**W4M, "pool": "<script>alert(1)</script>|x"}
    a = write_run(tmp_path / "A", [("rados_bench", evil, repeats(w, 1.0))])
    b = write_run(tmp_path / "B<b>", [("rados_bench", evil, repeats(w, 0.7))])
    pairs = compare_runs([load_run(a), load_run(b)])
    html = compare_render.render_html(pairs)
    assert "<script>alert" not in html and "&lt;script&gt;" in html and "<svg" in html
    assert "B&lt;b&gt;" in html
    md = compare_render.render_markdown(pairs)
    assert "\\|x" in md and "<script>" not in md
    text = compare_render.render_text(pairs)
    assert "-30.0%" in text and "MiB/s" in text


def test_no_tests_in_common_is_a_user_error(tmp_path):
    w = fixture_measurement()
    a = write_run(tmp_path / "A", [("rados_bench", W4M, repeats(w, 1.0))])
    b = write_run(tmp_path / "B", [("rados_bench", {**W4M, "concurrency": 32}, repeats(w, 1.0))])
    with pytest.raises(UserError, match="no tests in common") as exc:
        compare_runs([load_run(a), load_run(b)])
    assert exc.value.one_line().endswith(f"(their tests differ in concurrency; to compare them anyway: "
                                         f"cephbench compare {a} {b} --ignore concurrency)")
    pair = compare_runs([load_run(a), load_run(b)], ignore=["concurrency"])[0]
    assert len(pair.tests) == 1
    assert len(compare_runs([load_run(a), load_run(b)], match_on=["phase", "object_size"])[0].tests) == 1


# ---- CLI -----------------------------------------------------------------------------------------

def test_cli_text_and_exit_codes(runs, tmp_path):
    a, b, c = runs
    res = cli("compare", str(a), str(b), str(c))
    assert res.returncode == 0, res.stderr
    assert "p=" in res.stdout and "~" in res.stdout and "geometric mean" in res.stdout
    res = cli("compare", str(b), str(a), "--fail-on-regression", "10")
    assert res.returncode == 1 and "regression:" in res.stderr and "Traceback" not in res.stderr
    assert cli("compare", str(a), str(b), "--fail-on-regression", "10").returncode == 0
    out = tmp_path / "cmp.html"
    res = cli("compare", str(a), str(b), "--format", "html", "--out", str(out))
    assert res.returncode == 0 and "<svg" in out.read_text()
    out = tmp_path / "cmp.md"
    assert cli("compare", str(a), str(b), "--format", "markdown", "--out", str(out)).returncode == 0
    assert "(cmp-A-vs-B.svg)" in out.read_text() and (tmp_path / "cmp-A-vs-B.svg").exists()


def _one_line_exit_2(res):
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    return res.stderr


def test_cli_bad_inputs(runs, tmp_path):
    a, b, _ = runs
    (tmp_path / "notarun").mkdir()
    assert "not a cephbench run directory" in _one_line_exit_2(cli("compare", str(a), str(tmp_path / "notarun")))
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "run.json").write_text(json.dumps({"schema_version": 99}))
    assert "schema 99" in _one_line_exit_2(cli("compare", str(a), str(newer)))
    other = write_run(tmp_path / "other", [("rados_bench", {**W4M, "concurrency": 64},
                                            repeats(fixture_measurement(), 1.0))])
    assert "no tests in common" in _one_line_exit_2(cli("compare", str(a), str(other)))
    assert "at least two" in _one_line_exit_2(cli("compare", str(a)))


def test_cli_corrupt_line_is_reported_and_the_rest_used(runs):
    a, b, _ = runs
    with open(b / "results.jsonl", "a") as f:
        f.write('{"schema_version": 1, "test": {"id": "tru\n')
    lines = (b / "results.jsonl").read_text().splitlines()
    res = cli("compare", str(a), str(b))
    assert res.returncode == 0 and "Traceback" not in res.stderr
    assert f"results.jsonl:{len(lines)}: unreadable result skipped" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert "p=" in res.stdout


def test_match_on_that_pools_different_tests_of_one_run_is_refused(runs):
    a, b, _ = (load_run(p) for p in runs)
    with pytest.raises(UserError, match="one test .*differ in object_size, phase") as exc:
        compare_runs([a, b], match_on=["concurrency"])
    assert "keep object_size, phase in the match" in exc.value.one_line()
    with pytest.raises(UserError) as exc:
        compare_runs([a, b], ignore=["object_size", "phase"])
    assert "(do not ignore object_size, phase)" in exc.value.one_line()
    assert len(compare_runs([a, b], match_on=["phase", "object_size"])[0].tests) == 2



# ---- every suggestion compare prints works when pasted --------------------------------------------

def suggested_commands(text: str) -> list[list[str]]:
    """Every `cephbench compare …` that an output suggests, as argv without the program name: to the end of its
    line, less the parenthesis that closes an error's hint (shlex quotes a path that ends in one)."""
    found = []
    for m in re.finditer(r"cephbench compare (.*)$", text, re.M):
        rest = m.group(1).rstrip()
        rest = rest[:-1] if rest.endswith(")") and "(" in text[:m.start()].splitlines()[-1] + "(" else rest
        found.append(["compare", *shlex.split(rest)])
    return found


def _run_set(tmp_path, name, configs):
    w, r = fixture_measurement(), fixture_measurement("ceph16.2.15_seq_4M.txt", "seq")
    m = {"write": w, "seq": r, "rand": r}
    return write_run(tmp_path / name, [("rados_bench", p, repeats(m[p["phase"]], f)) for p, f in configs])


def _paste_each(outputs: list[str], least: int) -> list[list[str]]:
    """Paste every suggested command back into the CLI: accepted (exit 0), and it matches what was left apart."""
    commands = [c for text in outputs for c in suggested_commands(text)]
    assert len(commands) >= least, outputs
    for argv in commands:
        res = cli(*argv)
        assert res.returncode == 0, (argv, res.stderr)
        # the suggestion left out all it could at once: nothing more to suggest, and the changed test compared
        assert suggested_commands(res.stdout) == [] and "p=" in res.stdout, res.stdout
    return commands


def test_pasted_suggestions_are_accepted(tmp_path):
    w4, s4 = W4M, {**W4M, "phase": "seq"}
    a = _run_set(tmp_path, "A", [(w4, 1.0), (s4, 1.0)])
    # the suite's durations changed: every test apart by duration_s
    longer = _run_set(tmp_path, "longer", [({**w4, "duration_s": 10.0}, 1.3), ({**s4, "duration_s": 10.0}, 1.0)])
    # issue 18: the write at another concurrency, and a rand where A had a seq. "--ignore phase" would make A's
    # write and seq one test: the suggestion may only ignore concurrency
    other = _run_set(tmp_path, "other", [({**w4, "concurrency": 32}, 1.3), ({**s4, "phase": "rand",
                                                                             "concurrency": 32}, 1.0)])
    half = _run_set(tmp_path, "half", [(w4, 1.3), ({**s4, "duration_s": 10.0}, 1.0)])
    outputs = []
    for runs in ([a, longer], [a, other], [a, half], [a, half, longer]):
        for fmt in ("text", "markdown", "html"):
            res = cli("compare", *map(str, runs), "--format", fmt)
            text = res.stdout + res.stderr              # an error's hint (exit 2) or a line under the tables
            outputs.append(html.unescape(re.sub(r"<[^>]+>", "\n", text)) if fmt == "html" else text)
    commands = _paste_each(outputs, least=12)
    assert ["compare", str(a), str(other), "--ignore", "concurrency"] in commands
    assert all("phase" not in c for c in commands)
    assert ["compare", str(a), str(half), str(longer), "--ignore", "duration_s"] in commands


def test_pasted_suggestion_with_match_on(tmp_path):
    a = _run_set(tmp_path, "A", [(W4M, 1.0)])
    b = _run_set(tmp_path, "B", [({**W4M, "concurrency": 32, "duration_s": 9.0}, 1.3)])
    res = cli("compare", str(a), str(b), "--match-on", "phase,object_size,concurrency")
    assert res.returncode == 2
    assert _paste_each([res.stderr], least=1) == [["compare", str(a), str(b), "--match-on", "phase,object_size"]]
    # --match-on and --ignore together: the match is on the first less the second
    res = cli("compare", str(a), str(b), "--match-on", "phase,object_size,concurrency", "--ignore", "concurrency")
    assert res.returncode == 0 and "1/1" not in res.stdout and "5/5" in res.stdout


def test_no_suggestion_when_nothing_can_be_left_out(tmp_path):
    """A and B differ only in phase, and ignoring phase would make A's write and seq one test."""
    a = _run_set(tmp_path, "A", [(W4M, 1.0), ({**W4M, "phase": "seq"}, 1.0)])
    b = _run_set(tmp_path, "B", [({**W4M, "phase": "rand"}, 1.0)])
    res = cli("compare", str(a), str(b))
    assert res.returncode == 2 and suggested_commands(res.stderr) == []
    assert "differ in phase, and leaving that out of the match would make different tests of one run one test" \
        in res.stderr
