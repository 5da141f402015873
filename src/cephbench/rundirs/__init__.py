"""Run directories after the fact: exports, imports of raw tool output and CBT files, the history catalog,
and the live progress lines."""
