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


# -- floors: a module imports only its own floor and those below it (docs/architecture.md) --------------

#: The floors of docs/architecture.md, bottom first.  A module's floor is the first whose prefix
#: names it (``text`` is the package and its modules).
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("version", "switches", "errors", "keys", "types", "registry", "wire", "dialects", "codec", "accel",
              "_cdecode", "_cencode")),
    ("formats and views", ("framing", "files", "fastlz", "compression", "encryption", "base64form", "primitives",
                           "streampeer", "stream", "project_settings", "text", "jsonform", "explain", "safety")),
    ("detection", ("detection",)),
    ("reading", ("reading",)),
    ("conversion and calls", ("conversion", "api")),
    ("save files", ("savefile", "fileaccess")),
    ("command line and engines", ("tool", "commands", "__main__", "oracle", "conformance", "")),
]


def _floor(module: str) -> int:
    """The floor of ``godot_formats.<module>`` ("" is the package ``__init__``, which re-exports the top)."""
    first = module.split(".")[0]
    for i, (_, names) in enumerate(FLOORS):
        if first in names:
            return i
    raise AssertionError(f"godot_formats.{module} is on no floor: add it to FLOORS and docs/architecture.md")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a name inside a module, not a module inside a package
        return False


def _imported(path: Path) -> set[str]:
    """Every module of the package that ``path`` imports, at the top or inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _package_of(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = (package[:len(package) - node.level + 1] if node.level else []) + (
                node.module.split(".") if node.module else [])
            if base[:1] != ["godot_formats"]:
                continue
            for alias in node.names:
                full = ".".join(base[1:] + [alias.name])
                found.add(full if _is_module(f"godot_formats.{full}") else ".".join(base[1:]))
        elif isinstance(node, ast.Import):
            found |= {a.name[len("godot_formats."):] for a in node.names if a.name.startswith("godot_formats.")}
    return found


def test_no_module_imports_a_floor_above_its_own() -> None:
    upward = []
    for path in MODULES:
        module = _module_of(path)
        floor = _floor(module)
        for target in sorted(_imported(path)):
            if _floor(target) > floor:
                upward.append(f"{module} ({FLOORS[floor][0]}) imports {target} ({FLOORS[_floor(target)][0]})")
    assert upward == []


def test_the_floors_are_the_documented_ones() -> None:
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name, _ in FLOORS:
        assert f"| {name} |" in doc, name
