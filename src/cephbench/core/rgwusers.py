"""What `radosgw-admin user create` and `user info` print about a user's keys, read once for the two that make
users: the lab's own (lab/lab.py) and a run's (drivers/rgw/admin.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .errors import ParseError


@dataclass(frozen=True)
class UserKeys:
    """A user's S3 key and its `<uid>:swift` subuser's key (None when it has none). repr() shows no secret."""

    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    swift_user: str | None = None
    swift_key: str | None = field(default=None, repr=False)


def user_keys(text: str, uid: str) -> UserKeys:
    """The keys of `uid` in radosgw-admin's JSON (anything it printed before the document, such as a warning, is
    skipped). The error never quotes the output: it holds secrets."""
    try:
        info = json.loads(text[text.index("{"):])
        s3 = next(k for k in info.get("keys", []) if k.get("user") == uid)
        swift = next((k for k in info.get("swift_keys", []) if k.get("user") == f"{uid}:swift"), None)
        return UserKeys(str(s3["access_key"]), str(s3["secret_key"]), f"{uid}:swift" if swift else None,
                        str(swift["secret_key"]) if swift else None)
    except (ValueError, StopIteration, AttributeError, KeyError, TypeError) as exc:
        raise ParseError(f"radosgw-admin printed no S3 keys for {uid} ({type(exc).__name__})") from None
