"""Text from a snapshot or a record made safe to print: control characters shown, never obeyed.

A label, a host name or a command line is free text someone else may have written. Printed as it is, a
newline forges a line of `driftcheck log` or a Markdown heading, and an ESC sequence recolours, moves
the cursor or retitles the reader's terminal. Every renderer that prints such text passes it through
`printable`, which writes each C0 or C1 control character, DEL and each Unicode direction override as
a visible escape (`\\n`, `\\x1b`, `\\u202e`), the way Python's repr does, and leaves everything else alone.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls; the line and paragraph separators; the bidirectional embeddings,
# overrides and isolates that reorder what a reader sees ("Trojan Source").
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control character (C0, C1, DEL, direction overrides) written as an escape."""
    return _UNPRINTABLE.sub(_escape, text)


__all__ = ["printable"]
