"""The real `cephbench` command run in this process (click's runner), for tests of output and exit codes.

Start-up itself (imports, signals) is tested in a subprocess in test_cli_bad_input.py; everything else saves a
Python start-up per call.
"""

from __future__ import annotations

import subprocess
from typing import Mapping


def cephbench(*args: object, env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess:
    from click.testing import CliRunner
    from cephbench.cli import main
    res = CliRunner().invoke(main, [str(a) for a in args],
                             env={"CEPH_CONF": None, "CEPH_KEYRING": None, **(env or {})})
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return subprocess.CompletedProcess(list(args), res.exit_code, res.stdout, res.stderr)
