"""The `cephbench` console script: signals are handled before anything heavy is imported.

Importing the CLI (click, rich) and then the command's own module (pydantic's models, the lab: cli/common.py imports
it when the command runs) takes a noticeable fraction of a second; a Ctrl-C or SIGTERM in that window used to give a
KeyboardInterrupt traceback, or a silent death by signal. Here both end the process with exit code 130 and one line,
as they do later.
"""

import signal

from .core.interrupts import caused_by_interrupt, exit_interrupted, redeliver_swallowed_interrupts


def _stop(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def main() -> None:
    try:
        # inside the try from its first line: a SIGINT as the handlers are set is an interrupt like any other
        signal.signal(signal.SIGTERM, _stop)
        redeliver_swallowed_interrupts()
        from .cli import main as cli_main
    except BaseException as exc:  # noqa: BLE001 - anything an interrupt cut short
        if caused_by_interrupt(exc):
            exit_interrupted()
        raise
    try:
        cli_main()
    except KeyboardInterrupt:      # one that landed outside a command (click's own parsing)
        exit_interrupted()
    except SystemExit:
        # the command is done and has said so; a signal now would only interrupt the interpreter's own clean-up
        # (atexit handlers, finalizers) with a traceback
        _ignore_signals()
        raise


def _ignore_signals() -> None:
    """SIGINT and SIGTERM ignored from here on; one that lands while this sets them is let go (the command is
    done) rather than raised out of the clean-up: with SIG_IGN set, Python drops one still pending."""
    while True:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            return
        except KeyboardInterrupt:
            continue

if __name__ == "__main__":
    main()
