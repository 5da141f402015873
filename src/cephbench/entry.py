"""The `cephbench` console script: signals are handled before anything heavy is imported.

Importing the CLI (pydantic, rich, click) takes a noticeable fraction of a second; a Ctrl-C or SIGTERM in that
window used to give a KeyboardInterrupt traceback, or a silent death by signal. Here both end the process with
exit code 130 and one line, as they do later.
"""

import os
import signal
import sys


def _stop(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def _interrupted() -> None:
    # os._exit: an interrupt that cut an import short can leave half-made modules whose clean-up at interpreter
    # exit fails or re-raises; nothing of cephbench's is open yet, so nothing is lost by skipping it
    sys.stderr.write("cephbench: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def _caused_by_interrupt(exc: BaseException) -> bool:
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


def main() -> None:
    signal.signal(signal.SIGTERM, _stop)
    try:
        from .cli import main as cli_main
    except BaseException as exc:  # noqa: BLE001 - anything an interrupt cut short
        if _caused_by_interrupt(exc):
            _interrupted()
        raise
    try:
        cli_main()
    except KeyboardInterrupt:      # one that landed outside a command (click's own parsing)
        _interrupted()
    except SystemExit:
        # the command is done and has said so; a signal now would only interrupt the interpreter's own clean-up
        # (atexit handlers, finalizers) with a traceback
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise


if __name__ == "__main__":
    main()
