import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The test modules' `from conftest import FIXTURES, REPO` gets whichever conftest pytest imported last under that
# name, and for tests/unit that is this one, not tests/conftest.py: without these, `pytest tests/unit` failed to
# collect 40 modules (ImportError: cannot import name 'FIXTURES'). The same values as tests/conftest.py's.
FIXTURES = Path(__file__).parent.parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(autouse=True, scope="session")
def _own_run_locks():
    """The unit tests' run-id locks are theirs alone. `make test` runs them beside the lab tests, and both make run
    directories with the same made-up run ids ("abc123"), whose locks are per user (cluster/recovery.py
    run_locks_dir): a lab test holding one made a unit test's cleanup of another directory refuse it as "being run
    right now" (CI of stop 42). The commands the tests start inherit XDG_RUNTIME_DIR."""
    own = tempfile.mkdtemp(prefix="cephbench-unit-runtime-")
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = own
    try:
        yield own
    finally:
        if before is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = before
        shutil.rmtree(own, ignore_errors=True)
