"""The tree view: a value as an indented outline of types and values (``godot-formats dump --tree``).

A view of the library, beside :mod:`~godot_formats.views.explain` (which it shares its indentation
with): each line names a value's type and what it holds, containers open their children below,
long runs are cut to ``max_elements``, and nothing recurses on the value.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Iterator
from typing import Any

from ..core import types as t
from ..core.dialects import Dialect, get_dialect
from ..core.registry import Family, TypeSpec, spec_for
from .explain import indentation

__all__ = ["describe", "tree_lines"]


def _number(x: Any) -> str:
    return repr(x) if isinstance(x, float) else str(x)


def _quoted(s: str, limit: int = 80) -> str:
    from json import dumps

    shown = dumps(s[:limit], ensure_ascii=False)
    return shown if len(s) <= limit else f"{shown}… ({len(s)} characters)"


def _container_type(ct: t.ContainerType | None, d: Dialect) -> str:
    if ct is None:
        return "Variant"
    if ct.script is not None:
        return f'Script("{ct.script}")'
    return ct.class_name if ct.class_name is not None else d.native_name(ct.builtin)


def _plural(n: int, word: str, words: str = "") -> str:
    return f"{n} {word if n == 1 else words or word + 's'}"


def _field_text(value: Any, kind: str) -> str:
    if kind == "bytes":
        return _plural(len(value), "byte")
    if kind == "str":
        return _quoted(value)
    return str(list(value)) if kind == "u32s" else str(value)


def _describe_string(value: Any, spec: TypeSpec, d: Dialect) -> str:
    return f"StringName &{_quoted(value)}" if spec.name == "StringName" else f"String {_quoted(value)}"


def _describe_math(value: Any, spec: TypeSpec, d: Dialect) -> str:
    parts = ", ".join(_number(x) for x in d.math_type(spec.name).to_wire(value))
    return f"{d.native_name(spec.name)}({parts})"


def _describe_record(value: Any, spec: TypeSpec, d: Dialect) -> str:
    """A record as its fields (the registry row's), each named: ``RID(id=5)``."""
    fields = ", ".join(f"{f.attr}={_field_text(getattr(value, f.attr), f.kind)}" for f in spec.record)
    return f"{d.native_name(spec.name)}({fields})"


#: How a value without children is shown, by its registry row's family.
_DESCRIBE: dict[Family, Callable[[Any, TypeSpec, Dialect], str]] = {
    Family.NIL: lambda v, spec, d: "null",
    Family.BOOL: lambda v, spec, d: "true" if v else "false",
    Family.INT: lambda v, spec, d: f"int {int(v)}",
    Family.FLOAT: lambda v, spec, d: f"float {_number(float(v))}",
    Family.STRING: _describe_string,
    Family.NODE_PATH: lambda v, spec, d: f"NodePath {'^' if d.major >= 4 else ''}{_quoted(str(v))}",
    Family.MATH: _describe_math,
    Family.RECORD: _describe_record,
    Family.OBJECT: lambda v, spec, d: f"Object #{v.object_id} (an instance id)",  # the id form: no children
}


def describe(value: Any, d: Dialect) -> str:
    """One line for a value without children: its type (in the dialect's names) and its value."""
    spec = spec_for(value)
    show = None if spec is None else _DESCRIBE.get(spec.family)
    if show is None or (spec is not None and spec.family is Family.OBJECT and not hasattr(value, "object_id")):
        return reprlib.repr(value)  # not a Variant (the API takes any value): bounded, whatever it holds
    assert spec is not None
    return show(value, spec, d)


def _has_children(value: Any) -> bool:
    """Whether :func:`_children` gives ``value`` its own lines (without building them)."""
    spec = spec_for(value)
    return spec is not None and spec.family in _CHILDREN and not isinstance(value, t.EncodedObjectAsID)


def _packed_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    n = len(value)
    shown = n if max_elements is None else min(n, max_elements)
    name = d.native_name(spec.name)
    if spec.name == "PackedByteArray":
        stop = n if max_elements is None else min(n, 16 * max_elements)
        rows = [(f"[{i}]", _Raw(bytes(value[i:i + 16]).hex(" "))) for i in range(0, stop, 16)]
        more = n - min(n, 16 * len(rows))
        return f"{name}, {_plural(n, 'byte')}", rows + ([("", _Raw(f"… {more} more bytes"))] if more else [])
    items = [(f"[{i}]", _Raw(describe(value[i], d) if not isinstance(value[i], (int, float))
                             else _number(value[i]))) for i in range(shown)]
    if shown < n:
        items.append(("", _Raw(f"… {n - shown} more elements")))
    return f"{name}, {_plural(n, 'element')}", items


def _object_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    props = value.properties
    return f"Object {value.class_name}, {_plural(len(props), 'property', 'properties')}", \
        [(f"{k}:", v) for k, v in props.items()]


def _dictionary_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    heading = "Dictionary"
    if isinstance(value, t.TypedDictionary):
        heading += f"[{_container_type(value.key_type, d)}, {_container_type(value.value_type, d)}]"
    entries: list[tuple[str, Any]] = []
    for i, (k, v) in enumerate(value.items()):
        if type(k) is str:
            entries.append((_quoted(k) + ":", v))
        elif not _has_children(k):
            entries.append((describe(k, d) + ":", v))
        else:
            entries.append((f"key {i}:", k))
            entries.append((f"value {i}:", v))
    return f"{heading}, {_plural(len(value), 'entry', 'entries')}", entries


def _array_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    heading = "Array"
    if isinstance(value, t.TypedArray):
        heading += f"[{_container_type(value.element_type, d)}]"
    return f"{heading}, {_plural(len(value), 'item')}", [(f"[{i}]", v) for i, v in enumerate(value)]


#: The values with lines of their own under them, by their registry row's family.
_CHILDREN: dict[Family, Callable[[Any, TypeSpec, Dialect, int | None], tuple[str, list[Any]]]] = {
    Family.PACKED: _packed_children,
    Family.STRINGS: _packed_children,
    Family.OBJECT: _object_children,
    Family.DICTIONARY: _dictionary_children,
    Family.ARRAY: _array_children,
}


def _children(value: Any, d: Dialect, max_elements: int | None) -> tuple[str, list[tuple[str, Any]]] | None:
    """(heading, [(label, child)]) for a value with children, else None."""
    if not _has_children(value):
        return None
    spec = spec_for(value)
    assert spec is not None
    return _CHILDREN[spec.family](value, spec, d, max_elements)


class _Raw(str):
    """A tree line that is already text (packed array elements)."""

    __slots__ = ()




def tree_lines(value: Any, dialect: str | Dialect = "godot4", *, max_elements: int | None = 16,
               indent: str = "  ") -> Iterator[str]:
    """An indented tree of ``value``: one line per value, its type and, for leaves, its value.

    Lines are indented by depth up to :data:`MAX_INDENT_DEPTH` levels; deeper
    lines start with ``(depth N)`` at that indentation.  Any nesting is walked
    without recursion.
    """
    d = get_dialect(dialect)
    todo: list[tuple[str, Any, int]] = [("", value, 0)]
    while todo:
        label, node, depth = todo.pop()
        prefix = indentation(depth, indent) + (label + " " if label else "")
        if isinstance(node, _Raw):
            yield prefix + node
            continue
        kids = _children(node, d, max_elements)
        if kids is None:
            yield prefix + describe(node, d)
            continue
        heading, items = kids
        yield prefix + heading
        todo.extend((lab, child, depth + 1) for lab, child in reversed(items))


# -- the command -----------------------------------------------------------------------------------
