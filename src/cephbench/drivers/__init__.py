"""One module per tool: a command builder, a pure parser, and a thin run function."""


class ParseError(ValueError):
    """Tool output that cannot be read as the tool's format (unknown, truncated, an error message)."""
