"""The facts scripts run in the *target* interpreter: stdlib only, Python 3.8 and newer."""

from __future__ import annotations

import ast
import csv
import glob
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from importlib import resources

import pytest

from driftcheck.hosts import LocalHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.kernels import KernelsProbe
from driftcheck.probes.packages import PackagesProbe
from driftcheck.probes.runner import run_one, run_probes
from driftcheck.probes.torch import TorchProbe
from driftcheck.store.hashcache import HashCache

SCRIPTS = ("dist_facts", "torch_facts", "python_facts", "facts_batch", "facts_held")


def _python38() -> str | None:
    """A working Python 3.8 (a version manager's shim may exist and still refuse to run)."""
    candidates = [*sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8"))),
                  shutil.which("python3.8")]
    for candidate in filter(None, candidates):
        done = subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 8)"],
                              capture_output=True, timeout=30, check=False)
        if done.returncode == 0:
            return candidate
    return None


@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_use_only_python_3_8_syntax_and_the_stdlib(script: str) -> None:
    source = resources.files("driftcheck.probes.scripts").joinpath(f"{script}.py").read_text("utf-8")
    tree = ast.parse(source, feature_version=(3, 8))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported - {"torch"} <= set(sys.stdlib_module_names)


def test_probes_run_in_a_python_3_8_interpreter(tmp_path) -> None:  # type: ignore[no-untyped-def]
    python = _python38()
    if python is None:
        pytest.skip("no Python 3.8 on this machine")
    host = LocalHost(python)
    packages = run_one(PackagesProbe(), host, ProbeOptions())
    assert packages.status == "ok", packages.error
    assert packages.data is not None and "pip" in packages.data["packages"]
    kernels = run_one(KernelsProbe(HashCache(tmp_path / "cache.db")), host, ProbeOptions())
    assert kernels.status == "ok", kernels.error
    torch = run_one(TorchProbe(), host, ProbeOptions(deep=True))
    assert torch.status in ("ok", "unavailable"), torch.error
    # The same probes answered by one run of that interpreter (facts_batch) read the same.
    together = run_probes(host, [PackagesProbe(), KernelsProbe(HashCache(tmp_path / "cache.db")), TorchProbe()])
    assert together["packages"].data == packages.data
    assert together["kernels"].status == "ok", together["kernels"].error
    assert together["torch"].status in ("ok", "unavailable"), together["torch"].error


def _dist_facts() -> dict[str, object]:
    """dist_facts's functions, loaded as facts_batch loads it (its main not run)."""
    namespace: dict[str, object] = {"__name__": "__facts_part__"}
    exec(resources.files("driftcheck.probes.scripts").joinpath("dist_facts.py").read_text("utf-8"), namespace)
    return namespace


def _every_row_read(meta_dir: str, is_compiled: Callable[[str], bool]) -> list[list[object]] | None:
    """The compiled rows of a RECORD with csv.reader over every line: what the lines read must agree with."""
    with open(os.path.join(meta_dir, "RECORD"), "rb") as handle:
        text = handle.read().decode("utf-8", "replace")
    rows: list[list[object]] = []
    try:
        for row in csv.reader(text.splitlines()):
            if row and is_compiled(row[0]):
                rows.append([row[0], row[1] if len(row) > 1 and row[1] else None,
                             int(row[2]) if len(row) > 2 and row[2].isdigit() else None])
    except csv.Error:
        return None
    return rows


_RECORDS = {
    # pip and uv write RECORD with csv's CRLF line ends.
    "crlf": "pkg/__init__.py,sha256=a,1\r\npkg/_c.cpython-311-x86_64-linux-gnu.so,sha256=b,2\r\n"
            "pkg-1.0.dist-info/RECORD,,\r\n",
    "lf": "pkg/_c.so,sha256=b,2\npkg/lib/libx.so.1.2,sha256=c,3\npkg/k.CUBIN,,\npkg/a.py,,\n",
    "quoted": 'pkg/a.py,,\n"pkg/odd,name.so",sha256=d,4\n"pkg/two\nlines.py",,\npkg/b.so,sha256=e,5\n',
    "nul": "pkg/a.so,sha256=f,6\npkg/b\0.py,,\n",
    "lone_cr": "pkg/a.py,,\rpkg/b.so,sha256=g,7\n",
    "non_ascii": "pkg/ü.so,sha256=h,8\npkg/a.py,,\n",
    # A field past csv's limit fails the whole RECORD, even on a line that names no compiled file.
    "wide": "pkg/a.so,sha256=i,9\n" + "pkg/" + "x" * 140_000 + ".py,,\n",
    "mark_not_suffix": "pkg/a.sox/b.py,,\npkg/a.so.txt,,\npkg/c.so.1,,\n",
    # Longer than csv's limit in all, every line short: read line by line.
    "long_plain": "".join(f"pkg/m{i}.py,sha256=x,1\r\n" for i in range(8000)) + "pkg/z.so,sha256=j,10\r\n",
    # ... and the same with one line past the limit at the end, without a line end: the whole RECORD fails.
    "long_then_wide": "".join(f"pkg/m{i}.py,,\n" for i in range(8000)) + "pkg/z.so,,\npkg/" + "y" * 140_000 + ".py,,",
}


@pytest.mark.parametrize("case", sorted(_RECORDS))
def test_a_record_reads_as_csv_over_all_its_lines(case: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    facts = _dist_facts()
    meta = tmp_path / "pkg-1.0.dist-info"
    meta.mkdir()
    (meta / "RECORD").write_bytes(_RECORDS[case].encode("utf-8"))
    assert facts["_read_record"](str(meta)) == _every_row_read(str(meta), facts["is_compiled"])  # type: ignore[operator]


def test_every_record_of_this_interpreter_reads_as_csv_over_all_its_lines() -> None:
    facts = _dist_facts()
    found = facts["distributions"]()  # type: ignore[operator]
    assert found
    for _entry, _name, meta_dir in found:
        if os.path.isfile(os.path.join(meta_dir, "RECORD")):
            assert facts["_read_record"](meta_dir) == _every_row_read(meta_dir, facts["is_compiled"]), meta_dir  # type: ignore[operator]


def _tree_of_links(root: str) -> list[str]:
    """Directories, files and links of every shape realpath meets under `root`; the paths to resolve."""
    os.makedirs(os.path.join(root, "real", "lib", "deep"))
    os.makedirs(os.path.join(root, "venv", "site"))
    for name in ("libx.so.1.2", "deep/libz.so"):
        with open(os.path.join(root, "real", "lib", name), "wb") as handle:
            handle.write(b"\x7fELF")
    links = {
        "venv/lib": "../real/lib",                      # a relative link to a directory
        "venv/abs": os.path.join(root, "real", "lib"),  # an absolute one
        "real/lib/libx.so.1": "libx.so.1.2",            # a file link in the same directory
        "real/lib/libx.so": "libx.so.1",                # a chain of links
        "real/lib/up.so": "deep/../libx.so.1.2",        # `..` inside a link's target
        "venv/site/dangling.so": "../nowhere/lib.so",   # a link to nothing
        "venv/loop_a": "loop_b", "venv/loop_b": "loop_a",  # a loop
        "venv/chain": "lib/deep",                       # a link through a link
    }
    for link, target in links.items():
        os.symlink(target, os.path.join(root, link))
    names = ["real/lib/libx.so.1.2", "real/lib/libx.so.1", "real/lib/libx.so", "real/lib/up.so",
             "real/lib/deep/libz.so", "venv/lib/libx.so", "venv/lib/deep/libz.so", "venv/abs/up.so",
             "venv/abs/deep", "venv/site/dangling.so", "venv/site/missing.so", "venv/missing/x.so",
             "venv/loop_a/x.so", "venv/chain/libz.so", "venv/lib", "venv", "real/lib/deep/../libx.so"]
    return [os.path.join(root, name) for name in names] + ["/", "relative/x.so", "//twice/slash"]


def test_real_paths_are_realpaths_whatever_links_lie_on_the_way(tmp_path) -> None:  # type: ignore[no-untyped-def]
    paths = _tree_of_links(str(tmp_path))
    facts = _dist_facts()
    # Twice: the second pass answers from what the first resolved.
    for _ in range(2):
        assert [facts["real_path"](path) for path in paths] == [os.path.realpath(path) for path in paths]  # type: ignore[operator]


def test_a_stat_reads_as_os_stat_and_realpath(tmp_path) -> None:  # type: ignore[no-untyped-def]
    facts = _dist_facts()
    for path in _tree_of_links(str(tmp_path)):
        try:
            st = os.stat(path)
        except OSError as exc:
            expected: dict[str, object] = {"path": path, "error": type(exc).__name__}
        else:
            expected = {"path": path, "real_path": os.path.realpath(path), "size": st.st_size,
                        "mtime_ns": st.st_mtime_ns, "inode": st.st_ino, "device": st.st_dev}
        assert facts["stat_of"](path) == expected, path  # type: ignore[operator]


def test_what_one_run_remembers_is_handed_out_as_copies(tmp_path) -> None:  # type: ignore[no-untyped-def]
    facts = _dist_facts()
    metadata = tmp_path / "METADATA"
    metadata.write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\nBody: not a header\n")
    first = facts["metadata_headers"](str(metadata))  # type: ignore[operator]
    first["Name"] = "changed by a caller"
    assert facts["metadata_headers"](str(metadata)) == {"Name": "pkg", "Version": "1.0"}  # type: ignore[operator]
    found = facts["distributions"]()  # type: ignore[operator]
    found.clear()
    assert facts["distributions"]()  # type: ignore[operator]


def test_lines_within_a_limit_read_as_measuring_each_line() -> None:
    within = _dist_facts()["lines_within"]
    texts = ["", "a\nbb\n", "x" * 10, "x" * 11, "xxxx\n" * 5 + "x" * 10, "xxxx\n" * 5 + "x" * 11,
             "\n" * 30, "x" * 9 + "\n" + "y" * 10 + "\n", ("x" * 6 + "\n") * 7 + "z" * 11 + "\n" + "w" * 3]
    for text in texts:
        assert within(text, 10) == (max(map(len, text.split("\n"))) <= 10), repr(text)  # type: ignore[operator]


@pytest.mark.parametrize("script, args", [("python_facts", []), ("dist_facts", ["packages"]),
                                          ("torch_facts", []), ("dist_facts", ["no-such-mode"])])
def test_a_script_that_leaves_without_the_interpreters_shutdown_still_gives_its_whole_answer(
        script: str, args: list[str]) -> None:
    # The scripts end with os._exit once their output is flushed: what they print, and the code, must all arrive.
    source = resources.files("driftcheck.probes.scripts").joinpath(f"{script}.py").read_text("utf-8")
    done = subprocess.run([sys.executable, "-c", source, *args], capture_output=True, text=True, timeout=60,
                          check=False, cwd="/")
    if args == ["no-such-mode"]:
        assert (done.returncode, done.stdout, done.stderr) == (2, "", "unknown mode 'no-such-mode'\n")
    else:
        assert done.returncode == 0, done.stderr
        assert isinstance(json.loads(done.stdout), dict)
