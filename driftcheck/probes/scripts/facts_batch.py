# Several facts scripts answered by one run of the interpreter executing this one. Stdlib only, Python 3.8+:
# it runs in the *target* interpreter (a benchmark venv, possibly on another host). Starting that interpreter
# (its site, its .pth files) costs more than most scripts' own work, so a snapshot starts it once for all of
# them. The request, first argument, is JSON: {"parts": [{"name": ..., "source": ..., "args": [...]}, ...]}.
# Each part runs as `python -c SOURCE ARGS...` would: its own globals, sys.argv, stdout and stderr, its
# exit code from SystemExit, and a traceback on its stderr when it raises, so a part that fails costs only
# its own answer. Prints {"parts": [{"returncode": N, "stdout": "...", "stderr": "..."}, ...]} in request order.
import io
import json
import sys
import traceback


def run_part(part):
    """Run one script's source here, with its own argv and captured output; its answer."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv, sys.stdout, sys.stderr
    sys.argv = ["-c"] + [str(arg) for arg in part.get("args", [])]
    sys.stdout, sys.stderr = out, err
    returncode = 0
    try:
        exec(compile(part["source"], "<" + str(part.get("name")) + ">", "exec"), {"__name__": "__main__"})
    except SystemExit as exc:
        code = exc.code
        if code is None:
            returncode = 0
        elif isinstance(code, int):
            returncode = code
        else:
            err.write(str(code) + "\n")
            returncode = 1
    except BaseException:  # noqa: BLE001 - one part's failure is its own answer, not the batch's
        err.write(traceback.format_exc())
        returncode = 1
    finally:
        sys.argv, sys.stdout, sys.stderr = saved
    return {"returncode": returncode, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main(argv):
    """Answer every part of the request in argv[0]; the exit code."""
    request = json.loads(argv[0])
    answers = [run_part(part) for part in request.get("parts", [])]
    sys.stdout.write(json.dumps({"parts": answers}))
    return 0


sys.exit(main(sys.argv[1:]))
