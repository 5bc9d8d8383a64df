"""The version of driftcheck, recorded in every snapshot it writes (`tool.version`)."""

VERSION = "0.1.0"
# What `driftcheck --version` prints: the command line's parser and the entry point's fast path say the same.
VERSION_LINE = f"driftcheck {VERSION}"
