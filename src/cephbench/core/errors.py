"""The one exception type for errors the user can fix.

cli/ turns a UserError into one line on stderr and exit code 2; anything else
that escapes is a bug.
"""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix: bad input, a missing tool, a cluster that refuses."""

    def __init__(self, message: str, hint: str = "", where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.where = where

    def one_line(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f" ({self.hint})"
        return one_line(text)


def one_line(text: str) -> str:
    """Any message as the one line an error gets: its line breaks made spaces, and any URL it quotes (a flag's
    value, an answer's body, pydantic's echo of the input) shown without its credentials (names.shown_url)."""
    from .names import without_credentials     # here: the start of a command that never fails stays light
    return without_credentials(" ".join(str(text).splitlines()))


class ParseError(ValueError):
    """Tool output that cannot be read as the tool's format (unknown, truncated, an error message): what every parser
    raises, the drivers', the evidence's and the importer's."""


class OperationFailed(Exception):
    """A benchmark or cluster operation failed at run time (exit code 1)."""


class PermissionDenied(UserError):
    """The cluster refused a change to this client: the run stops (exit 2) instead of going on."""
