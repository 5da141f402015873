"""The bad-input trial (issue 34 item 9), repeated with inputs made up here: suite values of every type of field,
whole documents no suite is, and every flag and argument of every command. Each is refused in one line starting
"cephbench: ", with exit 2, fast, and never a traceback; nothing is left where it was given.

The flag cases are made from the commands themselves (cli/common.py COMMANDS, each command's click parameters): a
command or flag added later is tried too.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import click
import pytest

from clirun import cephbench

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "suites" / "quick.yaml"
SECONDS = 5.0           # in this process, its imports done (below): a bad input is refused before any work


@pytest.fixture(scope="module", autouse=True)
def _imported():
    """Each command's modules imported before any case is timed: the bound is for the refusal, not the imports
    of a shared machine's first call."""
    for words, _ in _commands():
        cephbench(*words, "--help")
    cephbench("validate", QUICK)
    cephbench("run", QUICK, "--conf", "/nonexistent/ceph.conf")


def refused(res, *fragments: str, took: float | None = None) -> None:
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2, (res.returncode, res.stdout[-300:], res.stderr[-600:])
    assert len(lines) == 1 and lines[0].startswith("cephbench: "), res.stderr[-600:]
    assert "Traceback" not in res.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    if took is not None:
        assert took < SECONDS, f"took {took:.1f} s"


def timed(*args, env=None):
    t0 = time.monotonic()
    res = cephbench(*args, env=env)
    return res, time.monotonic() - t0


# ---- suite values ------------------------------------------------------------------------------------------------

HUGE = "9" * 400
COMMON = [".nan", ".inf", "-.inf", "1.0e999", "-1.0e999", HUGE, "-" + HUGE, "18446744073709551616", "''", "' '",
          "'\u202e'", "'🙂'", '"\\0"', "{}", "{a: 1}", "true", "null", "'x' ", "'nan'", "'inf'", "'1e999'"]
COUNTS = COMMON + ["0", "-1", "1.5", "'four'", "'4,16'", "[0]", "[-1]", "[.nan]", "[[1]]", "'-0'"]
SIZES = COMMON + ["0", "-1", "1.5", "'4 MB'", "'-4KiB'", "'99999999999999999999999999999TiB'", "'8EiB'",
                  "'1.1KiB'", "'4KiB4'", "'０KiB'", "'4KiBs'", "[0]", "'" + HUGE + "TiB'", "'0.5B'"]
DURATIONS = COMMON + ["0", "-1", "'0s'", "'-5s'", "'1000000h'", "'" + HUGE + "s'", "'30 sec'", "'1e999s'",
                      "'½s'", "'30s30'", "[0]"]
FRACTIONS = COMMON + ["-1", "2", "'half'", "[0.5]"]
TEXTS = ["''", "' '", "[]", "{}", "5", "true", '"\\0x"', "'a b'", "'" + "x" * 5000 + "'"]

# where each type is written in a suite (a YAML path and the suite around it: {} is the value)
FIELDS: dict[str, tuple[str, list[str]]] = {
    "concurrency": ("workloads:\n  - {{type: rados_bench, concurrency: {}}}\n", COUNTS),
    "repeat": ("workloads:\n  - {{type: osd_bench, repeat: {}}}\n", COUNTS),
    "iodepth": ("workloads:\n  - {{type: fio_rados, iodepth: {}}}\n", COUNTS),
    "images": ("workloads:\n  - {{type: fio_rbd, images: {}}}\n", COUNTS),
    "pg_num": ("pools: {{p: {{type: replicated, pg_num: {}}}}}\nworkloads:\n  - {{type: rados_bench, pool: p}}\n",
               COUNTS),
    "max_in_flight": ("settings: {{max_in_flight: {}}}\nworkloads:\n  - {{type: osd_bench}}\n", COUNTS),
    "streams": ("baseline: {{network: {{streams: {}}}}}\nworkloads:\n  - {{type: osd_bench}}\n", COUNTS),
    "window": ("workloads:\n  - {{type: rados_bench, modes: [write], duration: 10s, steady_state: {{max: 600s, "
               "window: {}}}}}\n", COUNTS),
    "object_size": ("workloads:\n  - {{type: rados_bench, object_size: {}}}\n", SIZES),
    "block_size": ("workloads:\n  - {{type: fio_rados, block_size: {}}}\n", SIZES),
    "image_size": ("workloads:\n  - {{type: fio_rbd, image_size: {}}}\n", SIZES),
    "size": ("baseline: {{disks: {{paths: [/tmp], size: {}}}}}\nworkloads:\n  - {{type: osd_bench}}\n", SIZES),
    "duration": ("workloads:\n  - {{type: rados_bench, duration: {}}}\n", DURATIONS),
    "runtime": ("baseline: {{disks: {{paths: [/tmp], runtime: {}}}}}\nworkloads:\n  - {{type: osd_bench}}\n",
                DURATIONS),
    "ramp": ("workloads:\n  - {{type: fio_rbd, ramp: {}}}\n", [v for v in DURATIONS if v not in ("0", "'0s'")]),
    "latency_max": ("workloads:\n  - {{type: rados_bench, concurrency: {{auto: {{latency_max: {}}}}}}}\n",
                    [v for v in DURATIONS if v != "null"]),
    "max_raw_used": ("settings: {{max_raw_used: {}}}\nworkloads:\n  - {{type: osd_bench}}\n", FRACTIONS),
    "max_range": ("workloads:\n  - {{type: rados_bench, modes: [write], duration: 10s, steady_state: {{max: 600s, "
                  "max_range: {}}}}}\n", FRACTIONS),
    "name": ("workloads:\n  - {{type: osd_bench}}\nname: {}\n", TEXTS),
    "prometheus": ("settings: {{prometheus: {}}}\nworkloads:\n  - {{type: osd_bench}}\n",
                   TEXTS + ["'http://u:pa/ss@h'", "'ftp://h'", "'http://h:99999'", "'http://'"]),
    "release": ("variants:\n  - {{name: a, lab: {{hosts: 3, release: {}}}}}\nworkloads:\n  - {{type: osd_bench}}\n",
                TEXTS + ["'octopus'", "'../../etc'"]),
    "public_net": ("variants:\n  - {{name: a, lab: {{hosts: 3, public_net: {}}}}}\nworkloads:\n"
                   "  - {{type: osd_bench}}\n", TEXTS + ["'1gbps'", "'nan'", "'1e999gbit'", "'-1gbit'"]),
    "osd_size": ("variants:\n  - {{name: a, lab: {{osd_size: {}}}}}\nworkloads:\n  - {{type: osd_bench}}\n",
                 [v for v in SIZES if v not in ("{}", "{a: 1}", "null")]),
}
SUITE_CASES = [(key, value) for key, (_, values) in FIELDS.items() for value in values]


@pytest.mark.parametrize("key, value", SUITE_CASES, ids=[f"{k}={v[:20]}" for k, v in SUITE_CASES])
def test_a_bad_suite_value_is_one_line_at_its_key(tmp_path, key, value):
    text = "name: t\n" * (key != "name") + FIELDS[key][0].format(value)
    suite = tmp_path / "s.yaml"
    suite.write_text(text)
    res, took = timed("validate", suite)
    refused(res, key, took=took)
    assert "pa/ss" not in res.stderr


def _laughs(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nname: t\nworkloads:\n  - {{type: osd_bench, name: t, variants: *a{levels - 1}}}\n"


DOCUMENTS: dict[str, bytes] = {
    "empty": b"", "null": b"null\n", "a number": b"42\n", "a list": b"[]\n", "text": b"hello\n",
    "a comment alone": b"# nothing\n", "no workloads": b"name: t\n", "workloads empty": b"name: t\nworkloads: []\n",
    "workloads a mapping": b"name: t\nworkloads: {type: osd_bench}\n",
    "workloads text": b"name: t\nworkloads: osd_bench\n",
    "unknown type": b"name: t\nworkloads: [{type: dd}]\n", "no type": b"name: t\nworkloads: [{repeat: 1}]\n",
    "type a list": b"name: t\nworkloads: [{type: [osd_bench]}]\n",
    "unknown key": b"name: t\nworkloads: [{type: osd_bench}]\nworkload: []\n",
    "key given twice": b"name: t\nname: u\nworkloads: [{type: osd_bench}]\n",
    "a list as a key": b"name: t\n? [a, b]\n: 1\nworkloads: [{type: osd_bench}]\n",
    "billion laughs, 9 levels": _laughs(9).encode(), "billion laughs, 6 levels": _laughs(6).encode(),
    "laughs in a key": b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       b"e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nname: t\nworkloads: [{type: osd_bench}]\n",
    "an alias of itself": b"a: &a [*a]\nname: t\nworkloads: [{type: osd_bench}]\n",
    "an undefined alias": b"name: t\nworkloads: *nothing\n",
    "lists 10,000 deep": b"name: t\nworkloads: " + b"[" * 10_000 + b"]" * 10_000 + b"\n",
    "mappings 60 deep": b"name: t\nworkloads: [{type: osd_bench}]\nsettings: " + b"{a: " * 60 + b"1" + b"}" * 60,
    "a python tag": b"name: !!python/object/apply:os.system [echo]\nworkloads: [{type: osd_bench}]\n",
    "a YAML directive of another version": b"%YAML 9.9\n---\nname: t\nworkloads: [{type: osd_bench}]\n",
    "tabs": b"name: t\nworkloads:\n\t- {type: osd_bench}\n",
    "unclosed": b"name: t\nworkloads: [{type: osd_bench}\n",
    "binary": bytes(range(256)), "a NUL": b"name: t\x00\nworkloads: [{type: osd_bench}]\n",
    "latin-1": "name: tée\n".encode("latin-1"), "UTF-16": "name: t\n".encode("utf-16"),
    "5 MiB": b"name: t\ndescription: " + b"x" * (5 * 1024**2) + b"\nworkloads: [{type: osd_bench}]\n",
    "100,000 values": b"name: t\nworkloads: [{type: rados_bench, concurrency: [" + b", ".join(
        str(i).encode() for i in range(1, 100_002)) + b"]}]\n",
    "a sweep of 20,000": b"name: t\nworkloads: [{type: rados_bench, object_size: [" + b", ".join(
        str(i).encode() for i in range(1, 20_001)) + b"]}]\n",
    "2^70 in a list": b"name: t\nworkloads: [{type: rados_bench, concurrency: [1, 1180591620717411303424]}]\n",
    "merge of a list": b"a: &a [1]\nname: t\nworkloads: [{<<: *a, type: osd_bench}]\n",
    "variants empty": b"name: t\nvariants: []\nworkloads: [{type: osd_bench}]\n",
    "sweep without values": b"name: t\nvariants: {sweep: {who: osd, name: x, values: []}}\n"
                            b"workloads: [{type: osd_bench}]\n",
    "a variant nobody has": b"name: t\nworkloads: [{type: osd_bench, variants: [nope]}]\n",
    "pool nobody defined": b"name: t\nworkloads: [{type: rados_bench, pool: nope}]\n",
}


@pytest.mark.parametrize("what", DOCUMENTS)
def test_a_document_that_is_no_suite_is_one_line(tmp_path, what):
    suite = tmp_path / "s.yaml"
    suite.write_bytes(DOCUMENTS[what])
    res, took = timed("validate", suite)
    refused(res, took=took)
    # run refuses it as validate does, before any cluster or run directory
    res, took = timed("run", suite, "--conf", tmp_path / "no.conf", "--out", tmp_path / "run")
    refused(res, took=took)
    assert not (tmp_path / "run").exists()


# ---- flags and arguments of every command ------------------------------------------------------------------------

def _commands() -> list[tuple[list[str], click.Command]]:
    from cephbench.cli import main
    ctx = click.Context(main)
    out: list[tuple[list[str], click.Command]] = []

    def walk(cmd: click.Command, words: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), [*words, name])
        else:
            out.append((words, cmd))
    walk(main, [])
    return out


def _bad_values(param: click.Parameter) -> list[str]:
    t = param.type
    if isinstance(t, click.Choice):
        return ["", "bogus", "CSV "]
    if isinstance(t, click.types.IntParamType):
        return ["", " ", "x", "nan", "1.5", "0x10", "99999999999999999999999", "-99999999999999999999999", "1e3"]
    if isinstance(t, click.types.FloatParamType):
        return ["", "x", "nan", "-nan", "inf", "-inf", "1e999", "NaN"]
    if isinstance(t, (click.types.StringParamType, click.Path)):
        return ["", " ", "\t"]
    return []


FLAG_CASES = [(words, opt, value) for words, cmd in _commands() for p in cmd.params
              if isinstance(p, click.Option) and not p.is_flag and p.name != "help"
              for opt in p.opts[:1] for value in _bad_values(p)]
ARG_CASES = [(words, p.human_readable_name, value) for words, cmd in _commands() for p in cmd.params
             if isinstance(p, click.Argument) for value in ("", " ")]
GROUP_FLAG_CASES = [(["history"], "--db", v) for v in ("", " ")]


@pytest.mark.parametrize("words, opt, value", FLAG_CASES + GROUP_FLAG_CASES,
                         ids=[f"{' '.join(w)} {o}={v!r}" for w, o, v in FLAG_CASES + GROUP_FLAG_CASES])
def test_a_bad_flag_value_is_one_line(tmp_path, words, opt, value):
    if words == ["history"]:
        res, took = timed("history", opt, value, "list")
    else:
        res, took = timed(*words, opt, value)
    refused(res, opt, took=took)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("words, name, value", ARG_CASES, ids=[f"{' '.join(w)} {n}={v!r}" for w, n, v in ARG_CASES])
def test_an_empty_argument_is_one_line(words, name, value):
    res, took = timed(*words, value)
    refused(res, name, took=took)


COMMAND_WORDS = [words for words, _ in _commands()]


@pytest.mark.parametrize("words", COMMAND_WORDS, ids=[" ".join(w) for w in COMMAND_WORDS])
def test_an_unknown_flag_of_every_command_is_one_line(words):
    for extra in (["--nope"], ["--nope=1"], ["-Z"]):
        res, took = timed(*words, *extra)
        refused(res, "cephbench " + " ".join(words) + " --help", took=took)
    res, took = timed(*words, "--help=x")
    refused(res, "--help", took=took)


@pytest.mark.parametrize("args", [[], ["nope"], ["lab"], ["lab", "nope"], ["suite"], ["suite", "nope"], ["baseline"],
                                  ["history", "nope"], ["--verbose=3"], ["-vx"], ["VALIDATE"], ["validate", "a", "b"],
                                  ["show"], ["report"], ["export", "x"], ["cleanup"], ["history", "add"],
                                  ["suite", "from-cbt"], ["validate"], ["baseline", "disk"]],
                         ids=lambda a: " ".join(a) or "(nothing)")
def test_a_command_line_click_refuses_is_one_line(args):
    res, took = timed(*args)
    refused(res, took=took)


@pytest.fixture
def places(tmp_path):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    (tmp_path / "empty.json").write_text("")
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text("[" * 100_000 + "]" * 100_000)       # nested 100k deep
    (run / "results.jsonl").write_text("")
    notrun = tmp_path / "notrun"
    notrun.mkdir()
    (notrun / "run.json").write_text(json.dumps({"run_ids": 5, "suite": [], "started_unix": "soon"}))
    (notrun / "results.jsonl").write_text('{"bytes_per_s": 1e999}\n' * 3)
    foreign = tmp_path / "other.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE runs (x)")     # another program's, with a table of cephbench's name
    return tmp_path


NOWHERE = "/nonexistent/cephbench-trial"
# What each command is given where a file, a run directory or a catalog should be: {t} is the test's directory
PATH_CASES = [
    ["validate", NOWHERE], ["validate", "{t}/adir"], ["validate", "{t}/empty.json"], ["validate", "/dev/null"],
    ["run", NOWHERE, "--conf", "{t}/no.conf"], ["run", "{t}/adir", "--conf", "{t}/no.conf"],
    ["run", str(QUICK), "--conf", "{t}/adir", "--out", "{t}/out"], ["run", str(QUICK), "--conf", NOWHERE],
    ["run", str(QUICK), "--conf", "{t}/afile", "--out", "{t}/out"],
    ["run", str(QUICK), "--out", "{t}/afile", "--conf", "{t}/no.conf"], ["run", "--resume", NOWHERE],
    ["run", "--resume", "{t}/afile"], ["run", "--resume", "{t}/adir"], ["run", "--resume", "{t}/run"],
    ["run", "--resume", "{t}/notrun"], ["run", str(QUICK), "--lab-dir", "{t}/afile", "--out", "{t}/out"],
    ["show", NOWHERE], ["show", "{t}/afile"], ["show", "{t}/adir"], ["show", "{t}/run"], ["show", "{t}/notrun"],
    ["report", NOWHERE], ["report", "{t}/adir"], ["report", "{t}/run"],
    ["export", NOWHERE, "--format", "csv"], ["export", "{t}/run", "--format", "csv"],
    ["export", "{t}/adir", "--format", "json"],
    ["compare", NOWHERE, NOWHERE], ["compare", "{t}/run", "{t}/run"], ["compare", "{t}/adir", "{t}/adir"],
    ["compare", "{t}/afile"],
    ["cleanup", NOWHERE], ["cleanup", "{t}/adir"], ["cleanup", "{t}/afile"], ["cleanup", "{t}/run"],
    ["import", NOWHERE, "--out", "{t}/out"], ["import", "{t}/adir", "--out", "{t}/out"],
    ["import", "{t}/empty.json", "--out", "{t}/out"], ["import", "{t}/afile", "--out", "{t}/out"],
    ["suite", "from-cbt", NOWHERE], ["suite", "from-cbt", "{t}/adir"], ["suite", "from-cbt", "{t}/empty.json"],
    ["history", "--db", "{t}/adir", "list"], ["history", "--db", "{t}/afile", "list"],
    ["history", "--db", "{t}/other.sqlite", "list"], ["history", "--db", "{t}/other.sqlite", "add", "{t}/run"],
    ["history", "--db", "{t}/h.db", "add", NOWHERE], ["history", "--db", "{t}/h.db", "add", "{t}/adir"],
    ["history", "--db", "{t}/h.db", "list", "--since", "yesterday"],
    ["history", "--db", "{t}/h.db", "list", "--until", "99999-01-01"],
    ["history", "--db", "{t}/afile", "add", "{t}/run"],
    ["lab", "status", "--dir", "{t}/afile"], ["lab", "env", "--dir", "{t}/adir"],
    ["lab", "throttle", "--dir", "{t}/adir", "osd.1=5MiB/s"], ["lab", "up", "--dir", "{t}/afile"],
    ["lab", "up", "--dir", "{t}/lab", "--osds", "-3"], ["lab", "up", "--dir", "{t}/lab", "--osd-size", "nan"],
    ["lab", "up", "--dir", "{t}/lab", "--osd-size", "99999999999999999999999999999TiB"],
    ["lab", "up", "--dir", "{t}/lab", "--hosts", "3", "--public-net", "1e999gbit"],
    ["lab", "up", "--dir", "{t}/lab", "--hosts", "3", "--public-net", "nan"],
    ["lab", "up", "--dir", "{t}/lab", "--hosts", "99999999999"], ["lab", "up", "--dir", "{t}/lab", "--release", "x"],
    ["lab", "up", "--dir", "{t}/lab", "--release", "../../etc"],
]


@pytest.mark.parametrize("args", PATH_CASES, ids=lambda a: " ".join(a).replace(NOWHERE, "NOWHERE"))
def test_a_path_that_is_not_what_the_command_takes_is_one_line(places, args):
    before = sorted(p.name for p in places.rglob("*"))
    res, took = timed(*(a.format(t=places) for a in args), env={"CEPHBENCH_HISTORY": str(places / "h.db")})
    refused(res, took=took)
    assert sorted(p.name for p in places.rglob("*")) == before
    with sqlite3.connect(places / "other.sqlite") as conn:      # another program's database is not written
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["runs"]


@pytest.fixture
def read_only(tmp_path):
    """A run directory on a file system mounted read-only (root writes past a mode's bits): an imported run."""
    import subprocess
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("no tmpfs mount here")
    try:
        src = REPO / "tests" / "fixtures" / "fio" / "fio3.33_libaio_write_4M_qd1.json"
        assert cephbench("import", src, "--out", mnt / "run", "--db", tmp_path / "h.db").returncode == 0
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        yield mnt / "run"
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.parametrize("args", [["cleanup"], ["run", "--resume"], ["report"]])
def test_a_read_only_run_directory_is_one_line(read_only, args):
    res, took = timed(*args, read_only)
    refused(res, str(read_only), took=took)


def test_the_trial_is_as_large_as_reported():
    # the count said in the closing note; the suite values alone are more than the first trial's 602
    n = (len(SUITE_CASES) + 2 * len(DOCUMENTS) + len(FLAG_CASES) + len(GROUP_FLAG_CASES) + len(ARG_CASES)
         + 4 * len(COMMAND_WORDS) + 20 + len(PATH_CASES) + 3)
    assert n >= 1000, n
