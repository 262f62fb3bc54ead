"""A resource file as JSON and as a tree: the values in the library's own views, the references as
what they are (``{"type": "SubResource", "id": ...}``, ``{"type": "ExtResource", "path": ...}``).

The JSON form is for reading and for tools (``godot-formats dump --json``); the values inside it are
those of :mod:`godot_formats.views.jsonform` (lossless), so a value reads back exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..core import types as t
from ..views.jsonform import to_json
from ..views.tree import tree_lines
from .model import ExtResource, Resource, ResourceFile, holds_reference

__all__ = ["resource_json", "resource_tree"]


def _reference(value: Resource | ExtResource) -> dict[str, Any]:
    if isinstance(value, Resource):
        return {"type": "SubResource", "id": value.id, "class": value.type}
    return {"type": "ExtResource", "class": value.type, "path": value.path, "id": value.id}


def _json_value(value: Any) -> Any:
    """``value`` in the JSON form, a reference where the file refers to a resource (no recursion)."""
    if isinstance(value, (Resource, ExtResource)):
        return _reference(value)
    if not holds_reference(value):
        return to_json(value)
    root: list[Any] = []
    stack: list[tuple[Any, list[Any]]] = [(value, root)]
    while stack:
        v, out = stack.pop()
        if isinstance(v, (Resource, ExtResource)):
            out.append(_reference(v))
        elif isinstance(v, (dict, t.Dictionary)):
            args: list[Any] = []
            out.append({"type": "Dictionary", "args": args})
            for pair in reversed(list(v.items())):
                for item in reversed(pair):
                    stack.append((item, args))
        elif isinstance(v, (list, tuple)) and not isinstance(v, t.Components):
            items: list[Any] = []
            out.append({"type": "Array", "args": items})
            for item in reversed(list(v)):
                stack.append((item, items))
        else:
            out.append(to_json(v))
    return root[0]


def resource_json(rf: ResourceFile) -> dict[str, Any]:
    """The whole file as one JSON document: what describes it, its references, its resources."""
    def resource(res: Resource) -> dict[str, Any]:
        return {"type": res.type, "id": res.id,
                "properties": {name: _json_value(v) for name, v in res.properties.items()}}

    return {
        "engine": rf.engine, "format": rf.format, "version": rf.version, "compressed": rf.compressed,
        "big_endian": rf.big_endian, "script_class": rf.header.get("script_class"),
        "external": [{"id": e.id, "type": e.type, "path": e.path, "uid": e.uid} for e in rf.external],
        "resources": [resource(r) for r in rf.resources],
        "main": resource(rf.main),
        "notes": list(rf.notes),
    }


def resource_tree(rf: ResourceFile, *, max_elements: int | None = 16) -> Iterator[str]:
    """The file as an indented tree: each resource, then each property's value tree."""
    dialect = "godot3" if rf.engine == 3 else "godot2" if rf.engine == 2 else "godot4"
    yield f"{rf.format} resource, Godot {rf.engine}, format {rf.version}" + (
        f", {rf.compressed}" if rf.compressed else "") + (", big-endian" if rf.big_endian else "")
    for ext in rf.external:
        yield f"external {ext.id}: {ext.type} {ext.path}"
    for res in (*rf.resources, rf.main):
        yield f"{'main resource' if res is rf.main else 'sub-resource ' + str(res.id)}: {res.type}"
        for name, value in res.properties.items():
            if isinstance(value, (Resource, ExtResource)) or holds_reference(value):
                yield f"  {name}: {_describe_reference(value)}"
                continue
            lines = tree_lines(value, dialect, max_elements=max_elements)
            yield f"  {name}: {next(lines)}"
            for line in lines:
                yield "    " + line


def _describe_reference(value: Any) -> str:
    if isinstance(value, Resource):
        return f"SubResource {value.id} ({value.type})"
    if isinstance(value, ExtResource):
        return f"ExtResource {value.path} ({value.type})"
    return f"{type(value).__name__} holding references: " + str(_json_value(value))[:200]
