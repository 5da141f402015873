"""One module per tool: a command builder, a pure parser, and a thin run function."""
