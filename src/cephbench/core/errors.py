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
        return text.replace("\n", " ")


class OperationFailed(Exception):
    """A benchmark or cluster operation failed at run time (exit code 1)."""


class PermissionDenied(UserError):
    """The cluster refused a change to this client: the run stops (exit 2) instead of going on."""
