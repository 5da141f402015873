"""Everything a person reads: terminal tables now; markdown and HTML later."""
