"""The layout rules of docs/architecture.md, checked: small functions, no module importing the
package ``__init__``, module names not shadowed by the functions the package exports."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
import warnings
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
    with pytest.deprecated_call():
        sys.modules.pop("godot_formats.conversion", None)
        assert importlib.import_module("godot_formats.conversion").convert is gf.convert


# -- floors: a module imports only its own floor and those below it (docs/architecture.md) --------------

#: The floors of docs/architecture.md, bottom first: each a list of folders and modules.  A module's
#: floor is the one that names it or the folder it is in (the longest name that matches).
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("core",)),
    ("formats and views", ("layers", "streams", "views")),
    ("detection", ("saves.detection",)),
    ("reading", ("saves.reading",)),
    ("conversion and calls", ("migration", "api")),
    ("save files", ("saves.savefile", "saves.fileaccess", "saves", "resources", "configfile")),
    ("documents", ("documents",)),
    ("batch", ("batch",)),
    ("command line and engines", ("tool", "commands", "__main__", "oracle", "conformance", "_old_paths", "")),
]


def _floor(module: str) -> int:
    """The floor of ``godot_formats.<module>`` ("" is the package ``__init__``, which re-exports the top)."""
    best, floor = -1, None
    for i, (_, names) in enumerate(FLOORS):
        for name in names:
            if (module == name or module.startswith(name + ".") or name == "") and len(name) > best:
                best, floor = len(name), i
    if floor is None or (best == 0 and module != ""):
        raise AssertionError(f"godot_formats.{module} is on no floor: add it to FLOORS and docs/architecture.md")
    return floor


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
    """Every module of the package that ``path`` imports, at the top, inside a function or for the
    type checker only (under ``if TYPE_CHECKING:``): a type-only import runs nothing, but it is a
    dependency all the same (the module cannot be read, nor checked, without the other)."""
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


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (C extensions aside: they import nothing of ours)."""
    modules = {_module_of(path): path for path in MODULES}

    def owner(target: str) -> str | None:
        while target not in modules:
            if "." not in target:
                return "" if target == "" or not _is_module(f"godot_formats.{target}") else None
            target = target.rsplit(".", 1)[0]
        return target
    return {m: {o for o in map(owner, _imported(path)) if o is not None and o != m} for m, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_import_circles() -> None:
    """No module imports, even from inside a function, a module that imports it back (through any chain)."""
    graph = _import_graph()
    assert sum(map(len, graph.values())) > 200  # the graph is the package's, not an empty one
    circles = _circles(graph)
    detail = ["  ".join(f"{m} -> {sorted(graph[m] & set(group))}" for m in group) for group in circles]
    assert circles == [], detail


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_floors_are_the_documented_ones() -> None:
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name, _ in FLOORS:
        assert f"| {name} |" in doc, name


def test_the_flat_import_paths_of_0_3_still_work() -> None:
    """godot_formats.codec (0.3) is godot_formats.core.codec, the same module object: old imports,
    pickles and monkeypatches keep working, and no module is loaded twice."""
    import pickle

    from godot_formats._old_paths import MOVED

    for old, new in MOVED.items():
        if old.startswith("_c") and gf.backend != "c":
            continue  # the compiled core is not built here
        sys.modules.pop(f"godot_formats.{old}", None)
        with pytest.warns(DeprecationWarning, match=rf"godot_formats\.{old} is godot_formats\.{re.escape(new)} since "
                                                     r"0\.4; the old path goes in 0\.6\.0"):
            module = importlib.import_module(f"godot_formats.{old}")
        assert module is importlib.import_module(f"godot_formats.{new}"), old
        if old == "types":
            assert gf.types is module  # gf.types is public: the value model, no warning
            continue
        kept = vars(gf).pop(old, None)  # the import set the attribute: ask the package's __getattr__ again
        try:
            with pytest.deprecated_call():
                assert getattr(gf, old) is module
        finally:
            if kept is not None:
                setattr(gf, old, kept)  # gf.types is the public value model: put back
    with pytest.deprecated_call():
        order = importlib.import_module("godot_formats.text.order")
    assert order is importlib.import_module("godot_formats.views.text.order")
    with pytest.deprecated_call():
        sys.modules.pop("godot_formats.codec", None)
        from godot_formats.codec import Decoder  # noqa: F401  (the old spelling)
    # a pickle made by 0.3 names godot_formats.types
    old_pickle = pickle.dumps(gf.Vector2(1, 2), protocol=0).replace(b"godot_formats.core.types", b"godot_formats.types")
    assert b"godot_formats.types" in old_pickle
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # godot_formats.types warned above already
        assert pickle.loads(old_pickle) == gf.Vector2(1, 2)
    with pytest.raises(AttributeError):
        gf.no_such_module  # noqa: B018


def test_loss_is_one_object_wherever_it_is_named() -> None:
    """``gf.Loss`` is the core's record, which ConversionError carries and the migration reports."""
    from godot_formats import migration
    from godot_formats.core import changes

    assert gf.Loss is migration.Loss is changes.Loss and gf.convert is migration.convert


def test_the_commands_share_one_helpers_module() -> None:
    """What the commands share is commands/common.py: only the entry points import tool.py (which wires the
    commands up), and the helpers live in no third place."""
    importers = sorted(_module_of(p) for p in MODULES if "tool" in _imported(p))
    assert importers == ["__main__"]
    assert not (PACKAGE / "commands" / "inputs.py").exists()


def test_class_names_are_unique() -> None:
    """One class per name in the package (two ``Field`` classes once meant two things under one name)."""
    import inspect

    seen: dict[str, str] = {}
    clashes = []
    for path in MODULES:
        module_name = "godot_formats" + ("." + _module_of(path) if _module_of(path) else "")
        if module_name.endswith("__main__") or "_reaper" in module_name:
            continue
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and not name.startswith("_"):
                if name in seen and seen[name] != module.__name__:
                    clashes.append(f"{name}: {seen[name]} and {module.__name__}")
                seen.setdefault(name, module.__name__)
    assert clashes == []


def _imported_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after ``code`` (the package's, and cryptography's)."""
    body = "".join(f"    {line}\n" for line in code.splitlines())
    script = f"import sys\ntry:\n{body}except SystemExit:\n    pass\nprint('@@' + ' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    modules = out.stdout.rsplit("@@", 1)[1].split()
    return {m for m in modules if m.startswith(("godot_formats", "cryptography", "attr"))}


def test_importing_the_package_imports_what_is_used_first() -> None:
    """``import godot_formats`` imports no part of the library until a name is used: every command
    line call and batch worker pays only for what it uses (no timing is asserted here: the machine is
    shared; docs/architecture.md has the measured times)."""
    assert _imported_by("import godot_formats") <= {"godot_formats", "godot_formats._old_paths",
                                                    "godot_formats.core", "godot_formats.core.version"}
    decoding = _imported_by("import godot_formats as gf\ngf.loads(bytes.fromhex('0200000007000000'), 'godot3')")
    assert "godot_formats.core.codec" in decoding
    assert not {m for m in decoding if m.startswith(("godot_formats.saves", "godot_formats.resources",
                                                     "godot_formats.views", "cryptography"))}
    door = _imported_by("import godot_formats as gf\ngf.open")
    assert "godot_formats.documents" in door and not {m for m in door if m.startswith("godot_formats.resources")}
    save = _imported_by("import godot_formats as gf\ngf.open(bytes.fromhex('0200000007000000'))")
    assert "godot_formats.saves.savefile" in save
    unused = ("godot_formats.resources", "godot_formats.views.text", "cryptography")
    assert not {m for m in save if m.startswith(unused)}


def test_the_version_of_the_command_line_imports_no_command() -> None:
    imported = _imported_by("from godot_formats.tool import main\nmain(['--version'])")
    assert not {m for m in imported if m.startswith(("godot_formats.commands", "godot_formats.saves", "attr"))}
    dump = _imported_by("from godot_formats.tool import main\nmain(['dump', '--help'])")
    assert "godot_formats.commands.dump" in dump and "godot_formats.commands.engine" not in dump
