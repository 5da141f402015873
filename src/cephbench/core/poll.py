"""A reading taken in the background, so that a tick never waits long on the monitors.

The tools' loop calls its samplers once a second; a `ceph status` to a monitor that stopped answering blocks for
the whole answer timeout, and the loop with it: live figures, the stop rules and the tools' own end all waited (a
40 s test took 65 s with the mon paused for 60 s). A Poll keeps one call in flight in a daemon thread (bounded by
the call's own timeout), waits for it briefly, and hands over a late one at a later tick.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Pending(Exception):
    """The reading asked for at the last tick has not come back yet."""


class Poll(Generic[T]):
    """`poll()` asks `fn` (unless a call is still out) and waits up to wait_s for it: a reading that comes back in
    time is as fresh as a direct call; one that does not raises `Pending`, and is handed over (or its failure
    raised) at a later poll. The first call starts at once."""

    def __init__(self, fn: Callable[[], T], wait_s: float = 0.5) -> None:
        self._fn = fn
        self._wait_s = wait_s
        self._lock = threading.Lock()
        self._done: tuple[float, T | None, BaseException | None] | None = None
        self._ready: threading.Event | None = None  # the call out: set when it came back; None: none out
        self.answered_at: float | None = None      # monotonic time the last reading handed over came back
        self._start()

    def _start(self) -> threading.Event:
        ready = self._ready = threading.Event()

        def work() -> None:
            value: T | None = None
            error: BaseException | None = None
            try:
                value = self._fn()
            except Exception as exc:  # noqa: BLE001 - handed to the poller
                error = exc
            with self._lock:
                self._done = (time.monotonic(), value, error)
            ready.set()
        threading.Thread(target=work, name="cephbench-poll", daemon=True).start()
        return ready

    def __call__(self) -> T:
        ready = self._ready or self._start()
        ready.wait(self._wait_s)
        with self._lock:
            done, self._done = self._done, None
            if done is None:
                raise Pending()
        self._ready = None
        at, value, error = done
        self.answered_at = at
        if error is not None:
            raise error
        return value  # type: ignore[return-value]
