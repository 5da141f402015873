"""radosgw-admin's user JSON, read by core/rgwusers.py for the lab's user and a run's (real output, redacted keys:
tests/fixtures/radosgw_admin)."""

from pathlib import Path

import pytest

from cephbench.core.errors import ParseError
from cephbench.core.rgwusers import user_keys
from cephbench.drivers.rgw.credentials import credentials_from_user_info

FIX = Path(__file__).parent.parent / "fixtures" / "radosgw_admin"
S3_SECRET = "REDACTED-S3-SECRET-KEY-of-a-lab-since-destroyed-0000"
SWIFT_KEY = "REDACTED-SWIFT-KEY-of-a-lab-since-destroyed-00000000"


@pytest.mark.parametrize("name", ["create", "info"])
def test_a_user_s_s3_and_swift_keys_are_read_and_never_shown(name):
    text = (FIX / f"ceph16.2.15_user_{name}_with_swift_subuser.json").read_text()
    k = user_keys(text, "fixture-user")
    assert (k.access_key, k.secret_key, k.swift_user, k.swift_key) == (
        "REDACTEDACCESSKEY000", S3_SECRET, "fixture-user:swift", SWIFT_KEY)
    assert S3_SECRET not in repr(k) and SWIFT_KEY not in repr(k) and "REDACTEDACCESSKEY000" not in repr(k)
    # a warning radosgw-admin printed before the document is skipped
    assert user_keys("2026-12-07T15:40:00 WARNING: something\n" + text, "fixture-user") == k
    c = credentials_from_user_info(text, "fixture-user")
    assert c.has("s3") and c.has("swift") and c.swift_user == "fixture-user:swift"


def test_a_user_without_a_swift_subuser_has_no_swift_key():
    text = (FIX / "ceph16.2.15_user_create_with_swift_subuser.json").read_text()
    no_swift = text.replace('"user": "fixture-user:swift"', '"user": "someone-else:swift"')
    k = user_keys(no_swift, "fixture-user")
    assert k.swift_user is None and k.swift_key is None and k.secret_key == S3_SECRET


@pytest.mark.parametrize("text", ["", "{}", "not json", '{"keys": [{"user": "other"}]}', '{"keys": "x"}',
                                  '{"keys": [{"user": "fixture-user"}]}'])
def test_output_without_the_user_s_keys_is_one_error_that_quotes_nothing(text):
    with pytest.raises(ParseError) as e:
        user_keys(text, "fixture-user")
    assert str(e.value).startswith("radosgw-admin printed no S3 keys for fixture-user (")


def test_the_error_does_not_quote_a_secret_from_a_broken_document():
    text = (FIX / "ceph16.2.15_user_create_with_swift_subuser.json").read_text()
    with pytest.raises(ParseError) as e:
        user_keys(text.replace('"access_key"', '"access"'), "fixture-user")
    assert S3_SECRET not in str(e.value) and "REDACTED" not in str(e.value)
