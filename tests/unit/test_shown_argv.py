"""A command in a log never shows a secret (core/names.py shown_argv): at -vv the lab's `radosgw-admin user create
... --secret-key S` was logged whole by hosts/local.py."""

import logging

from cephbench.core.names import shown_argv
from cephbench.hosts.local import LocalHost


def test_secret_flags_values_and_url_credentials_are_hidden():
    argv = ["radosgw-admin", "-n", "client.admin", "user", "create", "--uid", "cephbench", "--access-key", "AK1",
            "--secret-key", "s3cr3t", "--subuser", "cephbench:swift", "--access", "full"]
    shown = shown_argv(argv)
    assert "s3cr3t" not in shown and "AK1" not in shown
    assert "--secret-key '***'" in shown and "--access full" in shown      # --access is a permission, not a key
    assert shown_argv(["x", "--secret-key=abc", "--password", "pw"]) == "x '--secret-key=***' --password '***'"
    assert "pw@" not in shown_argv(["curl", "http://u:pw@prom:9090/api"])
    # a flag as the last word hides nothing that is not there
    assert shown_argv(["x", "--key"]) == "x --key"


def test_the_local_runner_logs_the_command_without_its_secret(caplog):
    with caplog.at_level(logging.DEBUG, logger="cephbench.hosts.local"):
        res = LocalHost().run(["true", "--secret-key", "s3cr3t"], 10)
    assert res.returncode == 0
    assert "true --secret-key" in caplog.text and "s3cr3t" not in caplog.text
