# Facts about the interpreter that runs this script. Stdlib only: it runs in the *target* interpreter
# (a benchmark venv, possibly on another host) where driftcheck is not installed. Prints one JSON object.
import json
import os
import platform
import sys


def main(argv):
    """Print the facts of this interpreter; the exit code."""
    prefix = sys.prefix
    base_prefix = getattr(sys, "base_prefix", sys.prefix)
    conda_meta = os.path.isdir(os.path.join(prefix, "conda-meta"))
    facts = {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "compiler": platform.python_compiler(),
        "build": list(platform.python_build()),
        "prefix": prefix,
        "base_prefix": base_prefix,
        "virtualenv": prefix != base_prefix,
        "conda_env": conda_meta,
        # From the interpreter's own prefix, not $CONDA_PREFIX: that names whatever env the caller's shell activated.
        "conda_prefix": prefix if conda_meta else None,
        "platform": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
            "libc": " ".join(platform.libc_ver()).strip() or None,
        },
        "sys_path": [p for p in sys.path if p],
        "gil_enabled": getattr(sys, "_is_gil_enabled", lambda: True)(),
    }
    sys.stdout.write(json.dumps(facts))
    return 0


# Run as `python -c SOURCE`; facts_batch loads the source once and calls main for each of its parts.
if __name__ == "__main__":
    # Answered, and flushed: the interpreter's own shutdown is work nobody but the waiting snapshot waits for.
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
