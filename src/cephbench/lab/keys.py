"""cephx keys and keyrings for a lab, made in Python rather than by `ceph-authtool` or `ceph auth` calls.

Every key the lab needs (mon., client.admin, mgr, OSDs, RGW) goes into the keyring `ceph-mon --mkfs`
imports, so the monitor starts with all of them and no daemon waits for a `ceph auth get-or-create`.
"""

from __future__ import annotations

import base64
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

# CryptoKey's encoding (src/auth/Crypto.cc): le16 type (1 = AES, 2 = aes256k since Tentacle), utime created
# (le32 s, le32 ns), le16 length, then the secret. `ceph-authtool --gen-print-key` prints the same thing
# (Tentacle's: type 2, 32 bytes).
KEY_AES = 1
KEY_AES256K = 2
_SECRET_BYTES = {KEY_AES: 16, KEY_AES256K: 32}


def new_secret(now: float | None = None, key_type: int = KEY_AES) -> str:
    """A fresh cephx secret, base64 as keyrings hold it."""
    created = int(time.time() if now is None else now)
    size = _SECRET_BYTES[key_type]
    raw = struct.pack("<HIIH", key_type, created, 0, size) + os.urandom(size)
    return base64.b64encode(raw).decode("ascii")


@dataclass(frozen=True)
class Entity:
    """One cephx identity: its name (`osd.0`, `client.admin`), secret and capabilities per service."""

    name: str
    secret: str
    caps: dict[str, str] = field(default_factory=dict)


def keyring_text(entities: Iterable[Entity]) -> str:
    out = []
    for e in entities:
        out.append(f"[{e.name}]\n\tkey = {e.secret}\n")
        out.extend(f'\tcaps {svc} = "{cap}"\n' for svc, cap in e.caps.items())
    return "".join(out)


def write_keyring(path: Path, entities: Iterable[Entity]) -> None:
    """Write a keyring readable by its owner only (it holds secrets)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(keyring_text(entities))
