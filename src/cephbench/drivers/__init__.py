"""One module per tool: a command builder, a pure parser, and a thin run function."""

from ..core.errors import ParseError    # every parser here raises it; core/errors.py holds it

__all__ = ["ParseError"]
