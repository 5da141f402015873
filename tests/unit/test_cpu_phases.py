"""scripts/cpu_phases.py on the sampler's logs of a real fresh-clone `make test-lab` (tests/fixtures/ci)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "ci"


@pytest.fixture(scope="module")
def cpu_phases():
    spec = importlib.util.spec_from_file_location("cpu_phases", ROOT / "scripts" / "cpu_phases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _printed(cpu_phases, capsys) -> list[str]:
    cpu_phases.main(str(FIX / "make-test-lab_3f1b410_cpu.log"), str(FIX / "make-test-lab_3f1b410_phases.log"))
    return capsys.readouterr().out.splitlines()


def test_each_phase_gives_its_busy_share_and_cpu_seconds(cpu_phases, capsys):
    lines = _printed(cpu_phases, capsys)
    phases = [re.fullmatch(r"phase (.+): (\d+) s, CPUs (\d+)% busy \((\d+) CPU-s\)", ln) for ln in lines[:-1]]
    assert all(phases) and len(phases) == 4
    assert phases[0].group(1) == "one-host shares and multi-host (and BESIDE)"
    for m in phases:
        wall, share, cpu_s = int(m.group(2)), int(m.group(3)) / 100, int(m.group(4))
        # the share of the CPUs' time is the busy CPU-seconds over the phase's wall time on both of the VM's CPUs
        assert cpu_s == pytest.approx(share * wall * 2, rel=0.05, abs=3)


def test_the_whole_suite_gives_the_least_time_its_work_takes(cpu_phases, capsys):
    lines = _printed(cpu_phases, capsys)
    phase_cpu = sum(int(re.search(r"\((\d+) CPU-s\)", ln).group(1)) for ln in lines[:-1])
    m = re.fullmatch(r"all phases: (\d+) s, (\d+) CPU-s busy on (\d+) CPUs: this work takes at least (\d+) s on "
                     r"them, however it is packed", lines[-1])
    assert m, lines[-1]
    wall, cpu_s, cpus, least = (int(g) for g in m.groups())
    assert wall == 1796683789 - 1796682626          # the first mark to the end mark
    assert cpu_s == pytest.approx(phase_cpu, abs=len(lines))       # the phases' own, bar the samples between them
    assert cpus == 2                                # the VM's, from the ticks its cpu line counted
    assert least == pytest.approx(cpu_s / cpus, abs=1)


def test_a_phase_without_two_samples_says_so(cpu_phases, tmp_path, capsys):
    (tmp_path / "cpu.log").write_text("100 cpu  1 2 3 4 5 6 7 8 0 0\n")
    (tmp_path / "phases.log").write_text("100 only\n110 end\n")
    cpu_phases.main(str(tmp_path / "cpu.log"), str(tmp_path / "phases.log"))
    assert capsys.readouterr().out.splitlines() == ["phase only: 10 s, CPUs not sampled"]
