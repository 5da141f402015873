"""Terminal views keep whole columns and whole ids (issue 36 item 7): at 80 and 120 columns `show` dropped the knee
column without saying so, cut test ids (`018-rbd-randread-4KiB-qd` lost its queue depth) and the per-OSD CPU cell
before the outlier OSD; `compare` wrapped numbers mid-value. Every terminal table now goes through
textout.fitted_table: whole columns left out by the rank docs/report.md states, one line under the table naming
them, ids whole. Checked on real run directories (tests/fixtures/report/) at widths the issue named and others,
each narrow table against the same table printed whole (a pipe)."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from conftest import FIXTURES, REPO
from runfactory import copy_fixture_run
from cephbench.analysis.compare import compare_runs, load_run
from cephbench.core.results import RunDir
from cephbench.report import compare_render
from cephbench.report.terminal import print_results, print_verdict

RUNS = ["ceph16.2.15_quick_search_onehost", "ceph16.2.15_quick_multihost3", "ceph16.2.15_variants_throttle",
        "ceph16.2.15_settings_rgw", "ceph16.2.15_2hosts_2clients_rados"]
WIDTHS = [72, 80, 100, 120]
LEFT_OUT = re.compile(r"^left out to fit (\d+) columns: (.*) \(`\| cat` shows them\)$")


def show(run: Path, width: int | None) -> str:
    """`show`'s output: on a terminal of `width` columns, or (None) as a pipe prints it, every column whole."""
    results, _ = RunDir.open(run).results()
    buf = io.StringIO()
    console = Console(file=buf, width=width or 160, force_terminal=width is not None, color_system=None,
                      highlight=False, soft_wrap=True)
    print_results(console, results)
    print_verdict(console, results)
    return buf.getvalue()


def headers(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def tables(text: str) -> dict[str, dict]:
    """Each table by title: its header cells, its lines (header, rule, rows) and the line after its rows."""
    lines = text.splitlines()
    out = {}
    rules = [i for i, ln in enumerate(lines) if ln.startswith("─")]
    for n, i in enumerate(rules):
        end = rules[n + 1] - 2 if n + 1 < len(rules) else len(lines)
        rows = []
        for ln in lines[i + 1:end]:
            if not ln or LEFT_OUT.match(ln) or re.match(r"^  \S", ln) or ln.startswith((
                    "Notes", "Warnings", "Errors", "Verdict", "Variants", "CPU per", "geometric")):
                break
            rows.append(ln)
        after = lines[i + 1 + len(rows)] if i + 1 + len(rows) < len(lines) else ""
        out[lines[i - 2]] = {"headers": headers(lines[i - 1]), "lines": lines[i - 1:i + 1 + len(rows)],
                             "rows": rows, "after": after}
    return out


@pytest.fixture(scope="module", params=RUNS)
def run(request, tmp_path_factory) -> Path:
    return copy_fixture_run(str(FIXTURES / "report" / request.param), tmp_path_factory.mktemp("run") / "r")


@pytest.mark.parametrize("width", WIDTHS)
def test_show_leaves_out_whole_columns_says_which_and_keeps_ids_whole(run, width):
    whole, narrow = tables(show(run, None)), tables(show(run, width))
    assert narrow.keys() == whole.keys()                     # every table is there
    for title, t in narrow.items():
        w = whole[title]
        assert all(len(ln) <= width for ln in t["lines"]), (title, [ln for ln in t["lines"] if len(ln) > width])
        m = LEFT_OUT.match(t["after"])
        missing = [h for h in w["headers"] if h not in t["headers"]]
        # the header is the whole table's less what the line under it names, in the whole table's order
        assert t["headers"] == [h for h in w["headers"] if h in t["headers"]], (title, t["headers"])
        if missing:
            assert m and int(m.group(1)) == width, (title, t["after"])
            assert sorted(m.group(2).split(", ")) == sorted(missing), (title, m.group(2), missing)
        else:
            assert not m, (title, t["after"])
        assert len(t["rows"]) == len(w["rows"]), title        # no row wrapped onto a second line
        # ids whole: every row's id (its first cell) as printed whole, and the curves' test column
        for nrow, wrow in zip(t["rows"], w["rows"]):
            assert nrow.split()[:1] == wrow.split()[:1], (title, nrow)
            ids = [c for c in wrow.split() if re.match(r"^\d{3}-", c)]
            assert all(i in nrow.split() for i in ids if "test" in t["headers"]), (title, nrow)
        if "latency against throughput" in title:
            assert "knee" in t["headers"] and "test" in t["headers"], t["headers"]


@pytest.mark.parametrize("width", [80, 120])
def test_the_cpu_table_keeps_the_outlier_osd_in_sight(width, tmp_path):
    run = copy_fixture_run(str(FIXTURES / "report" / "ceph16.2.15_quick_search_onehost"), tmp_path / "r")
    t = tables(show(run, width))["CPU per operation"]
    row = next(r for r in t["rows"] if r.startswith("024-rgw-put-4KiB-t16 "))
    assert row.endswith("osd.0 1.80 – osd.2 51.9"), row      # osd.2's 51.9 CPU-ms/op against 1.80-2.05


@pytest.mark.parametrize("width", [80, 120])
def test_compare_renders_through_the_same_code(width, tmp_path):
    runs = [copy_fixture_run(str(FIXTURES / "report" / f"ceph16.2.15_repeated_{n}"), tmp_path / n)
            for n in ("first", "second")]
    pairs = compare_runs([load_run(r) for r in runs])
    texts = []
    for w in (width, None):
        buf = io.StringIO()
        compare_render.print_text(Console(file=buf, width=w or 160, force_terminal=w is not None,
                                          color_system=None, highlight=False, soft_wrap=True), pairs)
        texts.append(tables(buf.getvalue()))
    narrow, whole = texts
    title = "A vs B: first → second"
    t, w = narrow[title], whole[title]
    assert all(len(ln) <= width for ln in t["lines"])
    missing = [h for h in w["headers"] if h not in t["headers"]]
    m = LEFT_OUT.match(t["after"])
    assert missing and m and sorted(m.group(2).split(", ")) == sorted(missing)
    # figures whole: every number of a narrow row is one of the whole row's cells
    for nrow, wrow in zip(t["rows"], w["rows"]):
        assert set(headers(nrow)) <= set(headers(wrow)), (nrow, wrow)


def test_the_docs_state_each_tables_order(tmp_path):
    """docs/report.md, "Narrow terminals", lists each table's columns in the order a narrow terminal leaves them out;
    the code's ranks are that order."""
    from cephbench.report import cpu, curves
    from cephbench.report.baseline import DISK_COLUMNS, NET_COLUMNS
    from cephbench.report.terminal import _columns
    doc = (REPO / "docs" / "report.md").read_text()
    section = doc.split("## Narrow terminals", 1)[1].split("\n## ", 1)[0]

    def stated(name: str) -> list[str]:
        line = next(ln for ln in section.splitlines() if ln.startswith(f"| {name}"))
        return [re.sub(r" \(when .*\)$", "", c.strip(" `")) for c in line.split("|")[2].split(",")]

    def order(pairs) -> list[str]:
        return [h for h, rank in sorted(((h, r) for h, r in pairs if r > 0), key=lambda hr: -hr[1])]
    assert stated("CPU per operation") == order((h, r) for h, _, _, r in cpu.TERMINAL_COLUMNS)
    assert stated("latency against throughput") == order((h, r) for h, r in curves.RANKS.items())
    assert stated("disk baseline") == ["status", *order((h, r) for h, _, r in DISK_COLUMNS)]
    assert stated("network baseline") == ["status", *order((h, r) for h, _, r in NET_COLUMNS)]
    assert stated("compare") == order((c.header, c.rank) for c in compare_render.columns("B"))
    from cephbench.cli.history import LIST_RANKS, TREND_RANKS
    assert stated("history (its list of runs)") == order(LIST_RANKS.items())
    assert stated("history --trend") == order(TREND_RANKS.items())
    # a kind's table, on a real run whose every result is ok and has each column
    run = copy_fixture_run(str(FIXTURES / "report" / "ceph16.2.15_quick_multihost3"), tmp_path / "r")
    results = [r for r in RunDir.open(run).results()[0] if r.test.kind == "rgw"]
    assert stated("a kind's results") == order((c.header, c.rank) for c in _columns("rgw", results))


@pytest.mark.parametrize("width", [80, 120])
def test_the_commands_on_a_real_terminal_fit_it(width, tmp_path):
    """`show`, `compare` and `history` as an operator runs them, in a pseudo-terminal of `width` columns (util-linux
    `script`): every table line fits, and what a table left out is named under it."""
    import shlex
    import shutil
    import subprocess
    if shutil.which("script") is None:
        pytest.skip("util-linux script is not installed")
    runs = [copy_fixture_run(str(FIXTURES / "report" / f"ceph16.2.15_repeated_{n}"), tmp_path / n)
            for n in ("first", "second")]
    search = copy_fixture_run(str(FIXTURES / "report" / "ceph16.2.15_quick_search_onehost"), tmp_path / "search")
    exe = shlex.quote(str(Path(sys.executable).parent / "cephbench"))
    db = shlex.quote(str(tmp_path / "h.sqlite"))
    commands = [f"{exe} show {search}", f"{exe} compare {runs[0]} {runs[1]}",
                f"{exe} history --db {db} add {runs[0]} {runs[1]} {search} >/dev/null; {exe} history --db {db} list; "
                f"{exe} history --db {db} --trend bw --test 'rados_bench object_size=64KiB' --pool-profile "
                f"'replicated size 2'"]
    env = {**{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}, "TERM": "xterm"}
    for command in commands:
        res = subprocess.run(["script", "-qec", f"stty cols {width} rows 50; {command}", "/dev/null"],
                             capture_output=True, text=True, timeout=120, env=env)
        text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", res.stdout).replace("\r", "")
        assert res.returncode == 0, text[-2000:]
        found = tables(text)
        assert found, text[:2000]
        for title, t in found.items():
            m = LEFT_OUT.match(t["after"])
            assert m is None or int(m.group(1)) == width, t["after"]
            if title.startswith("History ("):
                # its run directories are whole absolute paths (here pytest's, 60 characters and more): every other
                # column may go and the rows still be wider than 80; then every one of those went, and is named
                if any(len(ln) > width for ln in t["lines"]):
                    from cephbench.cli.history import LIST_RANKS
                    assert m and set(m.group(2).split(", ")) == set(LIST_RANKS), t["after"]
                continue
            assert all(len(ln) <= width for ln in t["lines"]), (command, title, t["lines"][:3])


@pytest.mark.parametrize("width", [80, 120])
def test_a_column_with_no_figure_goes_before_one_with_figures(width, tmp_path):
    """rados bench prints no percentiles: its curves' p50 and p99 ms are '-' in every row. At 80 columns the 2-host
    run's write curve (ids of 38 characters) kept p99 ms, all dashes, and left out mean ms, its one latency."""
    run = copy_fixture_run(str(FIXTURES / "report" / "ceph16.2.15_2hosts_2clients_rados"), tmp_path / "r")
    t = tables(show(run, width))["RADOS write 1MiB (rados): latency against throughput by load"]
    assert "mean ms" in t["headers"] and "p99 ms" not in t["headers"], t["headers"]
    assert "231" in headers(t["rows"][0]), t["rows"][0]          # 002's mean latency, 231 ms
