"""Pasted text as a parser sees it: noise set aside, lines numbered, and every line accounted for.

Reports reach a maintainer through a GitHub comment: wrapped in markdown fences and `<details>` tags,
with CRLF line ends, log lines from the tool's own import, and sometimes a banner fused into the first
line by a terminal that lost its newlines. `Paste` cleans that once, then lets each parser *claim* the
lines it understood, so whatever no parser claimed can be kept verbatim and counted instead of dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

# Markup a paste adds around the report; never part of what the tool printed.
_MARKUP = re.compile(r"^\s*(```.*|~~~.*|</?details>.*|<summary>.*</summary>\s*|</?summary>\s*|</?pre>\s*"
                     r"|<!--.*-->\s*|#{1,4} ?\w[\w ]*|\*\*[\w ]+\*\*:?\s*)$", re.IGNORECASE)
# Log and warning lines printed by the imported libraries while the tool ran.
_LOG = re.compile(r"^\s*(?:\[?(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\b.*\d\d:\d\d:\d\d"
                  r"|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d\S*\]?\s"
                  r"|\S+\.py:\d+: \w*Warning:|warnings\.warn\(|Collecting environment information\.*\s*$"
                  r"|(?:root|\w+)@[\w.-]+:.*[#$] |\$ |\(\S+\) \S+@\S+:"
                  # A prompt whose user@host GitHub's e-mail bridge masked (`***@***.***:~$ nvidia-smi`).
                  r"|(?:\(\S+\) )?\*{3}@\*{3}\.\*{3}:\S*[#$]\s)")
# What an e-mail reply wraps around the quoted text: its header (wrapped after the sender, whose address
# GitHub masks as `***@***.***`) and GitHub's footer.
_EMAIL = re.compile(r"^\s*(?:On (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), .*(?:\*{3}@\*{3}\.\*{3}>?|wrote:)|wrote:"
                    r"|—|Reply to this email directly, view it on GitHub.*|<https://github\.com/\S+>,? ?(?:or)?"
                    r"|unsubscribe|<https://github\.com/notifications/unsubscribe\S*"
                    r"|You are receiving this because .*|Message ID: <.*>)\s*$")
# A quoted e-mail reply (or a markdown quote): `> ` before every line (a bare `>` on an empty one).
_QUOTE = re.compile(r"^>[ \t]?")
# A log-shipper prefix on every line (`INFO 2025-04-06T03:02:45.843368291Z Python: 3.10.12`).
_SHIPPER_PREFIX = re.compile(r"^(INFO|WARNING|ERROR|DEBUG)\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?\s")


# What `_split_fused` cuts (a run of 40 blanks before text) and the trailing blanks `of` strips.
# Both start only where a run of blanks begins (the look-behind): tried at every blank of a run, they would
# read the rest of the run each time (40,000 blank lines took minutes).
_FUSED = re.compile(r"(?<!\s)\s{40,}(?=\S)")
_TRAILING = re.compile(r"(?<![ \t])[ \t]+$", re.MULTILINE)


@dataclass
class Paste:
    """The lines of a pasted report; `claim` marks what a parser understood."""

    lines: list[str]
    noise: list[int] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, text: str, anchors: tuple[str, ...] = ()) -> Paste:
        """Clean `text`; a line holding one of `anchors` after other text is split before the anchor."""
        text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        raw = text.split("\n")
        if sum(1 for line in raw if _SHIPPER_PREFIX.match(line)) > len(raw) // 2:
            raw = [_SHIPPER_PREFIX.sub("", line) for line in raw]
        written = [line for line in raw if line.strip()]
        if written and sum(1 for line in written if line.startswith(">")) > len(written) // 2:
            raw = [_QUOTE.sub("", line) for line in raw]
        lines: list[str] = []
        for line in raw:
            lines.extend(_split_fused(line, anchors))
        paste = cls([line.rstrip() for line in lines])
        paste.noise = [i for i, line in enumerate(paste.lines) if _is_noise(line)]
        paste.claimed.update(paste.noise)
        return paste

    @staticmethod
    def changes(text: str) -> bool:
        """Whether `Paste.of(text).lines` differ from the text's own lines (CR, a BOM, a log shipper's prefix, a
        quoted reply, a fused line, trailing blanks): when not, the text is already what a parser would see."""
        if "\r" in text or text.startswith("\ufeff") or _FUSED.search(text) or _TRAILING.search(text):
            return True
        raw = text.split("\n")
        written = [line for line in raw if line.strip()]
        quoted = sum(1 for line in written if line.startswith(">"))
        shipped = sum(1 for line in raw if line[:1] in "IWED" and _SHIPPER_PREFIX.match(line))
        return quoted > len(written) // 2 or shipped > len(raw) // 2

    def claim(self, *indexes: int) -> None:
        """Mark lines as understood."""
        self.claimed.update(indexes)

    def unclaimed(self) -> list[str]:
        """The non-blank lines no parser claimed, verbatim, in order."""
        return [line for i, line in enumerate(self.lines) if i not in self.claimed and line.strip()]

    def noise_lines(self) -> list[str]:
        """The markup and log lines set aside, verbatim."""
        return [self.lines[i] for i in self.noise if self.lines[i].strip()]


def _is_noise(line: str) -> bool:
    return bool(line.strip()) and bool(_MARKUP.match(line) or _LOG.match(line) or _EMAIL.match(line))


def _split_fused(line: str, anchors: tuple[str, ...]) -> list[str]:
    """A line a terminal fused with its neighbours, cut before each anchor that does not start it."""
    for anchor in anchors:
        at = line.find(anchor)
        if at > 0 and not line[:at].endswith(("(", "/")):
            return [*_split_fused(line[:at], anchors), *_split_fused(line[at:], anchors)]
    # A banner or log line followed by long runs of spaces (a terminal's wrapped width) on one line. A boxed
    # table's row is never one: its empty cells are long runs of spaces between bars.
    if line.lstrip().startswith("|"):
        return [line]
    parts = _FUSED.split(line)
    return parts if len(parts) > 1 else [line]


# A run of blank lines longer than this is read as this many: a format's pattern that lets `^\s*` span lines
# would read the rest of a run at every line of it (40,000 blank lines took minutes in one detector).
MAX_BLANK_RUN = 50
_LONG_BLANK_RUN = re.compile(r"(?:\n[^\S\n]*){" + str(MAX_BLANK_RUN + 1) + r",}(?=\n)")


def blank_runs_capped(text: str) -> str:
    """`text` with every run of more than `MAX_BLANK_RUN` blank lines cut to that many (what formats detect and
    parse; sections keep their own line numbers). Linear: each run is read once."""
    return _LONG_BLANK_RUN.sub("\n" * MAX_BLANK_RUN, text) if "\n\n" in text else text


# Lines that close one pasted block and open the next: fences and the `<details>` tags around them.
_BOUNDARY = re.compile(r"^\s*(```.*|~~~.*|</?details>.*|<summary>.*|</summary>\s*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Section:
    """One block of an issue body: its first and last line (1-based, inclusive) and its text."""

    start: int
    end: int
    text: str

    @property
    def lines(self) -> str:
        """`lines a-b`, as reports name a section."""
        return f"lines {self.start}-{self.end}"


def _opens_output(lines: list[str], begin: int, i: int) -> bool:
    """Whether a tool's first line at i begins a new output: text precedes it in the block, and that text does
    not end with a `Key:` line introducing it (vLLM's `AMD Topology:` embeds rocm-smi's output)."""
    above = next((lines[j] for j in range(i - 1, begin - 1, -1) if lines[j].strip()), None)
    return above is not None and not above.rstrip().endswith(":")


def split_sections(text: str, starts: Callable[[list[str], int], bool]) -> list[Section]:
    """The blocks of a pasted issue body: cut at fences and `<details>` tags, and before each line where
    `starts(lines, i)` says a tool's output begins (two outputs pasted into one block); blank blocks dropped."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    sections: list[Section] = []
    begin = 0

    def close(end: int) -> None:
        kept = [j for j in range(begin, end) if lines[j].strip()]
        if kept:  # named by its first and last non-blank line
            sections.append(Section(kept[0] + 1, kept[-1] + 1, "\n".join(lines[kept[0]:kept[-1] + 1])))

    for i, line in enumerate(lines):
        if _BOUNDARY.match(line):
            close(i)
            begin = i + 1
        elif i > begin and starts(lines, i) and _opens_output(lines, begin, i):
            close(i)
            begin = i
    close(len(lines))
    return sections
