"""Ctrl-C and SIGTERM: one way to stop, held back while a cluster change is half done.

Killing `ceph osd pool create` after it reached the mon leaves a pool the run
never saw created; the mon may even apply it after cleanup looked. A change
that takes a second is let finish, and the signal is delivered right after.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, NoReturn

HELD = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGTERM, treated like Ctrl-C: stop, clean up, keep what finished."""


def _raise_interrupted(signum, frame) -> None:  # noqa: ARG001
    raise Interrupted()


def caused_by_interrupt(exc: BaseException) -> bool:
    """A KeyboardInterrupt, or an error raised because one cut something short: pydantic builds its validators in
    Rust while suite/config.py is imported, and turns an interrupt raised there into a SchemaError whose cause it is."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return "KeyboardInterrupt" in str(exc)


def exit_interrupted() -> NoReturn:
    """The end of a start-up (imports, click's parsing) that a signal cut short: one line, exit 130."""
    # os._exit: an interrupt that cut an import short can leave half-made modules whose clean-up at interpreter
    # exit fails or re-raises; nothing of cephbench's is open yet, so nothing is lost by skipping it
    sys.stderr.write("cephbench: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def redeliver_swallowed_interrupts() -> None:
    """An interrupt raised where Python cannot raise it (a finalizer; pydantic-core building a validator while a
    deferred model is first used, reported as "Exception ignored in: 'Path'") is printed as a traceback and then
    lost: the command runs on as if never asked to stop. It is sent again instead, so it lands at the next point
    where Python can raise it, as one line and exit 130."""
    def hook(unraisable) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            # from another thread, a moment later: raised here, in the hook, it would be swallowed again
            try:
                # a real signal to the main thread, so a blocking call there (a sleep, a wait on ceph) is cut short too
                threading.Timer(0.005, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT)).start()
            except RuntimeError:  # the interpreter is shutting down: there is nothing left to stop
                pass
            return
        sys.__unraisablehook__(unraisable)
    sys.unraisablehook = hook


def sigterm_interrupts() -> object:
    """Make SIGTERM raise Interrupted; returns the previous handler (None off the main thread)."""
    try:
        return signal.signal(signal.SIGTERM, _raise_interrupted)
    except ValueError:  # not the main thread (tests)
        return None


@contextmanager
def held() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield               # only the main thread may set handlers; its callers are never interrupted
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in HELD}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(caught):
            signal.raise_signal(s)


@contextmanager
def shielded(first: Callable[[], None], after_interrupt: bool = False) -> Iterator[None]:
    """Cleanup that a first Ctrl-C or SIGTERM does not cut short: the first signal only calls `first` (which says
    that cleanup goes on and that a second one skips it); the second raises Interrupted, to skip the rest.

    `after_interrupt`: the cleanup follows an interrupt, whose message already said "Ctrl-C again to skip": that
    Ctrl-C was the first, and the next one skips (it used to take a third)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    count = [1 if after_interrupt else 0]

    def handler(signum, frame) -> None:  # noqa: ARG001
        count[0] += 1
        if count[0] == 1:
            first()
        else:
            raise Interrupted()

    previous = {s: signal.signal(s, handler) for s in HELD}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
