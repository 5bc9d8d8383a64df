# Several facts scripts answered by one run of the interpreter executing this one. Stdlib only, Python 3.8+:
# it runs in the *target* interpreter (a benchmark venv, possibly on another host). Starting that interpreter
# (its site, its .pth files) costs more than most scripts' own work, so a snapshot starts it once for all of
# them. The request, first argument, is JSON: {"parts": [{"name": ..., "source": ..., "args": [...]}, ...]}.
# Each part answers as `python -c SOURCE ARGS...` would: its own sys.argv, stdout and stderr, its exit code
# from main's return or SystemExit, and a traceback on its stderr when it raises, so a part that fails costs
# only its own answer. A script is loaded once (its `if __name__ == "__main__"` call left out) and its
# main(argv) called for each of its parts, so parts of one script share what it has read (dist_facts's
# RECORDs). Prints {"parts": [{"returncode": N, "stdout": "...", "stderr": "..."}, ...]} in request order.
import io
import json
import sys
import traceback


def exit_code(code, err):
    """The exit code `sys.exit(code)` gives a process, its message written to `err` as Python does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    err.write(str(code) + "\n")
    return 1


def run_part(part, loaded):
    """Run one part with its own argv and captured output; its answer. `loaded`: script name -> globals."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv, sys.stdout, sys.stderr
    args = [str(arg) for arg in part.get("args", [])]
    sys.argv = ["-c"] + args
    sys.stdout, sys.stderr = out, err
    name = str(part.get("name"))
    try:
        if name not in loaded:
            namespace = {"__name__": "__facts_part__"}
            loaded[name] = namespace
            exec(compile(part["source"], "<" + name + ">", "exec"), namespace)
        main = loaded[name].get("main")
        if not callable(main):
            raise RuntimeError(name + " defines no main(argv) for facts_batch to call")
        returncode = exit_code(main(args), err)
    except SystemExit as exc:
        returncode = exit_code(exc.code, err)
    except BaseException:  # noqa: BLE001 - one part's failure is its own answer, not the batch's
        err.write(traceback.format_exc())
        returncode = 1
    finally:
        sys.argv, sys.stdout, sys.stderr = saved
    return {"returncode": returncode, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main(argv):
    """Answer every part of the request in argv[0]; the exit code."""
    request = json.loads(argv[0])
    loaded = {}  # type: dict[str, dict[str, object]]
    answers = [run_part(part, loaded) for part in request.get("parts", [])]
    sys.stdout.write(json.dumps({"parts": answers}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
