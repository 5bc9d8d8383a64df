"""Text from a snapshot or a record made safe to print: control characters shown, never obeyed.

A label, a host name or a command line is free text someone else may have written. Printed as it is, a
newline forges a line of `driftcheck log` or a Markdown heading, and an ESC sequence recolours, moves
the cursor or retitles the reader's terminal. Every renderer that prints such text passes it through
`printable`, which writes each C0 or C1 control character, DEL and each Unicode direction override as
a visible escape (`\\n`, `\\x1b`, `\\u202e`), the way Python's repr does, and leaves everything else alone.
Markdown and HTML add their own syntax on top: a value in report.md is one line (so it never ends a code
block), and JSON data embedded in an HTML page goes through `script_json` (so a label `a<!--<script>` never
changes how the page is parsed).
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


# In a <script> element, `<!--`, `<script` and `</script` change how HTML parses the rest; `&` and `>` are escaped
# alike so the text means the same in any context. JSON reads `\u003c` as `<`.
_SCRIPT_UNSAFE = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028",
                  0x2029: "\\u2029"}


def script_json(json_text: str) -> str:
    """JSON text that can be embedded in an HTML <script> element as it is: `<`, `>`, `&` and the two line
    separators written as JSON escapes, which parse back to the same value."""
    return json_text.translate(_SCRIPT_UNSAFE)


__all__ = ["printable", "script_json"]
