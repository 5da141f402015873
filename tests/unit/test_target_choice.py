"""Which cluster `cephbench run` benchmarks: never a toy lab when this host's ceph talks to a real cluster, and one
line when two flags or variables name different targets (issue 18, point 1)."""

from pathlib import Path

import pytest

from cephbench.suite.config import parse_suite
from cephbench.core.errors import UserError
from cephbench.run.launch import RunRequest, choose_target

SUITE = parse_suite({"name": "t", "workloads": [{"type": "osd_bench"}]}, "suite.yaml")


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("CEPH_CONF", raising=False)
    monkeypatch.delenv("CEPH_KEYRING", raising=False)


def test_nothing_given_and_a_system_conf_refuses_with_both_choices(no_env, tmp_path):
    system = tmp_path / "ceph.conf"
    system.write_text("[global]\nmon host = 10.0.0.1\n")
    with pytest.raises(UserError) as e:
        choose_target(SUITE, RunRequest(), system_conf=system)
    line = e.value.one_line()
    assert f"use -c {system} for that cluster, or --lab for the local lab" in line and "--conf" in line


def test_a_conf_flag_wins_over_the_system_conf(no_env, tmp_path):
    system, mine = tmp_path / "ceph.conf", tmp_path / "other.conf"
    system.write_text("")
    mine.write_text("")
    target, lab = choose_target(SUITE, RunRequest(conf=mine), system_conf=system)
    assert target.conf == mine.absolute() and lab is None and not target.is_lab


@pytest.mark.parametrize("request_kw, env, fragments", [
    ({"lab": True, "conf": Path("/x/ceph.conf")}, None, ["--lab and --conf /x/ceph.conf"]),
    ({"lab_dir": Path("/tmp/l")}, "/y/ceph.conf", ["--lab-dir /tmp/l and CEPH_CONF=/y/ceph.conf", "unset CEPH_CONF"]),
    ({"lab": True}, "/y/ceph.conf", ["--lab and CEPH_CONF=/y/ceph.conf"]),
])
def test_lab_and_a_conf_together_name_both(monkeypatch, no_env, request_kw, env, fragments):
    if env:
        monkeypatch.setenv("CEPH_CONF", env)
    with pytest.raises(UserError) as e:
        choose_target(SUITE, RunRequest(**request_kw), system_conf=Path("/nonexistent"))
    for f in fragments:
        assert f in e.value.one_line()


def test_the_suites_target_and_lab_conflict(no_env):
    suite = parse_suite({"name": "t", "target": {"conf": "/z/ceph.conf"}, "workloads": [{"type": "osd_bench"}]},
                        "suite.yaml")
    with pytest.raises(UserError) as e:
        choose_target(suite, RunRequest(lab=True), system_conf=Path("/nonexistent"))
    assert "the suite's target.conf /z/ceph.conf" in e.value.one_line()


def test_a_resumed_run_goes_on_against_the_cluster_it_recorded(no_env, tmp_path):
    system = tmp_path / "ceph.conf"
    system.write_text("")
    recorded = {"conf": str(tmp_path / "c.conf"), "keyring": str(tmp_path / "k"), "id": "bench"}
    target, _ = choose_target(SUITE, RunRequest(), recorded=recorded, system_conf=system)
    assert (target.conf, target.keyring, target.id) == (tmp_path / "c.conf", tmp_path / "k", "bench")


def test_conflicting_flags_at_the_command_line_are_one_line(no_env, tmp_path):
    from clirun import cephbench
    suite = tmp_path / "s.yaml"
    suite.write_text("name: t\nworkloads: [{type: osd_bench}]\n")
    res = cephbench("run", str(suite), "--lab", "-c", str(tmp_path / "c.conf"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "--lab and --conf" in res.stderr and "Traceback" not in res.stderr


def test_the_labs_own_conf_and_its_directory_are_one_target(monkeypatch, no_env, tmp_path):
    monkeypatch.setenv("CEPH_CONF", str(tmp_path / "lab" / "ceph.conf"))
    with pytest.raises(UserError) as e:      # no lab runs there: --dry-run starts none (no conflict is reported)
        choose_target(SUITE, RunRequest(lab_dir=tmp_path / "lab", dry_run=True), system_conf=Path("/nonexistent"))
    assert "no lab running in" in e.value.one_line()
