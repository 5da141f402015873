"""A reading taken in the background, so that a tick never waits on the monitors.

The tools' loop calls its samplers once a second; a `ceph status` to a monitor that stopped answering blocks for
the whole answer timeout, and the loop with it: live figures, the stop rules and the tools' own end all waited (a
40 s test took 65 s with the mon paused for 60 s). A Poll keeps one call in flight in a daemon thread (bounded by
the call's own timeout) and hands over its result at the next tick.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Pending(Exception):
    """The reading asked for at the last tick has not come back yet."""


class Poll(Generic[T]):
    """`poll()` gives the newest reading of `fn` (or raises its failure) and starts the next; `Pending` while
    the one in flight has not come back. The first call starts at once."""

    def __init__(self, fn: Callable[[], T]) -> None:
        self._fn = fn
        self._lock = threading.Lock()
        self._done: tuple[float, T | None, BaseException | None] | None = None
        self._busy = False
        self.answered_at: float | None = None      # monotonic time the last reading handed over came back
        self._start()

    def _start(self) -> None:
        self._busy = True

        def work() -> None:
            value: T | None = None
            error: BaseException | None = None
            try:
                value = self._fn()
            except Exception as exc:  # noqa: BLE001 - handed to the poller
                error = exc
            with self._lock:
                self._done, self._busy = (time.monotonic(), value, error), False
        threading.Thread(target=work, name="cephbench-poll", daemon=True).start()

    def __call__(self) -> T:
        with self._lock:
            done, self._done = self._done, None
            if done is None:
                if not self._busy:
                    self._start()
                raise Pending()
            self._start()
        at, value, error = done
        self.answered_at = at
        if error is not None:
            raise error
        return value  # type: ignore[return-value]
