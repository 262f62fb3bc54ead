"""The layout rules of docs/architecture.md, checked: small functions, no module importing the
package ``__init__``, module names not shadowed by the functions the package exports."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import godot_formats as gf

PACKAGE = Path(gf.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_function_is_small() -> None:
    """McCabe complexity 15 at most, everywhere (ruff's C901, configured in pyproject.toml)."""
    pytest.importorskip("ruff", reason="ruff is in the test extras: pip install -e '.[test]'")
    repo = PACKAGE.parent
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "C901", "--no-cache",
                           "godot_formats", "benchmarks", "tests"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _package_of(path: Path) -> list[str]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return parts if path.name == "__init__.py" and parts.pop() else parts[:-1]


def _imports_of_the_package_init(path: Path) -> list[str]:
    """Imports in ``path`` that name something of the package ``__init__`` rather than a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _package_of(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name == "godot_formats"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1] + ([node.module] if node.module else [])
            else:
                base = (node.module or "").split(".")
            if base != ["godot_formats"]:
                continue
            for alias in node.names:
                if importlib.util.find_spec(f"godot_formats.{alias.name}") is None:
                    found.append(f"from godot_formats import {alias.name}")
    return found


@pytest.mark.parametrize("path", [p for p in MODULES if p.name != "__init__.py" or p.parent != PACKAGE],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_the_package_init(path: Path) -> None:
    assert _imports_of_the_package_init(path) == []


def test_module_names_are_not_shadowed() -> None:
    for info in pkgutil.iter_modules([str(PACKAGE)]):
        if info.name == "__main__":
            continue  # importing it runs the command line
        attribute = getattr(gf, info.name, None)
        module = importlib.import_module(f"godot_formats.{info.name}")
        assert attribute is None or attribute is module, f"godot_formats.{info.name} is not the module"
    assert callable(gf.convert) and callable(gf.detect)
    assert importlib.import_module("godot_formats.conversion").convert is gf.convert
