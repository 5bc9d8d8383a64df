"""The sub-commands of `driftcheck`, one module each; every module has `add(subparsers)`, which
registers the command and its handler."""
