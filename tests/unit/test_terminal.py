"""The terminal's results (report/terminal.py) on measurements parsed from real outputs: operations named per kind,
p99 where the tool gives percentiles, only warnings marked, nothing wrapped off a terminal, and an 80-column
terminal that keeps the key columns."""

import io
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from clirun import cephbench
from conftest import FIXTURES
from cephbench.drivers import rados_bench as rb
from cephbench.drivers.fio import parse_fio_json, to_measurement
from cephbench.drivers.rgw.parse import parse as parse_loadgen
from cephbench.kinds import KINDS, ops_unit
from cephbench.report.format import iops, mib_s, ms
from cephbench.report.terminal import print_results, print_verdict
from cephbench.core.results import Analysis, HostLoad, Measurement, Result, RunDir, Test

LONG = "-image_count2-rw_mix_read70-object_size4MiB-pool_profile_ec42-variant_bluestore_min_alloc_4k-r12"
RGW_NOTE = "RGW keys: run user cephbench-3cd29d-rgw"
SEQ_WARNING = ("seq ran out of objects after 1.1 s of the requested 2 s: it read every object the write made; give "
               "the write a longer duration (duration: {write: ..., seq: ...})")


def rados(name: str, mode: str) -> Measurement:
    return rb.parse((FIXTURES / "rados_bench" / name).read_text(), mode)


def fio_rbd() -> Measurement:
    text = (FIXTURES / "fio" / "fio3.33_ceph16.2.15_rbd_randread_4K_qd8_2images.json").read_text()
    return to_measurement(parse_fio_json(text), "randread", tool="fio rbd")


def loadgen(op: str) -> Measurement:
    return parse_loadgen((FIXTURES / "loadgen" / f"loadgen0.1_rgw16.2.15_s3_{op}_4K_t8.json").read_text())


def result(i: int, kind: str, phase: str, m: Measurement, suffix: str = "", *, eff: float | None = None,
           bottleneck: str | None = None, notes: tuple[str, ...] = (), warnings: tuple[str, ...] = ()) -> Result:
    t = Test(id=f"{i:03d}-{kind.split('_')[0]}-{phase}-4KiB-t16{suffix}", index=i, workload=kind, kind=kind,
             group=f"g{i}", params={"phase": phase, "object_size": 4096, "concurrency": 16})
    a = Analysis(efficiency=eff, bottleneck=bottleneck) if eff is not None else None
    cpu = [HostLoad(host="vm", cpus=2, cpu_busy_mean=0.9, cpu_busy_median=0.93, cpu_busy_max=1.0)]
    return Result(test=t, status="ok", started_unix=time.time(), duration_s=5, measurement=m, analysis=a,
                  notes=list(notes), warnings=list(warnings), hosts=cpu)


def run_results(suffix: str = "") -> list[Result]:
    return [
        result(1, "rados_bench", "write", rados("ceph16.2.15_write_4M.txt", "write"), suffix, eff=0.37,
               bottleneck="CPU"),
        result(2, "rados_bench", "seq", rados("ceph16.2.15_seq_4M.txt", "seq"), suffix, eff=0.27,
               bottleneck="CPU", warnings=(SEQ_WARNING,)),
        result(3, "fio_rbd", "randread", fio_rbd(), suffix, eff=0.05, bottleneck="CPU"),
        result(4, "rgw", "put", loadgen("put"), suffix, eff=0.48, bottleneck="CPU", notes=(RGW_NOTE,)),
        result(5, "rgw", "stat", loadgen("stat"), suffix, notes=(RGW_NOTE,)),
    ]


def render(results: list[Result], width: int = 300, terminal: bool = False) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=terminal, color_system=None, highlight=False)
    print_results(console, results)
    print_verdict(console, results)
    return buf.getvalue()


def table(text: str, title: str) -> list[str]:
    """The lines of the table under `title`: its header, rule and rows."""
    lines = text.splitlines()
    start = lines.index(title) + 1
    end = next((i for i in range(start + 2, len(lines)) if not lines[i].startswith("0")), len(lines))
    return lines[start:end]


def test_every_kind_names_its_operations_in_one_mapping():
    assert {k: ops_unit(k) for k in KINDS} == {
        "disk_baseline": "IOPS", "net_baseline": None, "rados_bench": "objects/s", "fio_rados": "IOPS",
        "rados_load_gen": "IOPS", "osd_bench": "IOPS", "rbd_bench": "IOPS", "fio_rbd": "IOPS", "qemu_rbd": "IOPS",
        "rgw": "req/s"}
    assert ops_unit("imported_tool") == "ops/s"


def test_tables_per_kind_name_operations_and_show_p99_where_the_tool_gives_percentiles():
    out = render(run_results())
    rados_t, fio_t, rgw_t = table(out, "rados bench"), table(out, "fio (rbd)"), table(out, "RGW (cephbench-loadgen)")
    assert re.split(r"\s{2,}", rados_t[0].strip())[:5] == ["test", "op", "params", "MiB/s", "objects/s"]
    assert "p99 ms" not in rados_t[0] and "IOPS" not in rados_t[0]          # rados bench prints no percentiles
    assert " IOPS " in fio_t[0] and "p99 ms" in fio_t[0]
    assert " req/s " in rgw_t[0] and "p99 ms" in rgw_t[0] and not any("IOPS" in r for r in rgw_t)
    put = loadgen("put")
    row = next(r for r in rgw_t if r.startswith("004-"))
    assert ms(put.latency.percentiles_ns["99"]) in row.split()
    assert "1,094" in next(r for r in rgw_t if r.startswith("005-"))        # stat: requests, no MiB/s
    # the verdict names them the same way
    write = rados("ceph16.2.15_write_4M.txt", "write")
    assert f"RADOS write: best {mib_s(write.bytes_per_s)} MiB/s, {iops(write.ops_per_s)} objects/s (001-" in out
    assert "RGW metadata (stat): best 1,094 req/s" in out and "RGW write: best 0.6 MiB/s, 142 req/s" in out


def test_only_warnings_are_marked_and_notes_are_plain_information():
    out = render(run_results())
    assert "*" not in out
    seq_row = next(r for r in table(out, "rados bench") if r.startswith("002-"))
    assert seq_row.rstrip().endswith("ok !")
    assert all(not r.rstrip().endswith("!") for r in table(out, "rados bench") if r.startswith("001-"))
    lines = out.splitlines()
    assert lines[lines.index("Warnings (results marked ! are not counted in the verdict)") + 1] == \
        f"  ! 002-rados-seq-4KiB-t16: {SEQ_WARNING}"
    # the same note on two tests of a group: once, with both IDs, no mark
    assert lines[lines.index("Notes") + 1] == f"  004-rgw-put-4KiB-t16, 005-rgw-stat-4KiB-t16: {RGW_NOTE}"


def test_nothing_is_wrapped_or_cut_off_a_terminal():
    results = run_results(LONG)
    out = render(results, width=60)
    lines = out.splitlines()
    for r in results:
        rows = [ln for ln in lines if ln.startswith(r.test.id)]
        assert len(rows) == 1, r.test.id                     # its row is one line, the ID whole at its start
        assert "…" not in rows[0]
    assert f"  004-rgw-put-4KiB-t16{LONG}, 005-rgw-stat-4KiB-t16{LONG}: {RGW_NOTE}" in lines
    assert f"  ! 002-rados-seq-4KiB-t16{LONG}: {SEQ_WARNING}" in lines
    assert "left out" not in out                             # every column: a file has room


def test_show_piped_prints_long_ids_whole(tmp_path: Path):
    rd = RunDir.create(tmp_path / "run", {"suite_name": "t", "started_unix": 1_700_000_000.0})
    for r in run_results(LONG * 2):                          # rows far wider than the 160 columns of a pipe
        rd.append(r)
    res = cephbench("show", rd.path)
    assert res.returncode == 0, res.stderr
    for r in run_results(LONG * 2):
        assert sum(ln.startswith(r.test.id) for ln in res.stdout.splitlines()) == 1


def test_an_80_column_terminal_keeps_the_key_columns_and_says_what_it_left_out():
    out = render(run_results(), width=80, terminal=True)
    assert max(len(ln) for ln in out.splitlines() if not ln.startswith(("  ", "left out"))) <= 80
    for title in ("rados bench", "fio (rbd)", "RGW (cephbench-loadgen)"):
        header = table(out, title)[0]
        assert header.startswith("test ") and "MiB/s" in header and "efficiency" in header \
            and "bottleneck" in header, header
    assert " p99 ms " in table(out, "RGW (cephbench-loadgen)")[0]
    assert "status" in table(out, "rados bench")[0]         # a warning there: its status column stays
    left = next(ln for ln in out.splitlines() if ln.startswith("left out to fit 80 columns: "))
    assert left.startswith("left out to fit 80 columns: op, params, max ms")
    # at 120 columns less is left out
    wide = render(run_results(), width=120, terminal=True)
    assert "avg ms" in table(wide, "fio (rbd)")[0] and "CPU busy" in table(wide, "rados bench")[0]


def test_one_result_is_the_seeds_summary_with_its_kinds_operations():
    out = render([result(1, "rgw", "put", loadgen("put"))])
    assert "Average req/s" in out and "Average IOPS" not in out and "p99 latency (ms)" in out
    out = render([result(1, "rados_bench", "write", rados("ceph16.2.15_write_4M.txt", "write"))])
    assert "Average objects/s" in out and "Stddev objects/s" in out


def test_report_md_lists_warnings_marked_and_notes_plain_once(tmp_path: Path):
    from cephbench.report.write import write_report
    rd = RunDir.create(tmp_path / "run", {"suite_name": "t", "started_unix": 1_700_000_000.0})
    for r in run_results():
        rd.append(r)
    _, md_path, _ = write_report(rd)
    lines = md_path.read_text().splitlines()
    warned = lines.index("Warnings (results marked ! are not counted in the verdict):")
    assert lines[warned + 2] == r"- ! 002-rados-seq-4KiB-t16: " + SEQ_WARNING.replace("{", r"\{").replace("}", r"\}")
    notes = [ln for ln in lines if RGW_NOTE in ln]
    assert notes == [f"- 004-rgw-put-4KiB-t16, 005-rgw-stat-4KiB-t16: {RGW_NOTE}"]


# ---- 80 columns, one unit per kind of figure (the real quick-suite run on the 3-host lab) --------------------

QUICK_RUN = FIXTURES / "report" / "ceph16.2.15_quick_multihost3.results.jsonl"


def quick_results() -> list[Result]:
    return [Result.model_validate_json(ln) for ln in QUICK_RUN.read_text().splitlines() if ln.strip()]


def rows_of(text: str, title: str) -> list[str]:
    """The lines of the table under `title` up to the next line that starts no row (a title, "left out", Notes)."""
    lines = text.splitlines()
    start = lines.index(title) + 1
    end = start + 2
    while end < len(lines) and (lines[end].startswith(" ") or lines[end][:1].isalnum()) \
            and not lines[end].startswith(("Network baseline", "rados bench", "left out", "Notes", "Warnings")):
        end += 1
    return lines[start:end]


def test_baseline_tables_at_80_columns_drop_whole_columns_and_never_split_a_cell():
    out = render(quick_results(), width=80, terminal=True)
    for title in ("Disk baseline (fio, direct I/O)", "Network baseline (iperf3; Gbit = 10^9 bits)"):
        header, rule, *rows = rows_of(out, title)
        assert all(len(ln) <= 80 for ln in [header, rule, *rows]), title
        assert header.startswith("pattern ") and header.split()[-1] == "status" or "status" not in header, header
        # every line under the rule is a row of its own: none continues a cell of the row above
        assert rows and all(not ln.startswith(" ") for ln in rows), rows[:3]
    assert "left out to fit 80 columns" in out


def test_the_rados_table_at_80_columns_keeps_the_bottleneck_even_with_long_reasons():
    results = [r for r in quick_results() if r.test.kind == "rados_bench"]
    for r in results:
        r.analysis.bottleneck = "latency (16 ops in flight)"
    out = render(results, width=80, terminal=True)
    header = rows_of(out, "rados bench")[0]
    assert "bottleneck" in header and "MiB/s" in header, header


def test_a_figure_has_one_unit_family_in_the_per_test_line_and_the_table():
    from cephbench.report.format import result_figures
    out = render(quick_results())
    tables = out[:out.index("\nNotes")]        # the notes below are the fixture run's own stored text
    assert "MB/s" not in tables.replace("MiB/s", "")
    dd = next(r for r in quick_results() if r.test.id.endswith("disk-dd"))
    line_figure = result_figures(dd).split()[0]                  # "303.0" of "303.0 MiB/s, 2 IOPS"
    assert line_figure in rows_of(out, "Disk baseline (fio, direct I/O)")[2].split()


def test_fewer_than_ten_operations_a_second_keep_their_decimals():
    assert iops(0.75) == "0.75" and iops(4.7) == "4.7" and iops(82.05) == "82" and iops(None) == "-"
    m = rados("ceph16.2.15_write_4M.txt", "write")
    assert m.ops_per_s == pytest.approx(m.ops_total / m.duration_s)     # rados bench prints int(IOPS): 0 at 3 MiB/s


def test_validate_shows_sizes_with_units_and_says_why_dd_runs(tmp_path: Path):
    suite = tmp_path / "s.yaml"
    suite.write_text("name: t\nbaseline:\n  disks: {paths: [/tmp], patterns: [read-4MiB]}\nworkloads:\n"
                     "  - {type: fio_rbd, image_size: 256MiB, rw: randread, duration: 2s}\n")
    res = cephbench("validate", suite)
    assert res.returncode == 0, res.stderr
    assert "image_size=256MiB" in res.stdout and "268435456" not in res.stdout
    dd = next(ln for ln in res.stdout.splitlines() if "disk-dd" in ln)
    assert "not listed" in dd and "writes the file" in dd, dd
