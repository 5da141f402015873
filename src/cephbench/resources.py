"""The ledger of everything a run creates on a cluster, so that exactly that is removed.

Entries are written to <run dir>/resources.json as they are created and
removed, so that what a killed run left behind is known by name.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resource:
    kind: str       # pool, ec-profile, rbd-image, rgw-user, ...
    name: str


# a Ceph option a variant changed: its name is a JSON record of the target, the option and its previous value
# (variant_plan.Restore), enough for `cephbench cleanup` to put it back after the run died
CONFIG_OPTION = "config-option"


class Ledger:
    def __init__(self, path: Path | None = None, outer: "Ledger | None" = None) -> None:
        self._path = path
        self._items: list[tuple[Resource, Callable[[], None]]] = []
        # a ledger inside another over the same file (a lab shape's part of a run): the outer one's entries stay
        # in the file, first, and are released by the outer ledger alone
        self._outer = outer

    def add(self, resource: Resource, remove: Callable[[], None]) -> None:
        self._items.append((resource, remove))
        self._save()

    def __len__(self) -> int:
        return len(self._items)

    def pending(self) -> list[Resource]:
        return [r for r, _ in self._items]

    def release(self, keep: Callable[[Resource], bool] = lambda r: False) -> list[tuple[Resource, str]]:
        """Remove everything, newest first; returns what could not be removed and why."""
        failures: list[tuple[Resource, str]] = []
        while self._items:
            resource, remove = self._items.pop()
            if keep(resource):
                continue
            try:
                remove()
                log.info("removed %s %s", resource.kind, resource.name)
            except Exception as exc:  # noqa: BLE001 - cleanup goes on with the rest
                failures.append((resource, str(exc)))
            self._save()
        return failures

    def release_one(self, resource: Resource) -> None:
        for i, (r, remove) in enumerate(self._items):
            if r == resource:
                remove()
                del self._items[i]
                self._save()
                return

    def forget(self, resource: Resource) -> None:
        """Drop an entry whose creation was refused: there is nothing to remove."""
        self._items = [(r, remove) for r, remove in self._items if r != resource]
        self._save()

    def _save(self) -> None:
        if self._path is None:
            return
        tmp = self._path.with_suffix(".tmp")
        outer = self._outer.pending() if self._outer is not None else []
        tmp.write_text(json.dumps([asdict(r) for r in [*outer, *self.pending()]], indent=1) + "\n")
        tmp.replace(self._path)
