"""The version of driftcheck, recorded in every snapshot it writes (`tool.version`)."""

VERSION = "0.1.0"
