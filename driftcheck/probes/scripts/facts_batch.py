# Several facts scripts answered by one run of the interpreter executing this one. Stdlib only, Python 3.8+:
# it runs in the *target* interpreter (a benchmark venv, possibly on another host). Starting that interpreter
# (its site, its .pth files) costs more than most scripts' own work, so a snapshot starts it once for all of
# them. The request is its arguments, words as the scripts' own runs would get them (a kernels call names
# hundreds of libraries: one argument holding them all could pass the kernel's limit on one argument):
#   --script NAME SOURCE              a script's source, once, before the parts that run it
#   --part NAME COUNT ARG...          a part: run NAME's main with the COUNT arguments that follow
#   --ahead NAME COUNT ARG...         a part run at once, its answer kept for a later --part asking the same
#   --stdin                           more words (a JSON list: --script and --part) come on stdin, read once
#                                     the --ahead parts are answered; an empty stdin asks nothing (no answer)
# --ahead and --stdin let a snapshot start this interpreter before it knows all its questions: the parts that
# need nothing from the host are answered while driftcheck still loads, the rest when the request comes.
# Each part answers as `python -c SOURCE ARGS...` would: its own sys.argv, stdout and stderr, its exit code
# from main's return or SystemExit, and a traceback on its stderr when it raises, so a part that fails costs
# only its own answer. A script is loaded once (its `if __name__ == "__main__"` call left out) and its
# main(argv) called for each of its parts, so parts of one script share what it has read (dist_facts's
# RECORDs). Prints {"parts": [{"returncode": N, "stdout": "...", "stderr": "..."}, ...]} in request order.
import io
import json
import os
import sys


def exit_code(code, err):
    """The exit code `sys.exit(code)` gives a process, its message written to `err` as Python does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    err.write(str(code) + "\n")
    return 1


def request_of(argv):
    """The sources ({name: source}), the parts and the parts ahead ([(name, args)]) the arguments ask for, and
    whether more come on stdin."""
    sources = {}  # type: dict[str, str]
    parts = []  # type: list[tuple[str, list[str]]]
    ahead = []  # type: list[tuple[str, list[str]]]
    more = False
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--script":
            sources[argv[index + 1]] = argv[index + 2]
            index += 3
        elif word in ("--part", "--ahead"):
            count = int(argv[index + 2])
            (parts if word == "--part" else ahead).append((argv[index + 1], argv[index + 3:index + 3 + count]))
            index += 3 + count
        elif word == "--stdin":
            more = True
            index += 1
        else:
            raise ValueError("facts_batch: unexpected argument " + repr(word))
    return sources, parts, ahead, more


# A directory where this interpreter keeps the scripts' compiled code between runs, named by driftcheck on its own
# machine (hosts/local.py; dist_facts keeps its RECORD parses there too); unset over SSH and in replays. Compiling
# the scripts is ~6 ms of each snapshot's run of the target interpreter, as Python's own __pycache__ spares an
# import; driftcheck sends the sources, so its own files' caches do not serve.
FACTS_CACHE_VARIABLE = "DRIFTCHECK_FACTS_CACHE"


def compiled(name, source):
    """The code of `source`: kept by an earlier run of this interpreter for this very source, else compiled (and
    kept, where the cache directory can be written)."""
    filename = "<" + name + ">"
    directory = os.environ.get(FACTS_CACHE_VARIABLE)
    if not directory:
        return compile(source, filename, "exec")
    import marshal  # where used: only a local snapshot names a cache
    import zlib

    # The file holds the source beside its code, and a code is used only for that same source: the name's
    # checksum spreads the versions, it never decides. The version string names the interpreter's bytecode.
    key = "\0".join((sys.version, source)).encode("utf-8", "surrogateescape")
    stem = f"code-{name}-{sys.implementation.cache_tag}-"
    path = os.path.join(directory, f"{stem}{zlib.crc32(key):08x}.bin")
    try:
        with open(path, "rb") as handle:
            kept = marshal.loads(handle.read())
        if isinstance(kept, tuple) and len(kept) == 3 and kept[0] == sys.version and kept[1] == source:
            return kept[2]
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(marshal.dumps((sys.version, source, code)))
        os.replace(temporary, path)
        # The code of this script's other sources (an earlier driftcheck's) for this interpreter goes.
        for other in os.listdir(directory):
            if other.startswith(stem) and other.endswith(".bin") and other != os.path.basename(path):
                os.unlink(os.path.join(directory, other))
    except OSError:
        import contextlib  # where used: only where the cache cannot be written

        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return code


def run_part(name, args, sources, loaded):
    """Run one part with its own argv and captured output; its answer. `loaded`: script name -> globals."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv, sys.stdout, sys.stderr
    sys.argv = ["-c"] + list(args)
    sys.stdout, sys.stderr = out, err
    try:
        if name not in loaded:
            namespace = {"__name__": "__facts_part__"}
            loaded[name] = namespace
            exec(compiled(name, sources[name]), namespace)
        main = loaded[name].get("main")
        if not callable(main):
            raise RuntimeError(name + " defines no main(argv) for facts_batch to call")
        returncode = exit_code(main(args), err)
    except SystemExit as exc:
        returncode = exit_code(exc.code, err)
    except BaseException:  # noqa: BLE001 - one part's failure is its own answer, not the batch's
        import traceback  # only when a part fails: every snapshot starts this interpreter, few parts fail

        err.write(traceback.format_exc())
        returncode = 1
    finally:
        sys.argv, sys.stdout, sys.stderr = saved
    return {"returncode": returncode, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main(argv):
    """Answer every part the arguments (and, with --stdin, the request on stdin) ask for; the exit code."""
    sources, parts, ahead, more = request_of(argv)
    loaded = {}  # type: dict[str, dict[str, object]]
    # An answer ahead is given for a part with the same script (its same source) and the same arguments, once.
    known = {}
    for name, args in ahead:
        known[(name, sources.get(name), tuple(args))] = run_part(name, args, sources, loaded)
    if more:
        request = sys.stdin.read()
        if not request:  # the driftcheck that started this one went on without it
            return 0
        more_sources, more_parts, _, _ = request_of(json.loads(request))
        for name, source in more_sources.items():
            if sources.get(name) != source:
                loaded.pop(name, None)
                sources[name] = source
        parts = parts + more_parts
    answers = []
    for name, args in parts:
        key = (name, sources.get(name), tuple(args))
        answers.append(known.pop(key) if key in known else run_part(name, args, sources, loaded))
    sys.stdout.write(json.dumps({"parts": answers}))
    return 0


if __name__ == "__main__":
    # Answered, and flushed: the interpreter's own shutdown (its modules torn down, ~6 ms) is work nobody waits
    # for but the snapshot, which waits for this process to end.
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
