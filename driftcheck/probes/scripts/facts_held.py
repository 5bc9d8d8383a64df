# A facts_batch run started before it is wanted and held where nothing it answers has been read yet. Stdlib only,
# Python 3.8+: it runs in the *target* interpreter. hosts/warm.py (`hold`) starts it as
#   python -S -c THIS_SOURCE BATCH_SOURCE ARG...
# beside a command, so that the facts read after the command find an interpreter already up. Started with -S, it
# has loaded the interpreter's core and the standard modules the scripts import, not site: site is what reads the
# .pth files and the site-packages directories that make sys.path, and they may change while the command runs.
# When a byte comes on stdin (the command has ended: its release), it runs site as a start without -S runs it, then
# BATCH_SOURCE with ARG... as `python -c BATCH_SOURCE ARG...` would, reading the rest of stdin. If the
# interpreter's own files changed meanwhile (its executable, pyvenv.cfg, its standard library's directory), the
# process becomes that fresh start instead (exec). An empty stdin (driftcheck went on without it) ends it.
import os
import sys


def identity(path):
    """What a stat says of `path`: unchanged while all of it is; None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def interpreter_files():
    """The identities of what the interpreter's core read at its start: the executable, the pyvenv.cfg a venv
    start reads beside it or one directory up, and its standard library's directory (replaced files change it)."""
    executable = sys.executable
    where = os.path.dirname(executable)
    return [identity(path) for path in (executable, os.path.join(where, "pyvenv.cfg"),
                                        os.path.join(os.path.dirname(where), "pyvenv.cfg"),
                                        os.path.dirname(os.__file__))]


def start_site():
    """site.main(), with sys.path as a start without -S has it then: the script's own entry ('' for -c) is put
    first only after site, which would otherwise make it absolute."""
    first = sys.path[:1] if sys.path[:1] == [""] else []
    del sys.path[:len(first)]
    import site

    site.main()
    sys.path[:0] = first


def main(argv):
    """Wait for the release (a byte on stdin), then become the facts_batch run `argv` names; the exit code."""
    source, args = argv[0], argv[1:]
    seen = interpreter_files()
    # The standard modules the facts scripts import: loaded now, beside the command, not after it. site adds
    # only directories after the standard library's, so none of these resolves otherwise once it has run.
    import csv  # noqa: F401
    import getpass  # noqa: F401
    import importlib.util  # noqa: F401
    import io  # noqa: F401
    import json  # noqa: F401
    import marshal  # noqa: F401
    import platform  # noqa: F401
    import re  # noqa: F401
    import stat  # noqa: F401
    import zlib  # noqa: F401

    # The release is one byte, read past nothing else: the request after it stays in the pipe for the batch, or
    # for the fresh start an exec makes (a buffered read would take it along, and the exec drop it).
    if not os.read(0, 1):
        return 0
    if interpreter_files() != seen:
        os.execv(sys.executable, [sys.executable, "-c", source] + list(args))
    start_site()
    sys.argv = ["-c"] + list(args)
    exec(compile(source, "<string>", "exec"), {"__name__": "__main__"})
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
