"""How typed the package is: uses of `typing.Any` per 1,000 lines, and modules and lines per package.

A use is a name `Any` (or `typing.Any`) in the code's syntax tree outside import statements, annotations and
strings alike (with `from __future__ import annotations` every annotation is a string, so those are parsed too).
The target of the redesign (one door per verb) is at most 12 per 1,000 lines; the script exits 1 above it.
Run from the repository root: `python benchmarks/typing_density.py [--package DIR] [--target 12]`.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _any_uses(tree: ast.AST) -> int:
    """Count `Any` names, descending into annotations given as strings."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "Any" or isinstance(node, ast.Attribute) and node.attr == "Any":
            count += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "Any" in node.value:
            try:
                count += _any_uses(ast.parse(node.value, mode="eval"))
            except SyntaxError:  # a docstring or message that mentions the word, not a type
                pass
    return count


def measure(package: Path) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """Per top-level package (or `<root>` for the package's own modules): Any uses, modules, lines."""
    uses: Counter[str] = Counter()
    modules: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        room = parts[0] if len(parts) > 1 else "<root>"
        source = path.read_text("utf-8")
        uses[room] += _any_uses(ast.parse(source))
        modules[room] += 1
        lines[room] += len(source.splitlines())
    return uses, modules, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", type=Path, default=ROOT / "driftcheck", help="the package directory")
    parser.add_argument("--target", type=float, default=12.0, help="most Any uses per 1,000 lines (default 12)")
    args = parser.parse_args()
    uses, modules, lines = measure(args.package)
    print(f"{'package':<12} {'modules':>7} {'lines':>7} {'Any':>5} {'per 1k':>7}")
    for room in sorted(lines):
        print(f"{room:<12} {modules[room]:>7} {lines[room]:>7} {uses[room]:>5} {1000 * uses[room] / lines[room]:>7.1f}")
    total_uses, total_lines = sum(uses.values()), sum(lines.values())
    density = 1000 * total_uses / total_lines
    print(f"{'all':<12} {sum(modules.values()):>7} {total_lines:>7} {total_uses:>5} {density:>7.1f}")
    print(f"Any per 1,000 lines: {density:.1f} (target <= {args.target:g}): "
          f"{'within target' if density <= args.target else 'over target'}")
    return 0 if density <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
