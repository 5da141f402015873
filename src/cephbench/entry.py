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
    signal.signal(signal.SIGTERM, _stop)
    redeliver_swallowed_interrupts()
    try:
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
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise


if __name__ == "__main__":
    main()
