"""Packaging: every source directory is a package (a non-editable install ships it), metadata is whole."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "driftcheck"


def test_every_directory_with_python_files_is_a_package() -> None:
    missing = [str(d.relative_to(PACKAGE.parent)) for d in PACKAGE.rglob("*")
               if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")) and not (d / "__init__.py").exists()]
    assert missing == []


def test_declared_dependencies_and_entry_point() -> None:
    config = configparser.ConfigParser()
    config.read(PACKAGE.parent / "setup.cfg")
    requires = config["options"]["install_requires"]
    for name in ("psutil", "nvidia-ml-py", "paramiko", "pyyaml", "cryptography"):
        assert name in requires
    extras = config["options.extras_require"]
    # Only the benchmark that compares `driftcheck diff` with deepdiff imports it: its extra, not the package's.
    assert "deepdiff" not in requires and "deepdiff" in extras["benchmarks"]
    assert "torch" in extras["bench"] and "sglang" in extras["sglang"] and "pytest" in extras["test"]
    assert "driftcheck = driftcheck.__main__:run" in config["options.entry_points"]["console_scripts"]


def test_rule_catalog_is_package_data() -> None:
    setup = (PACKAGE.parent / "setup.cfg").read_text("utf-8")
    assert "snapshot/*.yaml" in setup and "analysis/*.yaml" in setup
    assert (PACKAGE / "analysis" / "rules.yaml").is_file() and (PACKAGE / "snapshot" / "facts.yaml").is_file()


@pytest.mark.slow  # one fresh interpreter per module
def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    """An import cycle shows only when its module is imported first; try each one first, in its own process."""
    import subprocess
    import sys

    modules = sorted(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in PACKAGE.rglob("*.py")
                     if "__pycache__" not in p.parts and p.name != "__main__.py" and "scripts" not in p.parts)
    # Two interpreters at a time (CI has two cores): each import still runs first in a process of its own.
    script = ("import subprocess, sys\n"
              "from concurrent.futures import ThreadPoolExecutor\n"
              "def fails(m):\n"
              "    return subprocess.run([sys.executable, '-c', 'import ' + m], capture_output=True).returncode\n"
              "with ThreadPoolExecutor(2) as pool: codes = list(pool.map(fails, sys.argv[1:]))\n"
              "print(' '.join(m for m, code in zip(sys.argv[1:], codes) if code))")
    done = subprocess.run([sys.executable, "-c", script, *modules], capture_output=True, text=True,
                          cwd=PACKAGE.parent, check=True)
    assert done.stdout.strip() == ""
    assert len(modules) > 40
