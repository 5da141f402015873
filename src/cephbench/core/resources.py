"""The ledger of everything a run creates on a cluster, so that exactly that is removed.

Entries are written to <run dir>/resources.json as they are created and
removed, so that what a killed run left behind is known by name.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resource:
    kind: str       # pool, ec-profile, rbd-image, rgw-user, ...
    name: str
    # by which run, when, and where the cluster's history stood before the change (JSON; "" when the name says it
    # all): what tells a stale entry (its change undone, then made again by someone else) from one still the run's.
    # Not part of the entry's identity: a later forget() or release_one() names the entry by kind and name.
    state: str = field(default="", compare=False)

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, **({"state": json.loads(self.state)} if self.state else {})}


class Refused(Exception):
    """A removal that was not made: the thing cannot be shown to be the run's (its name, the run marker, its
    recorded state). It stays in the ledger and is reported with what to run by hand, if anything."""


class Refusal(str):
    """Why a removal was not even tried (a Refused's message): not provably the run's, so a person decides, and no
    command to remove it is suggested."""


class Undone(Exception):
    """A removal with nothing left to do: the change was undone already (the message says how that was found). The
    entry leaves the ledger as if removed."""


# a Ceph option a variant changed: its name is a JSON record of the target, the option and its previous value
# (variant_plan.Restore), enough for `cephbench cleanup` to put it back after the run died
CONFIG_OPTION = "config-option"

# The kinds of entry the core makes for every kind of test. Each has its proof of ownership in cluster/recovery.py
# (PROOFS), checked before anything is removed or undone. What a kind of test makes beside them (its images, users,
# files) its kind module declares with its proof (kinds/kind.py ResourceType), and a run's ledger is given both
# (kinds.LEDGER_KINDS). A ledger refuses a kind of entry it was not given, so a new one cannot skip its proof
# (tests/unit/test_recovery_proofs.py holds the lists together).
KINDS = ("process", "ssh-control", "remote-file", "remote-dir", "pool", "ec-profile", "osd-flags", CONFIG_OPTION,
         "lab-shape", "config-key")


def state_of(r: Resource) -> dict:
    """An entry's recorded state as a dict ({} when it has none, or it is not a JSON object)."""
    try:
        state = json.loads(r.state or "{}")
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def with_state(r: Resource, **fields: object) -> Resource:
    return Resource(r.kind, r.name, json.dumps({**state_of(r), **fields}))


def remote_file_parts(name: str) -> tuple[str, str]:
    """A remote file's ledger name "<address>:<absolute path>" (an IPv6 address has no slash) -> its parts."""
    i = name.find(":/")
    return (name[:i], name[i + 1:]) if i > 0 else (name, "")


class Ledger:
    def __init__(self, path: Path | None = None, outer: "Ledger | None" = None,
                 guard: Callable[[Resource], str | None] | None = None, run_id: str | None = None,
                 kinds: Collection[str] = KINDS) -> None:
        self._path = path
        # the kinds of entry it takes, each with a proof of ownership: the core's own, and for a run's ledger the
        # kinds' declared resources too (kinds.LEDGER_KINDS, which this layer cannot read)
        self._kinds = frozenset(kinds)
        # stamped on every entry's state: the run that made it (an entry copied from another run's ledger says so)
        self._run_id = run_id
        # why a resource may not be removed (not named for this run), or None: checked before every removal
        self._guard = guard
        self._items: list[tuple[Resource, Callable[[], None]]] = []
        # a ledger inside another over the same file (a lab shape's part of a run): the outer one's entries stay
        # in the file, first, and are released by the outer ledger alone
        self._outer = outer

    def add(self, resource: Resource, remove: Callable[[], None]) -> None:
        if resource.kind not in self._kinds:
            raise ValueError(f"{resource.kind!r} is not a ledger kind with a proof of ownership that this ledger was "
                             "given (resources.KINDS; a kind's resources: kinds.LEDGER_KINDS)")
        if self._run_id is not None and "run" not in state_of(resource):
            resource = with_state(resource, run=self._run_id)
        self._items.append((resource, remove))
        self._save()

    def record_value(self, resource: Resource, key: str, value: str) -> None:
        """Add `value` to the list `key` of a pending entry's state (an option's values the run set, before it sets
        each): what cleanup compares the cluster's value with."""
        for i, (r, remove) in enumerate(self._items):
            if r == resource:
                values = state_of(r).get(key)
                values = values if isinstance(values, list) else []
                if value not in values:
                    self._items[i] = (with_state(r, **{key: [*values, value]}), remove)
                    self._save()
                return

    def __len__(self) -> int:
        return len(self._items)

    def pending(self) -> list[Resource]:
        return [r for r, _ in self._items]

    def release(self, keep: Callable[[Resource], bool] = lambda r: False) -> list[tuple[Resource, str]]:
        """Remove everything, newest first; returns what could not be removed and why. An entry leaves the ledger
        (and resources.json) only once its removal succeeded: one that failed, or was kept, stays listed, so that
        `cephbench cleanup` still knows it (a kill -9 during a removal leaves it listed too)."""
        failures: list[tuple[Resource, str]] = []
        for item in reversed(list(self._items)):
            resource = item[0]
            if keep(resource):
                continue
            try:
                self._remove(item)
            except Refused as exc:
                failures.append((resource, Refusal(str(exc))))
            except Exception as exc:  # noqa: BLE001 - cleanup goes on with the rest
                failures.append((resource, str(exc)))
        return failures

    def release_one(self, resource: Resource) -> None:
        for item in self._items:
            if item[0] == resource:
                self._remove(item)
                return

    def _remove(self, item: tuple[Resource, Callable[[], None]]) -> None:
        resource, remove = item
        why_not = self._guard(resource) if self._guard is not None else None
        if why_not is not None:
            raise Refused(why_not)
        try:
            remove()
            log.info("removed %s %s", resource.kind, resource.name)
        except Undone as exc:
            log.info("%s %s: %s", resource.kind, resource.name, exc)
        self._items.remove(item)
        self._save()

    def forget(self, resource: Resource) -> None:
        """Drop an entry whose creation was refused: there is nothing to remove."""
        self._items = [(r, remove) for r, remove in self._items if r != resource]
        self._save()

    def _save(self) -> None:
        if self._path is None:
            return
        tmp = self._path.with_suffix(".tmp")
        outer = self._outer.pending() if self._outer is not None else []
        tmp.write_text(json.dumps([r.to_json() for r in [*outer, *self.pending()]], indent=1) + "\n")
        tmp.replace(self._path)
