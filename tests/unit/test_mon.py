"""`ceph` argv -> mon command JSON, checked against Ceph's own parser and the mon's own signatures.

Fixtures (tests/fixtures/mon/, Ceph 16.2.15): `_signatures.json` is what the lab's monitor answers to
`get_command_descriptions` for the commands cephbench sends; `_argv_to_mon_command.json` is what
ceph_argparse.validate_command (the parser of the `ceph` CLI) makes of each argv against those signatures.
"""

import errno
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from cephbench.hosts.mon import SIGNATURES, MonReply, _in_thread, _InFlight, mon_command_for
from cephbench.core.errors import OperationFailed
from cephbench.core.interrupts import held

FIXTURES = Path(__file__).parent.parent / "fixtures" / "mon"
CEPH_TYPES = {"CephString": "str", "CephPoolname": "str", "CephInt": "int", "CephFloat": "float",
              "CephBool": "bool", "CephOsdName": "osd"}


def _load(name: str) -> dict:
    return json.loads((FIXTURES / f"ceph16.2.15_{name}.json").read_text())


@pytest.mark.parametrize("case", _load("argv_to_mon_command")["cases"], ids=lambda c: " ".join(c["argv"]))
def test_argv_maps_as_the_ceph_cli_maps_it(case):
    # `target` is the CLI's routing of a mgr command (`pg ls-by-pool`) to the mgr; cephbench sends every command
    # to the mon, which forwards a mgr command (the lab answered `pg ls-by-pool` so, Ceph 16.2.15)
    expected = {k: v for k, v in case["mon_command"].items() if k != "target"}
    assert mon_command_for(case["argv"]) == expected


def test_every_signature_matches_the_monitors_own():
    mon = _load("signatures")["signatures"]
    assert {" ".join(p) for p in SIGNATURES} == set(mon)
    for prefix, args in SIGNATURES.items():
        theirs = mon[" ".join(prefix)]
        assert [a.name for a in args] == [t["name"] for t in theirs], prefix
        for ours, t in zip(args, theirs):
            assert ours.required == (t.get("req", "true") == "true"), (prefix, ours.name)
            assert ours.rest == (t.get("n") == "N"), (prefix, ours.name)
            if t["type"] == "CephChoices":
                # a choice we check ourselves has the mon's words exactly; the others the mon checks
                assert ours.kind == "str" or ours.choices == tuple(t["strings"].split("|")), (prefix, ours.name)
            else:
                assert ours.kind == CEPH_TYPES[t["type"]], (prefix, ours.name)


def test_format_is_the_clis_own_flag():
    assert mon_command_for(["osd", "dump", "-f", "json"]) == {"prefix": "osd dump", "format": "json"}
    assert mon_command_for(["df", "detail", "--format=json-pretty"]) == {"prefix": "df", "detail": "detail",
                                                                        "format": "json-pretty"}


@pytest.mark.parametrize("argv, why", [
    (["osd", "pool", "frobnicate", "x"], "no mon command"),
    (["osd", "pool", "create"], "lacks pool"),
    (["osd", "pool", "create", "p", "--sise=3"], "no option --sise"),
    (["osd", "pool", "create", "p", "--size=three"], "size"),
    (["osd", "set-full-ratio", "high"], "not a valid ratio"),
    (["osd", "set", "noscrub", "extra"], "unused words"),
    (["osd", "pool", "delete", "p", "p", "--yes-i-really-really-mean-it=maybe"], "true or false"),
])
def test_a_wrong_argv_is_refused_with_what_is_wrong(argv, why):
    with pytest.raises(ValueError, match=why):
        mon_command_for(argv)


def test_reply_names_the_errno_and_tells_a_refusal():
    denied = MonReply(-errno.EACCES, b"", "access denied")
    assert denied.denied and not denied.ok and denied.error_text() == "access denied (EACCES)"
    assert MonReply(-errno.ENOENT, b"", "").error_text() == "ENOENT"
    assert MonReply(0, b"{}", "").ok and not MonReply(-errno.EINVAL, b"", "x").denied


def test_a_call_that_does_not_answer_in_time_is_abandoned_and_counted_until_it_ends():
    busy = _InFlight()
    release = threading.Event()
    with pytest.raises(OperationFailed, match="no answer from the monitors in 0 s"):
        _in_thread(lambda: release.wait(10), 0.05, "ceph status", busy)
    assert busy.count == 1          # still running: the connection must not be shut down under it
    release.set()
    for _ in range(100):
        if busy.count == 0:
            break
        threading.Event().wait(0.01)
    assert busy.count == 0
    assert _in_thread(lambda: 42, 1, "x", busy) == 42
    with pytest.raises(ZeroDivisionError):
        _in_thread(lambda: 1 / 0, 1, "x", busy)


def _sigint_after(delay_s: float) -> None:
    threading.Timer(delay_s, lambda: os.kill(os.getpid(), signal.SIGINT)).start()


def test_ctrl_c_acts_at_once_while_a_librados_call_blocks():
    busy = _InFlight()
    _sigint_after(0.1)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _in_thread(lambda: time.sleep(2), 10, "ceph status", busy)     # time.sleep releases the GIL, as librados
    assert time.monotonic() - t0 < 1.0


def test_ctrl_c_inside_held_lets_the_change_finish_first():
    busy = _InFlight()
    done = []
    _sigint_after(0.1)
    with pytest.raises(KeyboardInterrupt):
        with held():
            done.append(_in_thread(lambda: time.sleep(0.5) or "created", 10, "ceph osd pool create", busy))
    assert done == ["created"]
