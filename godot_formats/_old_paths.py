"""The import paths of the flat layout (0.3 and before), kept until :data:`END`:
``godot_formats.codec`` is ``godot_formats.core.codec``, the same module object, so old imports,
pickles and monkeypatches keep working, each with a ``DeprecationWarning`` naming the new path.

Why a finder and not a module per old name: the folders are the architecture (``ls`` shows the
layers), and a file per old name would hide them again.  The finder is lazy (a module is imported
when an old path asks for it, not before), and it stands first on ``sys.meta_path``, so that an
old path inside a moved package (``godot_formats.text.order``) is the moved module, never a
second copy of it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

#: Old module name (under ``godot_formats``) -> the module it is now (most moved into a folder
#: under their own name; the value conversion became a package of its own, :mod:`.migration`).
MOVED: dict[str, str] = {
    **{name: f"core.{name}" for name in ("version", "switches", "errors", "accel", "keys", "types", "wire",
                                         "registry", "dialects", "codec", "_cdecode", "_cencode")},
    **{name: f"layers.{name}" for name in ("framing", "files", "fastlz", "compression", "encryption", "base64form",
                                           "project_settings")},
    **{name: f"streams.{name}" for name in ("primitives", "streampeer", "stream")},
    **{name: f"views.{name}" for name in ("text", "jsonform", "explain")},
    **{name: f"saves.{name}" for name in ("detection", "reading", "savefile", "fileaccess")},
    "conversion": "migration",
}
PACKAGE = __name__.rpartition(".")[0]
#: The release that removes the old paths (CHANGELOG.md says so too).
END = "0.6.0"


def _warn(old: str, new: str, stacklevel: int = 3) -> None:
    warnings.warn(f"{old} is {new} since 0.4; the old path goes in {END}", DeprecationWarning, stacklevel=stacklevel)


def new_name(name: str) -> str | None:
    """The module an old dotted name stands for now, or None for a name that did not move."""
    prefix = PACKAGE + "."
    if not name.startswith(prefix):
        return None
    first, _, rest = name[len(prefix):].partition(".")
    moved = MOVED.get(first)
    if moved is None:
        return None
    return f"{prefix}{moved}" + (f".{rest}" if rest else "")


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module it moved to (imported under its new name)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name, self.target)
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        pass  # imported already, under its own name


class OldPaths(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        if importlib.util.find_spec(new) is None:  # e.g. a compiled core that was not built
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(finder, OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, OldPaths())


def old_attribute(name: str) -> ModuleType:
    """``godot_formats.<old name>`` as an attribute (``gf.codec``), as the flat layout had it."""
    if name in MOVED:
        _warn(f"{PACKAGE}.{name}", f"{PACKAGE}.{MOVED[name]}", stacklevel=4)  # at gf.codec's line
        return importlib.import_module(f"{PACKAGE}.{MOVED[name]}")
    raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}")
