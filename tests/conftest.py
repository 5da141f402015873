import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))


@pytest.fixture(autouse=True, scope="session")
def _own_run_locks(request):
    """A session of unit tests has run-id locks of its own. `make test` runs them beside the lab tests, and both
    make run directories with the same made-up run ids ("abc123"), whose locks are per user (cluster/recovery.py
    run_locks_dir): a lab test holding one made a unit test's cleanup of another directory refuse it as "being run
    right now" (CI of stop 42). The commands the tests start inherit XDG_RUNTIME_DIR. Lab tests keep the user's:
    podman and the labs' containers may read it."""
    if any("tests/lab/" in item.nodeid or item.nodeid.startswith("lab/") for item in request.session.items):
        yield None
        return
    own = tempfile.mkdtemp(prefix="cephbench-test-runtime-")
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
