"""README's sample is what cephbench prints (issue 36 item 9): it showed an `IOPS` column and `ok *` that the output
no longer had, "the write runs 5x the seq" (6x in the suite) and "validate estimated 2m09s" (it printed 4m23s).
The sample is now the output of a real run of suites/quick.yaml (tests/fixtures/report/ceph16.2.15_quick_search_onehost,
Ceph 16.2.15 on the one-host lab), and this test holds every line of it to what `cephbench show` prints of that run
today: a table's title, header, rule and rows exactly, a long line up to its " ..." (an elided line is "..."),
in the output's order; and what the prose says of the suite, the run and `validate` to them."""

from __future__ import annotations

import json
import re

import yaml

from clirun import cephbench
from conftest import FIXTURES, REPO
from runfactory import copy_fixture_run

RUN = "ceph16.2.15_quick_search_onehost"


def sample() -> list[str]:
    text = (REPO / "README.md").read_text()
    marker = text.index(f"tests/fixtures/report/{RUN}")
    block = text[marker:].split("```\n", 2)[1]
    return block.splitlines()


def test_the_readme_sample_is_what_show_prints_of_the_real_run(tmp_path):
    run = copy_fixture_run(str(FIXTURES / "report" / RUN), tmp_path / "run")
    res = cephbench("show", run)                   # a pipe: every column, natural width, as `run` prints it
    assert res.returncode == 0, res.stderr
    real = [ln.rstrip() for ln in res.stdout.splitlines()]
    at = 0
    checked = 0
    for line in sample():
        if line.strip() == "...":
            continue
        if line.startswith(("report: ", "results: ")):   # `run`'s last lines: where it wrote, no figures
            assert re.match(r"^(report|results): cephbench-runs/<UTC timestamp>-quick", line), line
            continue
        if line.endswith(" ..."):
            found = next((i for i in range(at, len(real)) if real[i].startswith(line[:-4])), None)
        else:
            found = next((i for i in range(at, len(real)) if real[i] == line.rstrip()), None)
        assert found is not None, f"README line not in the output (after line {at}): {line!r}"
        at = found + 1
        checked += 1
    assert checked >= 20
    headers = [ln for ln in sample() if ln.startswith("test ")]
    assert any("objects/s" in h for h in headers) and any(" req/s " in h for h in headers)
    assert not any(ln.rstrip().endswith(" *") for ln in sample())


def test_the_readme_prose_quotes_the_suite_and_validate():
    readme = (REPO / "README.md").read_text()
    suite = yaml.safe_load((REPO / "suites" / "quick.yaml").read_text())
    durations = [w["duration"] for w in suite["workloads"] if isinstance(w.get("duration"), dict)
                 and {"write", "seq"} <= set(w["duration"])]
    ratio = {int(float(d["write"].rstrip("s")) / float(d["seq"].rstrip("s"))) for d in durations}
    assert len(ratio) == 1
    assert f"the write runs {ratio.pop()}× as long as the seq" in readme
    took = re.search(r"the run shown below, on the one-host lab of a shared, noisy VM, took (\d+) s", readme)
    meta = json.loads((FIXTURES / "report" / f"{RUN}.run.json").read_text())
    assert took and int(took.group(1)) == round(meta["finished_unix"] - meta["started_unix"])
    assert "`cephbench validate suites/quick.yaml` prints the estimate `run` prints on the one-host lab" in readme
    res = cephbench("validate", REPO / "suites" / "quick.yaml")
    # the estimate and its range (a search may stop early), which the README quotes
    est = re.search(r"estimated duration about (\S+) \(at least (\S+), (\S+) if every search runs to its max\) "
                    r"with every OSD on this machine \(the one-host lab\), about (\S+) \(.*\) with 3 OSD "
                    r"hosts over ssh", res.stdout)
    assert est, res.stdout[-400:]
    assert f"(now about {est[1]}: at least {est[2]}, {est[3]} if every search runs to its max) and on 3 OSD " \
        f"hosts over ssh (about {est[4]})" in " ".join(readme.split()), est.groups()
