"""Where a value carries code: the check in front of anything that hands a value to a real engine.

Our decoders never run anything: a full Object is inert data
(:class:`~godot_formats.types.Object`).  A real engine is another matter.  Godot 3's
``bytes2var(b, true)`` sets an Object's ``script`` property to the ``GDScript`` it carries
(with its ``script/source``), and that script's code runs; Godot 4 loads the script a
``script`` property names by path, and its ``static func _static_init`` runs.  So before
bytes go to an engine (``godot-formats engine decode --allow-objects``), they are read here
first, and any of these is code:

* an Object of a script class (``GDScript``, ``CSharpScript``, ``NativeScript`` ...) or of a
  class that loads code (``PackedScene``, ``GDExtension``, ``GDNativeLibrary``);
* an Object property ``script`` holding anything but null (an Object or a path);
* an Object property ``script/source``.

The walk is iterative (no recursion on user data) and visits each value once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core import types as t
from ..core.errors import QUOTED, quoted
from ..core.registry import is_array, is_dictionary

__all__ = ["CODE_CLASSES", "find_code"]

#: Classes whose instances are, or load, code.
CODE_CLASSES = frozenset({
    "Script", "GDScript", "CSharpScript", "VisualScript", "NativeScript", "PluginScript", "ScriptExtension",
    "GDScriptNativeClass", "PackedScene", "GDExtension", "GDNativeLibrary", "GDNative",
})

#: Properties that attach code to an Object.
CODE_PROPERTIES = ("script", "script/source")


def _key_text(key: Any) -> str:
    return quoted(key) if isinstance(key, str) else type(key).__name__


def _children(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, t.Object):
        for name, v in value.properties.items():
            yield f"{path}.{name if isinstance(name, str) and len(name) <= QUOTED else _key_text(name)}", v
    elif is_dictionary(value):
        for k, v in value.items():
            yield f"{path}<key {_key_text(k)}>", k
            yield f"{path}[{_key_text(k)}]", v
    elif is_array(value) or isinstance(value, t.TypedArray):
        for i, v in enumerate(value):
            yield f"{path}[{i}]", v


def find_code(value: Any, *, root: str = "<value>") -> list[str]:
    """The path of every place in ``value`` that carries code (see the module docstring); [] when none."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [(root, value)]
    seen: set[int] = set()
    while stack:
        path, v = stack.pop()
        if isinstance(v, t.Object):
            if id(v) in seen:
                continue
            seen.add(id(v))
            if v.class_name in CODE_CLASSES:
                found.append(f"{path}: an Object of class {v.class_name}")
            for name in CODE_PROPERTIES:
                if name in v.properties and v.properties[name] is not None:
                    found.append(f"{path}.{name}: {'a script' if name == 'script' else 'script source code'}")
        elif is_array(v) or is_dictionary(v) or isinstance(v, t.TypedArray):
            if id(v) in seen:
                continue
            seen.add(id(v))
        else:
            continue
        stack.extend(reversed(list(_children(v, path))))
    return found
